"""A sweep's change on a long line is shown around where the two sides differ: cut at a fixed
width, Python-Markdown's `register(AbbrBlockprocessor(md.parser, self...` read the same on
both sides, hiding `'abbr'` -> `'XXabbrXX'` further on."""

from __future__ import annotations

from killmap.report.sweep_report import one_line

LONG = "    md.parser.blockprocessors.register(AbbrBlockprocessor(md.parser, self.getConfigs()), {}, 16)"


def test_a_change_past_the_width_is_shown_on_both_sides():
    diff = f"--- a\n+++ b\n@@\n-{LONG.format(repr('abbr'))}\n+{LONG.format(repr('XXabbrXX'))}\n"
    old, new = one_line(diff).split("  ->  ")
    assert old != new
    assert "'abbr', 16)" in old and "'XXabbrXX', 16)" in new
    assert old.startswith("...") and new.startswith("...")


def test_a_short_change_is_shown_whole():
    assert one_line("-    x = 1\n+    x = 2\n") == "x = 1  ->  x = 2"
