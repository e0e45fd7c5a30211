"""A sweep's run stops at its first red and asks only whether its mutant is caught: where
its limit is time it could run, a loop costs it MIN_FIRST_RED_TIMEOUT, not the gate's
MIN_TIMEOUT (trial.mutant_timeout): fourteen of more-itertools' mutants loop forever."""

from __future__ import annotations

import pytest
from gatekit import write_project
from sweepkit import require_mutmut, sweep

from killmap.engine import limits_count_cpu_wait
from killmap.verdict.trial import MIN_FIRST_RED_TIMEOUT, MIN_TIMEOUT

COUNTER = "def count(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\n"


@pytest.mark.skipif(not limits_count_cpu_wait(), reason="clock-time limits keep MIN_TIMEOUT")
def test_a_sweeps_loop_times_out_at_the_first_red_floor(tmp_path):
    require_mutmut()
    project = write_project(
        tmp_path / "p",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": COUNTER,
            "tests/test_pkg.py": "from pkg import count\n\n\ndef test_count():\n    assert count(3) == 3\n",
            "mutations/pkg.toml": '[gate]\ntests = ["tests"]\npaths = ["."]\n',  # no catalog timeout
        },
    )
    done, doc, _ = sweep(project, "pkg/__init__.py", "--ops", "mutmut", "--jobs", "2", "--no-cache")
    assert done.code == 0, done.stderr
    timeouts = [m for m in doc["sweep"]["mutants"] if m["status"] == "timeout"]
    assert {m["change"] for m in timeouts} >= {"i += 1  ->  i -= 1", "i += 1  ->  i = 1"}, done.stdout
    for mutant in timeouts:
        assert f"still running after {MIN_FIRST_RED_TIMEOUT}s" in mutant["detail"], mutant["detail"]
        # Its duration may pass the limit by the run's wait for a CPU (timeout_cpu.Limit).
        assert mutant["duration_seconds"] >= MIN_FIRST_RED_TIMEOUT
    assert MIN_FIRST_RED_TIMEOUT < MIN_TIMEOUT
