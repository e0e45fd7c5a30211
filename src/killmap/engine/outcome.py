"""What one pytest run did, read back from the plugin's JSON lines.

Vocabulary: a *run* is one pytest session in a sandbox (baseline, mutant or
confirmation); its *outcome* holds one `TestResult` per test, and each red test has a
*cause*: assertion, crash, broken or error.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Exceptions whose red means "the mutant does not compile" when the mutated file raised them.
BROKEN_TYPES = (
    "NameError",
    "UnboundLocalError",
    "ImportError",
    "ModuleNotFoundError",
    "SyntaxError",
    "IndentationError",
    "TabError",
)

ASSERTION = "assertion"  # AssertionError, pytest.fail, pytest.raises that did not raise
CRASH = "crash"  # another exception from the code under test: a legitimate red
BROKEN = "broken"  # NameError/ImportError/SyntaxError... raised from the mutated file
ERROR = "error"  # red in fixture setup or teardown, not in the test itself
SEARCH = "search"  # Hypothesis's DeadlineExceeded or Flaky: its search's timing, not an assertion
TIMEOUT = "timeout"  # the project's own per-test timeout (pytest-timeout) ended the test
CAUSES = (ASSERTION, CRASH, BROKEN, ERROR, SEARCH, TIMEOUT)
# Broken-type errors from an import statement surface from the import machinery below the
# importing frame; a NameError must come from the mutated file's own frame to be the mutant's doing.
_IMPORT_TYPES = ("ImportError", "ModuleNotFoundError", "SyntaxError", "IndentationError", "TabError")
# A compile error raised in the mutated file's own frame was not the mutant's text: that module
# compiled, or it would not be running. Its code raised it (asteval's `raise SyntaxError(...)`
# for a name it refuses) or parsed other text (`compile`, `ast.parse`): behaviour, a crash.
_COMPILE_TYPES = ("SyntaxError", "IndentationError", "TabError")


@dataclass(frozen=True)
class TestResult:
    __test__ = False  # a record of a test, not one: keeps pytest from trying to collect it
    id: str
    outcome: str  # passed, failed, skipped, xfailed
    duration: float = 0.0
    phase: str | None = None  # setup, call or teardown, when red
    exc_type: str | None = None
    exc_module: str | None = None
    message: str = ""
    raised_at: tuple[str, int] | None = None  # the deepest frame inside the project
    raised_innermost: tuple[str, int] | None = None  # the innermost frame anywhere
    in_mutated_file: bool = False
    mutated_file_innermost: bool = False
    imported_by_mutated_file: bool = False  # an import the mutated file makes failed (failures._imported_by)
    assertion: bool = False  # AssertionError or pytest's own failure (fail, raises)
    interrupted: bool = False  # the test stopped the session, or the process died in it
    traced: bool = False  # its lines were recorded in this run (a baseline's), slowing it
    search: bool = False  # red by Hypothesis's DeadlineExceeded or Flaky (failures.SEARCH_ERRORS)
    timed_out: bool = False  # red by the project's per-test timeout: a hang, not an assertion
    randomized: bool = False  # it draws its inputs (a Hypothesis test)
    reseeded: bool = False  # pytest-randomly reseeded `random` from the run's seed before it
    # A digest of `random`'s state after its call, where it drew (plugin.random_state_digest): the
    # same under two seeds, the test reseeded `random` itself, and what it drew is not the seed's.
    random_state: str | None = None

    @property
    def seeded(self) -> bool:
        """Whether what it drew depends on the run's seed: another seed may find what this missed."""
        return self.randomized or self.reseeded

    @property
    def red(self) -> bool:
        return self.outcome == "failed"

    @property
    def cause(self) -> str | None:
        if not self.red:
            return None
        if self.interrupted:
            return CRASH
        if self.phase in ("setup", "teardown"):
            return ERROR
        if self.search:
            return SEARCH
        if self.timed_out:
            return TIMEOUT
        if self.assertion:
            return ASSERTION
        if self.exc_type in BROKEN_TYPES and (
            (self.mutated_file_innermost and self.exc_type not in _COMPILE_TYPES)
            or (self.exc_type in _IMPORT_TYPES and self.imported_by_mutated_file)
        ):
            return BROKEN
        return CRASH

    def to_json(self) -> dict[str, Any]:
        data = {"id": self.id, "outcome": self.outcome, "duration": round(self.duration, 6)}
        if self.red:
            data.update(
                cause=self.cause,
                phase=self.phase,
                exception=self.exc_type,
                message=self.message,
                raised_at=_where(self.raised_at),
                raised_innermost=_where(self.raised_innermost),
            )
        return data


