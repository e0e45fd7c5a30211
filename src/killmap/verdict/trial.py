"""One mutant's trial: which tests it runs, its time limit, the run, and the evidence.

Selection is by reach in the baseline (reach.py says why that is sound for overreach);
the timeout is a multiple of what the same tests took unmutated; the run goes to
completion (every selected test gets an outcome); the judge turns the evidence into the
verdict.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from killmap.catalog.contract import MAX_TIMEOUT
from killmap.catalog.project import module_name
from killmap.catalog.reader import Mutation
from killmap.catalog.testids import matches
from killmap.engine import UNPROVEN, Engine, RunOutcome, Scenario, Worker, limits_count_cpu_wait
from killmap.mutate.mutant import Mutant
from killmap.verdict import judge
from killmap.verdict.baseline import Baseline
from killmap.verdict.cache import Shapes, dependencies
from killmap.verdict.judge import Evidence, Verdict
from killmap.verdict.reach import Region, rebound_names, region_of, writes_shared_state
from killmap.wording import counted

MIN_TIMEOUT = 5.0
# A run that stops at its first red asks only whether its mutant is caught, and a timeout is
# caught (in killmap's sweep score as in every peer's). Where that run is a fork of the
# collected session and its limit is time it could run (the CPU wait added: engine's
# limits_count_cpu_wait), its floor need only outlast a fork's own fixed costs, not a fresh
# interpreter's start or a loaded machine: a loop costs a sweep this, not MIN_TIMEOUT. A gate's
# run keeps MIN_TIMEOUT, where a slow red read as a timeout would change its verdict.
MIN_FIRST_RED_TIMEOUT = 3.0
# A test's own limit in such a run (each_test_limit), at least: a test of milliseconds that a
# mutant keeps running for a second is a loop, or work a thousand times the test's own.
MIN_TEST_TIMEOUT = 1.0
# The share of a fresh session's start (collection) a first-red run's limit multiplies: twice it.
COLLECTION_SHARE = 0.2
TIMEOUT_FACTOR = 10.0
REPORTED_RETRY_FACTOR = 4.0  # a timeout after every selected test ended is tried again with this
FORK_START = 0.2  # what a fork of the collected session pays before its first test, at most
PER_TEST_MARGIN = 1.2  # the project's per-test timeout acts first, by this margin plus a second
# The gate waits for a project's per-test timeout only while it is at most this many times the
# gate's own limit: a hang then costs seconds, whatever the project allows one test (120 s is common).
PROJECT_WAIT_FACTOR = 2.0


def reaching_tests(mutant: Mutant, baseline: Baseline) -> tuple[tuple[str, ...], str | None, Region]:
    """The tests that executed the mutant's changed statements in the baseline.

    Every collected test when the change runs at import or while tests are collected, or
    when no coverage was recorded for the file; the second value then says why (None
    when the tests were read from coverage).
    """
    return tests_reaching(mutant.original, mutant.changed_lines, baseline.coverage.get(mutant.file), baseline.collected)


def tests_reaching(
    source: str, changed_lines: tuple[int, ...], file_coverage: dict[str, list[int]] | None, collected: tuple[str, ...]
) -> tuple[tuple[str, ...], str | None, Region]:
    """`reaching_tests` for any changed lines of any file (red-first: a fix's lines at HEAD)."""
    region = region_of(source, changed_lines)
    if region.import_time:
        return collected, "all tests: the change runs at import", region
    if file_coverage is None or UNPROVEN in file_coverage:
        return collected, "all tests: no coverage was recorded for the target file", region
    if region.cached:
        return collected, "all tests: the change is in a cached function, whose cached answers run none of it", region
    if region.lines.intersection(file_coverage.get("", ())):
        # A function that runs while tests are collected (say, to build parameters) changes
        # what exists to run: treat it like import-time code.
        return collected, "all tests: the change runs while tests are collected", Region(region.lines, True)
    reaching = set(region.reached_by(file_coverage))
    return tuple(t for t in collected if t in reaching), None, region


def select_tests(mutation: Mutation, mutant: Mutant, baseline: Baseline) -> tuple[tuple[str, ...], str, Region]:
    reaching, everything, region = reaching_tests(mutant, baseline)
    if everything is not None:
        return reaching, everything, region
    contract = baseline.index.named_by_any(mutation.contract_tests())
    wanted = contract.union(reaching)  # once: thousands of collected tests are checked against it
    chosen = tuple(t for t in baseline.collected if t in wanted)
    return chosen, selection_reason(len(reaching), len(chosen), len(baseline.collected)), region


def selection_reason(reaching: int, chosen: int, collected: int) -> str:
    """Why a mutant runs the tests it runs, and how many of the baseline's it left out by which
    rule: the only rule is the traced baseline, so a test left out never ran the change. The
    contract's tests that do not reach it run all the same (`chosen` - `reaching` of them), and
    are counted apart: "0 test(s) reach the change, plus the contract" read as nothing ran."""
    named = chosen - reaching
    if not reaching:
        said = f"no test reaches the change; the contract's {counted(named, 'test')} run all the same"
    elif named:
        said = f"{_reach(reaching)} the change, and {named} more the contract names"
    else:
        said = f"{_reach(reaching)} the change"
    left_out = collected - chosen
    if not left_out:
        return said
    return f"{said}; {left_out} of {collected} left out: the traced baseline shows they never ran the changed lines"


def _reach(count: int) -> str:
    return "1 test reaches" if count == 1 else f"{count} tests reach"


def expected_seconds(selected: tuple[str, ...], baseline: Baseline) -> float:
    """What a mutant's run should cost: its selected tests' durations in the baseline."""
    return sum(baseline.durations.get(t, 0.0) for t in selected)


@dataclass(frozen=True)
class Limits:
    """A mutant's time limits, one per path, and what the same tests took unmutated on it.

    A fresh session pays its start (collection) before the first test; a fork of the
    collected session does not. Charging collection to the swap path too made a looping
    mutant of python-dateutil (10 s to collect) run 100 s before it was called a timeout.
    """

    fresh: float
    swap: float
    fresh_unmutated: float
    swap_unmutated: float
    tests_factor: float = 1.0  # each test's own limit (each_test_limit) times this: a retry's

    def longer(self, factor: float) -> Limits:
        """Every limit `factor` times as long (each test's own too), at most MAX_TIMEOUT: a
        retry's. Only the run's raised, a Hypothesis test at its own 18.9 s limit (bidict)
        was stopped there again."""
        return Limits(
            min(MAX_TIMEOUT, factor * self.fresh),
            min(MAX_TIMEOUT, factor * self.swap),
            self.fresh_unmutated,
            self.swap_unmutated,
            factor * self.tests_factor,
        )

    def on(self, path: str) -> tuple[float, float]:
        """(the limit, the unmutated seconds) of the path a run took."""
        return (self.swap, self.swap_unmutated) if path == "swap" else (self.fresh, self.fresh_unmutated)


def mutant_timeout(mutation: Mutation, baseline: Baseline, selected: tuple[str, ...]) -> Limits:
    """A session's start (collection, for a fresh one; FORK_START for a fork of the collected
    one), pytest's cost per selected test, and the selected tests' own durations, times
    TIMEOUT_FACTOR, at least MIN_TIMEOUT (MIN_FIRST_RED_TIMEOUT for a first-red fork where the
    limit is time it could run); a catalog timeout is the limit on either path.

    A project's own per-test timeout (pytest-timeout) acts first where it is short, at most
    PROJECT_WAIT_FACTOR times the gate's own limit: the limit then also waits for it (in the
    run and in its confirmation), so a hanging test is red by it and the rest of the selection
    still runs. A longer one is not waited for: a hang costs the gate's own limit."""
    tests = baseline.per_test * len(selected) + expected_seconds(selected, baseline)
    fresh, swap = baseline.overhead + tests, FORK_START + tests
    explicit = mutation.timeout or mutation.settings.timeout
    if explicit:
        return Limits(explicit, explicit, fresh, swap)
    per_test = baseline.per_test_timeout
    fork_floor = MIN_FIRST_RED_TIMEOUT if mutation.first_red and limits_count_cpu_wait() else MIN_TIMEOUT
    # A sweep's fresh session is given its collection twice over, not ten times: the baseline
    # measured it traced (intervaltree: 55 s, its test modules building trees at import, where
    # plain pytest took 11 s), and a timeout is caught. One mutant's limit was 553 s.
    basis = (COLLECTION_SHARE * baseline.overhead + tests) if mutation.first_red else fresh
    return Limits(_limit(basis, per_test, MIN_TIMEOUT), _limit(swap, per_test, fork_floor), fresh, swap)


def _limit(expected: float, per_test_timeout: float | None, floor: float) -> float:
    own = max(floor, TIMEOUT_FACTOR * expected)
    if not per_test_timeout or per_test_timeout > PROJECT_WAIT_FACTOR * own:
        return own
    # Twice: the run waits for it, and its confirmation copy re-runs the red test and waits again.
    return max(own, PER_TEST_MARGIN * (2 * per_test_timeout + expected) + 1.0)


def each_test_limit(
    mutation: Mutation, baseline: Baseline, selected: tuple[str, ...], run_limit: float
) -> tuple[tuple[str, float], ...]:
    """Each selected test's own limit in a run, where it is below the run's: TIMEOUT_FACTOR
    times what the test took unmutated, at least twice the slowest test of the baseline (a
    session fixture's setup is paid by whichever test a run starts with) and MIN_TEST_TIMEOUT
    in a run that stops at its first red (a sweep's: a timeout is caught), MIN_TIMEOUT in a
    gate's, the floor of its run's own limit. A loop in a test of milliseconds then costs
    seconds, not ten times the whole selection (bracex's sweep: up to 15 s a loop; marko's
    gate of 1,334 tests: 78 s, and as long again waiting for a CPU).

    Only where a limit is time the run could use (Linux: engine.limits_count_cpu_wait), as
    MIN_FIRST_RED_TIMEOUT is, and never under a catalog's own timeout, the limit it asks for."""
    if mutation.timeout or mutation.settings.timeout or not limits_count_cpu_wait():
        return ()
    floor = max(MIN_TEST_TIMEOUT if mutation.first_red else MIN_TIMEOUT, 2 * baseline.slowest)
    # A gate's run waits for the project's own per-test timeout where it is short, as its run's
    # limit does (mutant_timeout): the hanging test is then red by it, and the rest still runs.
    project = None if mutation.first_red else baseline.per_test_timeout
    own = ((test, _limit(baseline.per_test + baseline.durations.get(test, 0.0), project, floor)) for test in selected)
    return tuple((test, round(seconds, 3)) for test, seconds in own if seconds < run_limit)


def tests_limits(
    mutation: Mutation, baseline: Baseline, selected: tuple[str, ...], limits: Limits
) -> tuple[tuple[str, float], ...]:
    """Each test's own limit in a run with these limits: a retry's (Limits.tests_factor) are
    its factor times the first run's, for the same tests. bidict: a Hypothesis test still
    shrinking at its 18.9 s limit was tried again at 18.9 s, its run's limit alone raised."""
    first = each_test_limit(mutation, baseline, selected, limits.swap / limits.tests_factor)
    return tuple((test, round(seconds * limits.tests_factor, 3)) for test, seconds in first)


def run_mutant(
    root: Path,
    engine: Engine,
    worker: Worker,
    job,
    *,
    confirm: bool,
    focus: tuple[str, ...] | None = None,
    swap: bool = True,
    selection: tuple[tuple[str, ...], str, Region] | None = None,
    remembered: Shapes | None = None,
):
    """One mutant's trial: its tests selected, its timeout set, run to completion, judged.
    Returns the verdict and the dependencies its cache entry is keyed on ({} when it is not
    `remembered`: working them out reads every file the tests imported; `remembered` is the
    run's reads of those files, shared by every mutant).
    `focus`: run only the selected tests these entries match; `selection`, select_tests'
    answer when the caller already has it."""
    mutation, mutant, baseline = job
    selected, reason, original_region = selection or select_tests(mutation, mutant, baseline)
    if focus is not None:
        selected = tuple(t for t in selected if any(matches(entry, t) for entry in focus))
        reason += f"; focused on {', '.join(focus)}"
    limits = mutant_timeout(mutation, baseline, selected)
    base: dict[str, Any] = {"selected": selected, "selection": reason}
    deps = _deps(root, baseline, selected, remembered) if remembered is not None else {}
    if not selected:
        verdict = Verdict(
            name=mutation.name,
            verdict=judge.UNEVIDENCED,
            detail="no test executes the mutated code, so nothing proves it invisible",
            extras={"unevidenced_cause": "unreached"},
            **base,
        )
        return verdict, deps
    # A sweep mutant's one red is confirmed in its run's own process (runner.Scenario.confirm_in_place).
    in_place = confirm and mutation.first_red
    trial = _Trial(engine, worker, job, selected, original_region, swap=swap, confirm=confirm, in_place=in_place)
    verdict = _over_the_tests_it_needs(root, trial, trial.judged(limits, base), base, focused=focus is not None)
    if verdict.extras.get(judge.HUNG):
        verdict = hang_confirmed(trial, verdict, limits, base)
    elif verdict.verdict == judge.TIMEOUT and mutation.retry_timeout:
        verdict = _retried(trial, verdict, limits, mutation.retry_timeout, base)
    elif verdict.verdict == judge.TIMEOUT and verdict.extras.get(judge.EVERY_TEST_REPORTED):
        # Every test ended, red: a red Hypothesis test shrinks, then shrinks again in its
        # confirmation, far past ten times its green duration (idna: nine red property tests,
        # 3 s under plain pytest, read as a hang at 5 s). No loop kept a test from ending.
        # A limit that came in a test still drawing is not tried again: bidict's shrink outlasted
        # four times the limit too, and its confirmation shrank again (38 s became 270 s, the
        # same timeout); the detail says what a longer `timeout` would tell.
        verdict = _retried(trial, verdict, limits, REPORTED_RETRY_FACTOR, base)
    seeded = verdict.extras.get(SEEDED_GREEN)
    if seeded:
        verdict = replace(verdict, extras={k: v for k, v in verdict.extras.items() if k != SEEDED_GREEN})
        # Not a sweep's survivor: thousands of them, where the seed is a setting, not a contract.
        if engine.seed is not None and not mutation.first_red:
            verdict = reseeded(trial, verdict, limits, base, engine.seed, seeded)
    return verdict, deps


def _over_the_tests_it_needs(root: Path, trial: _Trial, verdict: Verdict, base: dict[str, Any], *, focused: bool):
    """The first verdict, judged again where the selection left out tests it turned on: a red
    or a green kills test that owes its outcome to a test before it in its file, files that
    did not run under the mutant, a kill through state that other tests may share. A focused
    run (prove's) answers for its own tests alone, and is judged over them."""
    mutation = trial.job[0]
    if verdict.red and not focused:
        verdict = with_the_tests_before_them(root, trial, verdict, base)
    if verdict.missing and not focused and not mutation.uncontracted:
        verdict = with_the_tests_before_its_green_kills(trial, verdict, base)
    if verdict.extras.get(judge.FILES_NOT_RUN):
        verdict = without_files_not_run(trial, verdict, base)
    if not focused and (why := _others_may_share_its_state(trial, verdict)):
        verdict = with_every_test(trial, verdict, base, why)
    return verdict


def _others_may_share_its_state(trial: _Trial, verdict: Verdict) -> str | None:
    """Why tests the selection left out may read what the mutant wrote, where that could
    change the verdict (a `held` may be an overreach, a sweep's survivor a kill); else None.
    A kills test went red through state an earlier test left, or the change is in a function
    that writes state other tests share (six: the module `load_module` stored in sys.modules
    for one test was imported by another, which ran no line of it: a survivor where plain
    pytest shows two reds)."""
    survivor = trial.job[0].uncontracted and verdict.verdict == judge.VACUOUS
    if verdict.verdict != judge.HELD and not survivor:
        return None
    if verdict.extras.get(judge.THROUGH_STATE):
        return "a kills test went red through state"
    if trial.region.writes_state:
        return "the changed function writes state other tests may read"
    return None


# The vacuous verdict's green kills tests whose draws depend on the seed (RunOutcome.seeded),
# each with the digest of `random`'s state its call left (None for a Hypothesis test): passed
# from one trial to the next in the verdict, never reported.
SEEDED_GREEN = "_seeded_green"
FURTHER_SEEDS = 3  # the seeds a randomized kills test is tried under before it is called vacuous


def further_seeds(seed: int) -> tuple[int, ...]:
    """The same few seeds after `seed` on every machine and every run: a digest of it, not a
    random draw, so the verdict they give is as reproducible as the first. Each one `--seed`
    takes (at most nine digits), so a user can run under the one that found a defect."""
    return tuple(
        int.from_bytes(hashlib.sha256(f"killmap-seed:{seed}:{n}".encode()).digest()[:8], "big") % 10**9
        for n in range(1, FURTHER_SEEDS + 1)
    )


def reseeded(
    trial: _Trial, first: Verdict, limits: Limits, base: dict[str, Any], seed: int, drawn: dict[str, str | None]
) -> Verdict:
    """A vacuous verdict whose green kills tests are randomized (Hypothesis draws their
    inputs, pytest-randomly reseeds `random`): the mutant tried again under each further seed in
    turn, until one gives another verdict, which stands, saying which seed found it. Without one,
    still vacuous, saying which seeds were tried. One seed's draws miss what another's find:
    vacuous must not rest on one draw. A test that seeds `random` itself draws the same under
    every seed (`seeded_themselves`): once the first further seed shows that of every such test,
    no other seed is tried."""
    tests = tuple(drawn)
    own: tuple[str, ...] = ()  # the tests that seed `random` themselves
    tried: list[int] = []
    duration = first.duration
    for other in further_seeds(seed):
        tried.append(other)
        again = replace(trial, reseed=other).judged(limits, base)
        duration += again.duration
        if again.verdict != judge.VACUOUS:
            extras = {k: v for k, v in again.extras.items() if k != SEEDED_GREEN}
            extras["seeds"] = {"run": seed, "tried": tried, "found_by": other, "self_seeded": list(own)}
            return replace(
                again,
                detail=f"{again.detail}; {_randomized(tests)}: green under the run's seed {seed}, found under "
                f"seed {other} (seeds tried after {seed}: {', '.join(map(str, tried))})",
                duration=duration,
                extras=extras,
            )
        if len(tried) == 1:
            own = seeded_themselves(drawn, again.extras.get(SEEDED_GREEN) or {})
            tests = tuple(t for t in tests if t not in own)
            if not tests:
                break
    said = [first.detail]
    if tests:
        said.append(
            f"{_randomized(tests)}: green under the run's seed {seed} and under seeds {', '.join(map(str, tried))} too"
        )
    if own:
        said.append(_seeding_itself(own, seed, tried[0]))
    return replace(
        first,
        detail="; ".join(said),
        duration=duration,
        extras={**first.extras, "seeds": {"run": seed, "tried": tried, "found_by": None, "self_seeded": list(own)}},
    )


def seeded_themselves(first: dict[str, str | None], again: dict[str, str | None]) -> tuple[str, ...]:
    """The tests of `first` that seed `random` themselves: each left `random` in the same state
    under another seed (`again`, that run's green kills tests that drew). A test that drew from
    the run's seed leaves another state under another seed (pytest-randomly, or the gate, reseeds
    it from the seed and the test's id); one that called `random.seed(1234)` before it drew
    leaves the same. Read, never changed: the gate patches neither `random.seed` nor `random`'s
    instance, so the test sees what plain pytest gives it. A test without a digest (a Hypothesis
    test) is never one: its draws come from the seed whatever `random` holds. Not seen: what a
    test drew from the seed before it reseeded `random` itself, in the same call."""
    return tuple(t for t, state in first.items() if state is not None and again.get(t) == state)


def _seeding_itself(own: tuple[str, ...], seed: int, other: int) -> str:
    one = len(own) == 1
    return (
        f"{_some(own)} {'seeds `random` itself: it' if one else 'seed `random` themselves: each'} left `random` "
        f"in the same state under the run's seed {seed} and under seed {other}"
    )


def _randomized(tests: tuple[str, ...]) -> str:
    kind = "randomized (its draws depend on the seed)" if len(tests) == 1 else "randomized"
    return f"{_some(tests)} {'is' if len(tests) == 1 else 'are'} {kind}"


def _some(ids: tuple[str, ...], shown: int = 3) -> str:
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


@dataclass(frozen=True)
class _Trial:
    """One mutant's run on its worker, to its verdict, under given limits."""

    engine: Engine
    worker: Worker
    job: Any
    selected: tuple[str, ...]
    region: Region
    swap: bool
    confirm: bool
    in_place: bool = False  # confirm in the run's own process, with the copy as the fallback
    reseed: int | None = None  # another seed than the command's (reseeded)
    confirm_before: tuple[str, ...] = ()  # re-run by the confirmation too (Scenario.confirm_before)
    confirm_in_order: bool = False  # a red re-run after the tests before it (Scenario.confirm_in_order)

    def green_alone(self, test: str) -> bool:
        """Whether `test` passes run by itself, unmutated (a fork of the collected session); a
        run that did not finish says green: nothing then shows the test needs others."""
        alone = self.job[2].alone
        if test not in alone:
            mutation, _, baseline = self.job
            limits = mutant_timeout(mutation, baseline, (test,))
            scenario = replace(
                _scenario(self.job, (test,), limits, self.region, swap=False, confirm=False),
                label=f"alone-unmutated-{mutation.name}",
                writes=(),
                mutated_file=None,
                expect_module=None,
                swap_timeout=None,
                stop_at_first_red=False,
            )
            run = self.engine.run(self.worker, scenario)
            finished = run.status == "done" and run.finished
            alone[test] = not finished or not (result := run.tests.get(test)) or not result.red
        return alone[test]

    def judged(self, limits: Limits, base: dict[str, Any]) -> Verdict:
        verdict, settled = self._judged_once(limits, base, in_place=self.in_place)
        if settled:
            return verdict
        # Settled from the state a fresh session starts its tests in, as every other mutant's
        # confirmation is: the verdict is that run's, its duration both runs'.
        again, _ = self._judged_once(limits, base, in_place=False)
        return replace(again, duration=verdict.duration + again.duration)

    def _judged_once(self, limits: Limits, base: dict[str, Any], *, in_place: bool) -> tuple[Verdict, bool]:
        """The verdict of one run, and whether it stands (only an in-place confirmation may not)."""
        mutation = self.job[0]
        scenario = _scenario(self.job, self.selected, limits, self.region, swap=self.swap, confirm=self.confirm)
        scenario = replace(
            scenario,
            confirm_in_place=in_place and scenario.confirm_kills is not None,
            reseed=self.reseed,
            confirm_before=self.confirm_before if scenario.confirm_kills is not None else (),
            confirm_in_order=self.confirm_in_order and scenario.confirm_kills is not None,
        )
        run = self.engine.run(self.worker, scenario, complete=True)
        confirmation = run.confirmation if run.status == "done" and run.finished else None
        if confirmation is not None:
            run = replace(run, wall=max(run.wall - confirmation.wall, 0.0))
        evidence = _evidence(self.engine, self.worker, self.job, scenario, run, confirmation, self.region, limits)
        verdict = _with_path(judge.judge_run(mutation, evidence, _as_run(base, run)), run, self.region)
        if verdict.verdict == judge.VACUOUS:
            seeded = {
                t: None if result.randomized else result.random_state  # Hypothesis's draws are the seed's
                for t in verdict.missing
                if (result := run.tests.get(t)) is not None and result.seeded
            }
            if seeded:
                verdict = replace(verdict, extras={**verdict.extras, SEEDED_GREEN: seeded})
        return verdict, not scenario.confirm_in_place or settled_in_place(verdict, run, confirmation)


def settled_in_place(verdict: Verdict, run: RunOutcome, confirmation: RunOutcome | None) -> bool:
    """Whether a verdict whose red was confirmed in the run's own process stands
    (plugin.Recorder.confirm_in_place). A re-run that disagreed (flaky) may have met the state
    its first run left (a red only the first call in a process gives), and so may one red for
    another reason. A red with no finished re-run was never confirmed: a test that draws its
    inputs is not re-run in place, a run its test stopped with pytest.exit is not either, and a
    re-run that hung or stopped the session has no last line. Each is settled again from a
    fresh start, by the copy."""
    if verdict.verdict == judge.FLAKY:
        return False
    if run.gate_killed:
        return True  # the copy's run would kill the gate's process again
    if confirmation is None:
        return not any(r.red for r in run.tests.values())
    # Red again, but for another reason (its fixtures could not be set up a second time in one
    # process): that re-run confirms nothing.
    return all(
        (again.phase, again.exc_type) == (first.phase, first.exc_type)
        for test_id, again in confirmation.tests.items()
        if again.red and (first := run.tests.get(test_id)) is not None and first.red
    )


def without_files_not_run(trial: _Trial, first: Verdict, base: dict[str, Any]) -> Verdict:
    """A mutant under which some test files no longer run (one fails to collect, or its ids
    change), its other selected tests run again without them (where `_judged_without` allows):
    a verdict those tests cannot change stands, saying which files did not run (a sweep's
    kill, as plain pytest gives it); otherwise the first verdict stands, since the tests that
    did not run are unjudged. A collection error alone is never a kill. A second run, because pytest refuses a
    whole run whose node ids name a file that fails to collect or an id it no longer has,
    `--continue-on-collection-errors` or not (tomlkit: a parametrize list calls the mutated
    function as its file is collected, and 145 tests in other files fail)."""
    files = tuple(first.extras.get(judge.FILES_NOT_RUN, ()))
    others = tuple(t for t in trial.selected if t.split("::", 1)[0] not in files)
    mutation = trial.job[0]
    if not others or len(others) == len(trial.selected) or not _judged_without(mutation, first, files, trial.selected):
        return first
    again = _judged_over(trial, others, base, f"; without {_some(files, 2)}, whose tests did not run under it")
    # What the tests that did not run cannot change: a red outside the contract, a kills test
    # green or red by a crash, a timeout. `held` says no other test went red, which they might,
    # unless may_kill names their whole files (python-json-logger: may_kill = ["tests"]).
    stands: tuple[str, ...] = (judge.OVERREACH, judge.TIMEOUT)
    if not mutation.uncontracted:
        stands += (judge.VACUOUS, judge.WRONG_CAUSE)
        if not mutation.invariant and all(_names_whole_file(mutation.may_kill, f) for f in files):
            stands += (judge.HELD,)
    if again.verdict not in stands:
        return replace(first, duration=first.duration + again.duration)
    return replace(
        again,
        detail=f"{again.detail}; first, with every selected test: {first.detail}",
        duration=first.duration + again.duration,
    )


def with_the_tests_before_them(root: Path, trial: _Trial, first: Verdict, base: dict[str, Any]) -> Verdict:
    """A red test that the selection ran without a test its file runs before it which writes
    state for later tests (reach.writes_shared_state), and that is red run by itself unmutated, needs
    that test (pathspec: `test_02_link_1` sets the class attribute the other symlink tests
    read; without it each crashed by AttributeError, mutant or not, read as the mutant's red:
    wrong-cause, overreach, eight false kills in a sweep). The mutant is judged again with
    the tests before each such red in its file; that verdict stands. Whether a test is green
    by itself is asked once per baseline (Baseline.alone), and only where such a writer was
    left out: a suite whose tests write no shared state pays nothing."""
    mutation, _, baseline = trial.job
    chosen = set(trial.selected)

    def before(test: str) -> tuple[str, ...]:
        return _before_in_its_file(baseline, test)

    suspects = [r.id for r in first.red if any(t not in chosen and writes_shared_state(root, t) for t in before(r.id))]
    needy = tuple(t for t in suspects if not trial.green_alone(t))
    if not needy:
        return first
    wanted = chosen.union(*(before(t) for t in needy))
    widened = tuple(t for t in baseline.collected if t in wanted)
    said = f"; with the tests before {_some(needy, 2)} in its file: by itself it is red unmutated"
    again = _judged_over(trial, widened, base, said)
    return replace(again, duration=first.duration + again.duration)


def with_the_tests_before_its_green_kills(trial: _Trial, first: Verdict, base: dict[str, Any]) -> Verdict:
    """A kills test that stayed green where the selection left out a test its file runs
    before it: plain pytest runs that test first, and the state it leaves may be what turns
    the kills test red (structlog: `test_get_only_gets_structlog_without_deleted` binds a
    context variable and never runs the mutated line of `clear_contextvars`; without it two
    kills tests stayed green, `vacuous` where plain pytest shows the contract holding). The
    mutant is judged again with the tests before each such kills test in its file, in
    pytest's order; that verdict stands. A verdict with every kills test red pays nothing."""
    _, _, baseline = trial.job
    chosen = set(trial.selected)
    green = sorted(t for t in baseline.index.named_by_any(first.missing) if t in chosen)
    needy = tuple(t for t in green if any(u not in chosen for u in _before_in_its_file(baseline, t)))
    if not needy:
        return first
    before = set().union(*(_before_in_its_file(baseline, t) for t in needy))
    widened = tuple(t for t in baseline.collected if t in chosen or t in before)
    said = f"; with the tests before {_some(needy, 2)} in its file, green without them"
    # Its confirmation re-runs them too: the kills tests alone, from a fresh start, are the
    # run that left them green.
    ahead = replace(trial, confirm_before=tuple(t for t in widened if t in before))
    again = _judged_over(ahead, widened, base, said)
    return replace(again, duration=first.duration + again.duration)


def _before_in_its_file(baseline: Baseline, test: str) -> tuple[str, ...]:
    """The tests its file runs before `test`, in collection order."""
    tests = baseline.by_file.get(test.split("::", 1)[0], ())
    return tests[: tests.index(test)] if test in tests else ()


def with_every_test(trial: _Trial, first: Verdict, base: dict[str, Any], why: str) -> Verdict:
    """A verdict that tests the selection left out may change through state the mutant wrote,
    judged again over every collected test: such a test never ran the change in the
    baseline, yet may read that state and go red (idna: codecs.lookup caches the mutated
    codec, and plain pytest turned two more tests red: an overreach read as held). Its
    confirmation re-runs a red in the order the run ran it, the tests before it included: a
    red through an earlier test's state is green without them, not flaky (six). Its verdict
    stands; its duration counts both runs."""
    everything = tuple(trial.job[2].collected)
    if len(first.selected or trial.selected) >= len(everything):
        return first  # a run the verdict came from had them all already (its tests before it, say)
    in_order = replace(trial, confirm_in_order=True)
    again = _judged_over(in_order, everything, base, f"; then every test, since {why}")
    return replace(again, duration=first.duration + again.duration)


def _judged_over(trial: _Trial, selected: tuple[str, ...], base: dict[str, Any], said: str) -> Verdict:
    """The mutant judged again over other tests, under their own limits, its selection saying why."""
    mutation, _, baseline = trial.job
    return replace(trial, selected=selected).judged(
        mutant_timeout(mutation, baseline, selected),
        {**base, "selected": selected, "selection": base["selection"] + said},
    )


def _judged_without(mutation: Mutation, first: Verdict, files: tuple[str, ...], selected: tuple[str, ...]) -> bool:
    """Whether a mutation can be judged without the tests of `files`: a sweep's whenever some
    file did not run; a gate's only where its mutant changed test ids (not where a file failed
    to collect: that is `broken`) and no kills or may_kill entry names a test of those files
    (natsort: a regex's pattern is another test's parametrize id, and a contract in a third
    file read `inconclusive`)."""
    if mutation.uncontracted:
        return True
    if first.verdict != judge.INCONCLUSIVE:
        return False
    # The contract's tests are always selected: naming one of those files names one of these.
    # A may_kill entry naming the whole file asks nothing of its tests (without_files_not_run).
    named = [
        t
        for t in selected
        if any(matches(e, t) for e in mutation.kills)
        or any(matches(e, t) and not _names_whole_file((e,), t.split("::", 1)[0]) for e in mutation.may_kill)
    ]
    return not any(t.split("::", 1)[0] in files for t in named)


def _names_whole_file(entries: tuple[str, ...], file: str) -> bool:
    """Whether an entry names the file, or a folder holding it: every test it has, under any id."""
    return any(matches(entry, f"{file}::") for entry in entries)


def hang_confirmed(trial: _Trial, first: Verdict, limits: Limits, base: dict[str, Any]) -> Verdict:
    """A kills test that hung as `require = "timeout"` declares holds only if it hangs again: a
    hang ends its run before any confirmation could re-run it, so the mutant runs once more,
    at once and in place, with the same limits. A second run that does otherwise is `flaky`,
    naming both."""
    stuck = first.extras[judge.HUNG]
    second = trial.judged(limits, base)
    duration = first.duration + second.duration
    if second.extras.get(judge.HUNG) == stuck:
        return replace(first, detail=f"{first.detail}; it hung there again on a second run", duration=duration)
    return replace(
        second,
        verdict=judge.FLAKY,
        detail=f"a re-run of the same mutant disagreed: the first hung in {stuck}; the second was "
        f"{second.verdict}: {second.detail}",
        duration=duration,
    )


def _retried(trial: _Trial, first: Verdict, limits: Limits, factor: float, base: dict[str, Any]) -> Verdict:
    """A timeout run again at once, on the same worker, with `factor` times each limit
    (Mutation.retry_timeout): that run's verdict stands, and its duration counts both runs.

    At once and in place, not in a second lab after the first: there the retries of a sweep
    shard ran alone while the other workers idled, after a second baseline, so a shard that
    drew a timeout ran far past the time its report recorded for it, and no split by
    recorded durations could balance the shards."""
    longer = limits.longer(factor)
    second = trial.judged(longer, base)
    return replace(
        second,
        # The limit it names is the second run's: say the first, so the two add up for a reader.
        detail=second.detail + f" (confirmed with {factor:g} x the first limit, {first.timeout or 0:.1f}s)",
        duration=first.duration + second.duration,
        extras={**second.extras, "retried": True, "first_seconds": round(first.duration, 4)},
    )


def _as_run(base: dict[str, Any], run) -> dict[str, Any]:
    """A run stopped at its first red (a sweep mutant's) ran the selection up to that test: the
    tests after it were left out on purpose, and are no evidence either way."""
    if not run.stopped_after:
        return base
    ran = tuple(t for t in base["selected"] if t in run.tests)
    left_out = len(base["selected"]) - len(ran)
    said = f"; stopped at the first red, {run.stopped_after}" + (
        f" ({counted(left_out, 'selected test')} after it left out: killed is all a sweep mutant asks)"
        if left_out
        else ""
    )
    return {**base, "selected": ran, "selection": base["selection"] + said}


def _scenario(job, selected: tuple[str, ...], limits: Limits, region: Region, *, swap: bool, confirm: bool) -> Scenario:
    """The mutant's run: its selected tests and limits, the mutant written in (or swapped
    into the collected session), its origin to prove, and what its confirmation re-runs."""
    mutation, mutant, baseline = job
    module = module_name(mutant.file, mutation.settings.paths)
    # The swap (code_swap.py) is sound only for changes that run neither at import nor while
    # tests are collected: select_tests marks both as import-time.
    swappable = swap and not region.import_time
    scenario = Scenario(
        label=f"mutant-{mutation.name}",
        tests=selected,
        timeout=limits.fresh,
        swap_timeout=limits.swap,
        test_limits=tests_limits(mutation, baseline, selected, limits),
        gate_tests=mutation.settings.tests,
        confine=mutation.settings.confine,
        user_args=mutation.settings.arguments,
        sys_path=mutation.settings.paths,
        writes=((mutant.file, mutant.mutated or ""),),
        mutated_file=mutant.file,
        expect_module=module,
        session_tests=baseline.targets,
        swap=swappable,
        swap_targets=baseline.mutated_files or (mutant.file,),
        stop_at_first_red=mutation.first_red,
    )
    if confirm:
        kills = tuple(t for t in selected if any(matches(e, t) for e in mutation.kills))
        allowed = tuple(t for t in selected if any(matches(e, t) for e in mutation.contract_tests()))
        scenario = replace(scenario, confirm_kills=kills, confirm_allowed=allowed)
    return scenario


def _evidence(
    engine: Engine, worker: Worker, job, scenario: Scenario, run, confirm, original_region: Region, limits: Limits
) -> Evidence:
    """What the run proved, for the judge, with reach read from the baseline."""
    mutation, mutant, baseline = job
    # Reach from the baseline, not the mutant: up to the first execution of a changed
    # statement, the mutant and the original execute the same instructions, so a test
    # reaches the change in the mutant exactly when it runs the changed statements in the
    # original (docs/DESIGN.md). Mutant runs are therefore not traced at all.
    file_coverage = baseline.coverage.get(mutant.file)
    timeout, unmutated = limits.on(run.path)
    reached_by = original_region.reached_by(file_coverage)
    return Evidence(
        run=run,
        confirm=confirm,
        reached_by=reached_by,
        region_executed=original_region.executed_at_all(file_coverage),
        import_time=original_region.import_time,
        timeout=timeout,
        selected_baseline_seconds=unmutated,
        reached_alone=_reached_alone(
            engine, worker, scenario, run, mutation, baseline, original_region, reached_by, limits.swap
        ),
        rebound=_rebound_if_named(mutant, run, confirm),
        mutant=mutant,
        draws=baseline.draws,
        shares_state=original_region.writes_state and tuple(scenario.tests) == tuple(baseline.collected),
    )


def _with_path(verdict: Verdict, run, original_region: Region) -> Verdict:
    """The verdict, saying which path the run took (a fork with the mutant swapped in, or a
    fresh session) and why."""
    why = run.fallback or (
        ""
        if run.path == "swap"
        else "the change runs at import or while tests are collected"
        if original_region.import_time
        else "the swap is off (--no-swap)"
    )
    extras = {**verdict.extras, "path": run.path, "path_reason": why}
    if run.stopped_after:
        extras["stopped_after"] = run.stopped_after  # the tests after it were left out (Mutation.first_red)
    if run.proof and run.proof.get("swap"):
        extras["swap"] = run.proof["swap"]  # how many function objects now run the mutant's code
    return replace(verdict, extras=extras)


def _rebound_if_named(mutant: Mutant, *runs) -> frozenset[str] | None:
    """The names the mutant binds differently (reach.rebound_names), when the judge will ask:
    only a red NameError or UnboundLocalError is read against them. Otherwise None, as for
    texts that do not parse: both module texts are parsed and walked, which cost more than
    the rest of a mutant's bookkeeping."""
    named = any(
        result.exc_type in ("NameError", "UnboundLocalError")
        for run in runs
        if run is not None
        for result in run.red.values()
    )
    if not named:
        return None
    return rebound_names(mutant.original, mutant.mutated or "", mutant.changed_lines, mutant.mutant_changed_lines)


def _reached_alone(
    engine: Engine,
    worker: Worker,
    scenario: Scenario,
    run,
    mutation: Mutation,
    baseline: Baseline,
    region: Region,
    reached_by: tuple[str, ...],
    limit: float,
) -> frozenset[str] | None:
    """When a kills test went red without running the changed code in the baseline: which of
    those tests do run it when run by themselves, unmutated and traced. Not run otherwise
    (None): it costs a run."""
    if region.import_time or run.status != "done" or not run.finished:
        return None
    reached = set(reached_by)
    unreached = [t for t in run.red if t not in reached and any(matches(e, t) for e in mutation.kills)]
    if not unreached or len(unreached) > 5:  # a few runs at most; beyond that, judged as before
        return None
    assert scenario.mutated_file is not None  # the mutant's run (_scenario) names the mutated file
    found: set[str] = set()
    for test in unreached:  # each by itself: a test before it could run the change for it
        alone = replace(
            scenario,
            label=f"alone-{mutation.name}",
            tests=(test,),
            writes=(),
            mutated_file=None,
            expect_module=None,
            swap=False,
            swap_timeout=None,
            timeout=limit,
            confirm_kills=None,
            confirm_allowed=None,
            coverage_files=baseline.mutated_files or (scenario.mutated_file,),
            tracer=engine.tracer,
        )
        lines = _traced_alone(engine, worker, alone, mutation.target.path)
        if lines is None:
            return None
        if test in region.reached_by(lines):
            found.add(test)
    return frozenset(found)


def _traced_alone(engine: Engine, worker: Worker, scenario: Scenario, path: str) -> dict[str, list[int]] | None:
    """The lines of `path` a traced run recorded by context ({} if none), None if it did not
    finish. Where its probes could not vouch for the file, the run is made again under the C
    tracer, as the baseline's pass is (baseline._traced_pass)."""
    run = engine.run(worker, scenario)
    if run.status == "done" and run.finished and UNPROVEN in ((run.coverage or {}).get(path) or {}):
        run = engine.run(worker, replace(scenario, label=f"{scenario.label}-ctrace", tracer="coverage"))
    if run.status != "done" or not run.finished or run.coverage is None:
        return None
    return run.coverage.get(path) or {}


def _deps(root: Path, baseline: Baseline, selected: tuple[str, ...], shapes: Shapes) -> dict[str, Any]:
    chosen = set(selected)
    # Files imported but not traced (not a mutation target) count whole.
    executed: dict[str, set[int] | None] = {rel: None for rel in baseline.imported}
    for rel, contexts in baseline.coverage.items():
        lines: set[int] = set()
        imported = False
        for context, context_lines in contexts.items():
            if context == "" or context in chosen:
                imported = True
                if context in chosen:
                    lines.update(context_lines)
        if imported:
            executed[rel] = lines
    return dependencies(root, executed, shapes)
