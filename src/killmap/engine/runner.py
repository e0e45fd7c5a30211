"""Scenarios: what one pytest run in a sandbox is asked to do, and what came back.

A scenario is the baseline (unmutated, with per-test coverage of the mutation targets)
or a mutant (the mutated file written in, coverage of that file only, the origin of its
module proven afterwards). A mutant run also carries its confirmation: a copy of the
session forked after collection re-runs the tests whose outcome matters, to tell a real
red from a flake (see plugin.Recorder.pytest_runtestloop).
"""

from __future__ import annotations

import hashlib
import json
import signal
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from killmap import timeline
from killmap.catalog.plan import DEFAULT_SEED
from killmap.engine.containment import landlock
from killmap.engine.containment.guard import Written
from killmap.engine.containment.sandbox import Scratch
from killmap.engine.outcome import RunOutcome, TestResult, denied_writes, read_outcome, tracers_of
from killmap.engine.workers.pool import Worker

# Flags the gate owns, placed after the project's addopts so they win: every failure is
# seen (no maxfail). Nothing is cached between runs: each has a cache folder of its own
# (`cache_dir`). xdist, pytest-cov, pytest-randomly, pytest-random-order, the rerun plugins and
# the cache's own options stay loaded, switched off by foreign_plugins.py: blocking them would make
# pytest refuse an addopts that names their options.
GATE_FLAGS = ("--maxfail=0", "-q", "--tb=no", "-o", "console_output_style=classic")


# Folders a test tool fills as tests run, under names that change with what failed:
# Hypothesis saves each failing example under a hash of the test and the example, so a
# mutant that breaks a property test always writes a file no unmutated run wrote.
TOOL_CACHES = frozenset({".hypothesis", ".pytest_cache"})


@dataclass(frozen=True)
class Scenario:
    label: str
    tests: tuple[str, ...]  # pytest targets or node ids
    timeout: float  # the limit in a fresh session
    sys_path: tuple[str, ...]  # relative to the sandbox
    writes: tuple[tuple[str, str], ...] = ()
    coverage_files: tuple[str, ...] = ()  # relative; per-test contexts recorded for these
    mutated_file: str | None = None
    expect_module: str | None = None
    # What records the per-test lines in a fork of the collected session: "auto" is
    # sys.monitoring on Python 3.12+ (line_monitor.py), "coverage" is coverage's C tracer.
    tracer: str = "auto"
    # Whether this run records what ran while its session collected. Collection is the same
    # program in every session of one baseline, so one run records it for all; under
    # coverage's C tracer (3.11) recording it doubled the other sessions' collection.
    trace_collection: bool = True
    # Re-run the red tests and these (the green kills) from a snapshot taken after collection.
    confirm_kills: tuple[str, ...] | None = None
    confirm_allowed: tuple[str, ...] | None = None  # kills + may_kill: reds inside the contract
    # Re-run too, each where it ran: tests that write the state the confirmed ones need
    # (trial.with_the_tests_before_its_green_kills), without which a re-run reads as a flake.
    confirm_before: tuple[str, ...] = ()
    # Re-run the red outside the contract after every test the run ran before it, as the run
    # did (trial.with_every_test): a red through an earlier test's state is green alone.
    confirm_in_order: bool = False
    # Re-run them in the run's own process instead, once its tests are over
    # (plugin.Recorder.confirm_in_place): a sweep mutant's one red, where the copy cost a fifth
    # of the sweep. The trial asks for the copy when this cannot vouch (trial.settled_in_place).
    confirm_in_place: bool = False
    collect_only: bool = False  # collect and prove the origin, run nothing
    confine: bool = True  # Landlock: writes only beneath sandbox, scratch and /dev
    # Run in a fork of a session that collected these targets once (session.py), with the
    # mutant's code swapped in; the worker falls back to a fresh session when it must.
    session_tests: tuple[str, ...] | None = None
    swap: bool = False
    swap_timeout: float | None = None  # the limit in a fork of the collected session, if not `timeout`
    # In a fork of the collected session, each test's own limit besides the run's: a hang is
    # stopped at its test's (worker: timeout_cpu.TestLimits). Empty: the run's limit alone.
    test_limits: tuple[tuple[str, float], ...] = ()
    swap_targets: tuple[str, ...] = ()  # relative; a new session compiles these once for its swaps
    # The gate's own pytest targets, which a fresh session given ids takes its initial paths
    # from (inrun/initial_paths.py); () where `tests` are them.
    gate_tests: tuple[str, ...] = ()
    # The user's pytest arguments (catalog.pytestargs: PYTEST_ADDOPTS, then [gate] pytest_args),
    # before the gate's flags, which win where both set one thing.
    user_args: tuple[str, ...] = ()
    # More pytest arguments, after the gate's flags (red-first's reverted tree passes
    # --continue-on-collection-errors: a test module may not import without the fix).
    extra_args: tuple[str, ...] = ()
    # What Hypothesis and pytest-randomly draw from (foreign_plugins.py); None explores. Set by the
    # engine for every run of a command (core.Engine.run).
    seed: int | None = DEFAULT_SEED
    # Another seed for this run alone (trial.reseeded), in the collected session of `seed`: a
    # fork reseeds itself (neutral.reseed), a fresh session draws from it throughout.
    reseed: int | None = None
    # Stop after the first red test (plugin.Recorder.first_red): a sweep mutant asks only
    # whether it is killed. The tests after it are left out, not resumed.
    stop_at_first_red: bool = False


