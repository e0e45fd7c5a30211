"""A sweep's mutant under which one test file no longer collects (a parametrize list calls the
mutated function) or no longer has its ids is judged by the files that still load, as plain
pytest judges it: their reds are a kill, and the verdict names the files that did not run.
pytest refuses a whole run whose node ids name such a file, so those tests are run again
without it (trial.without_files_not_run). tomlkit: 145 tests red in other files, read as
`broken`. A gate's named mutation is not a sweep's: there the file's tests are unjudged."""

from __future__ import annotations

from gatekit import run_gate, write_project
from sweepkit import require_mutmut, sweep

FILES = {
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
    "pkg/__init__.py": "def esc(s):\n    s = str(s)\n    return s.replace('\"', '\\\\\"')\n",
    # Collected by calling esc: a mutant that raises there breaks this file's collection, and
    # one that changes esc's value changes its ids.
    "tests/test_a.py": (
        "import pytest\nfrom pkg import esc\n\n\n"
        '@pytest.mark.parametrize("v", [esc("a"), esc("b")])\ndef test_param(v):\n    assert v\n'
    ),
    "tests/test_b.py": "from pkg import esc\n\n\ndef test_esc():\n    assert esc('x\"') == 'x\\\\\"'\n",
    "mutations/pkg.toml": '[gate]\ntests = ["tests"]\npaths = ["."]\n',
}


def test_a_sweep_kill_in_the_files_that_load_is_a_kill(tmp_path):
    require_mutmut()
    project = write_project(tmp_path / "p", FILES)
    done, doc, _ = sweep(project, "pkg/__init__.py", "--ops", "mutmut", "--jobs", "1", "--no-cache")
    assert done.code == 0, done.stderr
    by_change = {m["change"]: m for m in doc["sweep"]["mutants"]}
    unloadable = by_change["s = str(s)  ->  s = None"]
    assert unloadable["status"] == "killed", unloadable["detail"]
    assert [r["id"] for r in unloadable["red"]] == ["tests/test_b.py::test_esc"]
    assert "collection failed in tests/test_a.py" in unloadable["detail"]
    # "1 test went red" is no red set: the run stopped there, and says so.
    assert "the run stopped at its first red" in unloadable["detail"]
    # test_a's ids become [None0], [None1]: the ids that are left run in the first session
    # (inrun/selected_ids.py), which pytest refused whole when it was given them by name.
    renamed = by_change["s = str(s)  ->  s = str(None)"]
    assert renamed["status"] == "killed", renamed["detail"]
    assert [r["id"] for r in renamed["red"]] == ["tests/test_b.py::test_esc"]
    assert not [m for m in doc["sweep"]["mutants"] if m["status"] in ("broken", "inconclusive")]


def test_a_named_mutation_whose_test_file_no_longer_loads_stays_broken(tmp_path):
    catalog = FILES["mutations/pkg.toml"] + (
        '\n[[mutation]]\nname = "esc-none"\ntarget = "pkg/__init__.py::esc"\nop = "replace"\n'
        'old = "s = str(s)"\nnew = "s = None"\nkills = ["tests/test_b.py::test_esc"]\n'
    )
    project = write_project(tmp_path / "p", {**FILES, "mutations/pkg.toml": catalog})
    done = run_gate(project, "run", "--no-cache", "--jobs", "1")
    assert done.mutation("esc-none")["verdict"] == "broken", done.stdout
