"""The baseline: the unmutated suite, run before any mutant, that every verdict is
measured against.

It must be green and stable (run twice: a test whose outcome differs is flaky, exit 2),
and its runs record per-test line coverage of the mutation targets, each run of every test
in pytest's order, since what a test runs depends on what ran before it: the reach evidence
that selects each mutant's tests. It runs every test the [gate] names, never fewer: which tests can reach a
mutation is read from what they ran, not guessed from their imports. A library can import the
mutated module by a name no import statement shows (Django's URL conf and template tags, a
`-p` plugin, an entry point), and a test left out on such a guess would make an overreach `held`.
"""

from __future__ import annotations

import datetime
import functools
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from killmap import timeline
from killmap.catalog.project import module_name
from killmap.catalog.reader import GateSettings, Mutation
from killmap.catalog.testids import TestIndex, matches, toml_literal
from killmap.engine import (
    UNPROVEN,
    Engine,
    RunOutcome,
    Scenario,
    TestResult,
    baseline_red_file,
    error_line,
    escaped_note,
    exclusion_arguments,
    nothing_collected,
    refused_arguments,
    tracers_of,
)
from killmap.errors import GateError
from killmap.wording import counted


@dataclass
class Baseline:
    """What the unmutated suite did: every mutant's selection and timeout come from it."""

    settings: GateSettings
    collected: tuple[str, ...]
    durations: dict[str, float]
    overhead: float  # what a run pays once besides its tests (session_costs)
    coverage: dict[str, dict[str, list[int]]]
    runs: int
    wall: float
    imported: tuple[str, ...] = ()  # project source files the tests imported
    targets: tuple[str, ...] = ()  # what pytest was given: the tests, and the deselected
    mutated_files: tuple[str, ...] = ()  # the files the mutations change (traced, swapped into)
    tracer: str = ""  # what recorded the tests' lines: coverage, sys.monitoring
    per_test: float = 0.0  # what a run pays per test besides its duration
    not_passed: dict[str, int] = field(default_factory=dict)  # "skipped"/"xfailed": how many
    deselected: dict[str, str] = field(default_factory=dict)  # test: the option that deselected it
    per_test_timeout: float | None = None  # the project's own (pytest-timeout): acts before the gate's
    # How many tests the runs after the first ran again (guarded_tests), or None: every run ran
    # every test (whole runs decided, or one run was asked for).
    rerun: int | None = None
    # Why reach was recorded by another recorder than the engine's own (its tests went red
    # under it, and passed without it), said once on the console; "" when it was not.
    recorder_note: str = ""
    skipped: tuple[str, ...] = ()  # the tests the baseline skipped: no mutant can turn them red
    ignored: tuple[str, ...] = ()  # the exclude entries left out of the collection (GateSettings.ignored)
    collect_seconds: float = 0.0  # what the collected session each run forked took to collect
    draws: frozenset[str] = frozenset()  # the tests that draw their inputs (Hypothesis): judge._timed_out
    # Per test, once asked (trial.with_the_tests_before_them): whether it is green run by
    # itself, unmutated. Filled as mutants ask, shared by every mutant of this baseline.
    alone: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    @cached_property
    def by_file(self) -> dict[str, tuple[str, ...]]:
        """The collected ids by file, each file's in collection order."""
        files: dict[str, list[str]] = {}
        for test in self.collected:
            files.setdefault(test.split("::", 1)[0], []).append(test)
        return {file: tuple(tests) for file, tests in files.items()}

    @cached_property
    def slowest(self) -> float:
        """The longest any test took: once for a baseline, not once per mutant (each_test_limit)."""
        return max(self.durations.values(), default=0.0)

    @cached_property
    def index(self) -> TestIndex:
        """The collected ids, for asking which of them a contract entry names."""
        return TestIndex(self.collected)


def baseline_summary(baseline: Baseline) -> str:
    """ "98 tests green", or "2031 tests green, 47 skipped, 17 xfailed": a skipped test is not
    green, and no mutant can turn it red."""
    others = sum(baseline.not_passed.values())
    said = f"{len(baseline.collected) - others} tests green"
    return ", ".join([said, *(f"{n} {kind}" for kind, n in baseline.not_passed.items())])


def baseline_line(baseline: Baseline) -> str:
    """What the console says of the baseline: "baseline: 98 tests green in 2 run(s), 1.10s",
    saying how many ran only once when the runs after the first re-ran only the tests that ran
    a line of a mutated file or that a contract names. Not "that no mutant selects": a change
    that runs at import selects every test, those too."""
    said = f"baseline: {baseline_summary(baseline)} in {counted(baseline.runs, 'run')}"
    once = len(baseline.collected) - (baseline.rerun if baseline.rerun is not None else len(baseline.collected))
    if baseline.runs > 1 and once > 0:
        said += f" ({once} that ran no line of a mutated file and no contract names: once)"
    said = f"{said}, {baseline.wall:.2f}s"
    if baseline.collect_seconds >= max(1.0, baseline.wall):
        # intervaltree: "99 tests green in 2 runs, 1.29s" of a baseline that took 53 s, its
        # test modules building tables of trees as pytest imported them.
        said += f", after {baseline.collect_seconds:.1f}s collecting them"
    return f"{said}\n{baseline.recorder_note}" if baseline.recorder_note else said