def _where(frame: tuple[str, int] | None) -> str | None:
    return f"{frame[0]}:{frame[1]}" if frame else None


@dataclass(frozen=True)
class RunOutcome:
    status: str  # done, timeout, error
    wall: float
    collected: tuple[str, ...] = ()
    tests: dict[str, TestResult] = field(default_factory=dict)
    collect_errors: tuple[tuple[str, str], ...] = ()
    conftest_error: tuple[str, str] | None = None  # (conftest, error) when one did not load
    deselected: tuple[tuple[str, str], ...] = ()  # (test, what deselected it): -m, -k, --deselect
    # A collection's tests that a skip mark or unittest's skip will skip (collect-only runs: `check`)
    marked_skip: tuple[str, ...] = ()
    marked_xfail: tuple[str, ...] = ()  # ... and that an xfail mark keeps from going red
    in_progress: str | None = None
    exit_code: int | None = None
    proof: dict[str, Any] | None = None
    finished: bool = False  # the plugin wrote its final line
    log_tail: str = ""
    coverage: dict[str, dict[str, list[int]]] | None = None
    imported: tuple[str, ...] = ()  # sandbox-relative .py files in sys.modules
    final_wall: float = 0.0  # the process's own measure, when it gave one
    confirmation: RunOutcome | None = None  # the snapshot re-run, when one was asked for
    child_exit: int | None = None  # the process's exit status; negative: a signal
    segments: int = 1  # sessions it took to give every test an outcome
    untraced: frozenset[str] = frozenset()  # tests whose session died before saving coverage
    escaped: tuple[str, ...] = ()  # working-tree files written during the run (restored)
    unrestored: tuple[str, ...] = ()  # of those, what could not be put back (no copy kept)
    denied: tuple[str, ...] = ()  # working-tree files a red test was refused writing (confinement)
    sandbox_writes: tuple[str, ...] = ()  # sandbox files it wrote that tests do not (repaired)
    path: str = "fresh"  # swap (a fork of the collected session), fallback, fresh
    fallback: str = ""  # why a swap fell back to a fresh session
    tracer: str = ""  # what recorded its coverage, when traced
    session_seconds: float = 0.0  # a fork's: what its collected session took to collect
    stuck: str = ""  # stopped at its limit: "busy" (using the CPU) or "idle"; "": cannot say
    waited: float = 0.0  # stopped at its limit: the seconds it moved on while the run waited for a CPU
    # Stopped at one test's own limit (a fork's, runner.Scenario.test_limits): that test and
    # its limit in seconds; None when the run's own limit stopped it, or nothing did.
    test_limit: tuple[str, float] | None = None
    per_test_timeout: float | None = None  # the project's own (pytest-timeout), when it sets one
    stopped_after: str | None = None  # the first red test, when the run stopped there on purpose
    # The gate's process the run killed ("the gate's worker (SIGKILL)"), or "": a process the
    # run's tests ran under ended while they ran (worker.py, pool.Worker), as no test may make it.
    gate_killed: str = ""

    @property
    def red(self) -> dict[str, TestResult]:
        return {k: v for k, v in self.tests.items() if v.red}

    @property
    def durations(self) -> dict[str, float]:
        return {k: v.duration for k, v in self.tests.items()}


