"""A sweep's run stops at its first red, and a timeout is caught: a loop in a test that took
milliseconds is stopped at that test's own limit, not at ten times the whole selection's
(bracex: 23 loops, each in a first test of a few milliseconds, cost 318 of a sweep's 399
worker-seconds at 15 s a loop). A gate's run has them too, at the floor of its own limit
(test_a_loop_in_a_gates_fast_test_costs_the_gates_floor_not_the_selections.py)."""

from __future__ import annotations

import json
import os
import sys
import time

import pytest
from gatekit import write_project
from sweepkit import require_mutmut, sweep

from killmap.catalog.contract import GateSettings, Mutation, Target
from killmap.engine import limits_count_cpu_wait
from killmap.engine.workers.timeout_cpu import TestLimits
from killmap.verdict.baseline import Baseline
from killmap.verdict.trial import MIN_TEST_TIMEOUT, MIN_TIMEOUT, each_test_limit

linux_only = pytest.mark.skipif(not limits_count_cpu_wait(), reason="a limit is time the run could use on Linux alone")


def _events(path, *events):
    with open(path, "a", encoding="utf-8") as out:
        for event in events:
            out.write(json.dumps(event) + "\n")


def test_a_test_is_cut_once_past_its_own_limit_and_not_before(tmp_path):
    events = tmp_path / "events.jsonl"
    events.write_text("")
    watch = TestLimits(str(events), {"t.py::test_loop": 0.2, "t.py::test_quick": 0.2}, os.getpid())
    assert watch.cut(time.perf_counter()) is None  # nothing started
    _events(events, {"event": "start", "id": "t.py::test_quick"})
    assert watch.cut(time.perf_counter()) is None
    _events(events, {"event": "test", "id": "t.py::test_quick", "outcome": "passed"})
    time.sleep(0.3)
    assert watch.cut(time.perf_counter()) is None  # it ended: no test is running
    _events(events, {"event": "start", "id": "t.py::test_loop"})
    assert watch.cut(time.perf_counter()) is None  # just started
    time.sleep(0.3)
    cut = watch.cut(time.perf_counter())
    assert cut is not None and (cut.test, cut.seconds) == ("t.py::test_loop", 0.2), cut


def _mutation(*, first_red: bool, timeout: float | None = None) -> Mutation:
    return Mutation(
        name="m",
        target=Target("pkg/__init__.py", "count"),
        op="replace",
        params=(),
        kills=(),
        settings=GateSettings(),
        first_red=first_red,
        timeout=timeout,
    )


def _baseline(durations: dict[str, float]) -> Baseline:
    return Baseline(GateSettings(), tuple(durations), durations, 0.1, {}, 2, 1.0, per_test=0.001)


@linux_only
def test_each_test_limit_is_ten_times_its_own_and_at_least_twice_the_slowest_tests():
    baseline = _baseline({"t.py::test_fast": 0.002, "t.py::test_slow": 2.0, "t.py::test_mid": 0.5})
    selected = ("t.py::test_fast", "t.py::test_mid", "t.py::test_slow")
    limits = dict(each_test_limit(_mutation(first_red=True), baseline, selected, 30.0))
    assert limits["t.py::test_fast"] == 4.0  # twice the slowest test: a session fixture's setup
    assert limits["t.py::test_mid"] == pytest.approx(5.01)
    assert limits["t.py::test_slow"] == pytest.approx(20.01)
    # Only where below the run's own limit, never under a catalog's timeout; a gate's run has
    # the floor of its run's own limit, MIN_TIMEOUT.
    assert "t.py::test_slow" not in dict(each_test_limit(_mutation(first_red=True), baseline, selected, 10.0))
    gate = dict(each_test_limit(_mutation(first_red=False), baseline, selected, 30.0))
    assert gate == {
        "t.py::test_fast": MIN_TIMEOUT,
        "t.py::test_mid": pytest.approx(5.01),
        "t.py::test_slow": pytest.approx(20.01),
    }
    assert each_test_limit(_mutation(first_red=True, timeout=60.0), baseline, selected, 30.0) == ()
    assert MIN_TEST_TIMEOUT <= min(
        dict(each_test_limit(_mutation(first_red=True), _baseline({"a": 0.001}), ("a",), 9.0)).values()
    )