def source_files(files: list[str], settings: GateSettings) -> list[str]:
    def under(rel: str, folder: str) -> bool:
        return folder in (".", "") or rel.startswith(folder.rstrip("/") + "/")

    return [
        f
        for f in files
        if f.endswith(".py")
        and any(under(f, p) for p in settings.paths)
        and not any(under(f, t) or f == t for t in settings.tests)
        and not f.rsplit("/", 1)[-1].startswith(("test_", "conftest"))
    ]


def run_baseline(
    root: Path,
    files: list[str],
    settings: GateSettings,
    group: list[Mutation],
    engine: Engine,
    *,
    runs: int,
    timeout: float,
) -> Baseline:
    """The unmutated suite: what every verdict is measured against. Red, flaky or
    uncollectable is a GateError, exit 2.

    Every run runs every test in pytest's order: a test's reach depends on what ran before it
    in its process (a cleanup fixture's loop runs only over what an earlier test left), and
    only pytest's own order gives what plain pytest gives, the same on every run and every
    runner. Runs that shared the tests out between the workers gave each test another history
    each time (structlog: clear_contextvars reached by other tests on every run, and a `try`
    whose reds changed from run to run). With two workers or more, `runs` whole runs, traced,
    at once (`_whole_passes`). With one, the reach pass (one whole run, traced), then, `runs`
    - 1 times more and untraced, the tests a mutant can select (the guard passes): the flake
    guard matters for those alone, and whole runs decide where they disagree."""
    runs = max(1, runs)
    # Line coverage only where mutations are: tracing every source file would slow the
    # tests that reach no mutation.
    passes = _Passes(engine, settings, tuple(sorted({m.target.path for m in group})), timeout)
    passes.catalog = ", ".join(sorted({m.catalog for m in group if m.catalog})) or None
    engine.workers[0].wait_ready()
    check_runner_imports(group, settings, engine.workers[0].preloaded)
    build = _Builder(files, settings, passes, runs)
    try:
        return build(*_settled_passes(passes, group, runs))
    except _RedByRecorder as red:
        passes.fall_back(red)
        return build(*_settled_under_coverage(passes, group, runs))


class _Builder:
    """The Baseline of a set of passes. What a mutant's selection and limits read comes from
    the first pass alone (the reach pass, or the whole runs): the guard passes only guard."""

    def __init__(self, files: list[str], settings: GateSettings, passes: _Passes, runs: int):
        self.sources = set(source_files(files, settings))
        self.settings, self.passes, self.runs = settings, passes, runs

    def __call__(self, done: list[list[RunOutcome]], settled: bool) -> Baseline:
        """`settled`: the guard passes settled the reach pass (how many tests they re-ran is
        said); False: whole runs did."""
        first, reach = done[0][0], done[0]
        durations = pass_durations(reach)
        overhead, per_test = session_costs(reach, durations)
        ran = {t: r for o in reach for t, r in o.tests.items()}
        not_passed = Counter(r.outcome for r in ran.values() if r.outcome != "passed")
        return Baseline(
            self.settings,
            first.collected,
            durations,
            overhead,
            _union([o.coverage or {} for o in reach]),
            self.runs,
            sum(max(o.wall for o in each) for each in done),
            tuple(sorted({f for o in reach for f in o.imported if f in self.sources})),
            self.settings.tests + self.passes.deselect,
            self.passes.targets,
            tracers_of(reach),
            per_test,
            dict(sorted(not_passed.items())),
            dict(first.deselected),
            max((o.per_test_timeout or 0.0 for o in reach), default=0.0) or None,
            len({t for each in done[1:] for o in each for t in o.tests}) if settled else None,
            self.passes.note,
            tuple(sorted(t for t, r in ran.items() if r.outcome == "skipped")),
            self.passes.ignored,
            max((o.session_seconds for o in reach), default=0.0),
            frozenset(t for t, r in ran.items() if r.randomized),
        )


def _settled_under_coverage(passes: _Passes, group: list[Mutation], runs: int) -> tuple[list[list[RunOutcome]], bool]:
    """Every pass again under coverage's tracer, the engine's recorder having turned tests red
    that pass without it (`_Passes.fall_back`); refused where that one turns them red too."""
    try:
        return _settled_passes(passes, group, runs)
    except _RedByRecorder as again:
        raise again.refusal(passes.where) from None


