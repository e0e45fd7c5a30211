"""The pytest plugin that runs inside every gate run and reports what happened.

Outcomes come from pytest's own report objects, never from its terminal text: per test
the outcome, the phase, the exception type and the file and line that raised. They are
written as JSON lines while the run goes, so a run killed at its timeout still tells
which test was in progress.

This module is imported by the warm worker before it forks; it must not import the
project under test.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from killmap.engine.inrun.confirm_pipe import ConfirmCopyPipes, fork_copy, read_reruns, report_done, send_reruns
from killmap.engine.inrun.failures import describe_failure, shorten, shorten_middle, unrendered_failure
from killmap.engine.inrun.foreign_plugins import id_offset, private_hypothesis_home, reseeding_seed
from killmap.engine.inrun.working_tree_imports import ImportWatch, modules_from_working_tree


class Recorder:
    """Collects per-test evidence and writes it to `events_path` as JSON lines.

    A fresh session makes one for its run. The collected session registers one, idle, before
    it forks anything, and each fork begins it for its own run (`begin`): registering a plugin
    makes pluggy read every attribute of it for hooks, 1.6 ms and some 250 copied pages of
    every fork, to find the same hooks every time."""

    _skip_report: tuple[Any, str] | None = None  # (a skipped report, its phase), for logreport

    def __init__(self, events_path: str | None = None, **run: Any):
        if events_path is not None:
            self.begin(events_path, **run)

    def begin(
        self,
        events_path: str,
        *,
        mutated_file: str | None = None,
        coverage: Any = None,
        tracing: bool = False,
        snapshot: dict[str, Any] | None = None,
        first_red: bool = False,
    ) -> None:
        """This run's files and settings, and nothing recorded yet."""
        self.events = open(events_path, "a", encoding="utf-8")
        # The sandbox, as the run starts in it: a test may chdir into a folder that is gone by
        # the time a later test fails or the run proves its origin (python-dotenv's tests
        # chdir into tmp_path and stay), so nothing after this reads the current directory.
        self.sandbox = os.getcwd()
        # Hypothesis's examples and caches, this run's alone, beside its events (foreign_plugins.py).
        private_hypothesis_home(os.path.join(os.path.dirname(events_path), "hypothesis"))
        self.snapshot = snapshot  # where a confirmation run reports, if one is wanted
        # Stop after the first red test (a sweep mutant: killed or not is all it asks); the
        # test it stopped after goes in the final line, so the gate knows the rest were
        # left out on purpose and does not resume them.
        self.first_red = first_red
        self.stopped_after: str | None = None
        self.confirming = False  # True in the forked confirmation process
        self.red: set[str] = set()
        self.collected: list[str] = []
        self.tests_begun = False  # an internal error before is the collection's (pytest_internalerror)
        self._copy: ConfirmCopyPipes | None = None  # in the run: its confirmation copy, once forked
        # In a run that confirms in place (`confirm_in_place`): its items, kept at the snapshot.
        self._in_place: list[Any] | None = None
        self._report_to: int | None = None  # in the copy: where it says it has reported
        self._started = time.perf_counter()
        self.mutated_file = os.path.realpath(mutated_file) if mutated_file else None
        self.coverage = coverage
        self.tracing = tracing  # whether `coverage` is started now
        self.phases: dict[str, dict[str, Any]] = {}
        self._phase: dict[str, str] = {}  # the phase each test is in, for an interruption
        # The project's own per-test timeout (pytest-timeout), read at the first test: a fork
        # of the collected session never sees pytest_configure or collection.
        self.per_test_timeout: float | None = None
        self._timeout_read = False
        self._skip_report = None

    def emit(self, **event: Any) -> None:
        self.events.write(json.dumps(event) + "\n")
        self.events.flush()

    # -- collection ---------------------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True)
    def pytest_load_initial_conftests(self, early_config, parser, args):
        """A conftest that pytest loads before it collects and that does not import: pytest
        prints it and stops (exit 4) before any collection report, so it is said here. The
        baseline loaded the same conftest: under a mutant, the mutant broke its import
        (attrs' conftest imports attr, whose own import runs the mutated code)."""
        outcome = yield
        if outcome.excinfo is not None:
            failure = outcome.excinfo[1]
            cause = getattr(failure, "cause", failure)
            where = str(getattr(failure, "path", "") or "").replace(os.getcwd() + os.sep, "")
            said = f"{type(cause).__name__}: {cause}" + _run_at_import(cause, where)
            self.emit(event="conftest_error", path=where, message=shorten(said))

    def pytest_collectreport(self, report):
        if report.failed:
            # Sandbox paths mean nothing to the user: show project-relative ones.
            text = str(report.longrepr).replace(os.getcwd() + os.sep, "")
            self.emit(event="collect_error", id=report.nodeid, message=shorten_middle(text))

    def pytest_internalerror(self, excrepr, excinfo):
        """pytest stopped on an exception no collector caught: a test module that calls
        unittest.main() or sys.exit() when imported raises SystemExit out of the collection
        (toposort), and the run collected nothing with no word why. Before the tests begin
        (pytest calls pytest_collection_finish even so) it is that module's collection
        error, named by the module it came through."""
        if self.tests_begun:
            return
        error = excinfo.value
        found = _module_at_import(error, "")
        said = f"{type(error).__name__}: {error}" + (f" (raised while {found} ran at import)" if found else "")
        if isinstance(error, SystemExit):
            said += '; pytest imports test modules: guard the call with `if __name__ == "__main__":`'
        self.emit(event="collect_error", id=found.rsplit(":", 1)[0], message=shorten(said))

    def pytest_collection_finish(self, session):
        self.set_collected([item.nodeid for item in session.items])
        if session.config.option.collectonly:
            # What a run would skip, said where no test runs (`check`): a contract naming only
            # such tests could never hold, which `run` refuses after its baseline.
            marked = [item.nodeid for item in session.items if marked_to_skip(item)]
            if marked:
                self.emit(event="marked_skip", ids=marked)
            never_red = [item.nodeid for item in session.items if xfail_never_red(item)]
            if never_red:
                self.emit(event="marked_xfail", ids=never_red)

    def pytest_deselected(self, items):
        """Tests that exist and that the options deselect (`-m "not internal"` in the project's
        addopts): a contract that names one is told so, not that it is a typo."""
        if items:
            self.emit(event="deselected", ids=[item.nodeid for item in items], by=deselected_by(items))

    def set_collected(self, ids: list[str]) -> None:
        self.collected = ids
        self.emit(event="collected", ids=ids)

    def _trace(self, on: bool) -> None:
        if on != self.tracing:
            (self.coverage.start if on else self.coverage.stop)()
            self.tracing = on

    def stop_tracing(self) -> None:
        if self.coverage is not None:
            self._trace(False)

    # -- the confirmation snapshot --------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtestloop(self, session):
        """Fork a frozen copy of this session after collection, before any test runs.

        The copy waits until this run is over, then re-runs only the tests whose outcome
        matters (the red ones and the green kills), from the very state a fresh session
        of this mutant starts its tests in: project and tests freshly imported, no test
        run yet. That is the flake guard's re-run without paying for pytest's start-up
        and collection a second time.
        """
        self.tests_begun = True
        if self.snapshot and session.items and not session.testsfailed:
            self.take_snapshot(session)
        outcome = yield
        if outcome.excinfo is None:
            self.confirm_in_place()  # a fresh session's: still inside it, before it ends
        if self.confirming and outcome.excinfo is None:
            # The copy's re-runs are recorded, their fixtures torn down with the last one:
            # nothing after this loop can change them. pytest's own ending would still print
            # its summary and, at unconfigure, collect the whole heap several times over for
            # unraisable exceptions (about 40 ms on draftroute's suite, every fresh mutant).
            self.finish_confirmation(1 if session.testsfailed else 0)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)

    def take_snapshot(self, session) -> None:
        """Fork the waiting copy; in the copy this returns with `confirming` set and the
        session's items narrowed to the tests to re-run. A run that confirms in place forks
        nothing: it keeps its items, to re-run the red ones itself (`confirm_in_place`)."""
        if self.snapshot and self.snapshot.get("in_place"):
            self._in_place = list(session.items)
            return
        self._copy, (tell_read, done_write) = fork_copy()
        if self._copy is None:
            self._become_confirmation(session, tell_read, done_write)

    def _become_confirmation(self, session, tell_read: int, done_write: int) -> None:
        wanted = read_reruns(tell_read)
        if not wanted:
            os._exit(0)
        self._report_to = done_write
        self._started = time.perf_counter()
        assert self.snapshot is not None  # a snapshot is taken only when one was asked for
        log = os.open(self.snapshot["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        self.stop_tracing()  # reach was measured in the run; the re-run only confirms
        self.coverage = None
        self.events.close()
        self.events = open(self.snapshot["events"], "a", encoding="utf-8")
        # Not the run's: with --seed random, examples the run saved would decide the re-run.
        private_hypothesis_home(os.path.join(os.path.dirname(self.snapshot["events"]), "hypothesis-confirm"))
        self.confirming = True
        self.phases = {}
        session.items[:] = [item for item in session.items if item.nodeid in wanted]
        self.set_collected([item.nodeid for item in session.items])

    def finish_snapshot(self) -> None:
        """In the run: tell the waiting copy what to re-run, and wait for its report."""
        if self._copy is None:
            return
        copy, self._copy = self._copy, None
        send_reruns(copy, self._reruns())

    def _reruns(self) -> list[str]:
        """What the confirmation re-runs: what decides the verdict."""
        kills = set(self.snapshot.get("kill_ids", ())) if self.snapshot else set()
        allowed = self.snapshot.get("allowed_ids") if self.snapshot else None
        # The tests whose state the confirmed ones need, each re-run in its place before them.
        before = set(self.snapshot.get("before_ids", ())) if self.snapshot else set()
        if allowed is None:
            return [t for t in self.collected if t in self.red or t in kills or t in before]
        # Only what decides the verdict: every kills test (red or not), and one red
        # outside the contract, which alone keeps an overreach or a visible invariant.
        allowed_set = set(allowed)
        outside = [t for t in self.collected if t in self.red and t not in allowed_set]
        wanted = [t for t in self.collected if t in kills or t in outside[:1]]
        if wanted and self.snapshot and self.snapshot.get("in_order"):
            # Every test the run ran before the last of them, as it ran them: a red through the
            # state an earlier test left is green without it (runner.Scenario.confirm_in_order).
            before |= set(self.collected[: self.collected.index(wanted[-1])])
        return [t for t in self.collected if t in kills or t in outside[:1] or t in before]

    def confirm_in_place(self) -> None:
        """In a run that confirms in place, once its tests are over and torn down: re-run what
        decides the verdict here, recorded as a copy records its re-runs (its own events file
        and final line), so the gate reads it the same way.

        A sweep mutant's (runner.Scenario.confirm_in_place): its one red test again, as
        pytest-rerunfailures re-runs a failure, in the process that ran it. The copy forked
        before the first test cost a fifth of a sweep's wall (its fork, every page the run
        then wrote copied once more, its re-run in a process where nothing ran yet, its end).
        What this cannot vouch for is left to the copy, which the trial then asks for
        (trial.settled_in_place): a re-run that disagrees (a red only the first call in a
        process gives, which a fresh start would give again), is red for another reason, or
        never finishes. A test that draws its inputs is not re-run here at all, and no
        confirmation is recorded: Hypothesis would replay the failing example the run saved,
        where the copy's examples are its own."""
        items, self._in_place = self._in_place, None
        if items is None:
            return
        wanted = set(self._reruns())
        rerun = [item for item in items if item.nodeid in wanted]
        if not rerun or any(draws_its_inputs(item) for item in rerun):
            return
        assert self.snapshot is not None  # _in_place is set only when a snapshot was asked for
        kept = self.events, self.red, self.phases
        self.events = open(self.snapshot["events"], "a", encoding="utf-8")
        self.confirming, self.red, self.phases = True, set(), {}
        started = time.perf_counter()
        try:
            self.set_collected([item.nodeid for item in rerun])
            for index, item in enumerate(rerun):
                following = rerun[index + 1] if index + 1 < len(rerun) else None
                item.config.hook.pytest_runtest_protocol(item=item, nextitem=following)
            self.emit(event="final", exit_code=1 if self.red else 0, proof=None, wall=time.perf_counter() - started)
        finally:
            # A re-run that stopped the session (pytest.exit) leaves no last line, so no
            # confirmation: the run is still its own, and reports itself where it can.
            self.events.close()
            self.events, self.red, self.phases = kept
            self.confirming = False

    def finish_confirmation(self, exit_code: int) -> None:
        """In the copy: the last line of its re-runs, then the word that lets the run go on."""
        self.emit(event="final", exit_code=exit_code, proof=None, wall=self.elapsed())
        self.close()
        if self._report_to is not None:
            report_done(self._report_to)

    def elapsed(self) -> float:
        return time.perf_counter() - self._started

    # -- running ------------------------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.tests_begun = True  # a fork of a collected session runs its tests from here
        self.emit(event="start", id=item.nodeid)
        if not self._timeout_read:
            self._timeout_read = True
            self.per_test_timeout = per_test_timeout_of(item.config)
        # The gate reads a red test from call.excinfo (failures.py), never from pytest's
        # rendering of it, which --tb=no does not skip: pytest still cuts and filters the
        # traceback (a stat of every frame's file, each frame's __tracebackhide__ asked) and
        # compares every frame's locals for a RecursionError, for a report nobody prints.
        item.repr_failure = item._repr_failure_py = unrendered_failure
        traced = self.coverage is not None
        self.phases[item.nodeid] = {"id": item.nodeid, "outcome": "passed", "duration": 0.0}
        if draws_its_inputs(item):
            self.phases[item.nodeid]["randomized"] = True  # it draws its inputs: judge.RANDOMIZED
        if traced:
            self._trace(True)
            self.coverage.switch_context(item.nodeid)
            self.phases[item.nodeid]["traced"] = True  # its duration is not the untraced one
        outcome = yield
        if traced:
            self.coverage.switch_context("")
        record = self.phases.pop(item.nodeid)
        stopped = outcome.excinfo
        if stopped is not None and record["outcome"] != "failed":
            # KeyboardInterrupt and pytest.exit() escape pytest's own reporting and stop the
            # session: no report says the test failed, yet it did not pass. It is red, by
            # crash, and the gate resumes the tests the session never reached.
            record.update(
                outcome="failed",
                phase=self._phase.get(item.nodeid, "call"),
                interrupted=True,
                assertion=False,
                exc_type=stopped[0].__name__,
                exc_module=stopped[0].__module__,
                message=shorten(f"{stopped[0].__name__}: {stopped[1]} (the session stopped here)"),
                raised_at=None,
                in_mutated_file=False,
                mutated_file_innermost=False,
            )
        if record["outcome"] == "failed":
            self.red.add(item.nodeid)
        self.emit(event="test", **record)
        if record["outcome"] == "failed" and self.first_red and not self.confirming and stopped is None:
            self.stop_after(item)

    def stop_after(self, item) -> None:
        """Leave out the tests after this one. pytest's run loop (and the collected session's)
        iterates over `session.items` itself, so cutting the list there ends it after this item,
        as a normal end: the session's fixtures are torn down and its final line written."""
        items = item.session.items
        for index, each in enumerate(items):
            if each is item:
                del items[index + 1 :]
                break
        self.stopped_after = item.nodeid

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item):
        self._phase[item.nodeid] = "setup"
        yield

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item):
        self._phase[item.nodeid] = "call"
        yield
        record = self.phases.get(item.nodeid)
        seed = reseeding_seed(item.config) if record is not None else None
        if record is not None and seed is not None and drew_from_random(item, seed):
            record["reseeded"] = True  # what it drew came from the seed: trial.reseeded tries others
            # Unless the test reseeded `random` itself: the same state under another run's seed
            # says so (trial.reseeded compares this with the first further seed's).
            record["random_state"] = random_state_digest()

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_teardown(self, item, nextitem):
        self._phase[item.nodeid] = "teardown"
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        record = self.phases.setdefault(item.nodeid, {"id": item.nodeid, "outcome": "passed", "duration": 0.0})
        record["duration"] += report.duration
        if report.skipped:
            # Said by pytest_runtest_logreport, once it is known to be the test's own report:
            # a subtest's report is made here too, and a skipped subtest does not skip its test.
            self._skip_report = (report, call.when)
        if report.failed and record["outcome"] != "failed":
            record["outcome"] = "failed"
            record["phase"] = call.when
            record.update(self._describe(call.excinfo, report))

    def pytest_runtest_logreport(self, report):
        """A skip, from the test's own report: pytest logs the report it made, while a subtest's
        (unittest's subTest, the `subtests` fixture) is logged as a new SubtestReport. A skipped
        subtest leaves its test as it was (pytest: "1 passed, 1 skipped" subtest), and no skip
        undoes a red: a subtest that failed before another skipped made the test red."""
        pending, self._skip_report = self._skip_report, None
        if pending is None or pending[0] is not report:
            return
        record = self.phases.get(report.nodeid)
        if record is None or record["outcome"] == "failed":
            return
        if pending[1] == "call":
            record["outcome"] = "xfailed" if hasattr(report, "wasxfail") else "skipped"
        elif record["outcome"] == "passed":
            record["outcome"] = "skipped"

    def _describe(self, excinfo, report) -> dict[str, Any]:
        described = describe_failure(excinfo, report, self.mutated_file, self.sandbox)
        if self.per_test_timeout and described["message"].startswith("Failed: Timeout"):
            # pytest-timeout's own words ("Timeout >2s", "Timeout (>2s) from pytest-timeout." since
            # 2.2) do not say whose limit it is: the project's, not the gate's. It fails the test
            # through pytest.fail, which would read as an assertion: it is a hang.
            described["message"] += f" (red by the project's per-test timeout, {self.per_test_timeout:g} s)"
            described["timed_out"] = True
        return described

    def close(self) -> None:
        self.events.close()


