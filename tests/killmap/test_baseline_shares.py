"""The baseline runs every test once, traced, its files shared out between the workers; then
the tests a mutant can select once more, untraced. Together the runs miss no test's reach.

Tracing slows hot code several times over, and a suite can name a thousand tests that reach
no mutation: each file is run by the first run to claim it, so a run that started late finds
more files claimed and the runs end together. Collection is the same program in every run:
under coverage's C tracer only the first run records it, where tracing it doubled every
session's collection. Selection is only as sound as the union: a test whose lines were lost
would never be run under a mutant it can turn red. So the reach recorded must be the same
whatever the number of runs.
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
from killmap.engine.inrun.baseline_split import ClaimedItems, ClaimFile
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
    passes = SimpleNamespace(deselect=(), targets=("src/m.py",), note="")
    build = baseline_module._Builder([], settings, passes, 2)
    provisional, settled = build([reach], None), build([reach, guard], True)
    for field in ("durations", "overhead", "per_test", "coverage", "collected", "imported", "per_test_timeout"):
        assert getattr(settled, field) == getattr(provisional, field), field
    assert settled.durations == {"a": 1.0, "b": 0.5}
    # What the guard passes add is said of the baseline: its runs' wall, the tests run again.
    assert (provisional.wall, settled.wall) == (2.0, 11.0)
    assert (provisional.rerun, settled.rerun) == (None, 2)


class Item:
    """What ClaimedItems reads of a pytest item: its node id."""

    def __init__(self, nodeid: str):
        self.nodeid = nodeid

    def __repr__(self) -> str:
        return self.nodeid


def run_loop(items: list, shared: ClaimedItems):
    """pytest's run loop as it reads the list: the next item fetched before each test starts;
    yields (the test, the next item it was told of) as each test runs."""
    for index, item in enumerate(items):
        following = items[index + 1] if index + 1 < len(items) else None
        shared.starting(index)
        yield item.nodeid, (following.nodeid if following is not None else None)


IDS = [f"tests/test_big.py::test_{n}" for n in range(6)] + ["tests/test_small.py::test_6"]


def test_each_test_is_run_by_the_first_run_to_claim_it_and_by_no_other(tmp_path):
    claims = str(tmp_path / "claims")
    ahead_items = [Item(i) for i in IDS]
    behind_items = [Item(i) for i in reversed(IDS)]  # collected in another order: the same claims
    ahead = run_loop(ahead_items, ClaimedItems(claims, ahead_items))
    behind = run_loop(behind_items, ClaimedItems(claims, behind_items))
    ran_ahead, ran_behind = [], []
    for _ in range(3):  # the two runs take turns, one test each
        ran_ahead.append(next(ahead))
        ran_behind.append(next(behind))
    ran_ahead.extend(ahead)
    ran_behind.extend(behind)
    # Every test ran once, in one run or the other; one file's tests went to both: a test file
    # that holds most of a suite is shared out too.
    assert sorted(t for t, _ in ran_ahead + ran_behind) == sorted(IDS)
    assert {t for t, _ in ran_ahead} & {t for t, _ in ran_behind} == set()
    assert [t for t, _ in ran_ahead] == IDS[:4]
    assert [t for t, _ in ran_behind] == IDS[4:][::-1]
    # The next item the loop read before each test is the one that ran after it: a module's
    # fixtures are torn down exactly when its last test in this run is done.
    assert [n for _, n in ran_ahead] == [*IDS[1:4], None]
    assert [n for _, n in ran_behind] == [*IDS[4:][::-1][1:], None]


def test_a_test_whose_claim_cannot_be_made_is_run_all_the_same(tmp_path):
    # Running a test twice costs time; running it in no run loses its reach, and the
    # gate would then select it for no mutant it reaches.
    nowhere = str(tmp_path / "missing-folder" / "claims")
    first_items, second_items = [Item(i) for i in IDS], [Item(i) for i in IDS]
    first, second = ClaimedItems(nowhere, first_items), ClaimedItems(nowhere, second_items)
    assert [t for t, _ in run_loop(first_items, first)] == IDS
    assert [t for t, _ in run_loop(second_items, second)] == IDS
    assert ClaimFile(str(tmp_path / "claims"), ["a"]).take("never-listed")


def test_a_claim_is_one_byte_at_the_keys_sorted_place(tmp_path):
    path = tmp_path / "claims"
    claims = ClaimFile(str(path), ["b.py", "a.py", "c.py"])
    assert claims.take("c.py") and not claims.take("c.py")
    claims.close()
    assert path.read_bytes() == b"\0\0\1"


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


RUN_IN_A_FRESH_SESSION = (
    "import sys, pytest\n"
    "from killmap.engine.inrun.plugin import Recorder\n"
    "recorder = Recorder(sys.argv[1], run_claims=sys.argv[2])\n"
    "code = pytest.main(['-q', '-p', 'no:cacheprovider', sys.argv[3]], plugins=[recorder])\n"
    "recorder.close()\n"
    "sys.exit(int(code))\n"
)


def test_a_fresh_session_shares_its_tests_out_as_a_fork_of_the_collected_one_does(tmp_path):
    # A baseline run that cannot fork its worker's collected session runs in a fresh one,
    # under pytest's own run loop: the same claims narrow it. The first run to claim takes
    # every test; the second collects them all and runs none.
    import json

    tests = tmp_path / "test_three.py"
    tests.write_text("def test_a():\n    pass\n\n\ndef test_b():\n    pass\n\n\ndef test_c():\n    pass\n")
    claims = tmp_path / "claims"
    ran = []
    for name in ("first", "second"):
        events = tmp_path / f"{name}.jsonl"
        done = subprocess.run(
            [sys.executable, "-c", RUN_IN_A_FRESH_SESSION, str(events), str(claims), str(tests)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert done.returncode in (0, 5), done.stdout + done.stderr
        lines = [json.loads(line) for line in events.read_text().splitlines()]
        [collected] = [e["ids"] for e in lines if e["event"] == "collected"]
        assert len(collected) == 3
        ran.append([e["id"] for e in lines if e["event"] == "test"])
    assert [len(r) for r in ran] == [3, 0], ran


def test_an_early_guard_run_counts_in_the_guard_pass_with_its_guarded_tests_alone():
    # An early guard run re-runs whatever the other runs held: with three workers, a test
    # that reaches a mutation and one that reaches nothing can share one run. Its guarded
    # tests are their guard runs; the rest are no evidence of the guard pass (a red there
    # would send the baseline to whole runs for a test no mutant selects).
    from types import SimpleNamespace

    from killmap.verdict.baseline import StagedBaseline

    def outcome(*tests: str) -> RunOutcome:
        results = {t: TestResult(id=t, outcome="failed" if "nothing" in t else "passed") for t in tests}
        return RunOutcome(status="done", wall=1.0, collected=tests, finished=True, tests=results)

    staged = SimpleNamespace(_guarded=frozenset({"t.py::test_reaches"}))
    (part,) = StagedBaseline._guarded_part(staged, outcome("t.py::test_reaches", "t.py::test_reaches_nothing"))
    assert set(part.tests) == {"t.py::test_reaches"} and not part.red
    assert StagedBaseline._guarded_part(staged, outcome("t.py::test_reaches_nothing")) == []