def _settled_passes(passes: _Passes, group: list[Mutation], runs: int) -> tuple[list[list[RunOutcome]], bool]:
    """Every pass, one after the other: the reach pass, the guard passes, and whole passes
    where those did not settle the baseline; whole runs at once where there are workers for
    them (run_baseline)."""
    if passes.at_once:
        return _whole_passes(passes, runs, [], group), False
    reach, guarded = _reach_and_guarded(passes, group)
    done = [reach]
    for number in range(2, runs + 1 if guarded else 2):
        guard = passes.run(f"baseline-{number}", guarded, traced=False)
        done.append(guard)
        if any(o.red for o in guard) or _flipped(reach, guard):
            return _whole_passes(passes, runs, [o for each in done for o in each], group), False
    return done, True


_RECORDERS = {
    "probes": "the reach probes",
    "sys.monitoring": "the line monitor (sys.monitoring)",
    "coverage": "coverage's tracer",
}


def recorder_words(tracers: str) -> str:
    """A recorder's name as a user reads it: "the reach probes", "coverage's tracer"."""
    return " + ".join(_RECORDERS.get(name, name) for name in tracers.split(" + ") if name) or "the reach recorder"


class _RedByRecorder(Exception):
    """Tests red in a traced pass that pass in the same session untraced: the gate's own
    recorder made them red, so their red says nothing of the project."""

    def __init__(self, tracers: str, red: dict[str, TestResult]):
        super().__init__(tracers)
        self.tracers, self.red = tracers, red

    def _error(self) -> str:
        test, result = sorted(self.red.items())[0]
        error = error_line(result.message) or result.exc_type or "failed"
        return f"{counted(len(self.red), 'test')}, first {test}: {error}"

    def fallback_note(self) -> str:
        return (
            f"reach: {recorder_words(self.tracers)} made {self._error()}, and they pass without it: "
            "recorded by coverage's tracer instead"
        )

    def refusal(self, where: str) -> GateError:
        return GateError(
            f"{where}: the gate's reach recorder ({recorder_words(self.tracers)}) makes tests red that pass "
            f"without it: {self._error()}; no recorder left them green, so no test's reach can be read"
        )


class _Passes:
    """The baseline's passes over the suite: each is one run per worker, in parallel."""

    def __init__(self, engine: Engine, settings: GateSettings, targets: tuple[str, ...], timeout: float):
        self.engine, self.settings, self.targets, self.timeout = engine, settings, targets, timeout
        self.deselect = exclusion_arguments(settings, engine.root)
        self.ignored = settings.ignored(engine.root)
        self.everything = settings.tests + self.deselect
        self.where = f"baseline of {', '.join(settings.tests)}"
        # Whole runs at once, one per worker (run_baseline says why they are whole).
        self.at_once = len(engine.workers) > 1
        self.tracer = engine.tracer  # what records reach, until it is found to turn tests red
        self.note = ""  # why it is not the engine's own (_RedByRecorder)
        self.catalog: str | None = None  # the catalog files whose [gate] these are, for the errors

    def run(
        self,
        label: str,
        tests: tuple[str, ...] | None,
        *,
        traced: bool,
        tracer: str | None = None,
        count: int | None = None,
    ) -> list[RunOutcome]:
        """One run per worker of `tests` (None: every test), traced or not, or `count` runs,
        each of them all in pytest's order, at once; refused if incomplete. Only the first
        run's session traces collection, the same program in every session. Each run is a
        fork of its worker's collected session, which the mutants then reuse."""
        scenarios = [
            Scenario(
                label=f"{label}-{i + 1}",
                tests=self.everything if tests is None else tests,
                confine=self.settings.confine,
                user_args=self.settings.arguments,
                timeout=self.timeout,
                sys_path=self.settings.paths,
                coverage_files=self.targets if traced else (),
                session_tests=self.everything,
                swap_targets=self.targets,
                tracer=tracer or self.tracer,
                trace_collection=i == 0,
            )
            for i in range(min(count or len(self.engine.workers), len(self.engine.workers)))
        ]
        with timeline.span("pass", label=label):
            outcomes = self.engine.map(scenarios, self.engine.run)
        _refuse_incomplete(self.where, outcomes, self.engine, self.timeout, self.catalog)
        return outcomes

    def fall_back(self, red: _RedByRecorder) -> None:
        """Reach recorded by coverage's tracer from now on, the engine's recorder having made
        `red`'s tests red; refused where coverage's tracer already made them."""
        if self.tracer == "coverage":
            raise red.refusal(self.where) from None
        self.tracer = "coverage"
        self.note = red.fallback_note()

    def refuse_red(self, outcomes: list[RunOutcome]) -> None:
        """Red tests refused, once it is known they are red without the gate's recorder too:
        a traced pass's reds are run again, untraced, in the same session. Those that pass
        there were made red by the recorder (_RedByRecorder); the rest are refused."""
        red = {t: r for o in outcomes for t, r in o.red.items()}
        if not red:
            return
        tracers = tracers_of(outcomes)
        if tracers:
            again = self.engine.run(self.engine.workers[0], self.untraced("baseline-untraced", tuple(sorted(red))))
            _refuse_incomplete(self.where, [again], self.engine, self.timeout, self.catalog)
            still = {t: r for t, r in again.red.items() if t in red}
            if not still:
                raise _RedByRecorder(tracers, red)
            red = still
        _refuse_red(
            self.where,
            red,
            self.settings,
            baseline_red_file(self.engine.cache_dir),
            untraced=bool(tracers),
            collected=tuple(dict.fromkeys(t for o in outcomes for t in o.collected)),
        )

    def untraced(self, label: str, tests: tuple[str, ...]) -> Scenario:
        return Scenario(
            label=label,
            tests=tests,
            confine=self.settings.confine,
            timeout=self.timeout,
            sys_path=self.settings.paths,
            session_tests=self.everything,
            swap_targets=self.targets,
            tracer=self.tracer,
            user_args=self.settings.arguments,
        )