_QUOTED_PATH = re.compile(r"'(/[^']+)'")


def denied_writes(outcome: RunOutcome, root: str) -> tuple[str, ...]:
    """The working-tree files a red test was refused (PermissionError naming a path in the tree):
    where Landlock confines the tests, a write into the tree never happens, but the mutant
    tried it, and that is the same finding as a write the watch undid. Unmutated tests never
    write there (the baseline would be red), so only a mutant's attempt shows up here."""
    prefixes = tuple(dict.fromkeys([root.rstrip("/") + "/", os.path.realpath(root).rstrip("/") + "/"]))
    denied = set()
    for result in outcome.tests.values():
        if not result.red or result.exc_type != "PermissionError":
            continue
        for path in _QUOTED_PATH.findall(result.message):
            for prefix in prefixes:
                if path.startswith(prefix):
                    denied.add(path[len(prefix) :])
    return tuple(sorted(denied))


def refused_arguments(outcome: RunOutcome) -> str | None:
    """pytest's own words when it stopped before collecting (exit code 4, USAGE_ERROR): an
    addopts naming a plugin that is not installed, a conftest.py that does not import. It
    collects nothing then, and "no tests collected" would send the user looking elsewhere.
    A conftest that does not import is named from the recorder's own event, not pytest's text."""
    if outcome.conftest_error is not None:
        where, message = outcome.conftest_error
        return f"{where or 'a conftest'} does not import: {error_line(message)}"
    if outcome.exit_code != 4:
        return None
    said = [line.strip() for line in outcome.log_tail.splitlines() if "error:" in line.lower()]
    return said[-1] if said else "pytest refused its arguments (usage error)"


def nothing_collected(outcome: RunOutcome) -> str:
    """ "no tests collected", and, when options deselected every test, which options: the
    line named no field (parsimonious: `pytest_args = "-k nothing"` in [gate])."""
    if not outcome.deselected:
        return "no tests collected"
    causes = sorted({by for _, by in outcome.deselected})
    return (
        f"no tests collected: all {len(outcome.deselected)} were deselected by {' and '.join(causes)}; "
        "see [gate] pytest_args and exclude, and the project's own pytest options"
    )


def error_line(text: str) -> str:
    """The line of pytest's text of a failure that names the exception ("E   NameError: ...",
    a warning made an error by `filterwarnings = error` too), else its first line."""
    for line in reversed(text.splitlines()):
        bare = line.strip()
        bare = bare[1:].strip() if bare.startswith("E ") else bare
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b", bare):
            return bare[:300]
    return next((line.strip()[:300] for line in text.splitlines() if line.strip()), "")


def tracers_of(outcomes: list[RunOutcome]) -> str:
    """What recorded the coverage of these runs, as one name ("coverage + sys.monitoring" if
    both did); "" when none was traced."""
    return " + ".join(sorted({o.tracer for o in outcomes if o.tracer}))


def read_outcome(
    events_path: Path, log_path: Path, response: dict[str, Any], coverage_path: Path | None = None
) -> RunOutcome:
    """A run's outcome from the recorder's events, the log's tail, the coverage written, and
    the worker's response."""
    events = _read_events(events_path)
    final = events.final
    log_tail = ""
    if log_path.exists():
        log_tail = log_path.read_text(encoding="utf-8", errors="replace")[-3000:]
    coverage = None
    if coverage_path is not None and coverage_path.exists():
        coverage = json.loads(coverage_path.read_text(encoding="utf-8"))
    return RunOutcome(
        status=response.get("status", "error"),
        wall=response.get("wall", 0.0),
        collected=tuple(events.collected),
        tests=events.tests,
        collect_errors=tuple(events.errors),
        conftest_error=events.conftest,
        deselected=tuple(events.deselected),
        marked_skip=tuple(events.marked_skip),
        marked_xfail=tuple(events.marked_xfail),
        in_progress=events.started,
        exit_code=final.get("exit_code"),
        proof=final.get("proof"),
        imported=tuple(final.get("imported", ())),
        final_wall=final.get("wall", 0.0),
        finished=bool(final),
        log_tail=log_tail,
        coverage=coverage,
        child_exit=response.get("child_exit"),
        path=response.get("path", "fresh"),
        fallback=response.get("fallback", ""),
        tracer=final.get("tracer", ""),
        session_seconds=response.get("session_seconds", 0.0),
        stuck=response.get("stuck", ""),
        waited=response.get("waited", 0.0),
        test_limit=(cut["id"], cut["seconds"]) if (cut := response.get("test_limit")) else None,
        per_test_timeout=final.get("per_test_timeout"),
        stopped_after=final.get("stopped_after"),
        gate_killed=response.get("gate_killed", ""),
    )