def run_scenario(worker: Worker, scratch: Scratch, root: Path, scenario: Scenario) -> RunOutcome:
    """One request to the worker, from building it to reading back what the run wrote."""
    folder = scratch.run_dir(scenario.label)
    sandbox = worker.sandbox
    with timeline.span("await sandbox", worker=worker.index):
        worker.wait_sandbox()  # copied by the worker itself, perhaps still under way
    with timeline.span("compose", label=scenario.label, worker=worker.index):
        request = _request(worker, scratch, root, scenario, folder)
        _add_run_options(request, sandbox, scenario, folder)
    if "session" in request:
        worker.session_stale = False
    if worker.containment is not None:
        confined = "confine" in request and landlock.available()
        worker.containment.started(request["id"], time.time_ns(), confined=confined)
    try:
        with timeline.span("request", label=scenario.label, worker=worker.index):
            response = worker.request(request)
    finally:
        with timeline.span("guards", label=scenario.label, worker=worker.index):
            escaped = worker.containment.finished(request["id"]) if worker.containment is not None else Written()
            sandbox_writes = _sandbox_writes(worker, written=tuple(rel for rel, _ in scenario.writes))
    timeline.mark("read outcome", label=scenario.label, worker=worker.index)
    if response.get("status") == "error":
        response = {**response, "status": "error"}
    outcome = read_outcome(
        folder / "events.jsonl",
        folder / "pytest.log",
        response,
        folder / "coverage.json" if scenario.coverage_files else None,
    )
    outcome = replace(outcome, escaped=escaped.paths, unrestored=escaped.unrestored, sandbox_writes=sandbox_writes)
    outcome = replace(outcome, denied=denied_writes(outcome, str(root)))
    if outcome.coverage is not None:
        # Coverage speaks in sandbox paths; the rest of the gate speaks in project paths.
        prefix = str(sandbox.resolve()) + "/"
        outcome = _relative_coverage(outcome, prefix)
    if scenario.confirm_kills is not None and (folder / "confirm-events.jsonl").exists():
        confirmation = read_outcome(
            folder / "confirm-events.jsonl", folder / "confirm-pytest.log", {"status": "done", "wall": 0.0}
        )
        if confirmation.finished:
            outcome = replace(outcome, confirmation=replace(confirmation, wall=confirmation.final_wall))
    timeline.mark("outcome read", label=scenario.label, worker=worker.index)
    return outcome


