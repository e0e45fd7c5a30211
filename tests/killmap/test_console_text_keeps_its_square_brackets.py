"""The console prints through rich, whose markup reads `[word]` as a style and drops it: a user
read "list those tests in  exclude", where the explanation says "[gate] exclude". Text of our own
wording, test ids with `[param]`, exceptions and paths are printed as they are."""

from __future__ import annotations

import io
from types import SimpleNamespace

from gatekit import killmap_command, pkg_project, replace_catalog
from rich.console import Console

from killmap.report.console import LiveProgress, render
from killmap.verdict.judge import INCONCLUSIVE, RedTest, Verdict
from killmap.verdict.lab import LabResult

PARAM_ID = "tests/test_pkg.py::test_one[gate]"


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=400, soft_wrap=True), out


def test_an_explanation_naming_gate_exclude_and_a_red_with_brackets_print_whole():
    red = RedTest(PARAM_ID, "assertion", "call", "AssertionError", "", None, True)
    said = RedTest(PARAM_ID, "assertion", "call", "AssertionError: assert [x] == [y]", "", None, True)
    verdict = Verdict("ids-changed", INCONCLUSIVE, "ids", red=(red, said), extras={"inconclusive_cause": "ids"})
    console, out = _console()
    render(console, LabResult([verdict], {}), named=1)
    text = out.getvalue()
    assert "or list those tests in [gate] exclude" in text, text
    assert f"red: {PARAM_ID} (assertion: AssertionError)" in text, text
    assert "assert [x] == [y]" in text, text


def test_the_baseline_line_keeps_a_parametrized_test_id():
    console, out = _console()
    with LiveProgress(console) as progress:
        progress("baseline", SimpleNamespace(tests=(PARAM_ID,)))
    assert f"baseline: running {PARAM_ID} unmutated" in out.getvalue()


def test_a_report_folder_with_brackets_is_named_as_it_is(tmp_path):
    catalog = replace_catalog("one-two", "one", "return 1", "return 2", "tests/test_pkg.py::test_one")
    tests = {"tests/test_pkg.py": "from pkg import one\n\n\ndef test_one():\n    assert one() == 1\n"}
    project = pkg_project(tmp_path / "proj", "def one():\n    return 1\n", tests, catalog)
    done = killmap_command(project, "run", "--no-cache", "--report-dir", "out[gate]")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "reports: out[gate]/killmap.json" in done.stdout, done.stdout
