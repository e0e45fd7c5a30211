"""Verdicts: one per mutation, from the evidence the runs produced.

The order of the checks is the argument: nothing counts as a kill until the mutant is
proven to be applied, valid, the very code that ran, reached, and stable on a re-run.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from killmap.catalog.project import module_name
from killmap.catalog.reader import Mutation
from killmap.catalog.testids import matches
from killmap.engine import ASSERTION, BROKEN, CRASH, RunOutcome, error_line, refused_arguments
from killmap.wording import counted

if TYPE_CHECKING:
    from killmap.mutate.mutant import Mutant

HELD = "held"  # every kills test went red by a real failure; nothing else did
VACUOUS = "vacuous"  # a kills test stayed green: it does not guard against this defect
OVERREACH = "overreach"  # a test outside kills + may_kill went red
VISIBLE = "visible"  # an invariant mutation turned something red
WRONG_CAUSE = "wrong-cause"  # require = "assertion" and a kills test went red otherwise
NOT_APPLIED = "not-applied"  # the operator matched the wrong number of sites, or changed nothing
BROKEN_VERDICT = "broken"  # the mutant does not compile cleanly, or is not the code that ran
TIMEOUT = "timeout"  # the mutant ran past the limit that the unmutated tests meet
FLAKY = "flaky"  # a confirming re-run disagreed with the first run
RANDOMIZED = "randomized"  # it disagreed on tests that draw random inputs (Hypothesis): luck, not a flake
STALE = "stale"  # the target changed since the mutation was pinned
UNEVIDENCED = "unevidenced"  # nothing proves the verdict: region unreached, or control not held
INCONCLUSIVE = "inconclusive"  # the environment, not the mutant, failed (e.g. a slow machine)
ESCAPED = "escaped"  # the mutant wrote into the user's working tree (restored), or killed a gate process
VERDICTS = (
    HELD,
    VACUOUS,
    OVERREACH,
    VISIBLE,
    WRONG_CAUSE,
    NOT_APPLIED,
    BROKEN_VERDICT,
    TIMEOUT,
    FLAKY,
    RANDOMIZED,
    STALE,
    UNEVIDENCED,
    INCONCLUSIVE,
    ESCAPED,
)


@dataclass(frozen=True)
class RedTest:
    id: str
    cause: str
    phase: str | None
    exception: str | None
    message: str
    raised_at: str | None  # the deepest frame inside the project
    reached: bool | None
    raised_innermost: str | None = None  # the innermost frame anywhere (maybe site-packages)
    # raised_at's line in the user's tree, where it is in the mutated file below lines the
    # mutation removed or added (raised_at is the mutant's, as plain pytest on it says).
    tree_line: int | None = None


@dataclass(frozen=True)
class Verdict:
    name: str
    verdict: str
    detail: str
    expected: tuple[str, ...] = ()  # the kills entries
    red: tuple[RedTest, ...] = ()
    missing: tuple[str, ...] = ()  # kills entries with no red test
    unexpected: tuple[str, ...] = ()  # red tests outside the contract
    reached_by: tuple[str, ...] = ()
    selected: tuple[str, ...] = ()
    selection: str = ""
    duration: float = 0.0
    timeout: float | None = None
    cached: bool = False
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def held(self) -> bool:
        return self.verdict == HELD


@dataclass(frozen=True)
class Evidence:
    """Everything the runs proved about one applied, valid mutant."""

    run: RunOutcome
    confirm: RunOutcome | None
    reached_by: tuple[str, ...]
    region_executed: bool
    import_time: bool
    timeout: float
    selected_baseline_seconds: float  # what the same tests took unmutated, this run
    # Of the kills tests red without reaching the change in the baseline, those that do reach
    # it run by themselves, unmutated (trial.py traces them only then): None when not run.
    reached_alone: frozenset[str] | None = None
    # Names the mutant binds differently from the original (reach.rebound_names): None when
    # unknown. A NameError or UnboundLocalError for any other name is the original's own
    # code, reached: a crash, not a mutant that cannot run.
    rebound: frozenset[str] | None = None
    mutant: Mutant | None = None  # what ran: its lines against the original's (RedTest.tree_line)
    draws: frozenset[str] = frozenset()  # the tests that draw their inputs (Baseline.draws)
    # Every collected test ran, in the suite's order, and the change is in a function that
    # writes shared state (Region.writes_state): a red after a test that ran the change read
    # what the mutant stored, in the order where the unmutated suite is green.
    shares_state: bool = False

    def through_state(self, test_id: str) -> bool:
        """Red without reaching the change in the baseline, where an earlier test had run it
        for this one, yet reaching it when run by itself: the mutant reached it through state
        that test left (wcwidth's lru_cache held the mutant's result, and a later test never
        called the mutated function). Not a test red for line numbers, or for a test the
        selection left out: run by itself, such a test still never runs the change."""
        return (
            not self.import_time
            and test_id not in self.reached_by
            and self.reached_alone is not None
            and test_id in self.reached_alone
        )


def judge_run(mutation: Mutation, evidence: Evidence, base: dict[str, Any]) -> Verdict:
    """The first check in _CHECKS that has a verdict gives it; a mutant that passes them all held."""
    case = _case(mutation, evidence, base)
    for check in _CHECKS:
        found = check(case)
        if found is not None:
            return found
    return _held(case)


@dataclass(frozen=True)
class _Case:
    """One mutant before the judge: what every check reads, and how it words its verdict."""

    mutation: Mutation
    evidence: Evidence
    base: dict[str, Any]
    red_tests: tuple[RedTest, ...]
    timings: dict[str, Any]

    @property
    def run(self) -> RunOutcome:
        return self.evidence.run

    def verdict(self, kind: str, detail: str, **more: Any) -> Verdict:
        evidence = self.evidence
        run = evidence.run
        extras = {**self.timings, **more.pop("extras", {})}
        return Verdict(
            name=self.mutation.name,
            verdict=kind,
            detail=detail,
            expected=self.mutation.kills,
            reached_by=evidence.reached_by,
            duration=run.wall + (evidence.confirm.wall if evidence.confirm else 0.0),
            timeout=evidence.timeout,
            extras=extras,
            **{**self.base, **more},
        )

    # The contract's sets, read only by the checks after the mutant is proven to be itself
    # (cached_property writes the instance's __dict__, which a frozen dataclass allows).
    @cached_property
    def red_ids(self) -> set[str]:
        return {r.id for r in self.red_tests}

    @cached_property
    def missing(self) -> tuple[str, ...]:
        return tuple(entry for entry in self.mutation.kills if not any(matches(entry, r) for r in self.red_ids))

    @cached_property
    def unexpected(self) -> tuple[str, ...]:
        allowed = self.mutation.kills + self.mutation.may_kill
        return tuple(sorted(r for r in self.red_ids if not any(matches(e, r) for e in allowed)))

    @cached_property
    def kill_reds(self) -> list[RedTest]:
        return [r for r in self.red_tests if any(matches(e, r.id) for e in self.mutation.kills)]

    @cached_property
    def green_kill_tests(self) -> tuple[str, ...]:
        kills = self.mutation.kills
        return tuple(
            sorted(t for t in self.run.collected if t not in self.red_ids and any(matches(e, t) for e in kills))
        )


def _case(mutation: Mutation, evidence: Evidence, base: dict[str, Any]) -> _Case:
    run = evidence.run
    timings: dict[str, Any] = {
        "run_seconds": round(run.wall, 4),
        "confirm_seconds": round(evidence.confirm.wall, 4) if evidence.confirm else 0.0,
        "selected_baseline_seconds": round(evidence.selected_baseline_seconds, 4),
    }
    red_tests = tuple(_red(run, evidence))
    if run.sandbox_writes:
        # A run stopped at its limit stopped a test before its teardown: what that test writes
        # and removes on every run stays behind (rsa: its key files, at each hang), which is
        # not the mutant's writing, and no reason to run the mutant again next time.
        stopped = run.status == "timeout" or run.test_limit is not None
        timings[LEFT_BY_STOPPED_TEST if stopped else "sandbox_writes"] = list(run.sandbox_writes)
    return _Case(mutation, evidence, base, red_tests, timings)


# A run stopped at its limit: the sandbox files its stopped test left (repaired), said apart.
LEFT_BY_STOPPED_TEST = "left_by_stopped_test"


# The checks, in the order of the table in docs/verdicts.md. Each returns a verdict, or None
# to pass the mutant on to the next.


def _escaped(case: _Case) -> Verdict | None:
    run = case.run
    if not run.escaped and not run.denied:
        return None
    # Nothing else matters: the user's files were written. They are restored, and the
    # gate fails so that someone looks.
    # A file the gate kept no copy of (an ignored log, where nothing confines the tests) is
    # named apart, in one line: the user must look at it.
    restored = [p for p in run.escaped if p not in run.unrestored]
    said = []
    if restored:
        said.append(
            ", ".join(restored) + " (restored byte for byte, or a new file moved out; what it wrote is kept "
            "in killmap's cache folder, under displaced/)"
        )
    if run.unrestored:
        said.append("could not restore (no copy kept): " + ", ".join(run.unrestored))
    if not run.escaped:
        # Landlock refused the write: nothing of the user's changed, but the mutant reached for
        # the real tree, and a `held` would hide that on a machine without confinement.
        return case.verdict(
            ESCAPED,
            "the mutant tried to write to the working tree, and confinement refused it (nothing there "
            "changed): " + ", ".join(run.denied),
            red=case.red_tests,
        )
    return case.verdict(ESCAPED, "the mutant wrote to the working tree: " + "; ".join(said), red=case.red_tests)


def _killed_gate(case: _Case) -> Verdict | None:
    """A process of the gate ended under the run: the mutant's own code reached out of its test
    process (the gate stops its processes only between runs). Decided from which run the
    process died in, never from what its tests managed to report before they were killed with
    it: those differ from one run to the next, and so no red is shown. Another run does the
    same, so nothing is run again."""
    run = case.run
    if not run.gate_killed:
        return None
    return case.verdict(
        ESCAPED,
        f"the mutant killed {run.gate_killed} while its tests ran: a test may end its own process, "
        "never the gate's. killmap replaced the process, so no other mutation is affected; but no test "
        "can judge a mutant that ends the process it runs under, and a re-run does the same: rewrite "
        "the mutation",
    )


def _timed_out(case: _Case) -> Verdict | None:
    run, evidence = case.run, case.evidence
    if run.status != "timeout":
        return None
    stuck = run.test_limit[0] if run.test_limit is not None else run.in_progress
    where = _stuck_in(run, stuck, evidence.draws)
    if run.test_limit is not None:
        test, seconds = run.test_limit
        if case.mutation.require == HANG:
            still = f"still running after {seconds:.1f}s, that test's own limit{_waited(run)}{where}"
            return _hung_as_declared(case, test, still)
        return _past_its_tests_limit(case, where)
    if evidence.selected_baseline_seconds >= evidence.timeout:
        # Only a catalog's own timeout can be below them (the gate's is ten times as much): a
        # re-run gives the same (dpath: `timeout = 20` against a selection of 83 s).
        return case.verdict(
            INCONCLUSIVE,
            f"timed out after {evidence.timeout:.1f}s{_waited(run)}{where}, but the same tests "
            f"took {evidence.selected_baseline_seconds:.1f}s unmutated in this run: the limit is "
            "too tight for them, so it is not the mutant's loop",
            red=case.red_tests,
            extras={"inconclusive_cause": "limit"},
        )
    selected = case.base.get("selected", ())
    reported = bool(selected) and all(t in run.tests for t in selected)
    still = (
        f"still running after {evidence.timeout:.1f}s{_waited(run)}{where}; the same tests took "
        f"{evidence.selected_baseline_seconds:.2f}s unmutated"
    )
    if case.mutation.require == HANG and run.in_progress and not reported:
        return _hung_as_declared(case, run.in_progress, still)
    return case.verdict(
        TIMEOUT,
        f"{still}{_never_ran(case)}",
        red=case.red_tests,
        extras={
            **({EVERY_TEST_REPORTED: True} if reported else {}),
            **({STUCK_IN: run.in_progress} if run.in_progress else {}),
        },
    )


def _hung_as_declared(case: _Case, stuck: str, still: str) -> Verdict:
    """`require = "timeout"`: the defect is declared to make its kills test hang. Held when the
    run hung in a kills test (far past what the same tests took unmutated: the gate's limit),
    every kills test red before it hung too (the project's per-test timeout ended it), and no
    test outside the contract went red. A hang ends the run: a kills test after it is never
    measured, so an entry naming one is a timeout, told to name the test that hangs."""
    kills, run = case.mutation.kills, case.run
    extras = {STUCK_IN: stuck}
    if not any(matches(entry, stuck) for entry in kills):
        return case.verdict(
            TIMEOUT,
            f"{still}{_never_ran(case)}; require = 'timeout' expects a kills test to hang, and {stuck} is not one",
            red=case.red_tests,
            extras=extras,
        )
    if case.unexpected:
        return case.verdict(
            OVERREACH,
            f"{_some(case.unexpected)} went red before the declared hang in {stuck}",
            red=case.red_tests,
            unexpected=case.unexpected,
            extras=extras,
        )
    wrong = [f"{r.id} ({r.cause}: {r.exception})" for r in case.kill_reds if r.cause != HANG]
    if wrong:
        said = "went red without hanging, as require = 'timeout' asks: "
        return case.verdict(WRONG_CAUSE, said + "; ".join(wrong), red=case.red_tests)
    kills_tests = [t for t in case.base.get("selected", ()) if t != stuck and any(matches(e, t) for e in kills)]
    green = [t for t in kills_tests if t in run.tests and t not in case.red_ids]
    if green:
        said = f"stayed green before the hang in {stuck}: {_some(tuple(green))}"
        return case.verdict(VACUOUS, said, red=case.red_tests, extras=extras)
    never = [t for t in kills_tests if t not in run.tests]
    if never:
        return case.verdict(
            TIMEOUT,
            f"{still}; it hung in {stuck} as declared, and {_some(tuple(never))} in kills never ran after it "
            f"(a hang ends the run): name in kills the test that hangs, {stuck!r}, alone",
            red=case.red_tests,
            extras=extras,
        )
    return case.verdict(
        HELD,
        f"{stuck} hung, as require = 'timeout' declares: {still}",
        red=case.red_tests,
        extras={**extras, HUNG: stuck},
    )


def _past_its_tests_limit(case: _Case, where: str) -> Verdict:
    """A run stopped at one test's own limit (trial.each_test_limit), ten times what that test
    took unmutated or more: the run's limit, for the whole selection, never came."""
    run = case.run
    assert run.test_limit is not None
    test, seconds = run.test_limit
    took = case.evidence.selected_baseline_seconds
    return case.verdict(
        TIMEOUT,
        f"still running after {seconds:.1f}s in one test, that test's own limit{_waited(run)}{where}; "
        f"the same tests took {took:.2f}s unmutated, all together{_never_ran(case)}",
        red=case.red_tests,
        extras={STUCK_IN: test, "test_limit": seconds},
    )


# On a `timeout`: every selected test had its outcome before the limit came, so what ran past
# it was the reds' confirmation or the session's end, not a test (trial: tried again longer).
EVERY_TEST_REPORTED = "every_test_reported"
# On a `timeout`: the test that was running when the limit came, when one was (prove reads it).
STUCK_IN = "stuck_in"
# `require = "timeout"`: a kills test must hang (the cause a project's per-test timeout gives,
# or the run stopped at the gate's limit inside it).
HANG = "timeout"
# On a `held` verdict: the kills test that hung as `require = "timeout"` declares; the trial
# runs the mutant again, and the hang must repeat there (trial.hang_confirmed).
HUNG = "hung"


def _never_ran(case: _Case) -> str:
    """The selected tests a timed-out run never reached, the kills tests among them first: a
    hang in one test ends the run, and a kills test after it proved nothing either way."""
    run = case.run
    left = [t for t in case.base.get("selected", ()) if t not in run.tests and t != run.in_progress]
    if not left:
        return ""
    kills = [t for t in left if any(matches(entry, t) for entry in case.mutation.kills)]
    first = tuple(kills + [t for t in left if t not in kills])
    said = f"; {counted(len(left), 'selected test')} never ran: {_some(first)}"
    return said + (f" ({len(kills)} of them in kills)" if kills else "")


# What a run stopped at its limit was doing then (engine/workers/timeout_cpu.py): the fix for a loop and
# for a wait differ, and "an infinite loop" was once said of both.
_STUCK = {
    # Short: the line is a verdict's detail, cut on a terminal (tomli's ran past its width).
    "busy": "busy: it kept the CPU running to the end (a loop, or work far past the tests' own)",
    "idle": "idle: waiting at the end on something that never came (a sleep, a lock, an await, a socket, a subprocess)",
}


def _waited(run: RunOutcome) -> str:
    """ ", not counting 2.3s it waited for a CPU": a limit is time the run could run, and a loaded
    machine moves its deadline on (engine/workers/timeout_cpu.Limit); the clock ran longer."""
    if run.waited < 0.05:
        return ""
    return f", not counting {run.waited:.1f}s it waited for a CPU"


def _stuck_in(run: RunOutcome, stuck: str | None, draws: frozenset[str]) -> str:
    """ " (in tests/t.py::test_x, busy: ...)": the test that was running when the limit
    came, and whether it was busy or idle, as far as either is known. A test that draws its
    inputs may be busy shrinking a failure it found, not looping (bidict: Hypothesis shrank
    110 s under plain pytest, then reported the test red): said so, never "a loop"."""
    said = [f"in {stuck}"] if stuck else []
    if stuck in draws:
        said.append(_SEARCHING_WORDS)
    elif run.stuck in _STUCK:
        said.append(_STUCK[run.stuck])
    return f" ({', '.join(said)})" if said else ""


_SEARCHING_WORDS = (
    "a test that draws its inputs (Hypothesis): it may be shrinking a failure it found, which "
    "plain pytest reports red once the shrink ends, or looping; a longer `timeout` tells them apart"
)


def _incomplete(case: _Case) -> Verdict | None:
    """A session that did not report, unless a collection error explains it (judged next)."""
    run = case.run
    if run.status == "done" and run.finished:
        return None
    if run.sandbox_writes:
        return case.verdict(
            INCONCLUSIVE,
            f"the mutant wrote to or deleted {counted(len(run.sandbox_writes), 'file')} of "
            f"its own sandbox (first: {run.sandbox_writes[0]}), so its session could not report; "
            "killmap repaired the sandbox, but no verdict can be read from this run",
            red=case.red_tests,
        )
    unaccounted = [t for t in case.base.get("selected", ()) if t not in run.tests]
    if unaccounted and not run.collect_errors:
        return case.verdict(
            INCONCLUSIVE,
            f"{counted(len(unaccounted), 'selected test')} never got an outcome, even "
            f"after {counted(run.segments, 'session')} (first: {unaccounted[0]}); the process ended "
            f"with status {run.child_exit}; log tail: {run.log_tail[-300:]}",
            red=case.red_tests,
        )
    if not run.collect_errors:
        return case.verdict(
            INCONCLUSIVE,
            f"the test process ended without its report (exit {run.exit_code}); log tail: {run.log_tail[-400:]}",
            red=case.red_tests,
        )
    return None


# On a verdict that no test ran, for a reason in the test files: those files (a file that fails
# to collect under the mutant, one whose ids it changes). A sweep runs its other tests again
# without them (trial.without_files_not_run).
FILES_NOT_RUN = "files_not_run"


def _collection_failed(case: _Case) -> Verdict | None:
    if not case.run.collect_errors:
        return None
    return case.verdict(
        BROKEN_VERDICT,
        collection_broken(case.run.collect_errors, case.mutation.settings.paths),
        red=case.red_tests,
        extras={"broken_cause": "collection", FILES_NOT_RUN: sorted({n for n, _ in case.run.collect_errors if n})},
    )


# A frame of pytest's short traceback that runs a module's top level: "pkg/api.py:1: in <module>".
_MODULE_FRAME = re.compile(r"^(\S+\.py):\d+: in <module>$", re.MULTILINE)


def collection_broken(errors: tuple[tuple[str, str], ...], paths: tuple[str, ...]) -> str:
    """What a collection that failed under a mutant says, in `run` and `check` alike: the
    module that no longer imports (the innermost top level the error was raised in: the
    mutated module, or one that imports a name it no longer has), the exception, and how many
    test files failed to load, naming one or two. The first test file alone named an
    unrelated one on a real project, where seven failed."""
    node, message = errors[0]
    files = list(dict.fromkeys(n or "the session" for n, _ in errors))
    named = ", ".join(files[:2]) + (f" and {len(files) - 2} more" if len(files) > 2 else "")
    loading = f"{counted(len(files), 'test file')} failed to load: {named}"
    frames = [f for f in _MODULE_FRAME.findall(message) if not f.startswith("/")]
    if not frames and not message.startswith("ImportError while importing"):
        return f"collection failed in {node or 'the session'}: {error_line(message)}; {loading}"
    where = frames[-1] if frames else node
    module = module_name(where, paths) if where.endswith(".py") else None
    said = f"{module} ({where})" if module else where
    return f"{said} does not import under the mutant: {error_line(message)}; {loading}"


def _conftest_broken(case: _Case) -> Verdict | None:
    if not case.run.conftest_error:
        return None
    return case.verdict(
        BROKEN_VERDICT, conftest_broken(case.run.conftest_error), red=case.red_tests, extras={"broken_cause": "import"}
    )


def conftest_broken(error: tuple[str, str]) -> str:
    # The baseline loaded this conftest: under the mutant it no longer imports, so no
    # test can run at all. pytest stops with a usage error, not a collection report.
    where, message = error
    return f"{where or 'a conftest'} does not import under the mutant: {error_line(message)}"


def _import_failed(case: _Case) -> Verdict | None:
    proof = case.run.proof or {}
    if not proof.get("import_error"):
        return None
    return case.verdict(BROKEN_VERDICT, import_failed(proof), red=case.red_tests, extras={"broken_cause": "import"})


def import_failed(proof: dict[str, Any]) -> str:
    return f"the mutated module {proof['module']} does not import: {proof['import_error']}"


def load_failure(run: RunOutcome, paths: tuple[str, ...]) -> str | None:
    """Why the tests cannot load under a mutant, in the words of its `broken` verdict, or None:
    a test file that fails to collect, a conftest that no longer imports, the mutated module
    that does not import. In the judge's order; `check` asks it of a collection alone."""
    if run.collect_errors:
        return collection_broken(run.collect_errors, paths)
    if run.conftest_error:
        return conftest_broken(run.conftest_error)
    if (run.proof or {}).get("import_error"):
        return import_failed(run.proof or {})
    return None


def _not_the_mutant(case: _Case) -> Verdict | None:
    proof = case.run.proof or {}
    if not proof or (proof.get("file_matches") and proof.get("text_matches")):
        return None
    return case.verdict(
        BROKEN_VERDICT,
        f"the module the tests imported was not the mutant: {proof['module']} came from {proof.get('loaded_file')}",
        red=case.red_tests,
        extras={"broken_cause": "origin"},
    )


def _from_working_tree(case: _Case) -> Verdict | None:
    proof = case.run.proof or {}
    if not proof.get("modules_from_working_tree"):
        return None
    return case.verdict(
        BROKEN_VERDICT,
        "modules were imported from the working tree instead of the sandbox: "
        + ", ".join(proof["modules_from_working_tree"]),
        red=case.red_tests,
        extras={"broken_cause": "origin"},
    )


def _tests_not_run(case: _Case) -> Verdict | None:
    # A session that ended normally may still have run fewer tests than were selected: a
    # fresh one is given the baseline's node ids, and a mutant that changes a parametrize id
    # (marshmallow's `[exclude]` became `[include0]`) makes pytest refuse them all and run
    # nothing. Every missing test would otherwise read as green.
    run = case.run
    not_run = [t for t in case.base.get("selected", ()) if t not in run.tests]
    if not not_run:
        return None
    why = refused_arguments(run)
    if why:
        why = _SANDBOX_PREFIX.sub("", why)  # the ids as the user's project names them
    files = sorted(set(_NOT_FOUND.findall(why or "")) or {t.split("::", 1)[0] for t in not_run})
    return case.verdict(
        INCONCLUSIVE,
        f"{counted(len(not_run), 'selected test')} did not run in the mutant (first: "
        f"{not_run[0]}; in {', '.join(files[:5])}{' and more' if len(files) > 5 else ''})"
        + (f": pytest said {why!r}" if why else "")
        + "; their ids were not collected again, and tests cannot be judged by ids that a mutant "
        "changes (a parametrize value taken from the mutated code) or that change from one "
        "collection to the next (a time or a random value in a parametrize id: list such a test "
        "in [gate] exclude)",
        red=case.red_tests,
        extras={
            FILES_NOT_RUN: files,
            # Not refused: a fresh session keeps the ids it finds (inrun/selected_ids.py).
            **({"inconclusive_cause": "ids"} if not why or _NOT_FOUND.search(why) else {}),
        },
    )


# pytest refusing a node id it no longer collects: "ERROR: not found: tests/test_a.py::test_p".
_NOT_FOUND = re.compile(r"not found: ([^\s:]+)")


# A run's sandbox, as pytest names a path in it: /tmp/killmap-x/sandbox-0/ (sandbox-0.1: replaced).
_SANDBOX_PREFIX = re.compile(r"\S*/sandbox-[0-9.]+/")


def _broken_reds(case: _Case) -> Verdict | None:
    broken = [r for r in case.red_tests if r.cause == BROKEN]
    if not broken:
        return None
    first = broken[0]
    return case.verdict(
        BROKEN_VERDICT,
        f"{first.id} went red by {first.exception} raised from the mutated "
        f"file at {first.raised_at}: the mutant does not compile cleanly, so this is not a kill",
        red=case.red_tests,
        extras={"broken_cause": "name-or-import"},
    )


def _flaky(case: _Case) -> Verdict | None:
    if case.evidence.confirm is None:
        return None
    flipped = _disagreements(case.run, case.evidence.confirm)
    if not flipped:
        return None
    drawn = {t for t, r in case.run.tests.items() if r.randomized}
    if all(f.split(" (", 1)[0] in drawn for f in flipped):
        # Not a flaky test: a search (Hypothesis) that found the defect in one run and not in
        # the other. The way out is the search's, not a fix of the test.
        return case.verdict(
            RANDOMIZED,
            "a re-run of the same mutant disagreed on tests that draw random inputs (Hypothesis): "
            + ", ".join(flipped)
            + ". Its search finds this defect on some draws only: run with a fixed seed (the default, "
            "or --seed N; not --seed random), or give the test more examples (@settings(max_examples=...))",
            red=case.red_tests,
        )
    return case.verdict(FLAKY, "a re-run of the same mutant disagreed on: " + ", ".join(flipped), red=case.red_tests)


def _uncontracted(case: _Case) -> Verdict | None:
    """A mutant with no contract (a sweep's): report what went red, and whether it was reached.

    Everything above (escaped, timeout, incomplete, broken, origin, flaky) has already
    been ruled out, so a red here is a real kill. The verdicts keep their general meaning:
    `overreach` is "tests outside the (empty) contract went red", and its red set is the
    kill set; `vacuous` is "the tests that reach it stayed green": the sweep's survivor.
    """
    if not case.mutation.uncontracted:
        return None
    red_tests, evidence, verdict = case.red_tests, case.evidence, case.verdict
    if red_tests:
        reds = [r.id for r in red_tests]
        unreached = all(r.reached is False for r in red_tests)
        cause = _unreached_cause(case, reds) if unreached else ""
        stored = evidence.shares_state and cause == "order"
        if unreached and not stored:
            return verdict(
                UNEVIDENCED,
                "went red without executing the mutated code (red for another reason): " + ", ".join(reds),
                red=red_tests,
                extras={"unevidenced_cause": cause},
            )
        ids = tuple(sorted(r.id for r in red_tests))
        causes = sorted({r.cause for r in red_tests})
        # A run stopped at its first red says so: "1 test went red" read as the whole red set.
        stopped = "; the run stopped at its first red, as a sweep's does" if case.run.stopped_after else ""
        if stored:
            stopped += "; red through the state the changed function stored for a test before it"
        return verdict(
            OVERREACH,
            f"{counted(len(ids), 'test')} went red ({', '.join(causes)}), no contract: " + ", ".join(ids) + stopped,
            red=red_tests,
            unexpected=ids,
        )
    if evidence.region_executed or evidence.import_time:
        return verdict(VACUOUS, "nothing went red, though " + _who_ran_it(evidence), red=red_tests)
    return verdict(
        UNEVIDENCED,
        "nothing went red, and no test executed the mutated code",
        red=red_tests,
        extras={"unevidenced_cause": "unreached"},
    )


def _who_ran_it(evidence: Evidence) -> str:
    """Which tests ran a change nothing noticed. One that runs at import (a def line, a default
    value, a decorator, module- or class-level code) ran before every test, whichever called
    the function: said so, not as though every test had called it."""
    if evidence.reached_by:
        return f"{counted(len(evidence.reached_by), 'test')} executed the mutated code"
    return "the mutated code runs at import (module or class level, a def line, a default value), before every test"


def _invariant(case: _Case) -> Verdict | None:
    """An invariant's verdict is final here: whatever went red, the contract checks below do not apply."""
    if not case.mutation.invariant:
        return None
    red_ids, evidence = case.red_ids, case.evidence
    if red_ids:
        return case.verdict(
            VISIBLE,
            f"{counted(len(red_ids), 'test')} went red under an invariant mutation: " + ", ".join(sorted(red_ids)),
            red=case.red_tests,
            unexpected=tuple(sorted(red_ids)),
        )
    if not evidence.region_executed:
        return case.verdict(
            UNEVIDENCED,
            "nothing went red, but no test executed the mutated code, so nothing proves it invisible",
            red=case.red_tests,
            extras={"unevidenced_cause": "unreached"},
        )
    return case.verdict(HELD, "nothing went red, and " + _who_ran_it(evidence), red=case.red_tests)


def _reached_by_nothing(case: _Case) -> Verdict | None:
    evidence = case.evidence
    if case.red_ids or evidence.region_executed or evidence.import_time:
        return None
    # Nothing went red and no test (the kills tests included) runs the mutated code: the
    # diagnosis is not a weak assertion but missing reach.
    return case.verdict(
        UNEVIDENCED,
        "no test executes the mutated code, the kills tests included, so "
        "the contract cannot be judged: " + ", ".join(case.mutation.kills),
        red=case.red_tests,
        missing=case.mutation.kills,
        extras={"unevidenced_cause": "unreached"},
    )


def _vacuous(case: _Case) -> Verdict | None:
    missing, green_kill_tests, unexpected = case.missing, case.green_kill_tests, case.unexpected
    if not (missing or green_kill_tests):
        return None
    said = (
        _how_not_red(case.run, green_kill_tests, None if case.evidence.import_time else case.evidence.reached_by)
        if green_kill_tests
        else "stayed green: " + _some(missing, 10)
    )
    # The contract failed, but the defect may well be caught: by tests kills does not
    # name. Said first, or it read as "nothing notices" at the end of a long line.
    caught = (
        f"; the defect is caught, but by {counted(len(unexpected), 'test')} outside the contract: {_some(unexpected)}"
        if unexpected
        else ""
    )
    # As overreach does: what the later contract checks would say of the kills tests that did
    # go red, so that one run names every fix the entry needs (isodate: 13 kills tests crashed
    # under `require = "assertion"`, and only the next run said so).
    besides = [found for found in (_unreached_kills(case), _wrong_cause(case)) if found is not None]
    also = "".join(f"; and {found.verdict}: the kills tests {found.detail}" for found in besides)
    return case.verdict(
        VACUOUS,
        f"{said}{caught}{also}{_maybe_equivalent(case)}",
        red=case.red_tests,
        missing=tuple(green_kill_tests or missing),
        unexpected=unexpected,
    )


def _maybe_equivalent(case: _Case) -> str:
    """When nothing at all went red and the change is of a kind that often leaves behaviour as
    it was (re.match -> re.fullmatch on an anchored pattern), "does not guard" may be wrong:
    no test can catch an equivalent mutant. Said as a possibility, "" otherwise."""
    from killmap.verdict.equivalence import maybe_equivalent

    why = None if case.red_ids else maybe_equivalent(case.mutation)
    if why is None:
        return ""
    return (
        f"; no test reached a different outcome, and the change may be equivalent: {why}. "
        "If it is, no test can catch it: aim the mutation at a defect that changes behaviour"
    )


# A kills test that was skipped or xfailed under the mutant is not red either, but "stayed
# green" would send the reader to its assertions when the mutant made it skip.
_NOT_RED = {"skipped": "was skipped", "xfailed": "xfailed under the mutant"}


def _how_not_red(run: RunOutcome, ids: tuple[str, ...], reached_by: tuple[str, ...] | None) -> str:
    """The kills tests that did not go red, grouped by what they did instead. One that stayed
    green never having executed the change needs another input, not another assertion
    (wcwidth: fifteen printable-ASCII cases of clip() never left its fast path)."""
    groups: dict[str, list[str]] = {}
    reached = None if reached_by is None else set(reached_by)  # None: every test runs it (at import)
    for test_id in ids:
        outcome = run.tests[test_id].outcome if test_id in run.tests else "passed"
        said = _NOT_RED.get(outcome, "stayed green")
        if said == "stayed green" and reached is not None and test_id not in reached:
            said = "stayed green, never executing the mutated code (no input of theirs reaches it)"
        groups.setdefault(said, []).append(test_id)
    # Ten of each, as the red lines are: inflection's merged suffix left 110 kills tests green,
    # all on one line; the report's `missing` holds every one.
    return "; ".join(f"{said}: {_some(tuple(group), 10)}" for said, group in groups.items())


def _overreach(case: _Case) -> Verdict | None:
    """Tests outside the contract went red. The contract's own tests may fail it besides
    (red without reaching the change, or without the assertion `require` asks for): said
    after, so that one run names every fix the entry needs, not one per run."""
    unexpected = case.unexpected
    if not unexpected:
        return None
    besides = [found for found in (_unreached_kills(case), _wrong_cause(case)) if found is not None]
    also = "".join(f"; and {found.verdict}: the kills tests {found.detail}" for found in besides)
    return case.verdict(
        OVERREACH,
        "red outside kills and may_kill: " + _some(unexpected, 10) + also,  # the report's `unexpected` has all
        red=case.red_tests,
        unexpected=unexpected,
    )


def _unreached_kills(case: _Case) -> Verdict | None:
    unreached = [r.id for r in case.kill_reds if r.reached is False]
    if not unreached:
        return None
    cause = _unreached_cause(case, unreached)
    if cause == "order":
        why = (
            " in its own process (nor run by itself, unmutated), and a test that did execute it ran before "
            "it (red from what ran before it: state an earlier test left, or a test the selection left out; "
            "or code it ran in a subprocess, which is not traced)"
        )
    elif case.evidence.reached_alone is not None:
        why = (
            ", not even when run by itself (red for another reason: line numbers, code it ran in a "
            "subprocess, which is not traced, a test the selection leaves out)"
        )
    else:
        why = " (red for another reason)"
    return case.verdict(
        UNEVIDENCED,
        f"went red without executing the mutated code{why}: " + ", ".join(unreached),
        red=case.red_tests,
        extras={"unevidenced_cause": cause},
    )


def _unreached_cause(case: _Case, red: list[str]) -> str:
    """ "order" when a test that executed the mutated code ran before each of these reds in
    this run (what it left is what they saw), else "elsewhere"."""
    order = list(case.run.tests)
    reaching = set(case.evidence.reached_by)
    for test_id in red:
        before = order[: order.index(test_id)] if test_id in order else []
        if not reaching.intersection(before):
            return "elsewhere"
    return "order"


def _wrong_cause(case: _Case) -> Verdict | None:
    required = case.mutation.require
    if required not in (ASSERTION, HANG):
        return None
    wrong = [f"{r.id} ({r.cause}: {r.exception})" for r in case.kill_reds if r.cause != required]
    if not wrong:
        return None
    said = "an assertion failing" if required == ASSERTION else "hanging, as require = 'timeout' asks"
    # Ten, as the other lists are: iso8601's 45 crashed kills tests made one line of 5,744 characters.
    shown = "; ".join(wrong[:10]) + (f"; and {len(wrong) - 10} more" if len(wrong) > 10 else "")
    return case.verdict(WRONG_CAUSE, f"went red without {said}: {shown}", red=case.red_tests)


def _held(case: _Case) -> Verdict:
    """Every check above passed: the kills tests went red, reached, by the cause required."""
    kill_reds = case.kill_reds
    causes = sorted({r.cause for r in kill_reds})
    carried = [r.id for r in kill_reds if case.evidence.through_state(r.id)]
    carried_note = (
        f"; {len(carried)} of them through state an earlier test left (run by themselves they "
        "execute the mutated code; in the run, an earlier test had run it for them)"
        if carried
        else ""
    )
    return case.verdict(
        HELD,
        f"{counted(len(kill_reds), 'test')} went red as expected ({', '.join(causes)}){carried_note}",
        red=case.red_tests,
        extras={THROUGH_STATE: carried} if carried else {},
    )


# On a `held` verdict: its kills tests that went red through state an earlier test left. Tests
# the selection left out may share that state, so `held` is checked over every test
# (trial.with_every_test).
THROUGH_STATE = "through_state"


# The order is the argument: nothing counts as a kill until the mutant is proven to be
# applied, valid, the very code that ran, reached, and stable on a re-run. A mutant with no
# contract, or an invariant, gets its verdict before the contract's checks.
_CHECKS: tuple[Callable[[_Case], Verdict | None], ...] = (
    _killed_gate,
    _escaped,
    _timed_out,
    _incomplete,
    _collection_failed,
    _conftest_broken,
    _import_failed,
    _not_the_mutant,
    _from_working_tree,
    _tests_not_run,
    _broken_reds,
    _flaky,
    _uncontracted,
    _invariant,
    _reached_by_nothing,
    _vacuous,
    _overreach,
    _unreached_kills,
    _wrong_cause,
)


def _some(ids: tuple[str, ...], shown: int = 5) -> str:
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


def _red(run: RunOutcome, evidence: Evidence):
    reached = set(evidence.reached_by)
    for result in run.red.values():
        cause = result.cause or ""
        if cause == BROKEN and _name_the_mutant_left_alone(result, evidence.rebound):
            # humanfriendly's CaseInsensitiveDict.update: a negated branch reached the
            # original's own `type(value)` on a path that never binds `value`.
            cause = CRASH
        yield RedTest(
            id=result.id,
            cause=cause,
            phase=result.phase,
            exception=result.exc_type,
            message=result.message,
            raised_at=_where(result.raised_at),
            raised_innermost=_where(result.raised_innermost),
            tree_line=_tree_line(result.raised_at, evidence.mutant),
            reached=True if evidence.import_time else (result.id in reached or evidence.through_state(result.id)),
        )


_NAME_IN_MESSAGE = re.compile(r"'([A-Za-z_][A-Za-z0-9_]*)'")


def _name_the_mutant_left_alone(result, rebound: frozenset[str] | None) -> bool:
    if rebound is None or result.exc_type not in ("NameError", "UnboundLocalError"):
        return False
    named = _NAME_IN_MESSAGE.search(result.message or "")
    return named is not None and named.group(1) not in rebound


def _tree_line(frame: tuple[str, int] | None, mutant: Mutant | None) -> int | None:
    if frame is None or mutant is None or frame[0] != mutant.file:
        return None
    return mutant.tree_line(frame[1])


def _where(frame: tuple[str, int] | None) -> str | None:
    return f"{frame[0]}:{frame[1]}" if frame else None


def _disagreements(first: RunOutcome, again: RunOutcome) -> list[str]:
    flipped = []
    for test_id, result in again.tests.items():
        before = first.tests.get(test_id)
        if before is not None and before.red != result.red:
            flipped.append(f"{test_id} ({'red' if before.red else 'green'} then {'red' if result.red else 'green'})")
    return sorted(flipped)


def judge_control(mutation: Mutation, verdict: Verdict, control: Verdict | None) -> Verdict:
    """An invariant holds only when its positive control held in the same run."""
    if verdict.verdict != HELD or not mutation.invariant:
        return verdict
    if control is None or control.verdict != HELD:
        state = control.verdict if control else "not run"
        from dataclasses import replace

        return replace(
            verdict,
            verdict=UNEVIDENCED,
            detail=f"nothing went red, but its control {mutation.control!r} was {state}, "
            "not held: an invariance is evidence only beside a control that held, its tests red as its "
            "contract says",
            extras={**verdict.extras, "unevidenced_cause": "control"},
        )
    return verdict
