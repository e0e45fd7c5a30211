"""`--annotations github`: workflow commands per failed contract, and the job summary.

The gate runs as a subprocess with GitHub's environment (GITHUB_ACTIONS, GITHUB_WORKSPACE,
GITHUB_STEP_SUMMARY pointing at a temporary file); the tests read its stdout and the
summary file exactly as the runner would.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

from gatekit import copy_fixture, gate_env, run_gate

from killmap.report.annotations import (
    MAX_ANNOTATIONS,
    SUMMARY_LIMIT,
    annotation,
    escape_data,
    escape_property,
    publish,
    summary_text,
)

FIXTURE_REPORT = Path(__file__).resolve().parent.parent / "fixtures" / "reports" / "verdicts.json"

OVERREACH = (
    "::error file=selection/src/selpkg/calc.py,line=5,title=killmap overreach%3A shared-off-by-one"
    "::overreach: red outside kills and may_kill: tests/test_shared.py::test_shared_through_a_caller"
    "%0Aa test outside kills and may_kill went red: it is coupled to this code, or the contract "
    "is too narrow."
)
UNEVIDENCED = (
    "::error file=selection/src/selpkg/calc.py,line=9,title=killmap unevidenced%3A "
    "unrelated-gains-a-line::unevidenced: went red without executing the mutated code, not even "
    "when run by itself (red for another reason: line numbers, code it ran in a subprocess, which is "
    "not traced, a test the selection leaves out): "
    "tests/test_lines.py::test_anchor_has_not_moved%0Anothing shows the red came from the defect: the "
    "test never executed the mutated code in its own process (line numbers, code it ran in a subprocess, "
    "a test the selection left out); a kills test must execute the change in its own process: name one "
    "that does, and this one in may_kill if it may go red so."
)


def _commands(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("::")]


def _github(project: Path, summary: Path, **extra: str) -> dict[str, str]:
    return gate_env(
        project,
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(project.parent),
            "GITHUB_STEP_SUMMARY": str(summary),
            **extra,
        },
    )


def test_each_failed_contract_is_one_exact_error_command_and_the_report_joins_the_summary(tmp_path):
    project = copy_fixture("selection", tmp_path)
    summary = tmp_path / "step-summary.md"
    summary.write_text("output of an earlier step\n")
    run = run_gate(project, "run", env=_github(project, summary))
    assert run.code == 1, run.stderr
    # Severity order (overreach before unevidenced), at the first changed line of the target,
    # the path relative to the workspace, ':' escaped in the title property only.
    assert _commands(run.stdout) == [OVERREACH, UNEVIDENCED]
    markdown = (run.report_dir / "killmap.md").read_text()
    assert summary.read_text() == "output of an earlier step\n\n" + markdown

    # auto: nothing without GITHUB_ACTIONS=true; none: nothing even with it.
    summary.write_text("")
    quiet = run_gate(project, "run", env=gate_env(project, {"GITHUB_STEP_SUMMARY": str(summary)}))
    off = run_gate(project, "run", "--annotations", "none", env=_github(project, summary))
    assert quiet.code == off.code == 1
    assert _commands(quiet.stdout) == _commands(off.stdout) == []
    assert summary.read_text() == ""
    # and github forces it on outside GitHub too
    forced = run_gate(
        project, "run", "--annotations", "github", env=gate_env(project, {"GITHUB_WORKSPACE": str(tmp_path)})
    )
    assert _commands(forced.stdout) == [OVERREACH, UNEVIDENCED]


def test_at_most_ten_are_annotated_by_severity_and_the_summary_names_the_rest(tmp_path):
    """`merge` publishes too (the sharded workflow's last job): here on a real report of the
    verdicts fixture, 17 failed contracts."""
    project = copy_fixture("verdicts", tmp_path)
    shutil.copy(FIXTURE_REPORT, tmp_path / "shard.json")
    summary = tmp_path / "step-summary.md"
    run = run_gate(
        project,
        "merge",
        str(tmp_path / "shard.json"),
        "--report-dir",
        str(tmp_path / "out"),
        env=_github(project, summary),
    )
    assert run.code == 1, run.stderr
    commands = _commands(run.stdout)
    assert len(commands) == MAX_ANNOTATIONS
    titles = [line.split("title=")[1].split("::")[0] for line in commands]
    assert titles == [
        f"killmap {v}%3A {n}"
        for v, n in [
            ("vacuous", "predicate-constant-true"),
            ("vacuous", "greet-space-dropped"),
            ("overreach", "predicate-negated"),
            ("wrong-cause", "lookup-table-emptied"),
            ("visible", "clamp-limit-lowered"),
            ("unevidenced", "big-word-changed"),
            ("unevidenced", "greet-concat-empty"),
            ("timeout", "spin-never-ends"),
            ("broken", "undefined-name"),
            ("broken", "does-not-parse"),
        ]
    ]
    # The report's root is not under this workspace: the path stays project-relative.
    assert commands[0] == (
        "::error file=src/vpkg/logic.py,line=8,title=killmap vacuous%3A "
        "predicate-constant-true::vacuous: stayed green: tests/test_logic.py::"
        "test_is_positive_accepts_one%0Aa test named in kills did not go red: it does "
        "not guard against this defect."
    )
    assert "killmap: 7 more failed contracts not annotated (GitHub shows 10 per step)" in run.stdout
    text = summary.read_text()
    assert text.startswith((tmp_path / "out" / "killmap.md").read_text())
    assert text.endswith(
        "**Not annotated:** GitHub shows at most 10 annotations per step, so 7 more failed contracts "
        "listed here only: `unbound-local` (broken), `import-breaks-collection` (broken), "
        "`unimported-module-breaks` (broken), `pattern-missing` (not-applied), `pinned-to-old-text` "
        "(stale), `flaky-mode-on` (flaky), `limit-below-the-unmutated-time` (inconclusive).\n"
    )


def test_escaping_follows_githubs_rules():
    assert escape_data("100% done\r\nnext: a, b") == "100%25 done%0D%0Anext: a, b"
    assert escape_property("100% done\r\nnext: a, b") == "100%25 done%0D%0Anext%3A a%2C b"
    entry = {
        "name": "a-b",
        "verdict": "vacuous",
        "lines": [3, 4, 7],
        "detail": "50% of it,\nred: x",
        "explanation": "why",
    }
    assert annotation(entry, "pkg/odd,name:1.py") == (
        "::error file=pkg/odd%2Cname%3A1.py,line=3,endLine=7,title=killmap vacuous%3A a-b"
        "::vacuous: 50%25 of it,%0Ared: x%0Awhy."
    )
    # A mutant never built has no lines: the annotation is on the file.
    assert annotation({**entry, "lines": []}, "m.py").startswith("::error file=m.py,title=")


def test_the_summary_stays_within_githubs_limit(tmp_path):
    document = json.loads(FIXTURE_REPORT.read_text())
    markdown = tmp_path / "killmap.md"
    markdown.write_text("".join(f"line {i} {'x' * 60}\n" for i in range(40_000)))  # ~2.7 MB
    summary = tmp_path / "summary.md"
    summary.write_text("y" * 1000 + "\n")
    out = io.StringIO()
    publish(document, markdown, "auto", env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}, out=out)
    data = summary.read_bytes()
    assert len(data) <= SUMMARY_LIMIT
    text = data.decode()
    assert "_The job summary is full: the rest is in the reports artifact" in text
    assert text.rstrip().endswith("`limit-below-the-unmutated-time` (inconclusive).")
    kept = text.split("\n", 2)[2]  # after the earlier step's line and the blank line
    assert kept.startswith("line 0 ") and "\nline 1000 " in kept
    assert len(out.getvalue().splitlines()) == MAX_ANNOTATIONS + 1
    # and a short report goes in whole
    assert summary_text("## ok\n", [], room=100) == "## ok\n"
