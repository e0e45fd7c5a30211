"""Of a sweep's survivors, one per line and one per gap is reported, chosen by its operator's
rank; the rest stay in the report, `reported: false`. A gap is the check the survivors show
missing: the condition that holds the change. A mutant's id is the digest of what it
changes, so an edit elsewhere in its function keeps it."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from sweepkit import require_mutmut
from test_a_sweep_of_a_change_mutates_its_lines import swept  # noqa: F401 - the shared sweep

from killmap.catalog.reader import GateSettings
from killmap.verdict.triage import Finding, Gap, gap_of, reported

GUARD = """\
def route(methods, strict):
    if methods is None and strict:
        return 1
    return 2
"""


@pytest.mark.parametrize(
    "mutated",
    [
        "if methods is not None and strict:",  # mutmut's swap_op
        "if strict:",  # killmap's drop-operand, `methods is None` dropped
        "if (not methods is None) and strict:",  # a negation of the operand alone
    ],
)
def test_survivors_that_show_one_missing_check_share_its_gap(mutated):
    text = GUARD.replace("if methods is None and strict:", mutated)
    assert gap_of(GUARD, text, (2,)) == Gap(2, 7, "methods is None")


def test_a_change_of_another_operand_or_of_the_whole_condition_is_another_gap():
    other = gap_of(GUARD, GUARD.replace("and strict:", "and not strict:"), (2,))
    whole = gap_of(GUARD, GUARD.replace("if methods is None and strict:", "if not (methods is None and strict):"), (2,))
    assert other == Gap(2, 27, "strict") and whole == Gap(2, 7, "methods is None and strict")


def test_a_deleted_statement_is_its_own_gap():
    text = "def f(x):\n    check(x)\n    return x\n"
    assert gap_of(text, text.replace("    check(x)\n", ""), (2,)) == Gap(2, 4, "check(x)")


def test_one_finding_is_reported_per_line_and_per_gap_by_operator_rank():
    gap = Gap(2, 7, "methods is None")
    findings = [
        Finding("a", "m.py", 2, "mutmut:swap_op", True, gap),
        Finding("b", "m.py", 2, "killmap:drop-operand", True, gap),
        Finding("c", "m.py", 3, "mutmut:number", True, gap),  # another line, the same gap
        Finding("d", "m.py", 3, "mutmut:string", True, Gap(3, 9, "'x'")),  # a line a gap took
        Finding("e", "m.py", 5, "mutmut:string", False, Gap(5, 4, "'y'")),
        Finding("f", "m.py", 5, "mutmut:number", True, Gap(5, 8, "1")),  # on the change: first
    ]
    assert reported(findings) == {"b", "d", "f"}


def test_the_sweep_of_a_change_reports_at_most_one_survivor_per_line(swept):  # noqa: F811
    _, doc, lines = swept
    mutants = doc["sweep"]["mutants"]
    assert all(isinstance(m["reported"], bool) for m in mutants)
    survivors = [m for m in mutants if m["status"] == "survived"]
    by_line: dict[int, list[dict]] = {}
    for m in survivors:
        by_line.setdefault(m["line"], []).append(m)
    assert all(sum(m["reported"] for m in group) == 1 for group in by_line.values()), by_line
    check = next(n for n, line in enumerate(lines, 1) if "if height > 100:" in line)
    alike = by_line[check]
    assert len(alike) > 1 and {m["gap"]["text"] for m in alike} == {"height > 100"}
    assert [m["op"] for m in alike if m["reported"]] == ["mutmut:swap_op"]  # ranked above `number`


def test_an_edit_elsewhere_in_a_function_keeps_its_mutants_ids(tmp_path):
    require_mutmut()
    from killmap.report.sweep_report import one_line
    from killmap.verdict.sweep import SweepTarget, enumerate_mutants

    source = tmp_path / "src" / "p" / "m.py"
    source.parent.mkdir(parents=True)
    text = textwrap.dedent(
        """\
        def f(x, y):
            if x > 0:
                return y + 1
            return y - 1
        """
    )

    def ids() -> dict[str, str]:
        found = enumerate_mutants(
            Path(tmp_path), [SweepTarget("src/p/m.py", None, GateSettings())], ("mutmut", "killmap")
        )
        return {(m.op, one_line(m.mutant.diff)): m.id for m in found.mutants if m.line == 2}

    source.write_text(text)
    before = ids()
    source.write_text(text.replace("return y - 1", "return y - 2"))
    assert len(before) == 3 and ids() == before


def test_the_console_lists_every_finding_and_ten_of_each_other_status():
    # inflection's _irregular: 69 broken mutants listed one by one, 140 lines above the table.
    from killmap.report.sweep_report import LISTED_PER_STATUS, _capped

    mutants = (
        [{"status": "survived", "n": n} for n in range(14)]
        + [{"status": "broken", "n": n} for n in range(LISTED_PER_STATUS + 3)]
        + [{"status": "timeout", "n": n} for n in range(2)]
    )
    shown, unlisted = _capped(mutants)
    assert [e["status"] for e in shown].count("survived") == 14
    assert [e for e in shown if e["status"] == "broken"] == mutants[14 : 14 + LISTED_PER_STATUS]
    assert [e["status"] for e in shown].count("timeout") == 2
    assert dict(unlisted) == {"broken": 3}
