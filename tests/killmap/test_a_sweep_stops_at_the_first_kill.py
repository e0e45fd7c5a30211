"""A sweep mutant asks one thing: is it killed? Its run stops at the first red test, and the
tests after it are left out on purpose, not resumed nor called missing. `--every-red` runs the
whole selection, and `--promote` runs the mutant again whole, so a promoted contract names
every test the mutant turns red."""

from __future__ import annotations

from gatekit import run_gate, write_project
from sweepkit import require_mutmut, sweep

SOURCE = "def double(x):\n    return x * 2\n"
TESTS = """from pkg import double


def test_1():
    assert double(1) == 2


def test_2():
    assert double(2) == 4


def test_3():
    assert double(3) == 6
"""
RED_SET = ["tests/test_pkg.py::test_1", "tests/test_pkg.py::test_2", "tests/test_pkg.py::test_3"]


def _project(root):
    return write_project(
        root,
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": SOURCE,
            "tests/test_pkg.py": TESTS,
            "mutations/pkg.toml": '[gate]\ntests = ["tests"]\npaths = ["."]\n',
        },
    )


def _the_mutant(doc):
    """mutmut's `x * 2` -> `x / 2`: every test goes red under it."""
    found = [m for m in doc["sweep"]["mutants"] if m["change"] == "return x * 2  ->  return x / 2"]
    assert len(found) == 1, [m["change"] for m in doc["sweep"]["mutants"]]
    return found[0]


def test_a_killed_sweep_mutant_runs_only_up_to_its_first_red_test(tmp_path):
    require_mutmut()
    project = _project(tmp_path / "p")
    done, doc, _ = sweep(project, "pkg/__init__.py", "--ops", "mutmut", "--jobs", "1", "--no-cache")
    assert done.code == 0, done.stderr
    mutant = _the_mutant(doc)
    assert mutant["status"] == "killed"
    assert [r["id"] for r in mutant["red"]] == RED_SET[:1]
    assert mutant["stopped_after"] == RED_SET[0] and mutant["selected_tests"] == 1


def test_every_red_runs_the_whole_selection_for_the_whole_red_set(tmp_path):
    require_mutmut()
    project = _project(tmp_path / "p")
    done, doc, _ = sweep(project, "pkg/__init__.py", "--ops", "mutmut", "--jobs", "1", "--no-cache", "--every-red")
    assert done.code == 0, done.stderr
    mutant = _the_mutant(doc)
    assert mutant["status"] == "killed"
    assert sorted(r["id"] for r in mutant["red"]) == RED_SET
    assert "stopped_after" not in mutant and mutant["selected_tests"] == 3


def test_a_promoted_mutant_is_run_again_whole_so_its_kills_are_every_red_test(tmp_path):
    require_mutmut()
    project = _project(tmp_path / "p")
    done, doc, report_dir = sweep(project, "pkg/__init__.py", "--ops", "mutmut", "--jobs", "1", "--no-cache")
    assert done.code == 0, done.stderr
    mutant = _the_mutant(doc)
    promoted = run_gate(
        project, "sweep", "--promote", mutant["id"], "--name", "double-divides", "--report-dir", str(report_dir)
    )
    assert promoted.code == 0, promoted.stderr
    assert "3 kills" in promoted.stdout, promoted.stdout
    # The entry's contract is the whole red set: a normal run of it holds, no overreach.
    held = run_gate(project, "run", "--only", "double-divides", "--report-dir", str(tmp_path / "r"))
    assert held.code == 0, held.stdout + held.stderr
    assert sorted(r["id"] for r in held.mutation("double-divides")["red"]) == RED_SET
