"""A gate's run gives each selected test a limit of its own, ten times what it took unmutated
and at least the floor of the run's own limit (MIN_TIMEOUT, and twice the slowest test): a
loop in a fast test costs seconds, not ten times the whole selection (marko's gate of 1,334
tests: 78 s a hang, and as long again waiting for a CPU). A kills test declared to hang
(`require = "timeout"`) holds at that limit too."""

from __future__ import annotations

import pytest
from gatekit import run_gate, write_project
from test_a_loop_in_a_fast_test_costs_a_sweep_that_tests_own_limit import SOURCE as SWEPT_SOURCE
from test_a_loop_in_a_fast_test_costs_a_sweep_that_tests_own_limit import TESTS

from killmap.engine import limits_count_cpu_wait
from killmap.verdict.trial import MIN_TIMEOUT

# The sweep's subject (a counter, and a slow test that also counts), its slow test slower: the
# run's limit, ten times the selection, must stand well above the gate's floor for a test.
SOURCE = SWEPT_SOURCE.replace("time.sleep(0.7)", "time.sleep(1.5)")


def entry(name: str, extra: str = "") -> str:
    return (
        f'\n[[mutation]]\nname = "{name}"\ntarget = "pkg/__init__.py::count"\nop = "replace"\nold = "i += 1"\n'
        f'new = "i += 0"\nkills = ["tests/test_pkg.py::test_count"]\n{extra}'
    )


@pytest.mark.skipif(not limits_count_cpu_wait(), reason="a limit is time the run could use on Linux alone")
def test_a_gates_loop_in_a_fast_test_stops_at_that_tests_limit_and_a_declared_hang_holds_there(tmp_path):
    project = write_project(
        tmp_path / "proj",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": SOURCE,
            "tests/test_pkg.py": TESTS,
            "mutations/pkg.toml": '[gate]\ntests = ["tests"]\npaths = ["."]\n'
            + entry("count-never-advances")
            + entry("count-hangs-as-declared", 'require = "timeout"\n'),
        },
    )
    run = run_gate(project, "run", "--no-cache", "--jobs", "2")
    loop = run.mutation("count-never-advances")
    assert loop["verdict"] == "timeout", run.stdout + run.stderr
    # The run's own limit is ten times the selection's 1.5 s and more; test_count's, MIN_TIMEOUT.
    assert loop["timeout_seconds"] > 3 * MIN_TIMEOUT, loop
    assert f"still running after {MIN_TIMEOUT:.1f}s in one test, that test's own limit" in loop["detail"], loop
    # Stopped there, not at the run's limit (a loaded machine's wait for a CPU is added to
    # either, and said: the duration alone proves nothing on a busy runner).
    assert loop["run_seconds"] < loop["timeout_seconds"] + 4 * MIN_TIMEOUT, loop["detail"]
    declared = run.mutation("count-hangs-as-declared")
    assert declared["verdict"] == "held", declared
    assert "tests/test_pkg.py::test_count hung, as require = 'timeout' declares" in declared["detail"], declared
    assert "that test's own limit" in declared["detail"], declared