def _request(worker: Worker, scratch: Scratch, root: Path, scenario: Scenario, folder: Path) -> dict[str, Any]:
    """What every run is given: its sandbox, files, pytest arguments, limits and confinement,
    and the collected session it forks, when it runs in one."""
    sandbox = worker.sandbox
    # A check's collection asks pytest about the ids themselves: it names the ones not found.
    targets, ids = (scenario.tests, ()) if scenario.collect_only else as_arguments(scenario.tests)
    request: dict[str, Any] = {
        "id": scenario.label,
        "sandbox": str(sandbox),
        "writes": dict(scenario.writes),
        # A private basetemp per run: pytest prunes old numbered temp folders, and two
        # workers sharing the default one could delete each other's tmp_path mid-test.
        "args": [
            *targets,
            *scenario.user_args,
            *GATE_FLAGS,
            f"--rootdir={sandbox}",
            f"--basetemp={scratch.temp_dir()}",
            *cache_dir(folder),
            *(["--collect-only"] if scenario.collect_only else []),
            *scenario.extra_args,
        ],
        "timeout": scenario.timeout,
        "swap_timeout": scenario.swap_timeout if scenario.swap_timeout is not None else scenario.timeout,
        "events": str(folder / "events.jsonl"),
        "log": str(folder / "pytest.log"),
        "sys_path": [str((sandbox / p).resolve()) for p in scenario.sys_path],
        "blocked_root": str(root),
        "mutated_file": str(sandbox / scenario.mutated_file) if scenario.mutated_file else None,
        "pycache_prefix": str(scratch.path / f"pycache-{worker.index}"),
        "memory_limit": worker.memory_limit,
        "seed": scenario.seed if scenario.reseed is None else scenario.reseed,
        "reseed": scenario.reseed,
        # pytest's rewritten test modules, shared by every session (assert_rewrites.py).
        "rewrites": {
            "write": str(scratch.rewrites),
            "read": [str(scratch.kept_rewrites)] if scratch.kept_rewrites else [],
        },
    }
    if scenario.gate_tests:
        request["initial_paths"] = list(scenario.gate_tests)
    if ids:
        request["selected_ids"] = list(ids)
    if scenario.stop_at_first_red:
        request["first_red"] = True
    if scenario.test_limits:
        request["test_limits"] = dict(scenario.test_limits)
    # The tests' temporary folder is the worker's own, inside the scratch: confinement grants
    # the scratch but never the system's temporary folder, where the project may live.
    request["tmpdir"] = str(scratch.path / "tmpdir" / str(worker.index))
    if scenario.confine and not landlock.switched_off():
        request["confine"] = [str(sandbox), str(scratch.path), "/dev"]
    unmutated = not scenario.writes
    if (
        scenario.session_tests is not None
        and not scenario.collect_only
        and ((scenario.swap and scenario.mutated_file) or unmutated)
    ):
        request["session"] = _session(worker, scratch, scenario, folder, unmutated=unmutated)
    return request


def _session(worker: Worker, scratch: Scratch, scenario: Scenario, folder: Path, *, unmutated: bool) -> dict[str, Any]:
    """One collected session per worker and key: the same targets, paths and filters. An
    unmutated run (a baseline) is a fork of it running every collected item; a traced one
    needs a session that traced its own collection (worker.py)."""
    sandbox = worker.sandbox
    session_tests = scenario.session_tests or ()
    key = json.dumps([scenario.session_tests, scenario.sys_path, scenario.confine, scenario.seed, scenario.user_args])
    return {
        "key": key,
        "tests": list(scenario.tests),
        "log": str(folder / "session.log"),
        "all": unmutated and tuple(scenario.tests) == tuple(session_tests),
        "args": [
            *session_tests,
            *scenario.user_args,
            *GATE_FLAGS,
            f"--rootdir={sandbox}",
            f"--basetemp={scratch.temp_dir()}",
            *cache_dir(folder),
        ],
        "timeout": 900.0,
        "seed": scenario.seed,
        "restart": worker.session_stale,
        "prepare": [str(sandbox / rel) for rel in scenario.swap_targets],
        "swap": {
            "module": scenario.expect_module,
            "file": str(sandbox / scenario.mutated_file),
            "original": str(scratch.pristine / scenario.mutated_file) if scratch.pristine else "",
        }
        if scenario.swap and scenario.mutated_file
        else None,
    }


