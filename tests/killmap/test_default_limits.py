"""A mutant's default time limit is charged for its own tests, not for the whole suite's.

The limit is 10x what the selected tests took unmutated. On a real suite of thousands of
tiny tests (packaging: 8,369), most of a baseline run's wall is pytest's own cost per test;
charging all of it to a mutant that runs three tests gave it 178 s, and a hang there cost
three minutes (and a sweep's four-times retry twelve more).
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest
from gatekit import copy_fixture, run_gate, write_project

import killmap.verdict.lab as lab
from killmap.catalog.plan import LabOptions
from killmap.engine import limits_count_cpu_wait
from killmap.engine.outcome import RunOutcome, TestResult
from killmap.verdict.baseline import session_costs
from killmap.verdict.trial import (
    COLLECTION_SHARE,
    FORK_START,
    MIN_FIRST_RED_TIMEOUT,
    MIN_TIMEOUT,
    TIMEOUT_FACTOR,
    mutant_timeout,
)


def _forked_run(count: int, wall: float, each: float, collect: float) -> RunOutcome:
    tests = {f"t::{i}": TestResult(id=f"t::{i}", outcome="passed", duration=each) for i in range(count)}
    return RunOutcome(
        status="done",
        wall=wall,
        collected=tuple(tests),
        tests=tests,
        finished=True,
        path="swap",
        session_seconds=collect,
    )


def _mutation(timeout: float | None = None, *, first_red: bool = False):
    return SimpleNamespace(timeout=timeout, settings=SimpleNamespace(timeout=None), first_red=first_red)


def _baseline(run: RunOutcome):
    durations = run.durations
    once, per_test = session_costs([run], durations)
    return SimpleNamespace(overhead=once, per_test=per_test, durations=durations, per_test_timeout=None), once, per_test


def test_a_mutant_of_three_tests_is_not_charged_the_whole_suites_cost_per_test():
    run = _forked_run(10_000, wall=15.0, each=0.0001, collect=2.5)
    baseline, once, per_test = _baseline(run)
    assert once == 2.5  # a fresh session's collection
    assert abs(per_test - (15.0 - 1.0) / 10_000) < 1e-9  # the rest of the wall, per test
    mutation = _mutation()
    limits = mutant_timeout(mutation, baseline, ("t::1", "t::2", "t::3"))
    limit, unmutated = limits.fresh, limits.fresh_unmutated
    assert abs(unmutated - (2.5 + 3 * per_test + 3 * 0.0001)) < 1e-9
    assert limit == max(MIN_TIMEOUT, TIMEOUT_FACTOR * unmutated) < 26
    # The whole suite is still charged the whole suite.
    unmutated_all = mutant_timeout(mutation, baseline, tuple(run.tests)).fresh_unmutated
    assert abs(unmutated_all - (2.5 + 14.0 + 1.0)) < 1e-6


def test_a_catalog_timeout_is_the_limit_whatever_the_baseline_cost():
    baseline, _, _ = _baseline(_forked_run(100, wall=1.0, each=0.001, collect=0.5))
    mutation = _mutation(timeout=7.0)
    limits = mutant_timeout(mutation, baseline, ("t::1",))
    assert limits.fresh == limits.swap == 7.0


def test_a_run_in_a_fresh_session_is_charged_its_whole_overhead_once():
    # Without a collected session the run cannot tell its collection from pytest's cost per
    # test: all of it is charged to every mutant, as a fresh session would pay it.
    run = _forked_run(1_000, wall=4.0, each=0.001, collect=0.0)
    once, per_test = session_costs([run], run.durations)
    assert abs(once - 3.0) < 1e-9 and per_test == 0.0


def test_the_gates_baseline_measures_its_sessions_collection(tmp_path, monkeypatch):
    project = copy_fixture("basic", tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    result = lab.run_lab(project, LabOptions(jobs=1, use_cache=False))
    baseline = result.baselines[0]
    # The collected session reported how long it took to collect: without that the run
    # could not be split into a once part and a per-test part, and per_test would be 0.
    assert baseline.overhead >= 0.2 and baseline.per_test > 0
    for verdict in result.verdicts:
        selected = len(verdict.selected)
        unmutated = verdict.extras["selected_baseline_seconds"]
        # What the path it took pays once: a fresh session collects, a fork does not.
        once = FORK_START if verdict.extras.get("path") == "swap" else baseline.overhead
        assert (
            abs(
                unmutated - (once + baseline.per_test * selected + sum(baseline.durations[t] for t in verdict.selected))
            )
            < 1e-3
        )


def test_a_fork_of_the_collected_session_is_not_charged_the_collection():
    # python-dateutil collects in about 10 s: a looping mutant on the swap path ran 100 s
    # before it was called a timeout, though no fork ever collects.
    run = _forked_run(100, wall=1.0, each=0.001, collect=10.0)
    baseline, once, per_test = _baseline(run)
    mutation = _mutation()
    limits = mutant_timeout(mutation, baseline, ("t::1", "t::2"))
    tests = 2 * per_test + 2 * 0.001
    assert abs(limits.fresh_unmutated - (10.0 + tests)) < 1e-9
    assert abs(limits.swap_unmutated - (FORK_START + tests)) < 1e-9
    assert limits.fresh == TIMEOUT_FACTOR * limits.fresh_unmutated > 100
    assert limits.swap == MIN_TIMEOUT
    assert limits.on("swap") == (limits.swap, limits.swap_unmutated)
    assert limits.on("fallback") == limits.on("fresh") == (limits.fresh, limits.fresh_unmutated)


def test_a_first_red_fork_has_the_lower_floor_only_where_its_limit_is_time_it_could_run():
    # A sweep's run asks only whether its mutant is caught; a gate's run must tell a slow red
    # from a hang, and keeps the higher floor. Clock-time limits (no schedstat) keep it too.
    baseline, _, _ = _baseline(_forked_run(100, wall=1.0, each=0.001, collect=10.0))
    sweep = mutant_timeout(_mutation(first_red=True), baseline, ("t::1",))
    gate = mutant_timeout(_mutation(), baseline, ("t::1",))
    assert gate.swap == MIN_TIMEOUT
    assert sweep.swap == (MIN_FIRST_RED_TIMEOUT if limits_count_cpu_wait() else MIN_TIMEOUT)
    assert MIN_FIRST_RED_TIMEOUT < MIN_TIMEOUT
    assert gate.fresh == TIMEOUT_FACTOR * gate.fresh_unmutated  # a gate's fresh session: ten times its start too
    # A sweep's fresh session: its start (collection) twice, its tests ten times (intervaltree).
    tests = gate.fresh_unmutated - baseline.overhead
    assert sweep.fresh == pytest.approx(TIMEOUT_FACTOR * (COLLECTION_SHARE * baseline.overhead + tests))
    assert sweep.fresh < gate.fresh and sweep.fresh_unmutated == gate.fresh_unmutated


SLOW_COLLECTION = {
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
    "pkg/__init__.py": "def one():\n    return 1\n",
    # Collection takes longer than the minimum limit, so the fresh limit is above it.
    "tests/conftest.py": "import time\ntime.sleep(1.5)\n",
    "tests/test_pkg.py": "from pkg import one\n\n\ndef test_one():\n    assert one() == 1\n",
    "mutations/pkg.toml": (
        '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "one-loops"\n'
        'target = "pkg/__init__.py::one"\nop = "replace"\nold = "return 1"\n'
        'new = "while True:\\n        pass"\nkills = ["tests/test_pkg.py::test_one"]\n'
    ),
}


def test_a_looping_mutant_on_the_swap_path_times_out_at_the_forks_limit(tmp_path):
    project = write_project(tmp_path / "slow", SLOW_COLLECTION)
    done = run_gate(project, "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("one-loops")
    assert entry["verdict"] == "timeout", done.stderr
    assert entry["path"] == "swap"
    assert entry["timeout_seconds"] == MIN_TIMEOUT  # the fresh limit would be 10 x 1.5 s and more
    # Held to it, not to the fresh limit: its duration less what a loaded machine kept it
    # waiting for a CPU (which moves the deadline on, timeout_cpu.Limit).
    waited = re.search(r"not counting ([\d.]+)s it waited for a CPU", entry["detail"])
    assert entry["duration_seconds"] - (float(waited.group(1)) if waited else 0.0) < 2 * MIN_TIMEOUT