SOURCE = """\
import time


def count(n):
    i = 0
    while i < n:
        i += 1
    return i


def settle():
    time.sleep(0.7)
    return count(2)
"""

TESTS = """\
from pkg import count, settle


def test_count():
    assert count(3) == 3


def test_settle():
    assert settle() == 2
"""


@linux_only
def test_a_sweeps_loop_in_a_fast_test_is_stopped_at_that_tests_limit(tmp_path):
    require_mutmut()
    project = write_project(
        tmp_path / "proj",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": SOURCE,
            "tests/test_pkg.py": TESTS,
            "mutations/pkg.toml": '[gate]\ntests = ["tests"]\npaths = ["."]\n',
        },
    )
    done, doc, _ = sweep(project, "pkg/__init__.py::count", "--ops", "mutmut", "--no-cache", "--jobs", "1")
    assert doc is not None, done.stdout + done.stderr
    loops = [m for m in doc["sweep"]["mutants"] if m["status"] == "timeout"]
    assert loops, [(m["change"], m["status"]) for m in doc["sweep"]["mutants"]]
    for loop in loops:
        # The run's own limit is ten times the selection's 0.7 s and more; the test's, 1.4 s.
        assert "in one test, that test's own limit" in loop["detail"], loop["detail"]
        assert "in tests/test_pkg.py::test_count" in loop["detail"], loop["detail"]
        assert loop["duration_seconds"] < 7.0 + 5.0, loop  # never the run's own limit, with room for a slow machine
    assert sys.platform.startswith("linux")


def test_a_sweeps_fresh_session_is_given_its_collection_twice_not_ten_times():
    # intervaltree: a mutant that runs at import (a fresh session) got 10 x (55 s of traced
    # collection + its tests): 553 s, and 843 s with the CPU wait, of a 919 s sweep.
    from killmap.verdict.trial import mutant_timeout

    baseline = Baseline(GateSettings(), ("a",), {"a": 0.3}, 55.0, {}, 2, 1.0, per_test=0.0)
    sweep = mutant_timeout(_mutation(first_red=True), baseline, ("a",))
    gate = mutant_timeout(_mutation(first_red=False), baseline, ("a",))
    assert sweep.fresh == pytest.approx(10 * (0.2 * 55.0 + 0.3))  # 113 s
    assert gate.fresh == pytest.approx(10 * (55.0 + 0.3))  # a gate's verdict keeps its limit
    assert sweep.fresh_unmutated == gate.fresh_unmutated == pytest.approx(55.3)


@linux_only
def test_a_retry_gives_each_test_its_factor_times_its_first_limit():
    # bidict: a Hypothesis test still shrinking at its own 18.9 s limit was tried again with its
    # run's limit four times as long and its own limit as it was: the retry changed nothing.
    from killmap.verdict.trial import Limits, tests_limits

    baseline = _baseline({"t.py::test_fast": 0.002, "t.py::test_slow": 2.0})
    selected = ("t.py::test_fast", "t.py::test_slow")
    first = Limits(30.0, 30.0, 2.0, 2.0)
    again = first.longer(4.0)  # what a retry runs with (trial._retried)
    assert (again.fresh, again.swap, again.tests_factor) == (120.0, 120.0, 4.0)
    mutation = _mutation(first_red=False)
    assert dict(tests_limits(mutation, baseline, selected, first)) == {
        "t.py::test_fast": MIN_TIMEOUT,
        "t.py::test_slow": pytest.approx(20.01),
    }
    assert dict(tests_limits(mutation, baseline, selected, again)) == {
        "t.py::test_fast": 4 * MIN_TIMEOUT,
        "t.py::test_slow": pytest.approx(80.04),
    }