def as_arguments(tests: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """pytest's arguments for these tests, and the ids the plugin keeps: where every test is
    a node id, their files, each once, in order; else the tests as they are, and no ids."""
    if not tests or not all("::" in test for test in tests):
        return tests, ()
    return tuple(dict.fromkeys(test.split("::", 1)[0] for test in tests)), tests


def cache_dir(folder: Path) -> tuple[str, ...]:
    """pytest's cache for one run (a collected session's for its forks, which never write it):
    in the run's folder, empty, read by nothing after it. Never the project's `.pytest_cache`,
    whose last failures would pick the tests (foreign_plugins.py turns the options that read it off)."""
    return ("-o", f"cache_dir={folder / 'pytest-cache'}")


def _add_run_options(request: dict[str, Any], sandbox: Path, scenario: Scenario, folder: Path) -> None:
    """What only some runs ask for: per-test lines, the origin proof, test files left out,
    and the confirmation's snapshot."""
    if scenario.coverage_files:
        request["coverage"] = {
            "include": [str(sandbox / f) for f in scenario.coverage_files],
            "out": str(folder / "coverage.json"),
            "tracer": scenario.tracer,
            "collection": scenario.trace_collection,
        }
    if scenario.expect_module and scenario.mutated_file:
        text = dict(scenario.writes).get(scenario.mutated_file)
        data = text.encode("utf-8") if text is not None else (sandbox / scenario.mutated_file).read_bytes()
        request["expect"] = {
            "module": scenario.expect_module,
            "file": str(sandbox / scenario.mutated_file),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
    if scenario.confirm_kills is not None:
        request["snapshot"] = {
            "events": str(folder / "confirm-events.jsonl"),
            "log": str(folder / "confirm-pytest.log"),
            "kill_ids": list(scenario.confirm_kills),
            "allowed_ids": (list(scenario.confirm_allowed) if scenario.confirm_allowed is not None else None),
            "before_ids": list(scenario.confirm_before),
            "in_order": scenario.confirm_in_order,
            "in_place": scenario.confirm_in_place,
        }


def _sandbox_writes(worker: Worker, written: tuple[str, ...]) -> tuple[str, ...]:
    """Repair the sandbox; name what the run wrote there that the unmutated tests do not.

    Tests may legitimately write into their working folder; the unmutated runs show which
    files those are. Anything else a mutant wrote would change what later runs on this
    worker see, so it is undone either way, and reported. A test tool's own cache (TOOL_CACHES)
    is undone too, but is nobody's finding. `written`: the files the worker wrote for the run
    (the mutant) and put back after it.
    """
    if worker.guard is None:
        return ()
    changes = worker.guard.check_and_restore(expected=written)
    changed = tuple(p for p in changes.paths if p.split("/", 1)[0] not in TOOL_CACHES)
    if changed:
        worker.session_stale = True
    if worker.containment is None:
        return changed
    if not written:  # an unmutated run: what it wrote, the tests write
        worker.containment.test_writes.update(changed)
        return ()
    return tuple(p for p in changed if p not in worker.containment.test_writes)


def _relative_coverage(outcome: RunOutcome, prefix: str) -> RunOutcome:
    mapped = {(f[len(prefix) :] if f.startswith(prefix) else f): data for f, data in (outcome.coverage or {}).items()}
    return replace(outcome, coverage=mapped)


def run_to_completion(worker: Worker, scratch: Scratch, root: Path, scenario: Scenario) -> RunOutcome:
    """Run a scenario until every selected test has an outcome.

    A mutant can stop its session (KeyboardInterrupt, pytest.exit) or kill the interpreter
    (os._exit, a segfault) in the middle of the selection. The test it was in is red, by
    crash; the tests the session never reached are not green, so the rest of the selection
    runs in a fresh session, resuming after that test, until every test is accounted for.
    A run that still cannot account for every test (a crash outside any test, or no
    progress) stays unfinished: the judge reads it as inconclusive, never as a verdict.
    """
    segments: list[RunOutcome] = []
    remaining = list(scenario.tests)
    crashed: dict[str, TestResult] = {}
    while True:
        outcome = run_scenario(
            worker,
            scratch,
            root,
            replace(scenario, tests=tuple(remaining), label=f"{scenario.label}-{len(segments) + 1}"),
        )
        segments.append(outcome)
        if outcome.status != "done" or outcome.collect_errors or outcome.stopped_after or outcome.gate_killed:
            break  # a run that killed a gate process is judged by that (judge._killed_gate), not resumed
        died_in = outcome.in_progress if not outcome.finished else None
        if died_in and died_in not in outcome.tests:
            crashed[died_in] = _died(died_in, outcome.child_exit)
        if crashed and scenario.stop_at_first_red:
            break  # red by crash: the first red, and the tests after it are left out as well
        done = set(outcome.tests) | set(crashed)
        # A test the session did not collect again (a mutant changed its id) is not resumed:
        # no session finds it, and the judge names it among the tests that did not run.
        if outcome.collected:
            done |= set(remaining) - set(outcome.collected)
        left = [t for t in remaining if t not in done]
        if not left or len(left) == len(remaining):
            break
        remaining = left
    merged = _merge(segments, crashed)
    if merged.gate_killed:
        return merged
    if merged.status != "done" or merged.collect_errors or len(segments) == 1 and not crashed:
        return merged
    accounted = all(t in merged.tests for t in scenario.tests) or (
        scenario.stop_at_first_red and any(r.red for r in merged.tests.values())
    )
    if accounted and merged.proof is None and scenario.expect_module:
        # Every session that ran tests died before the origin proof: prove it apart.
        proof_run = run_scenario(
            worker,
            scratch,
            root,
            replace(
                scenario, label=f"{scenario.label}-proof", collect_only=True, confirm_kills=None, coverage_files=()
            ),
        )
        if proof_run.finished:
            merged = replace(merged, proof=proof_run.proof, imported=proof_run.imported)
    return replace(merged, finished=accounted and (merged.proof is not None or not scenario.expect_module))


def _died(test_id: str, status: int | None) -> TestResult:
    if status is not None and status < 0:
        try:
            how = f"killed by {signal.Signals(-status).name}"
        except ValueError:
            how = f"killed by signal {-status}"
    else:
        how = f"exited with status {status}"
    return TestResult(
        id=test_id,
        outcome="failed",
        phase="call",
        exc_type="ProcessDied",
        exc_module="",
        message=f"the test process {how} while this test ran",
        interrupted=True,
    )


def _merged_confirmation(segments: list[RunOutcome]) -> RunOutcome | None:
    """The segments' confirmations as one: every re-run test, and their walls summed."""
    confirmations = [o.confirmation for o in segments if o.confirmation is not None]
    if not confirmations:
        return None
    confirmed: dict[str, TestResult] = {}
    for c in confirmations:
        confirmed.update(c.tests)
    return replace(confirmations[0], tests=confirmed, wall=sum(c.wall for c in confirmations))


def _merge(segments: list[RunOutcome], crashed: dict[str, TestResult]) -> RunOutcome:
    if len(segments) == 1 and not crashed:
        return segments[0]
    tests: dict[str, TestResult] = {}
    collected: dict[str, None] = {}  # ordered, and a set: tens of thousands of ids
    coverage: dict[str, dict[str, list[int]]] = {}
    untraced: set[str] = set()
    for outcome in segments:
        tests.update(outcome.tests)
        collected.update(dict.fromkeys(outcome.collected))
        if outcome.coverage is None:
            untraced |= set(outcome.tests) | ({outcome.in_progress} if outcome.in_progress else set())
        for rel, contexts in (outcome.coverage or {}).items():
            mine = coverage.setdefault(rel, {})
            for context, lines in contexts.items():
                mine[context] = sorted(set(mine.get(context, ())) | set(lines))
    for test_id, result in crashed.items():
        tests.setdefault(test_id, result)
    last = segments[-1]
    finished = [o for o in segments if o.finished]
    fresh = [o for o in segments if o.path != "swap"]
    return RunOutcome(
        path=fresh[0].path if fresh else "swap",
        fallback=fresh[0].fallback if fresh else "",
        status=last.status,
        wall=sum(o.wall for o in segments),
        collected=tuple(collected),
        tests=tests,
        collect_errors=tuple(e for o in segments for e in o.collect_errors),
        deselected=segments[0].deselected,
        in_progress=last.in_progress if last.status != "done" else None,
        exit_code=finished[-1].exit_code if finished else last.exit_code,
        proof=finished[-1].proof if finished else None,
        finished=last.finished,  # run_to_completion decides, knowing the selection
        log_tail=last.log_tail,
        coverage=coverage if any(o.coverage is not None for o in segments) else None,
        imported=finished[-1].imported if finished else (),
        final_wall=sum(o.final_wall for o in segments),
        confirmation=_merged_confirmation(segments),
        child_exit=last.child_exit,
        segments=len(segments),
        untraced=frozenset(untraced),
        tracer=tracers_of(segments),
        session_seconds=max(o.session_seconds for o in segments),
        stuck=last.stuck,
        waited=last.waited,
        test_limit=last.test_limit,
        escaped=tuple(sorted({p for o in segments for p in o.escaped})),
        unrestored=tuple(sorted({p for o in segments for p in o.unrestored})),
        denied=tuple(sorted({p for o in segments for p in o.denied})),
        sandbox_writes=tuple(sorted({p for o in segments for p in o.sandbox_writes})),
        stopped_after=last.stopped_after or next(iter(crashed), None),
        gate_killed=last.gate_killed,
    )
