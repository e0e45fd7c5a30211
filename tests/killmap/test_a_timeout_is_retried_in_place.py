"""A sweep's timeout is run again at once, on its worker, with 4 x its limit, and that run's
verdict stands (Mutation.retry_timeout). In place, not in a second lab after the first: there
a shard's retries ran alone after a second baseline, far past the durations its report
recorded, and no split by those durations could balance the shards (issue 33)."""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import pytest
from gatekit import write_project
from sweepkit import require_mutmut, sweep

import killmap.verdict.lab as lab
from killmap.catalog.plan import LabOptions, load
from killmap.engine import limits_count_cpu_wait
from killmap.engine.workers.timeout_cpu import STRETCH
from killmap.verdict.sweep import EVERY_RED_RETRY_FACTOR, RETRY_FACTOR, retry_factor
from killmap.verdict.trial import MIN_FIRST_RED_TIMEOUT, MIN_TEST_TIMEOUT, MIN_TIMEOUT

SOURCE = "import time\n\n\ndef slow():\n    return 1\n\n\ndef loop():\n    return 2\n"
TESTS = "".join(
    f"from pkg import slow, loop\n\n\ndef test_{n}():\n    assert slow() == 1\n    assert loop() == 2\n\n\n"
    for n in ("a", "b", "c")
)


def _entry(name: str, target: str, old: str, new: str) -> str:
    return (
        f'[[mutation]]\nname = "{name}"\ntarget = "pkg/__init__.py::{target}"\nop = "replace"\n'
        f'old = "{old}"\nnew = "{new}"\ntimeout = 1\nkills = ["tests/test_pkg.py::test_a"]\n\n'
    )


def test_a_timeout_is_confirmed_with_four_times_its_limit_and_the_longer_run_decides(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    catalog = (
        '[gate]\ntests = ["tests"]\npaths = ["."]\n\n'
        # 0.6 s a call, three tests: past the 1 s limit, well within the retry's 4 s.
        + _entry("slow-but-ends", "slow", "return 1", "time.sleep(0.6)\\n    return 1")
        + _entry("loops", "loop", "return 2", "while True:\\n        pass")
        + _entry("loops-unretried", "loop", "return 2", "while True:\\n        time.sleep(0.01)")
    )
    project = write_project(
        tmp_path / "proj",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": SOURCE,
            "tests/test_pkg.py": TESTS,
            "mutations/pkg.toml": catalog,
        },
    )
    options = LabOptions(jobs=2, use_cache=False)
    _, mutations = load(project, options)
    retried = [dataclasses.replace(m, retry_timeout=4.0) if m.name != "loops-unretried" else m for m in mutations]
    verdicts = {v.name: v for v in lab.run_mutations(project, retried, options).verdicts}

    ends, loops, unretried = verdicts["slow-but-ends"], verdicts["loops"], verdicts["loops-unretried"]
    # The longer run finished: its verdict (no test went red) stands, not the first timeout.
    assert ends.verdict != "timeout" and ends.extras.get("retried") is True, ends.detail
    assert ends.timeout == 4.0
    # Both runs counted in its duration: the 1 s limit of the first, and the 1.8 s of the second.
    assert ends.duration >= 2.8 and ends.extras["first_seconds"] >= 1.0
    assert loops.verdict == "timeout" and "confirmed with 4 x the first limit, 1.0s" in loops.detail
    assert loops.timeout == 4.0 and loops.duration >= 5.0
    assert unretried.verdict == "timeout" and "retried" not in unretried.extras
    assert unretried.timeout == 1.0 and unretried.duration < 4.0


COUNTER = "def count(n):\n    i = 0\n    while i < n:\n        i += 1\n    return i\n"


def _counter_swept(tmp_path: Path, gate: str, *flags: str):
    """COUNTER swept with mutmut's operators (two of its mutants loop), `gate` added to [gate]."""
    require_mutmut()
    project = write_project(
        tmp_path / "p",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": COUNTER,
            "tests/test_pkg.py": "from pkg import count\n\n\ndef test_count():\n    assert count(3) == 3\n",
            "mutations/pkg.toml": '[gate]\ntests = ["tests"]\npaths = ["."]\n' + gate,
        },
    )
    done, doc, _ = sweep(project, "pkg/__init__.py", "--ops", "mutmut", "--jobs", "2", "--no-cache", *flags)
    return done, doc