@dataclass(frozen=True)
class _Events:
    """What the recorder's events file says, read in one pass."""

    collected: list[str]
    tests: dict[str, TestResult]
    errors: list[tuple[str, str]]
    conftest: tuple[str, str] | None
    deselected: list[tuple[str, str]]
    started: str | None  # the test that started and never reported: where the run stopped
    final: dict[str, Any]
    marked_skip: list[str]
    marked_xfail: list[str]


def _test_result(event: dict[str, Any]) -> TestResult:
    """A test's result from its recorder's "test" event."""
    raised = event.get("raised_at")
    innermost = event.get("raised_innermost")
    return TestResult(
        id=event["id"],
        outcome=event["outcome"],
        duration=event.get("duration", 0.0),
        phase=event.get("phase"),
        exc_type=event.get("exc_type"),
        exc_module=event.get("exc_module"),
        message=event.get("message", ""),
        raised_at=(raised[0], raised[1]) if raised else None,
        raised_innermost=(innermost[0], innermost[1]) if innermost else None,
        in_mutated_file=event.get("in_mutated_file", False),
        mutated_file_innermost=event.get("mutated_file_innermost", False),
        imported_by_mutated_file=event.get("imported_by_mutated_file", False),
        assertion=event.get("assertion", False),
        interrupted=event.get("interrupted", False),
        traced=event.get("traced", False),
        search=event.get("search", False),
        timed_out=event.get("timed_out", False),
        randomized=event.get("randomized", False),
        reseeded=event.get("reseeded", False),
        random_state=event.get("random_state"),
    )


def _read_events(events_path: Path) -> _Events:
    # One loop, inline: it runs once per test of every run, so no call per event but the
    # one that builds a test's result.
    tests: dict[str, TestResult] = {}
    collected: list[str] = []
    errors: list[tuple[str, str]] = []
    conftest: tuple[str, str] | None = None
    deselected: list[tuple[str, str]] = []
    marked_skip: list[str] = []
    marked_xfail: list[str] = []
    started: str | None = None
    final: dict[str, Any] = {}
    if events_path.exists():
        for line in events_path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a kill at the timeout
            kind = event.pop("event")
            if kind == "collected":
                collected.extend(event["ids"])
            elif kind == "collect_error":
                errors.append((event["id"], event["message"]))
            elif kind == "conftest_error":
                conftest = (event["path"], event["message"])
            elif kind == "deselected":
                deselected.extend((test_id, event["by"]) for test_id in event["ids"])
            elif kind == "marked_skip":
                marked_skip.extend(event["ids"])
            elif kind == "marked_xfail":
                marked_xfail.extend(event["ids"])
            elif kind == "start":
                started = event["id"]
            elif kind == "test":
                if started == event["id"]:
                    started = None
                prior = tests.get(event["id"])
                # One id, several items (a custom collector's): red if any of them is, as pytest says.
                if prior is None or not prior.red or event["outcome"] == "failed":
                    tests[event["id"]] = _test_result(event)
            elif kind == "final":
                final = event
    return _Events(collected, tests, errors, conftest, deselected, started, final, marked_skip, marked_xfail)
