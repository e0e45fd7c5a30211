"""An invariant is shown as what it is: "invariant: 0 red, reached by 2", never "0 / 0".

"0 / 0" is also what a contract that expects nothing would read as; an invariant's zero
is a measurement, so every table (terminal, Markdown, HTML) says what was measured: the
red count against the 0 allowed, and how many tests executed the change.
"""

from __future__ import annotations

import re

import pytest
from gatekit import run_gate

from killmap.report.cells import contract_cell

MOD = "src/pkg/mod.py"
SOURCE = "def positive(n):\n    return n > 0\n"
TESTS = (
    "from pkg.mod import positive\n\n\ndef test_one_is_positive():\n    assert positive(1)\n\n\n"
    "def test_zero_is_not_positive():\n    assert not positive(0)\n"
)
CATALOG = f'''\
[gate]
paths = ["src"]

[[mutation]]
name = "bound-includes-zero"
target = "{MOD}::positive"
op = "replace"
old = "n > 0"
new = "n >= 0"
kills = ["tests/test_mod.py::test_zero_is_not_positive"]

[[mutation]]
name = "bound-mirrored"
target = "{MOD}::positive"
op = "replace"
old = "n > 0"
new = "0 < n"
invariant = true
control = "bound-includes-zero"

[[mutation]]
name = "bound-below-zero"
target = "{MOD}::positive"
op = "replace"
old = "n > 0"
new = "n > -1"
invariant = true
control = "bound-includes-zero"
'''


@pytest.fixture(scope="module")
def invariant_run(tmp_path_factory):
    from conftest import KmProject

    project = KmProject(tmp_path_factory.mktemp("invariants"))
    project.module(SOURCE)
    project.write("tests/test_mod.py", TESTS)
    project.write("mutations/catalog.toml", CATALOG)
    run = run_gate(project.root, "run", "--no-cache", "--jobs", "1")
    assert run.verdicts() == {"bound-includes-zero": "held", "bound-mirrored": "held", "bound-below-zero": "visible"}, (
        run.stdout
    )
    return run


def row(text: str, name: str) -> str:
    return next(line for line in text.splitlines() if name in line and ("|" in line or "│" in line))


def test_the_terminal_table_shows_a_held_invariant_as_measured_zero_and_its_reach(invariant_run):
    line = row(invariant_run.stdout, "bound-mirrored")
    assert "invariant: 0 red, reached by 2" in line
    assert not re.search(r"\b0 / 0\b", line)


def test_the_terminal_table_shows_a_visible_invariant_against_zero_allowed(invariant_run):
    assert "invariant: 1 red, 0 allowed" in row(invariant_run.stdout, "bound-below-zero")


def test_an_ordinary_contract_still_reads_red_over_expected(invariant_run):
    assert "1 / 1" in row(invariant_run.stdout, "bound-includes-zero")


def test_the_markdown_report_shows_invariants_as_measured(invariant_run):
    text = (invariant_run.report_dir / "killmap.md").read_text()
    assert "invariant: 0 red, reached by 2" in row(text, "`bound-mirrored`")
    assert "invariant: 1 red, 0 allowed" in row(text, "`bound-below-zero`")
    assert "| 1 / 1 |" in row(text, "`bound-includes-zero`")


def test_a_held_invariant_is_explained_as_an_invariant_and_a_held_kill_as_a_kill(invariant_run):
    from killmap.report.cells import EXPLANATIONS, INVARIANT_HELD

    assert invariant_run.mutation("bound-mirrored")["explanation"] == INVARIANT_HELD
    assert invariant_run.mutation("bound-includes-zero")["explanation"] == EXPLANATIONS["held"]


def test_the_html_report_shows_invariants_as_measured(invariant_run):
    page = (invariant_run.report_dir / "killmap.html").read_text()
    assert ">invariant: 0 red, reached by 2</td>" in page
    assert ">invariant: 1 red, 0 allowed</td>" in page
    assert ">1 / 1</td>" in page


@pytest.mark.parametrize(
    "kwargs, shown",
    [
        (dict(ran=False, red=0, expected=0, invariant=True, reached_by=0, held=False), "not run"),
        (dict(ran=True, red=0, expected=0, invariant=True, reached_by=0, held=False), "invariant: 0 red, reached by 0"),
        (
            dict(ran=True, red=0, expected=0, invariant=True, reached_by=0, held=True),
            "invariant: 0 red, reached at import",
        ),
        (dict(ran=True, red=0, expected=2, invariant=False, reached_by=5, held=False), "0 / 2"),
        # A starter contract caught by seven tests, none the one it names: not "7 / 1".
        (dict(ran=True, red=7, expected=1, invariant=False, reached_by=9, held=False, other=7), "0 / 1 (+7 other red)"),
        (dict(ran=True, red=3, expected=1, invariant=False, reached_by=3, held=False, other=2), "1 / 1 (+2 other red)"),
        # cachetools: a held contract whose eight other reds may_kill allows read as an overreach.
        (
            dict(ran=True, red=9, expected=1, invariant=False, reached_by=9, held=True, other=8, allowed=8),
            "1 / 1 (+8 may_kill red)",
        ),
        (
            dict(ran=True, red=9, expected=1, invariant=False, reached_by=9, held=False, other=8, allowed=5),
            "1 / 1 (+5 may_kill red, +3 other red)",
        ),
    ],
)
def test_the_cell_says_what_was_measured(kwargs, shown):
    assert contract_cell(**kwargs) == shown


def _all_red(selected: list[str], expected: list[str], **more) -> dict:
    """A report entry whose every selected test went red."""
    red = [{"id": t} for t in selected]
    return {
        "selected_tests": len(selected),
        "selected": selected,
        "red": red,
        "expected": expected,
        "invariant": False,
        "reached_by": selected,
        "verdict": "overreach",
        **more,
    }


def test_the_expected_side_counts_the_tests_a_prefix_names_as_the_red_side_does():
    from killmap.report.cells import red_vs_expected

    entry = _all_red(["t.py::test_p[1]", "t.py::test_p[2]", "t.py::test_p[3]", "t.py::test_q"], ["t.py::test_p"])
    # It read "4 / 1" (tests over entries), then "4 / 3" (test_q, which no entry names, on the red side).
    assert red_vs_expected(entry) == "3 / 3 (+1 other red)"


def test_the_reports_cell_counts_the_reds_may_kill_allows_apart():
    from killmap.report.cells import red_vs_expected

    selected = ["t.py::test_p", "t.py::test_q[1]", "t.py::test_q[2]", "t.py::test_r"]
    entry = _all_red(selected, ["t.py::test_p"], may_kill=["t.py::test_q"])
    assert red_vs_expected(entry) == "1 / 1 (+2 may_kill red, +1 other red)"
