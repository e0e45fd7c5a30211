"""A code line in the documentation fits the width the site shows it in.

The width was measured once in headless Chromium, on the built site (`mkdocs build`) at a
1280x900 window: Material's content column leaves a code block 656 px inside its padding,
and its monospace font (13.6 px) draws a character 8.18 px wide, so 80 characters fit and
the 81st is cut behind a scroll bar. A reader copying a TOML field's comment or a command
from a cut line copies half of it.

A ```console block (a command and what it printed) and an ```output block are exempt: they
show real output, which the tested pages hold to what the command prints, so it cannot be
rewrapped by hand. The site's stylesheet wraps those blocks instead (docs/assets/extra.css),
and this test holds that rule in place.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
WIDTH = 80  # characters a code block shows at 1280 px (measured above)
WRAPPED = {"console", "output"}  # languages whose blocks the stylesheet wraps


def code_lines(text: str) -> list[tuple[int, str, str]]:
    """(line number, the fence's language, the line) for every line inside a fenced block."""
    found = []
    fence: str | None = None
    language = ""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if fence is None:
            if m := re.match(r"(```+|~~~+)\s*([\w+-]*)", stripped):
                fence, language = m.group(1), m.group(2)
        elif stripped.startswith(fence) and stripped.strip("`~") == "":
            fence = None
        else:
            found.append((number, language, line))
    return found


def too_wide(text: str) -> list[str]:
    return [
        f"{number}: {len(line)} chars: {line.strip()[:60]}"
        for number, language, line in code_lines(text)
        if language not in WRAPPED and len(line) > WIDTH
    ]


def test_every_code_line_on_the_site_fits_its_block():
    problems = [
        f"{page.relative_to(ROOT)}:{p}" for page in sorted(DOCS.rglob("*.md")) for p in too_wide(page.read_text())
    ]
    assert problems == [], f"code lines wider than {WIDTH} characters:\n" + "\n".join(problems)


def test_a_wide_code_line_is_found_and_a_console_line_is_not():
    page = "```toml\nx = 1\n" + "y" * 81 + "\n```\n\n```console\n$ killmap run\n" + "z" * 200 + "\n```\n"
    assert [p.split(":")[0] for p in too_wide(page)] == ["3"]
    assert too_wide(page.replace("y" * 81, "y" * 80)) == []


def test_the_site_wraps_console_blocks():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert "assets/extra.css" in config["extra_css"]
    css = (DOCS / "assets" / "extra.css").read_text()
    for language in WRAPPED:
        rule = re.search(rf"\.language-{language} pre > code[^{{]*\{{([^}}]*)\}}", css)
        assert rule is not None and "white-space: pre-wrap" in rule.group(1), language