def _reach_and_guarded(passes: _Passes, group: list[Mutation]) -> tuple[list[RunOutcome], tuple[str, ...]]:
    """The reach pass, one worker's whole run, and the tests the guard passes run again
    (guarded_tests)."""
    reach = _traced_pass(passes, "baseline")
    _refuse_drifting(passes.where, reach)
    if any(o.red for o in reach):
        passes.refuse_red(reach)  # one run ran every test, in pytest's own order: it is red
    coverage = _union([o.coverage or {} for o in reach])
    return reach, guarded_tests(reach[0].collected, coverage, passes.targets, group)


def _traced_pass(passes: _Passes, label: str, *, count: int | None = None) -> list[RunOutcome]:
    """A traced pass over every test. Where a run's probes could not vouch for a target file
    (a function of it ran code they never saw, engine/reach/probes.py), the pass is run again with
    coverage's C tracer: slower, never short of a line."""
    outcomes = passes.run(label, None, traced=True, count=count)
    if any(UNPROVEN in contexts for o in outcomes for contexts in (o.coverage or {}).values()):
        outcomes = passes.run(f"{label}-ctrace", None, traced=True, tracer="coverage", count=count)
    return outcomes


def guarded_tests(
    collected: tuple[str, ...],
    coverage: dict[str, dict[str, list[int]]],
    targets: tuple[str, ...],
    group: list[Mutation],
) -> tuple[str, ...]:
    """The tests a mutant can select, in collection order: each test that ran a line of a
    mutated file in its own run, and each test a contract names.

    The rest never ran a line of any mutated file, so a mutant changes nothing they run: only
    a change that runs at import selects them (every test, reach.py). Their flakes are the
    confirmation's to catch (a red test re-run in a copy of the same session), as for a
    test that turns flaky under a mutant."""
    reaching = {context for path in targets for context in coverage.get(path, {}) if context}
    named = TestIndex(collected).named_by_any([entry for m in group for entry in m.contract_tests()])
    return tuple(t for t in collected if t in reaching or t in named)


def _whole_passes(
    passes: _Passes, runs: int, shared: list[RunOutcome], group: list[Mutation]
) -> list[list[RunOutcome]]:
    """Every test in every run, `runs` runs, in pytest's own order, at once where there are
    workers for them. A test a mutant can select (guarded_tests) is red where any run finds
    it red, unless its runs disagree or it passed in an earlier run (`shared`): then it is
    flaky. The later runs are the flake guard, which matters for those tests alone: a test
    that reaches no mutation and no contract names is red only where every run finds it
    red, and may flip between runs and stop nothing (two runs at once may each meet the
    other's leftovers, where one run by itself would have met none)."""
    whole: list[RunOutcome] = []
    while len(whole) < runs:
        whole.extend(_traced_pass(passes, f"baseline-whole-{len(whole) + 1}", count=runs - len(whole)))
    _refuse_drifting(passes.where, whole)
    guarded = set(guarded_tests(whole[0].collected, _union([o.coverage or {} for o in whole]), passes.targets, group))
    always_red = set.intersection(*(set(o.red) for o in whole)) - guarded
    kept = [replace(o, tests={t: r for t, r in o.tests.items() if t in guarded or t in always_red}) for o in whole]
    red = {t for o in kept for t in o.red}
    passed_before = {t for o in shared for t, r in o.tests.items() if r.outcome == "passed"}
    flipped = sorted(set(_flipped(kept[:1], kept[1:])) | (red & passed_before))
    if flipped:
        raise GateError(
            f"{passes.where}: flaky test(s), outcome differs between baseline runs: "
            + ", ".join(flipped)
            + "; fix them or list them in [gate] exclude"
        )
    passes.refuse_red(kept)
    # What the builder reads of the others (durations, reach, skips) is the first run's.
    return [[whole[0] if len(whole) == 1 else _green_of(whole[0], guarded), *kept[1:]]]


