"""Whole trees, each test run to an outcome: the lab's road for a command that compares trees
(red-first: HEAD, and HEAD with the fix reverted) rather than mutants against a baseline.

A tree is a whole copy of the project's files; each gets one sandbox and one worker of an
engine the lab builds (lab.open_trees). A run of a tree runs the named tests in one pytest
session with the missing-names plugin (which missing name turned a test red), collection
errors kept as findings; a test still running at the time limit is red by timeout, and the
tests after it resume in a fresh session, so every test asked for gets an outcome. A run
that wrote outside its sandbox is refused (GateError), as every run of the gate is.

HEAD's run is not the lab's baseline (baseline.py): a baseline must be green and runs the
suite twice to refuse drift, while red-first runs HEAD once and reports its reds and the
modules it cannot collect as findings.
"""

from __future__ import annotations

import threading
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace

from killmap.catalog.reader import GateSettings

# What a tree run reads back (a test's result, its cause) and the workers a command started
# for the lab to adopt: the names a caller of the trees needs of the engine, handed on.
from killmap.engine import ASSERTION as ASSERTION
from killmap.engine import CRASH as CRASH
from killmap.engine import MISSING_NAMES_PLUGIN, Engine, RunOutcome, Scenario, escaped_note, exclusion_arguments
from killmap.engine import Launch as Launch
from killmap.engine import TestResult as TestResult
from killmap.errors import GateError


@dataclass(frozen=True)
class TreeAsk:
    """One run of one tree: the tree (its index in the order the trees were given), the run's
    label, its tests (node ids or files), the time limit of one session, the tests it must give
    an outcome (None: every test it collects), and the files whose lines each test's coverage
    records."""

    tree: int
    label: str
    tests: tuple[str, ...]
    timeout: float
    wanted: frozenset[str] | None = None
    coverage: tuple[str, ...] = ()


class Trees:
    """The trees of one engine, each on its own worker, every run under the same [gate]
    settings (its test paths, exclusions, arguments, confinement). Closing it stops the
    engine."""

    def __init__(self, engine: Engine, settings: GateSettings):
        self._engine = engine
        self._settings = settings

    def run(self, ask: TreeAsk) -> TreeRun:
        """The tree's tests to an outcome for every test asked for."""
        engine = self._engine
        scenario = _scenario(engine, ask.label, ask.tests, self._settings, ask.timeout, ask.coverage)
        return _run_tree(engine, engine.workers[ask.tree], scenario, ask.wanted)

    def run_each(self, asks: list[TreeAsk]) -> dict[str, TreeRun]:
        """Each ask at once, each on its own tree's worker (one ask per tree): the runs by label."""
        runs: dict[str, TreeRun] = {}

        def one(ask: TreeAsk) -> None:
            runs[ask.label] = self.run(ask)

        _parallel(one, asks)
        return runs

    def close(self) -> None:
        self._engine.close()

    def __enter__(self) -> Trees:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class TreeRun:
    """What one tree's run gave back, filled in as its sessions end: each test's result, the
    ids collected, the collection errors, the tests red by timeout, each red's missing-name
    record, per-test coverage of the traced files, and why some tests got no outcome."""

    tests: dict[str, TestResult] = field(default_factory=dict)
    collected: tuple[str, ...] = ()
    collect_errors: list[tuple[str, str]] = field(default_factory=list)
    timeouts: set[str] = field(default_factory=set)
    absence: dict[str, dict] = field(default_factory=dict)  # node id -> the missing name
    coverage: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    stuck: str | None = None  # why some tests got no outcome
    wall: float = 0.0
    limit: float = 0.0  # the time limit of one session
    conftest: dict | None = None  # a conftest.py that did not import: nothing was collected


def _scenario(
    engine: Engine,
    label: str,
    tests: tuple[str, ...],
    settings: GateSettings,
    timeout: float,
    coverage: tuple[str, ...] = (),
) -> Scenario:
    deselect = exclusion_arguments(settings, engine.root)
    records = engine.scratch.path / f"absence-{label}.jsonl"
    # A test module that does not import without the fix is a finding, not the end of the run.
    extra = ("--continue-on-collection-errors", "-p", MISSING_NAMES_PLUGIN, f"--killmap-missing-names={records}")
    return Scenario(
        label=label,
        tests=tuple(tests) + deselect,
        timeout=timeout,
        sys_path=settings.paths,
        coverage_files=coverage,
        confine=settings.confine,
        user_args=settings.arguments,
        extra_args=extra,
    )


def _run_tree(engine: Engine, worker, scenario: Scenario, wanted: AbstractSet[str] | None) -> TreeRun:
    """The scenario to an outcome for every test; a test still running at the time limit is
    red by timeout, and the rest resume after it."""
    # The missing-names plugin's module imports pytest, which the gate's own process never
    # imports while it starts (only its workers run tests): imported once a tree has run.
    from killmap.engine import read_records

    run = TreeRun(limit=scenario.timeout)
    attempt = scenario
    for segment in range(1, 1000):
        outcome: RunOutcome = engine.run(worker, replace(attempt, label=f"{scenario.label}-{segment}"), complete=True)
        if outcome.escaped:
            raise GateError(f"the tests {escaped_note(outcome.escaped, engine.displaced)}")
        run.wall += outcome.wall
        run.tests.update(outcome.tests)
        run.collected = tuple(dict.fromkeys(run.collected + tuple(outcome.collected)))
        run.collect_errors += [e for e in outcome.collect_errors if e not in run.collect_errors]
        for rel, contexts in (outcome.coverage or {}).items():
            run.coverage.setdefault(rel, {}).update(contexts)
        if outcome.status == "timeout":
            if outcome.in_progress:
                run.timeouts.add(outcome.in_progress)
            pending = [
                t
                for t in run.collected
                if (wanted is None or t in wanted) and t not in run.tests and t not in run.timeouts
            ]
            if outcome.in_progress and pending:
                attempt = replace(scenario, tests=tuple(pending), coverage_files=())
                continue
            if not outcome.in_progress:
                run.stuck = f"the tests did not finish in {attempt.timeout:.0f}s (stuck outside any test)"
            break
        if outcome.status != "done" or not outcome.finished:
            run.stuck = f"pytest ended without a report (exit {outcome.exit_code}); log tail: {outcome.log_tail[-400:]}"
        break
    for record in read_records(engine.scratch.path / f"absence-{scenario.label}.jsonl"):
        if record.get("when") in ("setup", "call", "collect"):
            run.absence.setdefault(record["id"], record)
        elif record.get("when") == "conftest" and not run.collected:
            run.conftest = record
    return run


def _parallel(work, jobs) -> None:
    """Each job on its own tree's worker at once; short joins keep ^C responsive."""
    failures: list[BaseException] = []

    def guarded(job):
        try:
            work(job)
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            failures.append(exc)

    threads = [threading.Thread(target=guarded, args=(job,), daemon=True) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(0.2)
    if failures:
        raise failures[0]
