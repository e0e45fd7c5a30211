"""`killmap diff BASE.json HEAD.json` on reports from real gate and sweep runs (issue 29.2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from gatekit import gate_env, run_gate
from sweepkit import require_mutmut, sweep
from test_ci_cache import two_function_project

ADDED = """
[[mutation]]
name = "label-returns-big"
target = "pkg/core.py::label"
op = "constant-return"
value = '"big"'
kills = ["tests/test_label.py::test_label"]
"""
WEAK_LABEL = 'from pkg.core import label\n\n\ndef test_label():\n    assert label(11) in ("big", "small")\n'
STRONG_LABEL = (
    'from pkg.core import label\n\n\ndef test_label():\n    assert label(11) == "big"\n    assert label(1) == "small"\n'
)
WEAK_DOUBLE = "from pkg.core import double\n\n\ndef test_double():\n    assert double(0) == 0\n"


def diff(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "killmap", "diff", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=60
    )


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> tuple[Path, Path]:
    """The base: the label test is weak (label-flipped vacuous). The head: the label test made
    strong (fixed), the double test weakened (double-returns-zero broken), a mutation added."""
    tmp = tmp_path_factory.mktemp("diff")
    project = two_function_project(tmp / "proj")
    (project / "tests" / "test_label.py").write_text(WEAK_LABEL)
    base = run_gate(project, "run", "--jobs", "1")
    assert base.verdicts() == {"double-returns-zero": "held", "double-adds": "held", "label-flipped": "vacuous"}
    base_path = tmp / "base.json"
    base_path.write_text(json.dumps(base.report))
    (project / "tests" / "test_label.py").write_text(STRONG_LABEL)
    (project / "tests" / "test_double.py").write_text(WEAK_DOUBLE)
    catalog = project / "mutations" / "pkg.toml"
    catalog.write_text(catalog.read_text() + ADDED)
    head = run_gate(project, "run", "--jobs", "1")
    assert head.verdicts()["double-returns-zero"] == "vacuous", head.stdout + head.stderr
    head_path = tmp / "head.json"
    head_path.write_text(json.dumps(head.report))
    return base_path, head_path


def test_diff_lists_a_broken_contract_a_fixed_one_and_an_added_mutation_and_exits_1_on_the_regression(
    reports, tmp_path
):
    base, head = reports
    done = diff(str(base), str(head), "--json", "d.json", "--markdown", "d.md", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0].startswith("killmap diff: 1 regression; 3 changes; held 2/3 -> 3/4")
    changes = {
        c["name"]: (c["change"], c["base"], c["head"]) for c in json.loads((tmp_path / "d.json").read_text())["changes"]
    }
    assert changes == {
        "double-returns-zero": ("regressed", "held", "vacuous"),
        "label-flipped": ("fixed", "vacuous", "held"),
        "label-returns-big": ("added", None, "held"),
    }
    markdown = (tmp_path / "d.md").read_text()
    assert markdown.index("regressed") < markdown.index("added") < markdown.index("fixed")  # worst first
    assert "| ❌ regressed | `double-returns-zero` | held | vacuous |" in markdown


def test_diff_the_other_way_round_lists_a_removed_mutation_and_a_fixed_contract(reports, tmp_path):
    base, head = reports
    done = diff(str(head), str(base), "--format", "json", cwd=tmp_path)
    changes = {c["name"]: c["change"] for c in json.loads(done.stdout)["changes"]}
    assert changes == {"double-returns-zero": "fixed", "label-flipped": "regressed", "label-returns-big": "removed"}
    assert done.returncode == 1, done.stderr


def test_diff_annotates_only_the_regressions_in_github_actions(reports, tmp_path):
    base, head = reports
    env = gate_env(tmp_path, {"GITHUB_ACTIONS": "true"})
    done = diff(str(base), str(head), cwd=tmp_path, env=env)
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::")]
    assert len(annotations) == 1 and "title=killmap regression%3A double-returns-zero" in annotations[0]
    assert "file=pkg/core.py,line=2," in annotations[0]


def test_an_unreadable_or_foreign_report_is_one_line_and_exit_2(reports, tmp_path):
    base, _ = reports
    (tmp_path / "other.json").write_text('{"schema": "something-else"}')
    (tmp_path / "broken.json").write_text("{")
    for bad in ("other.json", "broken.json", "missing.json"):
        done = diff(str(base), bad, cwd=tmp_path)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith("killmap: ") and bad in done.stderr


def test_diff_of_two_sweeps_lists_new_survivors_and_a_survivor_now_killed(tmp_path):
    require_mutmut()
    project = two_function_project(tmp_path / "proj")
    _, before, _ = sweep(project, "pkg/core.py", "--jobs", "1")
    assert before is not None
    assert [m["function"] for m in before["sweep"]["mutants"] if m["status"] == "survived"] == ["label"]  # x >= 10
    (project / "tests" / "test_double.py").write_text(WEAK_DOUBLE)  # double(0) == 0: x / 2 and x * 3 survive
    (project / "tests" / "test_label.py").write_text(STRONG_LABEL + '    assert label(10) == "small"\n')
    _, after, _ = sweep(project, "pkg/core.py", "--jobs", "1")
    (tmp_path / "base.json").write_text(json.dumps(before))
    (tmp_path / "head.json").write_text(json.dumps(after))
    done = diff("base.json", "head.json", "--format", "json", cwd=tmp_path)
    changes = sorted((c["change"], c["detail"]) for c in json.loads(done.stdout)["changes"])
    assert changes == [
        ("regressed", "double: mutmut:number  return x * 2  ->  return x * 3"),
        ("regressed", "double: mutmut:swap_op  return x * 2  ->  return x / 2"),
        (
            "survivor killed",
            'label: mutmut:swap_op  return "big" if x > 10 else "small"  ->  return "big" if x >= 10 else "small"',
        ),
    ]
    assert done.returncode == 1
    back = diff("head.json", "base.json", "--format", "markdown", cwd=tmp_path)
    assert back.stdout.count("✅ survivor killed") == 2 and back.stdout.count("❌ regressed") == 1


def test_a_report_against_itself_has_no_change_and_exits_0(reports, tmp_path):
    base, _ = reports
    done = diff(str(base), str(base), "--format", "markdown", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "no regression; 0 changes" in done.stdout and "Every contract has the verdict" in done.stdout
