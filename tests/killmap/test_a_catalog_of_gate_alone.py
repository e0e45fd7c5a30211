"""A catalog that holds only [gate]: a new user's first file, written to sweep before naming
anything. `run` has nothing to gate, but refuses a bad [gate] as `check` does; `sweep` uses its settings."""

from __future__ import annotations

import pytest
from gatekit import run_gate, write_project
from sweepkit import require_mutmut, sweep

# Neither `tests` nor `paths` is the default, so only a sweep that read them finds the tests
# and imports the package.
GATE_ALONE = {
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
    "lib/pkg/__init__.py": "def one(x):\n    if x > 0:\n        return x + 1\n    return 0\n",
    "checks/test_pkg.py": "from pkg import one\n\n\ndef test_one():\n    assert one(1) == 2\n    assert one(-1) == 0\n",
    "mutations/setup.toml": '[gate]\ntests = ["checks"]\npaths = ["lib"]\n',
}


@pytest.fixture
def project(tmp_path):
    return write_project(tmp_path / "proj", GATE_ALONE)


def test_run_on_a_catalog_of_gate_alone_says_there_is_nothing_to_gate_and_exits_zero(project):
    run = run_gate(project, "run", "--no-cache")
    assert run.code == 0, run.stdout + run.stderr
    assert "nothing to gate: the catalog(s) name no [[mutation]] yet" in run.stdout
    assert run.report is not None and run.report["mutations"] == []


def test_check_on_a_catalog_of_gate_alone_collects_its_tests_and_exits_zero(project):
    done = run_gate(project, "check")
    assert done.code == 0, done.stdout + done.stderr
    assert "0 mutations, 1 test collected" in done.stdout


def test_check_on_a_catalog_of_gate_alone_still_refuses_tests_that_do_not_collect(project):
    (project / "mutations" / "setup.toml").write_text('[gate]\ntests = ["nope"]\npaths = ["lib"]\n')
    done = run_gate(project, "check")
    assert done.code == 2, done.stdout + done.stderr
    assert "nope" in done.stderr


@pytest.mark.parametrize(
    ("exclude", "said"),
    [
        ("checks/test_pgk.py", "names checks/test_pgk.py, no file of the project"),
        ("checks/test_pkg.py::test_onne", "excludes no test (under checks)"),
    ],
)
def test_run_on_a_catalog_of_gate_alone_refuses_a_bad_exclude_as_check_does(project, exclude, said):
    # A first-time user's [gate] with a typo in exclude: run said "nothing to gate", exit 0.
    (project / "mutations" / "setup.toml").write_text(
        f'[gate]\ntests = ["checks"]\npaths = ["lib"]\nexclude = ["{exclude}"]\n'
    )
    for command in (("run", "--no-cache"), ("check",)):
        done = run_gate(project, *command)
        assert done.code == 2, done.stdout + done.stderr
        [line] = done.stderr.splitlines()
        assert "mutations/setup.toml: field 'exclude'" in line and said in line, line
        assert "nothing to gate" not in done.stdout


def test_a_catalog_with_neither_gate_nor_mutations_is_still_refused(project):
    (project / "mutations" / "setup.toml").write_text("")
    done = run_gate(project, "run", "--no-cache")
    assert done.code == 2
    assert done.stderr.strip() == "killmap: mutations/setup.toml: field 'mutation': no [[mutation]] entries"


def test_sweep_of_a_catalog_of_gate_alone_runs_its_tests_with_its_paths(project):
    require_mutmut()
    done, doc, _ = sweep(project, "--ops", "killmap", "lib/pkg/__init__.py")
    assert done.code == 0, done.stdout + done.stderr
    assert [b["tests"] for b in doc["sweep"]["baselines"]] == [["checks"]]
    [mutant] = doc["sweep"]["mutants"]
    assert mutant["status"] == "killed" and mutant["gate"] == {"tests": ["checks"], "paths": ["lib"]}


def test_sweep_of_a_catalog_of_gate_alone_without_a_target_asks_for_one(project):
    require_mutmut()
    done, _, _ = sweep(project, "--ops", "killmap")
    assert done.code == 2
    assert "nothing to sweep: name files or file::symbol targets" in done.stderr