def _module_at_import(error: BaseException, conftest: str) -> str:
    """ "pkg/core.py:227": the innermost module top level of the project's that the error came
    through, other than the conftest itself: where the mutated code ran before any test
    (natsort's `natsort_key = natsort_keygen()`); "" without one."""
    sandbox = os.getcwd() + os.sep
    found = ""
    tb = error.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        rel = code.co_filename.removeprefix(sandbox)
        if code.co_name == "<module>" and code.co_filename.startswith(sandbox) and rel != conftest:
            found = f"{rel}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def _run_at_import(error: BaseException, conftest: str) -> str:
    """ " (raised while pkg/core.py:227 ran at import)", or "" (`_module_at_import`)."""
    found = _module_at_import(error, conftest)
    return f" (raised while {found} ran at import)" if found else ""


def marked_to_skip(item) -> bool:
    """Whether a run will skip the test by a mark (`skip`, a `skipif` whose condition holds,
    pytest's own evaluation) or unittest's `skip`/`skipIf` on the test or its class. A mark
    whose condition cannot be evaluated here says nothing: the run will tell."""
    try:
        from _pytest.skipping import evaluate_skip_marks

        if evaluate_skip_marks(item) is not None:
            return True
    except (ImportError, pytest.fail.Exception):  # no such function; a condition pytest could not evaluate
        return False
    return any(getattr(getattr(item, part, None), "__unittest_skip__", False) for part in ("obj", "cls"))