def _green_of(run: RunOutcome, guarded: set[str]) -> RunOutcome:
    """The first run, its unguarded tests' reds, which refused nothing, read as never run there."""
    return replace(run, tests={t: r for t, r in run.tests.items() if t in guarded or not r.red})


def _refuse_incomplete(
    where: str, outcomes: list[RunOutcome], engine: Engine, timeout: float, catalog: str | None = None
) -> None:
    """A run that escaped, timed out, could not collect or did not report measures nothing.
    Options that deselect every test are a catalog's [gate], or the project's: the catalog is named."""
    for outcome in outcomes:
        if outcome.escaped:
            raise GateError(f"{where}: the unmutated tests {escaped_note(outcome.escaped, engine.displaced)}")
        if outcome.status == "timeout":
            raise GateError(
                f"{where}: the unmutated tests did not finish in {timeout:.0f}s"
                + (f" (stuck in {outcome.in_progress})" if outcome.in_progress else "")
            )
        if outcome.collect_errors:
            node, message = outcome.collect_errors[0]
            raise GateError(
                f"{where}: collection failed in {node or 'the session'}: {error_line(message)}{leave_out_hint(node)}"
            )
        if not outcome.finished:
            raise GateError(f"{where}: pytest ended without a report; log tail: {outcome.log_tail[-500:]}")
        if refused_arguments(outcome):
            raise GateError(f"{where}: pytest stopped before collecting: {refused_arguments(outcome)}")
        if not outcome.collected:
            raise GateError(f"{where}: {nothing_collected(outcome)}", file=catalog if outcome.deselected else None)


def _flipped(earlier: list[RunOutcome], later: list[RunOutcome]) -> list[str]:
    """The tests whose outcome in a later run differs from the one they had earlier."""
    first = {t: r.outcome for o in earlier for t, r in o.tests.items()}
    return sorted({t for o in later for t, r in o.tests.items() if t in first and first[t] != r.outcome})


def _refuse_drifting(where: str, reach: list[RunOutcome]) -> None:
    """Every session of the reach pass must collect the same ids. Not a flaky outcome: an id
    that changes from session to session (marshmallow parametrizes over datetime.now()),
    which no exact id in `exclude` can ever name.

    Two sessions collected within the same second agree, and one worker has one session: so
    an id that holds the moment it was collected is refused too, whatever the sessions say. Else the same
    catalog was refused on one run and not the next, and the runs it was not refused on
    called every mutant that needs a fresh session `inconclusive` (its ids did not come back)."""
    first = reach[0]
    drifting = sorted({t for o in reach[1:] for t in set(o.collected) ^ set(first.collected)})
    if drifting:
        raise GateError(
            f"{where}: test id(s) collected in one baseline run and not the other (an id that "
            "changes between runs, such as a time in a parametrize id): "
            + ", ".join(drifting)
            + "; list them in [gate] exclude by the test's name without its parameters",
            field="exclude",
        )
    stamped = stamped_ids(where, first.collected)
    if stamped is not None:
        raise stamped


def stamped_ids(where: str, collected: tuple[str, ...]) -> GateError | None:
    """The error for collected ids that hold the moment they were collected (holds_the_clock),
    or None: the baseline raises it, and `killmap check` says it."""
    now = datetime.datetime.now(datetime.timezone.utc)
    stamped = [t for t in collected if holds_the_clock(t, now)]
    if not stamped:
        return None
    return GateError(
        f"{where}: test id(s) that hold the moment they were collected, so a later "
        "collection does not collect them again (a time in a parametrize id): "
        + ", ".join(stamped[:5])
        + (f" and {len(stamped) - 5} more" if len(stamped) > 5 else "")
        + "; list them in [gate] exclude by the test's name without its parameters",
        field="exclude",
    )


def holds_the_clock(test_id: str, now: datetime.datetime | None = None) -> bool:
    """Whether a test's parameters hold the moment it was collected: today's ISO date with a
    time of day within half an hour of now (`datetime.now()`, local or UTC), or a count of
    seconds since the epoch within a day of now (`time.time()`, `time.time_ns()`). A date
    alone (`date.today()`) is stable all day, and is not counted."""
    if "[" not in test_id:
        return False
    params = test_id.split("[", 1)[1]
    now = now or datetime.datetime.now(datetime.timezone.utc)
    for digits in _DIGITS.findall(params):
        if abs(int(digits[:10]) - now.timestamp()) < 86400:
            return True
    for day, times in _clock_faces(now.replace(second=0, microsecond=0)):
        if day in params and times.intersection(_TIMES.findall(params)):
            return True
    return False


