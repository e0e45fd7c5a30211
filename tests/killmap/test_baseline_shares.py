"""Each baseline run traces the tests it claims first; together they miss no test's reach.

Tracing slows hot code several times over, so the baseline's runs share it: each test is
traced by the first run to reach it, so a run that started late finds more tests claimed
and the runs end together. Collection is the same program in every run: under coverage's
C tracer only the first run records it, where tracing it doubled every session's collection. Selection is only as sound
as the union: a test whose lines were lost would never be run under a mutant it can turn
red. So the reach recorded must be the same whatever the number of runs.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys

import pytest
from gatekit import copy_fixture

import killmap.verdict.baseline as baseline_module
from killmap.catalog.plan import LabOptions
from killmap.engine.outcome import RunOutcome, TestResult
from killmap.engine.plugin import Recorder
from killmap.verdict.baseline import untraced_durations
from killmap.verdict.lab import run_lab

UNRELATED = {f"tests/test_unrelated.py::test_unrelated_{i}" for i in range(1, 21)}
SHARED = {"tests/test_shared.py::test_shared_direct", "tests/test_shared.py::test_shared_through_a_caller"}


def who_runs(coverage: dict[str, list[int]], line: int) -> set[str]:
    return {context for context, lines in coverage.items() if context and line in lines}


@pytest.mark.parametrize("runs", [1, 2, 3])
def test_every_test_that_runs_a_line_is_recorded_however_the_tracing_is_shared(tmp_path, monkeypatch, runs):
    project = copy_fixture("selection", tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    seen: list[list[RunOutcome]] = []

    def durations(outcomes):
        seen.append(outcomes)
        return untraced_durations(outcomes)

    monkeypatch.setattr(baseline_module, "untraced_durations", durations)
    result = run_lab(project, LabOptions(jobs=2, baseline_runs=runs, use_cache=False))
    # Each test was traced in exactly one run, and its record says which (a duration taken
    # from the run that traced it would inflate every timeout built on it).
    [outcomes] = seen
    for test in outcomes[0].tests:
        assert sum(o.tests[test].traced for o in outcomes) == 1, test
    coverage = result.baselines[0].coverage["src/selpkg/calc.py"]
    # Twenty tests run the same line: whichever run traced each one, all twenty are there.
    assert who_runs(coverage, 9) == UNRELATED
    assert who_runs(coverage, 5) == SHARED
    # What ran while the tests were collected (OFFSET = 1, the def lines) is in no test's name.
    assert {1, 4, 8, 12} <= set(coverage[""])
    recorded = [any("" in contexts for contexts in (o.coverage or {}).values()) for o in outcomes]
    if result.baselines[0].tracer == "coverage":
        # The first run's session traced its collection; the other worker's did not (a third
        # run forked from the first session inherits what that one recorded).
        assert recorded[0] and (runs == 1 or not all(recorded))
    else:
        assert all(recorded)  # the line monitor records it in every run, cheaply
    assert set(result.baselines[0].durations) == UNRELATED | SHARED | {"tests/test_lines.py::test_anchor_has_not_moved"}


def _run(durations: dict[str, float], traced: set[str] = frozenset()) -> RunOutcome:
    ids = tuple(durations)
    return RunOutcome(
        "done",
        1.0,
        collected=ids,
        tests={t: TestResult(t, "passed", d, traced=t in traced) for t, d in durations.items()},
    )


def test_a_tests_duration_comes_from_the_run_that_did_not_trace_it():
    # Run 1 traced a and c, run 2 traced b and d: tracing made each test ten times slower in
    # the run that traced it. Timeouts are built on these durations, and a mutant runs
    # untraced, so the traced times must not be the ones kept.
    first = _run({"a": 1.0, "b": 0.1, "c": 1.0, "d": 0.1}, traced={"a", "c"})
    second = _run({"a": 0.1, "b": 1.0, "c": 0.1, "d": 1.0}, traced={"b", "d"})
    assert untraced_durations([first, second]) == {"a": 0.1, "b": 0.1, "c": 0.1, "d": 0.1}


def test_with_one_baseline_run_its_own_durations_are_kept():
    only = _run({"a": 0.5, "b": 0.7}, traced={"a", "b"})
    assert untraced_durations([only]) == {"a": 0.5, "b": 0.7}


def test_a_test_is_traced_by_the_first_run_to_claim_it_and_by_no_other(tmp_path):
    claims = str(tmp_path / "claims")
    ids = ["tests/test_a.py::test_one", "tests/test_a.py::test_two", "tests/test_b.py::test_three"]
    ahead = Recorder(str(tmp_path / "ahead.jsonl"), trace_claims=claims)
    behind = Recorder(str(tmp_path / "behind.jsonl"), trace_claims=claims)
    ahead.set_collected(ids)
    behind.set_collected(list(reversed(ids)))  # collected in another order: the same claims
    assert ahead.claims(ids[0])
    assert not behind.claims(ids[0])
    assert behind.claims(ids[2])  # reached first by the other run
    assert not ahead.claims(ids[2])
    assert ahead.claims(ids[1]) and not behind.claims(ids[1])
    # Without claims (one baseline run, a traced re-run) every test is traced.
    alone = Recorder(str(tmp_path / "alone.jsonl"))
    alone.set_collected(ids)
    assert alone.claims(ids[0])


def test_a_test_that_cannot_be_claimed_is_traced_all_the_same(tmp_path):
    # Tracing a test twice costs time; tracing it in no run loses its reach, and the gate
    # would then select no test for a mutant it reaches. A claims file that cannot be
    # opened, or a test the run did not collect, is traced by whoever meets it.
    ids = ["tests/test_a.py::test_one", "tests/test_a.py::test_two"]
    nowhere = str(tmp_path / "missing-folder" / "claims")
    first = Recorder(str(tmp_path / "first.jsonl"), trace_claims=nowhere)
    second = Recorder(str(tmp_path / "second.jsonl"), trace_claims=nowhere)
    for recorder in (first, second):
        recorder.set_collected(ids)
    assert all(first.claims(t) and second.claims(t) for t in ids)
    claims = str(tmp_path / "claims")
    third = Recorder(str(tmp_path / "third.jsonl"), trace_claims=claims)
    third.set_collected(ids)
    assert third.claims("tests/test_b.py::test_not_collected")
    assert third.claims("tests/test_b.py::test_not_collected")
    for recorder in (first, second, third):
        recorder.close()


def test_a_run_that_must_record_collection_is_never_served_by_a_session_that_did_not(tmp_path):
    # The baseline's first run records collection for all; any traced run that asks for it
    # (a kills test traced alone, say) on a worker whose session collected untraced must run
    # in a fresh session, which records its own: else the collection's lines would be lost.
    import killmap.engine.worker as worker

    requests_read, requests_write = os.pipe()
    responses_read, responses_write = os.pipe()
    os.close(responses_write)  # a session asked anyway answers at once: it has ended
    # Its own process group, so that a session given up for ended kills nothing else.
    stand_in = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    include = [str(tmp_path / "pkg" / "core.py")]
    server = worker._Server(
        "key",
        stand_in.pid,
        os.fdopen(requests_write, "w"),
        responses_read,
        traced=include,
        tracer="auto",
        traced_collection=False,
    )
    worker._servers.append(server)
    request = {
        "session": {"key": "key", "tests": [], "restart": False},
        "coverage": {"include": include, "tracer": "auto", "collection": True},
    }
    try:
        response, why = worker._run_in_session(request)
        assert response is None and "did not trace its collection" in why
        assert not select.select([requests_read], [], [], 0)[0]  # nothing was asked of the session
    finally:
        worker._servers.clear()
        server.close()
        os.close(requests_read)
        stand_in.kill()
        stand_in.wait()