def xfail_never_red(item) -> bool:
    """Whether an xfail mark keeps the test from ever going red: not strict and with no
    `raises`, a failure is "xfailed" and a pass "xpassed", both green; `run=False` runs
    nothing. A mark whose condition cannot be evaluated here says nothing."""
    try:
        from _pytest.skipping import evaluate_xfail_marks

        xfail = evaluate_xfail_marks(item)
    except (ImportError, pytest.fail.Exception):
        return False
    return xfail is not None and (not xfail.run or (not xfail.strict and xfail.raises is None))


def draws_its_inputs(item) -> bool:
    """A Hypothesis test: it searches for its inputs (judge.RANDOMIZED)."""
    return bool(getattr(getattr(item, "obj", None), "is_hypothesis_test", False))


def drew_from_random(item, seed: int) -> bool:
    """Whether the test's call drew from `random`, read after it: it was reseeded with `seed` plus
    the CRC-32 of the test's id (pytest-randomly, or the gate where randomly is absent), and a
    generator left as that seed leaves it drew nothing. Only read, never drawn from: the test
    saw what it would have."""
    return random.getstate() != random.Random(seed + id_offset(item.nodeid)).getstate()


def random_state_digest() -> str:
    """A digest of `random`'s whole state as the test's call left it, read, never drawn from.
    A test that drew from the run's seed leaves another state under another seed; one that
    called `random.seed(1234)` itself before it drew leaves the same one under every seed."""
    return hashlib.blake2b(repr(random.getstate()).encode(), digest_size=16).hexdigest()


