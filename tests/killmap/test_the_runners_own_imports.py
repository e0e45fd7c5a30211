"""What pytest itself brings into every session: its own imports, and the project's warning
filters, which the gate's bookkeeping runs under too."""

from __future__ import annotations

import pytest
from gatekit import run_gate, write_project

from killmap.engine.workers.pool import Pool
from killmap.errors import GateError
from killmap.verdict.baseline import check_runner_imports

FILTERED = {
    # pluggy's tox.ini: every warning is an error, the gate's own coverage's included.
    "pyproject.toml": (
        '[project]\nname = "pkg"\nversion = "0"\n\n[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n'
    ),
    "pkg/__init__.py": "",
    "pkg/mod.py": "def one():\n    return 1\n",
    # Imported only inside a test: a baseline run tracing the other test records no line,
    # and coverage warns "No data was collected".
    "tests/test_pkg.py": (
        "def test_lazy():\n    from pkg import mod\n    assert mod.one() == 1\n\n\ndef test_other():\n    assert True\n"
    ),
    "mutations/pkg.toml": (
        '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "one-mutated"\n'
        'target = "pkg/mod.py::one"\nop = "constant-return"\nvalue = "0"\n'
        'kills = ["tests/test_pkg.py::test_lazy"]\n'
    ),
}


def test_a_project_that_makes_every_warning_an_error_still_gets_its_baseline(tmp_path):
    project = write_project(tmp_path / "filtered", FILTERED)
    done = run_gate(project, "run", "--no-cache", "--jobs", "2")
    assert done.code == 0, done.stderr
    assert done.verdicts() == {"one-mutated": "held"}


def test_a_worker_says_what_pytest_imported_before_any_run(tmp_path):
    pool = Pool([tmp_path / "sandbox-0"], start_dir=tmp_path)
    try:
        worker = pool.workers[0]
        worker.wait_ready()
        assert {"pytest", "_pytest", "pluggy"} <= worker.preloaded
    finally:
        pool.close()


def test_a_target_pytest_itself_imported_is_refused_before_any_mutant_runs(km_project):
    # pluggy's own catalog: pytest runs on pluggy, so every session has pytest's copy of it,
    # and eleven mutants were judged broken one run at a time.
    km_project.module("def f():\n    return 1\n")
    mutation = km_project.mutation(km_project.entry("src/pkg/mod.py::f", "constant-return", value="0"))
    check_runner_imports([mutation], mutation.settings, frozenset({"pytest", "json"}))
    with pytest.raises(GateError) as caught:
        check_runner_imports([mutation], mutation.settings, frozenset({"pytest", "pkg"}))
    assert caught.value.field == "target" and caught.value.mutation == "under-test"
    assert "pytest itself imported pkg" in str(caught.value)