@functools.lru_cache(maxsize=4)
def _clock_faces(minute: datetime.datetime) -> tuple[tuple[str, frozenset[str]], ...]:
    """(today's ISO date, every HH:MM within half an hour), in UTC and local time: worked out
    once a minute, not once an id (a suite collects thousands)."""
    faces = []
    for moment in (minute, minute.astimezone()):
        near = frozenset((moment + datetime.timedelta(minutes=m)).strftime("%H:%M") for m in range(-30, 31))
        faces.append((moment.date().isoformat(), near))
    return tuple(faces)


_TIMES = re.compile(r"(?<![0-9])[0-2][0-9]:[0-5][0-9]")
_DIGITS = re.compile(r"(?<![0-9])[0-9]{10,}")


def _refuse_red(
    where: str,
    red: dict[str, TestResult],
    settings: GateSettings,
    listed: Path,
    *,
    untraced: bool,
    collected: tuple[str, ...] = (),
) -> None:
    """Any red test: said once for the pass, since its runs shared the tests out. `untraced`:
    they were red again with no reach recorded, which is said, and nothing more is claimed."""
    if not red:
        return
    denied = settings.confine and any(r.exc_type == "PermissionError" for r in red.values())
    raise GateError(
        f"{where} is red, so no verdict could mean anything; "
        + red_summary(
            sorted(red), listed, collected=collected, untraced=untraced, why={t: _why_red(r) for t, r in red.items()}
        )
        + (
            "; a PermissionError there may be the confinement: tests may write only in "
            "the sandbox, the temporary folder and /dev ([gate] confine = false lifts it)"
            if denied
            else ""
        )
    )


def red_summary(
    red: list[str],
    listed: Path,
    shown: int = 3,
    collected: tuple[str, ...] = (),
    *,
    untraced: bool = False,
    why: dict[str, str] | None = None,
) -> str:
    """The red tests said short: a count, the files with theirs, a few ids, and the way out.
    `untraced`: they were red again with no reach recorded (the gate's own run, not plain
    pytest, which it never ran: the words say so).

    One line of 244 ids could not be read and said nothing of what to do: every id goes to
    `listed` instead (each with `why` it failed, where given), a file outside the project that
    outlives the gate. The way out names
    the file with the most reds only when every test of it is red and other files hold
    `collected` tests: else excluding it would drop green tests, or every test, where the
    failing test's id would do."""
    why = why or {}
    by_file = Counter(t.split("::", 1)[0] for t in red)
    files = [f"{f}: {n}" for f, n in by_file.most_common(shown)]
    more_files = f", {len(by_file) - shown} more files" if len(by_file) > shown else ""
    more = f" and {len(red) - shown} more" if len(red) > shown else ""
    try:
        listed.parent.mkdir(parents=True, exist_ok=True)
        # Each id first, to paste; then why it failed (glom: the ids alone sent the user back to
        # pytest to learn that a script was missing from PATH).
        listed.write_text("".join(f"{t}  # {why[t]}\n" if t in why else f"{t}\n" for t in red), encoding="utf-8")
        where = f"all {len(red)} listed in {listed}"
    except OSError as error:  # the refusal still stands, with what could be said
        where = f"the full list could not be written to {listed}: {error.strerror}"
    # Every entry it takes, when that is a few: two red tests got an exclude naming one
    # (python-dotenv), and the second run said the other.
    every = [entry for file, _ in by_file.most_common() for entry in _exclusions(red, file, collected)]
    entries = every if len(every) <= shown else every[:1]
    said = ", ".join(f'"{entry}"' for entry in entries)
    fail = "they fail without the gate's reach recording too" if untraced else "they fail"
    return (
        f"{counted(len(red), 'failing test')} ({', '.join(files)}{more_files}): {', '.join(red[:shown])}{more}; "
        f"{where}; {fail}: fix them, leave them out with "
        f"[gate] exclude = [{said}] (a file or a test id), or narrow [gate] tests to the files that matter"
    )


def _exclusions(red: list[str], file: str, collected: tuple[str, ...]) -> list[str]:
    """The file, or its red tests' ids when it holds green tests or every test."""
    in_file = [t for t in collected if t.split("::", 1)[0] == file]
    whole_file_red = bool(in_file) and set(in_file) <= set(red)
    if whole_file_red and len(in_file) < len(collected):
        return [file]
    return [t for t in red if t.split("::", 1)[0] == file]