def per_test_timeout_of(config) -> float | None:
    """The project's per-test timeout when pytest-timeout is active, in its own order: --timeout,
    else PYTEST_TIMEOUT, else the `timeout` ini value; None without one (0 means none to it too)."""
    if not config.pluginmanager.hasplugin("timeout"):
        return None
    said = config.getoption("timeout", None)
    if said is None:
        said = os.environ.get("PYTEST_TIMEOUT") or config.getini("timeout")
    try:
        value = float(said or 0)
    except (TypeError, ValueError):
        return None
    return value if value > 0 else None


def deselected_by(items: list) -> str:
    """What deselected these tests, in the words of the option that did. pytest calls
    `pytest_deselected` once per deselection (--deselect, -k, -m), so one call has one cause."""
    from killmap.catalog.testids import matches

    config = items[0].config
    excluded = tuple(config.getoption("killmap_exclude", None) or ())
    if excluded and all(any(matches(entry, item.nodeid) for entry in excluded) for item in items):
        return "[gate] exclude"
    prefixes = tuple(config.getoption("deselect", None) or ())
    if prefixes and all(item.nodeid.startswith(prefixes) for item in items):
        return "--deselect (the project's pytest options)"
    said = []
    if config.getoption("markexpr", ""):
        said.append(f"the marker expression {config.getoption('markexpr')!r} (-m)")
    if config.getoption("keyword", ""):
        said.append(f"the keyword expression {config.getoption('keyword')!r} (-k)")
    return " or ".join(said) or "a pytest plugin"


