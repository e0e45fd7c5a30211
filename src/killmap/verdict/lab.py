"""The lab: from catalogs to verdicts. Baseline first, then every mutant, in parallel.

Path of one mutation: catalog entry -> mutant text (mutants) -> static validity
(validity) -> pin check (pins) -> cache lookup (cache) -> baseline-derived test
selection and timeout (reach) -> run in a warm worker's sandbox (runner) -> confirmation
re-run -> verdict (judge) -> reports. See docs/DESIGN.md.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from killmap import timeline
from killmap.catalog.entries import missing_excluded_files, missing_test_paths
from killmap.catalog.plan import DEFAULT_SEED, LabOptions, read_plan
from killmap.catalog.plan import load as load  # commands and benchmarks read catalogs through the lab
from killmap.catalog.project import project_files
from killmap.catalog.reader import Catalog, GateSettings, Mutation
from killmap.engine import Engine, Launch, memory_limit
from killmap.errors import GateError
from killmap.mutate.memo import MutantBuilder, MutantMemo, Prepared, prepared_mutant, remembered_mutant
from killmap.mutate.mutant import Mutant
from killmap.mutate.pins import check_patch_pins
from killmap.verdict import judge
from killmap.verdict.baseline import Baseline, run_baseline, unmatched_excludes
from killmap.verdict.cache import VerdictCache, test_files_digest
from killmap.verdict.collection import Collection, collect_in
from killmap.verdict.dispatch import Dispatch, Progress
from killmap.verdict.early_baseline import EarlyBaseline
from killmap.verdict.judge import Verdict
from killmap.verdict.prepare import check_control_sites, static_verdict, with_warnings
from killmap.verdict.tree_runs import Trees
from killmap.verdict.trial import run_mutant


@dataclass
class LabResult:
    verdicts: list[Verdict]
    mutants: dict[str, Mutant]
    baselines: list[Baseline] = field(default_factory=list)
    wall: float = 0.0
    jobs: int = 1
    seed: int | None = DEFAULT_SEED  # what randomized suites drew from; None: --seed random

    @property
    def all_held(self) -> bool:
        return all(v.held for v in self.verdicts)


def run_lab(
    root: Path, options: LabOptions, progress: Progress = lambda kind, data: None, launch: Launch | None = None
) -> LabResult:
    """The gate: every selected mutation of the catalogs, to its verdict."""
    plan = read_plan(root, options)
    # A shard balanced by --durations also starts its dearest mutations first, by the same report.
    return run_mutations(root, plan.mutations, options, progress, launch=launch, recorded=plan.durations)


def run_mutations(
    root: Path,
    mutations: list[Mutation],
    options: LabOptions,
    progress: Progress = lambda kind, data: None,
    mutants: dict[str, Mutant] | None = None,
    launch: Launch | None = None,
    recorded: Mapping[str, float] | None = None,
    early_baseline: EarlyBaseline | None = None,
) -> LabResult:
    """The engine's interface for every command: these mutations, to their verdicts.

    The mutations need not come from a catalog (try builds one from the command line,
    sweep from mutmut's operators); `mutants` gives prebuilt mutants by name, for
    mutations no catalog operator can rebuild. `launch`: workers the command started at
    its first line, for the engine to adopt (launch.py). `recorded`: seconds each mutation
    took in an earlier run, by name, where known: the dearest start first (dispatch.py).
    `early_baseline`: a baseline the caller began before it had the mutations
    (`start_early_baseline`), used
    when it covers the first group that runs, else cancelled.
    """
    import time

    started = time.perf_counter()
    with timeline.span("new lab"):
        lab = _new_lab(root, mutations, options, progress, launch, recorded)
    prebuilt = dict(mutants or {})
    # What is known already costs nothing: prebuilt or remembered mutants, cached verdicts.
    known = {m.name: prebuilt.get(m.name) or remembered_mutant(root, m, lab.memo) for m in mutations}
    pending = [m for m in mutations if not lab.cached_already(m, known[m.name])]
    if not pending and launch is not None:
        launch.dismiss()  # every verdict is cached: no worker will be needed
    to_run, baselines = _settle_then_run(lab, mutations, known, pending, early_baseline)
    _judge_controls(mutations, lab.decided)
    lab.announce.rest()
    if lab.cache is not None:
        with timeline.span("cache save"):
            lab.cache.save()
    verdicts = [with_warnings(lab.decided[m.name], lab.warnings[m.name]) for m in mutations]
    built = {m.name: lab.mutants[m.name] for m in mutations}
    # Sandboxes actually used: none when every verdict came from the cache or was static.
    return LabResult(
        verdicts, built, baselines, time.perf_counter() - started, min(options.jobs, len(to_run)), options.seed
    )


def _new_lab(
    root: Path,
    mutations: list[Mutation],
    options: LabOptions,
    progress: Progress,
    launch: Launch | None,
    recorded: Mapping[str, float] | None,
) -> _Lab:
    files = _checked_input(root, mutations)
    # A focused run answers another question than the contract: its verdicts are not the gate's;
    # nor are a --seed random run's, which explores, by luck.
    usable = options.focus is None and options.seed is not None
    reads, writes = usable and options.use_cache, usable and options.write_cache
    cache = VerdictCache(root, options.cache_dir, reads=reads, writes=writes) if reads or writes else None
    announce = _Announcer(mutations, progress)
    return _Lab(root, files, options, progress, launch, cache, MutantBuilder(root), announce, recorded)


def _settle_then_run(
    lab: _Lab,
    mutations: list[Mutation],
    known: dict[str, Mutant | None],
    pending: list[Mutation],
    early_baseline: EarlyBaseline | None,
) -> tuple[list[Mutation], list[Baseline]]:
    """Every mutant settled (static verdicts, cache) while the baseline starts, then what is
    left run: the mutations that ran, and their baselines."""
    early_baseline, engine, dispatch = _build_while_the_baseline_runs(lab, mutations, known, pending, early_baseline)
    to_run = [m for m in mutations if m.name not in lab.decided]
    baselines: list[Baseline] = []
    if not to_run and early_baseline is not None:
        _stop_early(engine, early_baseline, dispatch)  # everything turned out static or cached
    elif to_run:
        baselines = _run_the_rest(lab, to_run, early_baseline, dispatch)
    return to_run, baselines


def _judge_controls(mutations: list[Mutation], decided: dict[str, Verdict]) -> None:
    """Controls are judged last: an invariant holds only if its control held in this run."""
    for mutation in mutations:
        if mutation.invariant and mutation.name in decided:
            decided[mutation.name] = judge.judge_control(
                mutation, decided[mutation.name], decided.get(mutation.control or "")
            )


def _checked_input(root: Path, mutations: list[Mutation]) -> list[str]:
    """The project's files, once what is bad input whether or not anything runs is refused: a
    malformed memory setting, a target the sandbox would not hold, a revert-patch's changed byte
    (before a worker starts)."""
    memory_limit(1)
    for mutation in mutations:
        if mutation.op == "revert-patch":
            check_patch_pins(root, mutation)
    settings = list(dict.fromkeys((m.catalog, m.settings) for m in mutations))
    for problem in [*missing_test_paths(root, settings), *missing_excluded_files(root, settings)]:
        raise problem
    files = project_files(root)
    check_targets_copied(mutations, files)
    return files


def check_targets_copied(mutations, files: list[str]) -> None:
    """Every target must be one of the files a sandbox holds, or it cannot be mutated there.

    The sandbox is a copy of `project_files`: a git-ignored target is not in it, and
    would otherwise come out as an 'inconclusive' run with an empty log.
    """
    for problem in targets_not_copied(mutations, files):
        raise problem


def targets_not_copied(mutations, files: list[str]) -> list[GateError]:
    """Each mutation whose target no sandbox holds (check_targets_copied's rule), said."""
    copied = set(files)
    return [
        mutation.fail(
            f"target {mutation.target.path} is not one of the project's files (it is "
            "git-ignored, or in a folder the gate never copies), so the sandbox "
            "would not hold it",
            "target",
        )
        for mutation in mutations
        if mutation.target.path not in copied
    ]


@dataclass(frozen=True)
class _Lab:
    """One call of run_mutations: what every phase reads, and what it has settled so far
    (the dicts fill as mutants are built and verdicts land)."""

    root: Path
    files: list[str]
    options: LabOptions
    progress: Progress
    launch: Launch | None
    cache: VerdictCache | None
    sources: MutantBuilder
    announce: _Announcer
    recorded: Mapping[str, float] | None  # run_mutations' `recorded`
    mutants: dict[str, Mutant] = field(default_factory=dict)
    decided: dict[str, Verdict] = field(default_factory=dict)
    warnings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    digests: dict[GateSettings, str] = field(default_factory=dict)

    @property
    def memo(self) -> MutantMemo | None:
        return self.cache.mutants if self.cache is not None else None

    def key_of(self, mutation: Mutation, mutant: Mutant) -> str:
        if mutation.settings not in self.digests:
            self.digests[mutation.settings] = test_files_digest(self.root, self.files, mutation.settings.tests)
        digest = self.digests[mutation.settings]
        return VerdictCache.static_key(mutation.fingerprint(), mutant.diff, digest, self.options.seed)

    def cached_already(self, mutation: Mutation, mutant: Mutant | None) -> bool:
        cache = self.cache
        # A cache that only writes (--no-cache) has no verdict to find: its key, which hashes the
        # mutant's diff, is worked out once, when the verdict is stored (settle).
        if cache is None or not cache.reads or mutant is None:
            return False
        return cache.lookup(mutation.name, self.key_of(mutation, mutant)) is not None

    def settle(self, mutation: Mutation, prepared: Prepared) -> None:
        """The mutant's static verdict or cached one, if it has either."""
        cache, mutant = self.cache, prepared.mutant
        self.mutants[mutation.name] = mutant
        early, self.warnings[mutation.name] = static_verdict(mutation, prepared)
        if early is not None:
            self.decided[mutation.name] = early
            return
        if cache is None:
            return  # the key hashes every test file and the gate's own source: only a cache needs it
        self.keys[mutation.name] = self.key_of(mutation, mutant)
        hit = cache.lookup(mutation.name, self.keys[mutation.name])
        if hit is not None:
            self.decided[mutation.name] = _verdict_from_json(hit)

    def announced(self, mutation: Mutation, result) -> None:
        self.announce.done(result[0])

    def trial(self, engine: Engine):
        options = self.options
        return lambda worker, job, selection: run_mutant(
            self.root,
            engine,
            worker,
            job,
            confirm=options.confirm,
            focus=options.focus,
            swap=options.swap,
            selection=selection,
            # Never stored without a cache written, so never worked out.
            remembered=self.cache.shapes if self.cache is not None and self.cache.writes else None,
        )

    def new_engine(self, runnable: int) -> Engine:
        return _engine(self.root, self.files, self.options, self.launch, runnable)


def _engine(
    root: Path,
    files: list[str],
    options: LabOptions,
    launch: Launch | None,
    runnable: int,
    trees: list[dict[str, bytes]] | None = None,
) -> Engine:
    """Every engine a command runs on. `trees`: whole trees, one sandbox each, in place of
    copies of the project's files."""
    return Engine(
        root,
        files,
        _sandboxes(options, runnable),
        cache_dir=options.cache_dir,
        trees=trees,
        tracer=options.tracer,
        launch=launch,
        seed=options.seed,
    )


def open_trees(
    root: Path, files: list[str], trees: list[dict[str, bytes]], settings: GateSettings, launch: Launch | None = None
) -> Trees:
    """Whole trees (a file's path -> its bytes), each run to an outcome for every test, on the
    engine every command runs on (tree_runs.py): red-first's HEAD and its fix reverted. Its
    options are the defaults every command starts from: red-first sets no cache folder, tracer
    or seed of its own."""
    return Trees(_engine(root, files, LabOptions(), launch, len(trees), trees=trees), settings)


def collect(
    root: Path,
    settings_list: list[GateSettings],
    launch: Launch | None = None,
    mutants: dict[str, Mutant] | None = None,
    files: list[str] | None = None,
    catalogs: dict[GateSettings, str] | None = None,
) -> dict[GateSettings, Collection]:
    """pytest's collection of each [gate] setting, and under each of `mutants` whose change it
    runs (collection.py), on one sandbox of an engine the lab builds: `killmap check`'s.
    `files`: the project's, when the caller has listed them already; `catalogs`: the file
    each setting comes from, named where its options deselect every test."""
    with _engine(root, files if files is not None else project_files(root), LabOptions(jobs=1), launch, 1) as engine:
        return collect_in(engine, root, settings_list, mutants, catalogs)


def check_gates_alone(root: Path, catalogs: list[Catalog], launch: Launch | None = None) -> None:
    """Each catalog's [gate], refused as `check` refuses it, for a run with no mutation to judge:
    a test path or an excluded file that is not there, an exclude that deselects no test, and
    (when the excludes ask for a collection at all) tests that fail to collect.

    A run judges a [gate] at its mutations' baseline; with none, a bad `exclude` passed as
    "nothing to gate", exit 0, where `check` said exit 2. Bad input is refused whether or not
    anything runs. Only an exclude needs pytest's collection: a [gate] without one costs none."""
    where = [(c.path, c.settings) for c in catalogs]
    for problem in [*missing_test_paths(root, where), *missing_excluded_files(root, where)]:
        raise problem
    gates: dict[GateSettings, str] = {}  # each [gate] with excludes once, named by its first catalog
    for path, settings in where:
        if settings.exclude:
            gates.setdefault(settings, path)
    if not gates:
        return
    collected = collect(root, list(gates), launch, catalogs=gates)
    for settings, collection in collected.items():
        for problem in collection.problems:
            raise problem
        for note in unmatched_excludes(settings, collection.ids, collection.deselected, settings.ignored(root)):
            raise GateError(note, file=gates[settings], field="exclude")


def start_early_baseline(root: Path, plan: list[Mutation], options: LabOptions, launch: Launch | None) -> EarlyBaseline:
    """The engine and the baseline of `plan`'s settings and files, begun before the caller
    has its mutations (a sweep enumerates them meanwhile: seconds of libcst on a large file,
    while the workers would wait). `plan` stands for the mutations to come: their files and
    contract tests, which are all a baseline depends on (early_baseline.py); hand the result to
    run_mutations as `early_baseline`, which cancels it if it does not cover what runs."""
    files = _checked_input(root, plan)
    engine = _engine(root, files, options, launch, options.jobs)
    try:
        return EarlyBaseline(root, files, plan, engine, runs=options.baseline_runs, timeout=options.baseline_timeout)
    except BaseException:
        engine.close()
        raise


def _build_while_the_baseline_runs(
    lab: _Lab,
    mutations: list[Mutation],
    known: dict[str, Mutant | None],
    pending: list[Mutation],
    early_baseline: EarlyBaseline | None = None,
) -> tuple[EarlyBaseline | None, Engine | None, Dispatch | None]:
    """Every mutant built (or remembered) and settled; when something will run, the engine
    and the first group's baseline started before (or the caller's `early_baseline`, when it
    covers that group), and each mutant of that group dispatched as soon as it is built. Then
    what was decided without a run is said, and the dispatch closed."""
    root, options = lab.root, lab.options
    engine: Engine | None = None
    dispatch: Dispatch | None = None
    try:
        first = [m for m in pending if m.settings == pending[0].settings] if pending else []
        if early_baseline is not None and not early_baseline.covers(first):
            early_baseline.cancel()  # nothing to run, or other files to trace: not this baseline
            early_baseline = None
        if pending:
            # Something will run: begin the engine and its baseline while the mutants are
            # built and checked (early_baseline.py says why the two are independent), and run
            # each mutant from the moment both it and the baseline are there (dispatch.py).
            if early_baseline is not None:
                engine = early_baseline.engine
            else:
                with timeline.span("engine"):
                    engine = lab.new_engine(len(pending))
                early_baseline = EarlyBaseline(
                    root, lab.files, first, engine, runs=options.baseline_runs, timeout=options.baseline_timeout
                )
            dispatch = Dispatch(
                early_baseline.settings,
                early_baseline.baseline,
                engine.workers,
                lab.trial(engine),
                lab.progress,
                lab.announced,
                lab.recorded,
                # A focused run's tests are checked against this baseline when it is the only
                # one: with several settings groups a test may be collected by another's alone.
                focus=options.focus if len(first) == len(pending) else None,
            )
        # Said once the engine has begun (its workers copy and collect meanwhile): what hears it
        # may have its own start to make (the run command's progress bar imports rich).
        lab.progress("planned", len(mutations))
        _build_and_offer(lab, mutations, known, early_baseline, dispatch)
        _say_decided_then_close(lab, mutations, dispatch)
    except BaseException:
        # Also when ^C lands between the engine's start and the early baseline's: no worker
        # may outlive the gate.
        _stop_early(engine, early_baseline, dispatch)
        raise
    return early_baseline, engine, dispatch


def _say_decided_then_close(lab: _Lab, mutations: list[Mutation], dispatch: Dispatch | None) -> None:
    """What was decided without a run comes first, then the baseline's lines and every verdict
    that ran; with a dispatch, only once the contract ids it checks hold (Dispatch.close). With
    nothing left to run the lab says them itself: the caller stops that dispatch unannounced."""
    decided = [lab.decided[mutation.name] for mutation in mutations if mutation.name in lab.decided]

    def say() -> None:
        for verdict in decided:
            lab.announce.done(verdict)

    if dispatch is None or len(decided) == len(mutations):
        say()
        if dispatch is not None:
            dispatch.close()
    else:
        dispatch.close(say)


def _build_and_offer(
    lab: _Lab,
    mutations: list[Mutation],
    known: dict[str, Mutant | None],
    early_baseline: EarlyBaseline | None,
    dispatch: Dispatch | None,
) -> None:
    """Each mutant built (or remembered) and settled, and offered to the dispatch at once when
    the early baseline covers it and nothing decided it already."""
    with _prompt_handover():
        for mutation in mutations:
            with timeline.span("build", mutation=mutation.name):
                prepared = prepared_mutant(lab.root, mutation, known[mutation.name], lab.sources, lab.memo)
                lab.settle(mutation, prepared)
            if (
                dispatch is not None
                and early_baseline is not None  # made with the dispatch
                and mutation.name not in lab.decided
                and early_baseline.covers([mutation])
            ):
                dispatch.offer(mutation, lab.mutants[mutation.name])
        check_control_sites(mutations, lab.mutants)


def _run_the_rest(
    lab: _Lab, to_run: list[Mutation], early_baseline: EarlyBaseline | None, dispatch: Dispatch | None
) -> list[Baseline]:
    """The mutants no static check or cache decided, group by group (one group per settings,
    one baseline each); the early baseline's group first, on its own dispatch."""
    baselines: list[Baseline] = []
    engine = early_baseline.engine if early_baseline is not None else lab.new_engine(len(to_run))
    with engine:
        groups: dict[GateSettings, list[Mutation]] = {}
        for mutation in to_run:
            groups.setdefault(mutation.settings, []).append(mutation)
        # The dispatched group first: one user of the workers at a time.
        ordered = sorted(
            groups.values(), key=lambda group: not (early_baseline is not None and early_baseline.covers(group))
        )
        if early_baseline is not None and not early_baseline.covers(ordered[0]):
            assert dispatch is not None  # made with the early baseline (_build_while_the_baseline_runs)
            dispatch.join()  # nothing of its settings is left to run; its baseline is not needed
        for group in ordered:
            if early_baseline is None or not early_baseline.covers(group):
                dispatch = _dispatch_with_its_own_baseline(lab, engine, group)
            assert dispatch is not None  # the early baseline's, for the group it covers
            with timeline.span("results"):
                results = dispatch.results()
            assert dispatch.baseline is not None  # results() raises when the baseline did not run
            baselines.append(dispatch.baseline)
            _record(lab, group, results)
    return baselines


def _dispatch_with_its_own_baseline(lab: _Lab, engine: Engine, group: list[Mutation]) -> Dispatch:
    """A group the early baseline did not cover: its own baseline, then its mutants."""
    options = lab.options
    dispatch = Dispatch(
        group[0].settings,
        lambda: run_baseline(
            lab.root,
            lab.files,
            group[0].settings,
            group,
            engine,
            runs=options.baseline_runs,
            timeout=options.baseline_timeout,
        ),
        engine.workers,
        lab.trial(engine),
        lab.progress,
        lab.announced,
        lab.recorded,
    )
    for mutation in group:
        dispatch.offer(mutation, lab.mutants[mutation.name])
    return dispatch


def _record(lab: _Lab, group: list[Mutation], results: dict[str, Any]) -> None:
    """Each run verdict decided, and remembered when it can be trusted again."""
    cache = lab.cache
    for mutation in group:
        verdict, deps = results[mutation.name]
        lab.decided[mutation.name] = verdict
        # A run that wrote where it must not proved something about a tree that
        # was not pristine: never reuse its verdict.
        tainted = verdict.verdict == judge.ESCAPED or verdict.extras.get("sandbox_writes")
        if (
            cache is not None
            and not tainted
            and verdict.verdict not in (judge.FLAKY, judge.RANDOMIZED, judge.INCONCLUSIVE)
        ):
            cache.store(mutation.name, lab.keys[mutation.name], deps, _verdict_to_json(verdict))


def _stop_early(engine: Engine | None, early_baseline: EarlyBaseline | None, dispatch: Dispatch | None) -> None:
    """Stop what began before the mutants were built: nothing more is dispatched, the
    early baseline's workers are killed (the mutants already dispatched die with them), and the
    dispatch's threads are let end."""
    if dispatch is not None:
        dispatch.cancel()
    if early_baseline is not None:
        early_baseline.cancel()
    elif engine is not None:
        engine.close()
    if dispatch is not None:
        dispatch.join()


@contextmanager
def _prompt_handover():
    """While the gate's thread builds mutants (pure Python), the early baseline's and the
    dispatch's threads do the baseline's bookkeeping and hand mutants to workers: mostly
    system calls (pipes, stats of the sandbox and the working tree), each of which gives up
    the GIL, and taking it back waits for the switch interval, 5 ms by default, while a
    worker waits for its next run. A short interval keeps the handover prompt; it costs
    nothing while nobody waits."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, 0.0002))
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


class _Announcer:
    """Each verdict as it lands, for the live progress line; an invariant's only once its
    control has landed too. Its own run says "held" when nothing went red, and the verdict
    is `unevidenced` if the control then fails: a CI log must not read "held" for it."""

    def __init__(self, mutations: list[Mutation], progress):
        self._progress = progress
        self._mutations = {m.name: m for m in mutations}
        self._landed: dict[str, Verdict] = {}
        self._waiting: dict[str, Verdict] = {}
        self._lock = threading.Lock()

    def done(self, verdict: Verdict) -> None:
        with self._lock:
            self._landed[verdict.name] = verdict
            self._waiting[verdict.name] = verdict
            for name in list(self._waiting):
                mutation = self._mutations[name]
                control = mutation.control if mutation.invariant else None
                if control is None or control in self._landed:
                    self._say(name)

    def rest(self) -> None:
        """The invariants whose control never landed (not run: left out by --only, say)."""
        with self._lock:
            for name in list(self._waiting):
                self._say(name)

    def _say(self, name: str) -> None:
        mutation, verdict = self._mutations[name], self._waiting.pop(name)
        if mutation.invariant:
            verdict = judge.judge_control(mutation, verdict, self._landed.get(mutation.control or ""))
        self._progress("done", verdict)


# --- before anything runs ----------------------------------------------------------------


def _sandboxes(options: LabOptions, runnable: int) -> int:
    jobs = max(1, min(options.jobs, runnable))
    return max(jobs, min(options.baseline_runs, options.jobs))


# --- cache round trip ----------------------------------------------------------------------


def _verdict_to_json(verdict: Verdict) -> dict[str, Any]:
    return asdict(verdict)


def _verdict_from_json(data: dict[str, Any]) -> Verdict:
    from killmap.verdict.judge import RedTest

    data = dict(data)
    data["red"] = tuple(RedTest(**r) for r in data.get("red", ()))
    for key in ("expected", "missing", "unexpected", "reached_by", "selected"):
        data[key] = tuple(data.get(key, ()))
    data["cached"] = True
    data["duration"] = 0.0  # a reused verdict cost no run (the README: 0 when cached)
    return Verdict(**data)