def session_costs(outcomes: list[RunOutcome], durations: dict[str, float]) -> tuple[float, float]:
    """What a run pays besides its tests' own durations: (once per run, per test).

    A fork of the collected session pays little once, but a mutant that falls back to a
    fresh session pays collection first: the session's collection time is the once part.
    What is left of a run's wall is pytest's own cost per test (hooks, reports, fixture
    bookkeeping). On a suite of thousands of tiny tests that is most of the wall, and
    charging all of it to a mutant that runs three of them made its limit minutes long
    (packaging: 178 s for one selected test; 28 s now). A run in a fresh session cannot tell its
    collection from the rest: all of that is charged once, as before.
    """
    once, per_test = 0.2, 0.0
    for outcome in outcomes:
        spent = max(outcome.wall - sum(durations.get(t, 0.0) for t in outcome.tests), 0.0)
        if outcome.session_seconds > 0 and outcome.tests:
            once = max(once, outcome.session_seconds)
            per_test = max(per_test, spent / len(outcome.tests))
        else:
            once = max(once, spent)
    return once, per_test


def pass_durations(outcomes: list[RunOutcome]) -> dict[str, float]:
    """Each test's duration in one pass (the slowest, where two of its runs ran it): what
    every mutant's limit is built on, taken from the first pass, the reach pass.

    The reach pass records reach, but with the probes (Python 3.10, 3.11) and the line
    monitor (3.12+) a test's recorded run is close to its plain one (a probed loop about
    1.3x). The guard passes' untraced durations were used before; a limit waiting for them
    made every mutant wait for them, and a mutant must be limited by the same rule whenever
    it starts, for its verdict not to depend on when it ran."""
    durations: dict[str, float] = {}
    for outcome in outcomes:
        for test, result in outcome.tests.items():
            durations[test] = max(durations.get(test, 0.0), result.duration)
    return durations


def _union(coverages: list[dict[str, dict[str, list[int]]]]) -> dict[str, dict[str, list[int]]]:
    """The runs' coverage as one: each test was traced by one run; collection by the first
    (by all where the line monitor records it)."""
    merged: dict[str, dict[str, set[int]]] = {}
    for coverage in coverages:
        for path, contexts in coverage.items():
            for context, lines in contexts.items():
                merged.setdefault(path, {}).setdefault(context, set()).update(lines)
    return {path: {c: sorted(lines) for c, lines in contexts.items()} for path, contexts in merged.items()}


def check_runner_imports(group: list[Mutation], settings: GateSettings, preloaded: frozenset[str]) -> None:
    """A target that pytest itself imported before any test (pluggy, which pytest runs on; a
    plugin's own package) is already in every session's sys.modules, from wherever pytest
    found it: no test can import the sandbox's copy, so every mutant of it would be judged
    broken by the origin proof, one doomed run at a time. Said once, up front, instead."""
    for mutation in group:
        module = module_name(mutation.target.path, settings.paths)
        parts = module.split(".") if module else []
        taken = next((".".join(parts[:i]) for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in preloaded), None)
        if taken is None:
            continue
        said = (
            f"{module} cannot be mutated here: pytest itself imported {taken} before any "
            "test runs (pytest or one of its plugins uses it), so every test sees that copy, "
            "never the sandbox's mutant"
        )
        if mutation.uncontracted:  # a sweep's target, not a catalog entry: named as the user gave it
            raise GateError(said, file=mutation.target.path, field="TARGET")
        raise mutation.fail(said, "target")


def check_contract_ids(group: list[Mutation], baseline: Baseline) -> None:
    if group:
        for note in unmatched_excludes(group[0].settings, baseline.collected, baseline.deselected, baseline.ignored):
            raise GateError(note, file=group[0].catalog, field="exclude")
    deselected = TestIndex(baseline.deselected)
    skipped = set(baseline.skipped)
    for mutation in group:
        for key, entries in (("kills", mutation.kills), ("may_kill", mutation.may_kill)):
            for entry in entries:
                named = baseline.index.named_by(entry)
                if key == "kills" and skipped.intersection(named):
                    raise mutation.fail(names_skipped(entry, named, skipped), key)
                if named:
                    continue
                under = ", ".join(mutation.settings.tests)
                named = deselected.named_by(entry)
                if named:
                    raise mutation.fail(deselected_note(entry, named, baseline.deselected, under), key)
                raise mutation.fail(
                    ignored_note(entry, baseline.ignored) or baseline.index.unmatched_note(entry, under), key
                )