def conclude_run(
    recorder: Recorder,
    exit_code: int,
    request: dict[str, Any],
    blocked_root: str | None,
    *,
    imports_of: str | None,
    swap: dict[str, Any] | None = None,
    watch: ImportWatch | None = None,
) -> None:
    """The end of every run, in a fresh session or a fork of the collected one.

    The confirmation copy reports its re-runs and stops; the run itself lets the copy go,
    saves its coverage when it traced, and writes its final line with the origin proof.
    `imports_of`: the sandbox whose imported files the cache needs, when they are wanted.
    `watch`: the collected session's, in its forks (working_tree_imports.py).
    """
    if recorder.confirming:
        recorder.finish_confirmation(int(exit_code))
        return
    recorder.finish_snapshot()
    # Every test has run: the proof imports (a module no test imported) and reads from the
    # sandbox, which a test may have left for a folder since removed (its relative sys.path
    # entries would then name nothing).
    os.chdir(recorder.sandbox)
    tracer = None
    if recorder.coverage is not None:
        from killmap.engine.reach.tracing import tracer_name, write_coverage

        recorder.stop_tracing()
        write_coverage(recorder.coverage, request["coverage"]["out"])
        tracer = tracer_name(recorder.coverage)
    imported = []
    if imports_of:
        from killmap.engine.reach.tracing import imported_files

        imported = imported_files(imports_of)
    report_final(
        recorder,
        exit_code,
        request.get("expect"),
        blocked_root,
        imported=imported,
        swap=swap,
        tracer=tracer,
        watch=watch,
    )


