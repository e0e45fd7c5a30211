"""A sweep mutant asks one thing: is it killed? Its run stops at the first red test, and the
tests after it are left out on purpose, not resumed nor called missing. `--every-red` runs the
whole selection, and `--promote` runs the mutant again whole, so a promoted contract names
every test the mutant turns red."""

from __future__ import annotations

from gatekit import run_gate, write_project
from sweepkit import require_mutmut, sweep

SOURCE = "def double(x):\n    return x * 2\n\n\ndef quadruple(x):\n    twice = double(x)\n    return double(twice)\n"
TESTS = """from pkg import double, quadruple


def test_0_broad():
    assert quadruple(1) == 4


def test_1():
    assert double(1) == 2


def test_2():
    assert double(2) == 4


def test_3():
    assert double(3) == 6
"""
RED_SET = [
    "tests/test_pkg.py::test_0_broad",
    "tests/test_pkg.py::test_1",
    "tests/test_pkg.py::test_2",
    "tests/test_pkg.py::test_3",
]


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


def test_a_killed_sweep_mutant_runs_the_most_direct_tests_first_and_only_up_to_its_first_red(tmp_path):
    # test_0_broad comes first in pytest's order and runs three lines of the file; test_1 runs
    # only the changed one.
    require_mutmut()
    project = _project(tmp_path / "p")
    done, doc, _ = sweep(project, "pkg/__init__.py", "--ops", "mutmut", "--jobs", "1", "--no-cache")
    assert done.code == 0, done.stderr
    mutant = _the_mutant(doc)
    assert mutant["status"] == "killed"
    assert [r["id"] for r in mutant["red"]] == ["tests/test_pkg.py::test_1"]
    assert mutant["stopped_after"] == "tests/test_pkg.py::test_1" and mutant["selected_tests"] == 1
    assert mutant["order"] == "most direct first"


def test_every_red_runs_the_whole_selection_for_the_whole_red_set(tmp_path):
    require_mutmut()
    project = _project(tmp_path / "p")
    done, doc, _ = sweep(project, "pkg/__init__.py", "--ops", "mutmut", "--jobs", "1", "--no-cache", "--every-red")
    assert done.code == 0, done.stderr
    mutant = _the_mutant(doc)
    assert mutant["status"] == "killed"
    assert sorted(r["id"] for r in mutant["red"]) == RED_SET
    assert "stopped_after" not in mutant and mutant["selected_tests"] == 4


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
    assert "4 kill(s)" in promoted.stdout, promoted.stdout
    # The entry's contract is the whole red set: a normal run of it holds, no overreach.
    held = run_gate(project, "run", "--only", "double-divides", "--report-dir", str(tmp_path / "r"))
    assert held.code == 0, held.stdout + held.stderr
    assert sorted(r["id"] for r in held.mutation("double-divides")["red"]) == RED_SET


# test_1_reads_the_log runs four lines of the file and passes only when nothing was logged
# before it; test_2_logs runs two. The most direct order runs test_2_logs first.
LOGGED_SOURCE = """LOG = []


def double(x):
    LOG.append(x)
    return x * 2


def double_twice(x):
    twice = double(x)
    return double(twice)
"""
LOGGED_TESTS = """import pkg


def test_1_reads_the_log():
    pkg.double_twice(0)
    assert pkg.LOG == [0, 0]


def test_2_logs():
    pkg.double(0)


def test_3_kills():
    assert pkg.double_twice(1) == 4
"""


def test_a_red_the_most_direct_order_caused_is_decided_again_in_pytests_order(tmp_path):
    # Under `x * 2 -> x / 2`, test_1_reads_the_log goes red after test_2_logs, and is green
    # from a fresh session: that order's red is no kill. In pytest's order test_3_kills
    # kills it (the status is flaky without the second try).
    require_mutmut()
    project = write_project(
        tmp_path / "p",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": LOGGED_SOURCE,
            "tests/test_pkg.py": LOGGED_TESTS,
            "mutations/pkg.toml": '[gate]\ntests = ["tests"]\npaths = ["."]\n',
        },
    )
    done, doc, _ = sweep(project, "pkg/__init__.py", "--ops", "mutmut", "--jobs", "1", "--no-cache")
    assert done.code == 0, done.stderr
    mutant = _the_mutant(doc)
    assert mutant["status"] == "killed", mutant
    assert mutant["stopped_after"] == "tests/test_pkg.py::test_3_kills"
    assert mutant["order"] == "pytest's, after the most direct first disagreed with its re-run"