def unmatched_excludes(settings: GateSettings, collected, deselected, ignored: tuple[str, ...]) -> list[str]:
    """What each [gate] exclude entry that deselects no test is told: pytest's --deselect takes
    a node id or a path prefix, and one a letter off leaves the test it meant in the gate,
    silently (itsdangerous: `test_encodng.py` excluded nothing and `check` said all was well).
    An entry `ignored` names a file or folder that is there, left out of the collection."""
    notes = []
    for entry in settings.exclude:
        if entry in ignored or any(matches(entry, test) for test in deselected):
            continue
        near = TestIndex((*collected, *deselected)).closest(entry)
        hint = f"; did you mean {toml_literal(near)}?" if near else ""
        notes.append(
            f"{entry!r} excludes no test (under {', '.join(settings.tests)}): an exclude is a node id or "
            f"path prefix, and one that matches nothing leaves the test it meant in the gate{hint}"
        )
    return notes


def names_xfail(entry: str, named: list[str]) -> str:
    """A kills entry whose every test an xfail mark keeps from going red (sqlparse: a test
    marked xfail, which xpasses today, named in kills read `vacuous` on every run)."""
    if len(named) == 1:
        which = "a test" if named[0] == entry else f"1 test, {named[0]}, which"
    else:
        which = f"only {counted(len(named), 'test')} (first: {named[0]}), which"
    return (
        f"{entry!r} names {which} an xfail mark keeps from going red: not strict and with no "
        "`raises`, it xfails when it fails and passes when it passes, so this contract could never "
        "hold; name a test that can fail, or make the mark strict"
    )


def names_skipped(entry: str, named: list[str], skipped: set[str], by: str = "the baseline skipped") -> str:
    """A kills entry that names a test the baseline skipped: that test never goes red, so the
    contract could never hold (tabulate: a file prefix over 33 tests, 9 of them skipped, read
    `vacuous` on every run). `by`: who skips them (`check` reads the skip marks, no baseline)."""
    some = [t for t in named if t in skipped]
    if len(named) == 1 and some:
        which = "a test" if named[0] == entry else f"1 test, {named[0]}, which"
        return (
            f"{entry!r} names {which} {by}: a skipped test never goes red, so this "
            "contract could never hold; name a test that runs"
        )
    if len(some) == len(named):
        return (
            f"{entry!r} names only {counted(len(named), 'test')} {by} (first: {some[0]}): "
            "a skipped test never goes red, so this contract could never hold; name a test that runs"
        )
    return (
        f"{entry!r} names {counted(len(some), 'test')} {by}, of {len(named)} (first: {some[0]}): "
        "a skipped test never goes red, so this contract could never hold; name the tests that run "
        "(a skipped one may go in may_kill)"
    )


def check_focus(focus: tuple[str, ...] | None, baseline: Baseline) -> None:
    """Each test a focused run names (`killmap prove TEST`) is one the baseline collected: a
    typo is the user's error (exit 2), said before any verdict, not after every mutant ran."""
    for entry in focus or ():
        if not baseline.index.names_any(entry):
            raise GateError(baseline.index.unmatched_note(entry, ", ".join(baseline.settings.tests)), field="TEST")


def _why_red(result: TestResult) -> str:
    """ "call: AssertionError: assert 1 == 2 (at tests/t.py:4)": a red test's phase, exception
    and where it was raised, on one line."""
    message = (result.message or "").strip().splitlines()
    said = f"{result.phase or 'call'}: {result.exc_type or 'failed'}" + (f": {message[0][:200]}" if message else "")
    return said + (f" (at {result.raised_at[0]}:{result.raised_at[1]})" if result.raised_at else "")


def leave_out_hint(node: str | None) -> str:
    """How to go on without a test module that does not import, when its fix is not the
    user's to make (pycodestyle's sdist ships tests whose helpers it leaves out)."""
    if not node or not node.endswith(".py") or "::" in node:
        return ""
    return f"; if it cannot be fixed here, leave it out: [gate] exclude = [{toml_literal(node)}]"


def ignored_note(entry: str, ignored: tuple[str, ...]) -> str | None:
    """A contract entry inside a file or folder that `exclude` leaves out of the collection:
    no typo, but no test the gate can run either. None when it is not in one."""
    file = entry.split("::", 1)[0]
    for path in ignored:
        if file == path or file.startswith(path.rstrip("/") + "/"):
            return (
                f"{entry!r} is in {path}, which [gate] exclude leaves out of the collection: "
                "name a test the gate runs, or take the file out of exclude"
            )
    return None


def deselected_note(entry: str, named: list[str], by: dict[str, str], under: str) -> str:
    """A contract entry that names tests which exist and are deselected: not a typo."""
    return (
        f"{entry!r} names {counted(len(named), 'test')} that "
        f"{'exists but is' if len(named) == 1 else 'exist but are'} deselected by {by[named[0]]}"
        f" (under {under}; first: {named[0]}): the gate runs only what pytest selects, so name a"
        " selected test, or change the options that deselect it"
    )