def report_final(
    recorder: Recorder,
    exit_code: int,
    expect: dict[str, Any] | None,
    blocked_root: str | None,
    *,
    imported: list[str],
    swap: dict[str, Any] | None = None,
    tracer: str | None = None,
    watch: ImportWatch | None = None,
) -> None:
    """A run's last line: its exit code and the proof that the mutant was the code that ran."""
    proof = None
    if expect:
        proof = origin_proof(expect["module"], expect["file"], expect["sha256"], blocked_root, watch, recorder.sandbox)
        if swap is not None:
            proof["swap"] = swap  # which function objects were given the mutant's code
    more: dict[str, Any] = {"tracer": tracer} if tracer else {}  # what recorded the reach
    if recorder.per_test_timeout:
        more["per_test_timeout"] = recorder.per_test_timeout  # lets a mutant's limit wait for it
    if recorder.stopped_after:
        more["stopped_after"] = recorder.stopped_after  # the tests after it were left out on purpose
    recorder.emit(event="final", exit_code=int(exit_code), proof=proof, imported=imported, **more)
    recorder.close()


def origin_proof(
    module_name: str,
    expected_file: str,
    expected_sha256: str,
    blocked_root: str | None,
    watch: ImportWatch | None = None,
    sandbox: str | None = None,
) -> dict[str, Any]:
    """Prove the module the tests imported is the sandbox's file holding the mutant's text.

    Called after the session in the same process, so it sees the very module objects the
    tests used. A module the tests never imported is imported now: if that fails the
    mutant does not import, which is a broken mutant, not a survivor.
    """
    proof: dict[str, Any] = {"module": module_name, "imported_by_tests": module_name in sys.modules}
    if module_name not in sys.modules:
        try:
            __import__(module_name)
        except BaseException as exc:  # noqa: BLE001 - any import failure is the finding
            proof["import_error"] = f"{type(exc).__name__}: {exc}"
            return proof
    module = sys.modules[module_name]
    loaded = os.path.realpath(getattr(module, "__file__", "") or "")
    proof["loaded_file"] = loaded
    proof["file_matches"] = loaded == os.path.realpath(expected_file)
    try:
        on_disk = Path(loaded).read_bytes()
        proof["text_matches"] = hashlib.sha256(on_disk).hexdigest() == expected_sha256
    except OSError:
        proof["text_matches"] = False
    if blocked_root:
        proof["modules_from_working_tree"] = modules_from_working_tree(blocked_root, watch, sandbox or os.getcwd())
    return proof


def now() -> float:
    return time.perf_counter()
