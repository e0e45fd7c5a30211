"""The baseline runs every test twice, each run whole, in pytest's order, traced: with two
workers, both runs at once. What a test runs depends on what ran before it in its process,
and only pytest's own order gives each test the history plain pytest gives it, the same on
every run. Collection is the same program in every run: under coverage's C tracer only the
first run of a pass records it, where tracing it doubled every session's collection. A
test no mutant can select may flip between the runs and stop nothing.
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
from killmap.verdict.baseline import pass_durations
from killmap.verdict.lab import run_lab

UNRELATED = {f"tests/test_unrelated.py::test_unrelated_{i}" for i in range(1, 21)}
SHARED = {"tests/test_shared.py::test_shared_direct", "tests/test_shared.py::test_shared_through_a_caller"}
ANCHOR = "tests/test_lines.py::test_anchor_has_not_moved"


def who_runs(coverage: dict[str, list[int]], line: int) -> set[str]:
    return {context for context, lines in coverage.items() if context and line in lines}


@pytest.mark.parametrize("runs", [1, 2, 3])
def test_every_run_runs_every_test_in_pytests_order_traced(tmp_path, monkeypatch, runs):
    project = copy_fixture("selection", tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    seen: list[list[RunOutcome]] = []
    build = baseline_module._Builder.__call__

    def built(self, done, settled):
        seen.append([o for each in done for o in each])
        return build(self, done, settled)

    monkeypatch.setattr(baseline_module._Builder, "__call__", built)
    result = run_lab(project, LabOptions(jobs=2, baseline_runs=runs, use_cache=False))
    outcomes = seen[-1]
    assert len(outcomes) == runs  # two at once, then the third
    # Each run ran every test, in the order pytest collected them, and traced it: a test's reach
    # is what it runs after the tests before it, as under plain pytest.
    for outcome in outcomes:
        assert list(outcome.tests) == [t for t in outcome.collected if t in outcome.tests]
        assert sorted(outcome.tests) == sorted(UNRELATED | SHARED | {ANCHOR})
        assert all(r.traced for r in outcome.tests.values())
    coverage = result.baselines[0].coverage["src/selpkg/calc.py"]
    assert who_runs(coverage, 9) == UNRELATED
    assert who_runs(coverage, 5) == SHARED
    # What ran while the tests were collected (OFFSET = 1, the def lines) is in no test's name.
    assert {1, 4, 8, 12} <= set(coverage[""])
    recorded = [any("" in contexts for contexts in (o.coverage or {}).values()) for o in outcomes]
    if result.baselines[0].tracer in ("coverage", "probes") and runs > 1:
        # Only the first run of each pass traces its collection (the C tracer, before the
        # probes came in its fork): the same program in every session.
        assert recorded[:2] == [True, False]
    else:
        assert recorded[0]
    assert set(result.baselines[0].durations) == UNRELATED | SHARED | {ANCHOR}


def test_a_flaky_test_that_reaches_no_mutation_stops_nothing(tmp_path):
    # No mutant can select a test that never ran a line of a mutated file (unless a change runs
    # at import, and then the confirmation re-runs its red): the flake guard's second run of it
    # measures nothing a verdict uses. The two whole runs go at once, and the second to reach
    # this test finds the first's marker; a flaky test a mutant can select is still refused
    # (test_bad_input.py).
    from gatekit import gate_env, run_gate

    project = copy_fixture("basic", tmp_path)
    (project / "tests" / "test_elsewhere.py").write_text(
        "import os\nfrom pathlib import Path\n\n\n"
        "def test_flips_without_reaching_the_package():\n"
        "    marker = Path(os.environ['ELSEWHERE_MARKER'])\n"
        "    assert not marker.exists(), 'ran before'\n"
        "    marker.write_text('ran')\n"
    )
    env = gate_env(project, {"ELSEWHERE_MARKER": str(tmp_path / "marker"), "KILLMAP_CONFINE": "0"})
    run = run_gate(project, "run", "--no-cache", env=env)
    assert run.code == 0, run.stdout + run.stderr
    assert (tmp_path / "marker").exists()  # it ran
    assert "4 tests green in 2 runs," in run.stdout, run.stdout


def _run(durations: dict[str, float], traced: set[str] = frozenset()) -> RunOutcome:
    ids = tuple(durations)
    return RunOutcome(
        "done",
        1.0,
        collected=ids,
        tests={t: TestResult(t, "passed", d, traced=t in traced) for t, d in durations.items()},
    )


def test_a_tests_duration_is_the_slowest_of_its_runs_in_the_pass():
    # Where two runs of a pass ran a test (whole runs, each running every test), the limit
    # waits for the slower.
    first = _run({"a": 1.0, "b": 0.1}, traced={"a", "b"})
    second = _run({"a": 0.2, "b": 0.3}, traced={"a", "b"})
    assert pass_durations([first, second]) == {"a": 1.0, "b": 0.3}


def test_the_guard_passes_change_nothing_a_mutant_is_selected_or_limited_by(tmp_path):
    # A mutant can start once the reach pass is in, before the guard passes end (dispatch.py):
    # the baseline it is given then must be the one it would be given after, or its verdict
    # would depend on when it ran. Here the guard pass ran the tests ten times faster, and
    # took longer per run: neither may move a duration, a cost or a line of reach.
    from types import SimpleNamespace

    reach = [
        RunOutcome(
            "done",
            wall,
            collected=("a", "b"),
            tests={test: TestResult(test, "passed", took, traced=True)},
            coverage={"src/m.py": {test: [3], "": [1]}},
            session_seconds=0.3,
        )
        for wall, test, took in ((2.0, "a", 1.0), (1.5, "b", 0.5))
    ]
    guard = [
        RunOutcome("done", 9.0, collected=("a", "b"), tests={"a": TestResult("a", "passed", 0.1)}),
        RunOutcome("done", 9.0, collected=("a", "b"), tests={"b": TestResult("b", "passed", 0.05)}),
    ]
    settings = SimpleNamespace(tests=("tests",), paths=("src",))
    passes = SimpleNamespace(deselect=(), ignored=(), targets=("src/m.py",), note="")
    build = baseline_module._Builder([], settings, passes, 2)
    provisional, settled = build([reach], None), build([reach, guard], True)
    for field in ("durations", "overhead", "per_test", "coverage", "collected", "imported", "per_test_timeout"):
        assert getattr(settled, field) == getattr(provisional, field), field
    assert settled.durations == {"a": 1.0, "b": 0.5}
    # What the guard passes add is said of the baseline: its runs' wall, the tests run again.
    assert (provisional.wall, settled.wall) == (2.0, 11.0)
    assert (provisional.rerun, settled.rerun) == (None, 2)


def test_a_run_that_must_record_collection_is_never_served_by_a_session_that_did_not(tmp_path):
    # The baseline's first run records collection for all; any traced run that asks for it
    # (a kills test traced alone, say) on a worker whose session collected untraced must run
    # in a fresh session, which records its own: else the collection's lines would be lost.
    import killmap.engine.workers.worker as worker

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


def test_a_test_that_needs_the_others_to_run_first_keeps_the_gate_going_by_whole_runs(tmp_path):
    # The last test passes only in a session that ran the twenty before it, as it does under
    # plain pytest. Shared out, it runs in a session that ran some of them: red. The whole
    # suite in each run, in pytest's own order, settles it green, and the gate goes on.
    from gatekit import one_mutation_project, run_gate

    earlier = "".join(f"\n\ndef test_{n:02}():\n    time.sleep(0.05)\n    RAN.append({n})\n" for n in range(20))
    project = one_mutation_project(
        tmp_path / "proj",
        "def one():\n    return 1\n",
        "import time\n\nfrom pkg import one\n\nRAN = []\n\n\ndef test_one():\n    assert one() == 1\n"
        + earlier
        + "\n\ndef test_zz_after_the_others():\n    assert len(RAN) == 20\n",
        value="2",
    )
    run = run_gate(project, "run", "--no-cache", "--jobs", "2")
    assert run.code == 0, run.stdout + run.stderr
    assert run.verdicts() == {"one-mutated": "held"}


def test_a_test_whose_whole_runs_disagree_is_flaky_though_it_never_passed_before_them(tmp_path):
    # Red on its 1st, 3rd, 5th... call: of the two whole runs one is green and the other red.
    # It never passed before them, so only their own disagreement can call it flaky rather
    # than red. It calls the mutated function: a mutant can select it.
    from gatekit import gate_env, one_mutation_project, run_gate

    marker = tmp_path / "calls"
    marker.mkdir()
    project = one_mutation_project(
        tmp_path / "proj",
        "def one():\n    return 1\n",
        "import os\n\nfrom pkg import one\n\n\ndef test_one():\n    assert one() == 1\n\n\n"
        "def test_flips_every_call():\n"
        "    assert one() == 1\n"
        "    call = 1\n"
        "    while True:\n"
        "        try:\n"
        f"            os.mkdir(os.path.join({str(marker)!r}, str(call)))\n"
        "            break\n"
        "        except FileExistsError:\n"
        "            call += 1\n"
        "    assert call % 2 == 0, f'call {call}'\n",
        value="2",
    )
    env = gate_env(project, {"KILLMAP_CONFINE": "0"})
    run = run_gate(project, "run", "--no-cache", "--jobs", "2", env=env)
    lines = [line for line in run.stderr.splitlines() if line.startswith("killmap:")]
    assert run.code == 2 and len(lines) == 1, run.stdout + run.stderr
    assert "flaky" in lines[0] and "test_flips_every_call" in lines[0], lines[0]
    # No catalog field: a baseline's test is no entry of any one catalog (tenacity's user read
    # "field 'exclude'" as pointing into a file that had none).
    assert lines[0].startswith("killmap: baseline of tests: flaky test(s)"), lines[0]
    assert len(list(marker.iterdir())) == 2  # the two whole runs


def test_the_baseline_line_says_a_collection_longer_than_its_runs():
    # intervaltree: "99 tests green in 2 runs, 1.29s" of a baseline that took 53 s, its test
    # modules building tables of trees as pytest imported them.
    from killmap.catalog.contract import GateSettings
    from killmap.verdict.baseline import Baseline, baseline_line

    def line(collect: float) -> str:
        return baseline_line(
            Baseline(GateSettings(), ("t.py::a",), {"t.py::a": 0.5}, 0.1, {}, 2, 1.29, collect_seconds=collect)
        )

    assert line(52.5) == "baseline: 1 tests green in 2 runs, 1.29s, after 52.5s collecting them"
    assert line(0.4) == "baseline: 1 tests green in 2 runs, 1.29s"