@pytest.mark.skipif(not limits_count_cpu_wait(), reason="clock-time limits keep MIN_TIMEOUT")
def test_a_sweeps_loop_times_out_at_its_tests_own_floor(tmp_path):
    # A sweep's run asks only whether its mutant is caught: where its limit is time it could
    # run, a loop in a test of milliseconds costs that test's own limit, MIN_TEST_TIMEOUT, not
    # the run's MIN_FIRST_RED_TIMEOUT nor the gate's MIN_TIMEOUT (trial.each_test_limit).
    done, doc = _counter_swept(tmp_path, "")  # no catalog timeout
    assert done.code == 0, done.stderr
    timeouts = [m for m in doc["sweep"]["mutants"] if m["status"] == "timeout"]
    assert {m["change"] for m in timeouts} >= {"i += 1  ->  i -= 1", "i += 1  ->  i = 1"}, done.stdout
    for mutant in timeouts:
        limit, whole = (float(x) for x in _LIMIT_AND_UNMUTATED.search(mutant["detail"]).groups())
        assert "that test's own limit" in mutant["detail"], mutant["detail"]
        # test_count takes a millisecond: its limit is about the floor (more only where a loaded
        # machine slowed the baseline), below the run's own.
        assert MIN_TEST_TIMEOUT <= limit < max(MIN_FIRST_RED_TIMEOUT, 10 * whole), mutant
        assert mutant["duration_seconds"] >= limit  # and more by the run's wait for a CPU
    assert MIN_TEST_TIMEOUT < MIN_FIRST_RED_TIMEOUT < MIN_TIMEOUT


_LIMIT_AND_UNMUTATED = re.compile(r"still running after ([\d.]+)s.*the same tests took ([\d.]+)s unmutated")


@pytest.mark.parametrize(
    ("flags", "factor"),
    # Stopped at its first red, a run is slow only by a loop: where its limit counts the
    # machine's wait for a CPU, a timeout is not re-run (elsewhere at twice its limit); with
    # every red run, each red costs the run more, and the retry gets four times it.
    [((), None), (("--every-red",), 4)],
    ids=["stopped at the first red", "every red"],
)
def test_a_sweep_retries_each_timeout_and_its_report_counts_both_runs(tmp_path, flags, factor):
    # A 1 s limit: mutmut's `i += 1` -> `i = 1` and `i -= 1` never end.
    done, doc = _counter_swept(tmp_path, "timeout = 1\n", *flags)
    assert done.code == 0, done.stderr
    timeouts = [m for m in doc["sweep"]["mutants"] if m["status"] == "timeout"]
    assert {m["change"] for m in timeouts} >= {"i += 1  ->  i -= 1", "i += 1  ->  i = 1"}, done.stdout
    if factor is None and not limits_count_cpu_wait():
        factor = 2
    for mutant in timeouts:
        if factor is None:  # a loop costs the gate's limit once
            assert not mutant["retried"] and "confirmed with" not in mutant["detail"]
            # Once, stretched at most STRETCH times by a loaded machine's wait for a CPU.
            assert 1.0 <= mutant["duration_seconds"] < 1.0 * STRETCH + 0.5
            continue
        assert mutant["retried"] and f"confirmed with {factor} x the first limit" in mutant["detail"]
        # The first run's 1 s and the retry's: what the mutant cost, for --durations.
        assert mutant["duration_seconds"] >= 1.0 + factor and mutant["first_seconds"] >= 1.0


def test_a_sweep_retries_a_timeout_only_where_a_limit_is_clock_time_or_every_red_runs():
    assert retry_factor(every_red=False, waits_counted=True) is None
    assert retry_factor(every_red=False, waits_counted=False) == RETRY_FACTOR == 2.0
    assert retry_factor(every_red=True, waits_counted=True) == EVERY_RED_RETRY_FACTOR == 4.0
    assert retry_factor(every_red=True, waits_counted=False) == EVERY_RED_RETRY_FACTOR


def test_a_limit_counts_the_wait_for_a_cpu_where_the_kernel_tells_it():
    linux = sys.platform.startswith("linux") and Path("/proc/self/schedstat").is_file()
    assert limits_count_cpu_wait() is linux
