"""The lab: from catalogs to verdicts. Baseline first, then every mutant, in parallel.

Path of one mutation: catalog entry -> mutant text (mutants) -> static validity
(validity) -> pin check (pins) -> cache lookup (cache) -> baseline-derived test
selection and timeout (reach) -> run in a warm worker's sandbox (runner) -> confirmation
re-run -> verdict (judge) -> reports. See docs/DESIGN.md.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from killmap import judge
from killmap.cache import VerdictCache, dependencies, displaced_folder, test_files_digest
from killmap.catalog import Catalog, GateSettings, Mutation, discover_catalogs, load_catalogs, matches
from killmap.errors import GateError
from killmap.guard import Containment, TreeGuard
from killmap.imports import unreachable_test_files
from killmap.judge import Evidence, Verdict
from killmap.mutants import Mutant, Sources, build_mutant
from killmap.outcome import RunOutcome
from killmap.pins import check_pins
from killmap.pool import Pool
from killmap.project import module_name, project_files
from killmap.reach import Region, enclosing_functions, region_of
from killmap.runner import Scenario, run_scenario, run_to_completion
from killmap.sandbox import Scratch
from killmap.validity import check_mutant

MIN_TIMEOUT = 5.0
TIMEOUT_FACTOR = 10.0


@dataclass(frozen=True)
class LabOptions:
    catalogs: tuple[Path, ...] = ()
    only: tuple[str, ...] = ()
    names: tuple[str, ...] | None = None       # a pre-filtered set (e.g. from --changed)
    jobs: int = max(os.cpu_count() or 1, 1)
    use_cache: bool = True
    cache_dir: Path | None = None
    baseline_runs: int = 2
    baseline_timeout: float = 900.0
    confirm: bool = True
    shard: tuple[int, int] | None = None       # (k, n), 1-based


@dataclass
class Baseline:
    settings: GateSettings
    collected: tuple[str, ...]
    durations: dict[str, float]
    overhead: float                      # session wall time not spent in tests
    coverage: dict[str, dict[str, list[int]]]
    runs: int
    wall: float
    imported: tuple[str, ...] = ()       # project source files the tests imported
    ignored: tuple[str, ...] = ()        # test files whose imports cannot reach a target


@dataclass
class LabResult:
    verdicts: list[Verdict]
    mutants: dict[str, Mutant]
    baselines: list[Baseline] = field(default_factory=list)
    wall: float = 0.0
    jobs: int = 1

    @property
    def all_held(self) -> bool:
        return all(v.held for v in self.verdicts)


Progress = Callable[[str, Any], None]


def load(root: Path, options: LabOptions) -> tuple[list[Catalog], list[Mutation]]:
    paths = list(options.catalogs) or discover_catalogs(root)
    catalogs = load_catalogs(root, [p if p.is_absolute() else (Path.cwd() / p) for p in paths])
    mutations = [m for c in catalogs for m in c.mutations]
    known = {m.name for m in mutations}
    for name in options.only:
        if name not in known:
            raise GateError(f"--only {name!r} names no mutation in the catalog(s)", field="--only")
    if options.only:
        wanted = set(options.only)
        # An invariant needs its control in the same run, so the control comes along.
        wanted |= {m.control for m in mutations if m.name in wanted and m.control}
        mutations = [m for m in mutations if m.name in wanted]
    if options.shard is not None:
        mutations = _shard(mutations, *options.shard)
    if options.names is not None:
        wanted = set(options.names) | {m.control for m in mutations if m.name in options.names and m.control}
        mutations = [m for m in mutations if m.name in wanted]
    return catalogs, mutations


def _shard(mutations: list[Mutation], k: int, n: int) -> list[Mutation]:
    """Deal mutations round-robin in catalog order; an invariant stays with its control,
    since it is judged against the control's verdict in the same run."""
    group_of: dict[str, int] = {}
    groups: list[list[str]] = []
    by_name = {m.name: m for m in mutations}
    for mutation in mutations:
        partner = mutation.control if mutation.invariant else None
        home = group_of.get(partner) if partner else None
        if home is None:
            home = next((group_of[m.name] for m in mutations if m.invariant and m.control == mutation.name
                         and m.name in group_of), None)
        if home is None:
            home = len(groups)
            groups.append([])
        groups[home].append(mutation.name)
        group_of[mutation.name] = home
        if partner and partner in by_name and partner not in group_of:
            group_of[partner] = home
            groups[home].append(partner)
    chosen = {name for index, group in enumerate(groups) if index % n == k - 1 for name in group}
    return [m for m in mutations if m.name in chosen]


def run_lab(root: Path, options: LabOptions, progress: Progress = lambda kind, data: None) -> LabResult:
    import time
    started = time.perf_counter()
    _, mutations = load(root, options)
    sources = Sources(root)
    mutants = {m.name: build_mutant(root, m, sources) for m in mutations}
    _check_control_sites(mutations, mutants)
    progress("planned", len(mutations))

    decided: dict[str, Verdict] = {}
    warnings: dict[str, tuple[str, ...]] = {}
    for mutation in mutations:
        early, warnings[mutation.name] = _static_verdict(root, mutation, mutants[mutation.name])
        if early is not None:
            decided[mutation.name] = early

    files = project_files(root)
    cache = VerdictCache(root, options.cache_dir) if options.use_cache else None
    keys: dict[str, str] = {}
    digests: dict[GateSettings, str] = {}
    for mutation in mutations:
        if mutation.name in decided:
            continue
        if mutation.settings not in digests:
            digests[mutation.settings] = test_files_digest(root, files, mutation.settings.tests)
        keys[mutation.name] = VerdictCache.static_key(mutation.fingerprint(), mutants[mutation.name].diff,
                                                      digests[mutation.settings])
        hit = cache.lookup(mutation.name, keys[mutation.name]) if cache else None
        if hit is not None:
            decided[mutation.name] = _verdict_from_json(hit)
            progress("done", decided[mutation.name])
    for name, verdict in decided.items():
        if not verdict.cached:
            progress("done", verdict)

    to_run = [m for m in mutations if m.name not in decided]
    baselines: list[Baseline] = []
    if to_run:
        jobs = max(1, min(options.jobs, len(to_run)))
        scratch = Scratch()
        pool = None
        try:
            sandboxes = [scratch.new_sandbox(root, files, i) for i in range(max(jobs, min(options.baseline_runs, options.jobs)))]
            pristine = scratch.pristine_copy(root, files)
            guards = [TreeGuard(s, files, pristine, watch_new_files=True) for s in sandboxes]
            containment = Containment(TreeGuard(root, files, pristine, watch_new_files=False),
                                      displaced_folder(options.cache_dir))
            pool = Pool(sandboxes, guards, containment)
            groups: dict[GateSettings, list[Mutation]] = {}
            for mutation in to_run:
                groups.setdefault(mutation.settings, []).append(mutation)
            for settings, group in groups.items():
                progress("baseline", settings)
                baseline = _run_baseline(root, files, settings, group, pool, scratch, options)
                baselines.append(baseline)
                _check_contract_ids(group, baseline)
                progress("baseline-done", baseline)
                jobs_for_group = [(m, mutants[m.name], baseline) for m in group]

                def on_done(job, result):
                    progress("done", result[0])

                results = pool.map(jobs_for_group,
                                   lambda worker, job: _run_mutant(root, worker, scratch, job, options),
                                   on_done)
                for (mutation, mutant, _), (verdict, deps) in zip(jobs_for_group, results):
                    decided[mutation.name] = verdict
                    # A run that wrote where it must not proved something about a tree that
                    # was not pristine: never reuse its verdict.
                    tainted = verdict.verdict == judge.ESCAPED or verdict.extras.get("sandbox_writes")
                    if cache is not None and not tainted and verdict.verdict not in (judge.FLAKY, judge.INCONCLUSIVE):
                        cache.store(mutation.name, keys[mutation.name], deps, _verdict_to_json(verdict))
        finally:
            if pool is not None:
                pool.close()
            scratch.remove()
    # Controls are judged last: an invariant holds only if its control held in this run.
    for mutation in mutations:
        if mutation.invariant and mutation.name in decided:
            decided[mutation.name] = judge.judge_control(mutation, decided[mutation.name],
                                                         decided.get(mutation.control or ""))
    if cache is not None:
        cache.save()
    verdicts = [_with_warnings(decided[m.name], warnings[m.name]) for m in mutations]
    # Sandboxes actually used: none when every verdict came from the cache or was static.
    return LabResult(verdicts, mutants, baselines, time.perf_counter() - started,
                     min(options.jobs, len(to_run)))


# --- before anything runs ----------------------------------------------------------------

def _static_verdict(root: Path, mutation: Mutation, mutant: Mutant) -> tuple[Verdict | None, tuple[str, ...]]:
    """The verdict known before anything runs, if any, and the mutant's dead-code warnings."""
    def verdict(kind: str, detail: str, **extras: Any) -> Verdict:
        return Verdict(name=mutation.name, verdict=kind, detail=detail, expected=mutation.kills,
                       extras=extras)

    stale = check_pins(root, mutation, mutant)
    if stale:
        return verdict(judge.STALE, stale), ()
    if not mutant.applied:
        return verdict(judge.NOT_APPLIED, mutant.reason, sites=mutant.sites), ()
    validity = check_mutant(mutant.original, mutant.mutated or "", mutant.file, mutation.lint_is_error)
    if not validity.ok:
        return verdict(judge.BROKEN_VERDICT, validity.problem, broken_cause=validity.cause), validity.warnings
    return None, validity.warnings


def _with_warnings(verdict: Verdict, warnings: tuple[str, ...]) -> Verdict:
    # Recomputed on every run (cheap, static), so a cached verdict shows them too.
    written = list(verdict.extras.get("sandbox_writes", ()))
    wrote = [f"the mutant wrote to {rel} in its sandbox (repaired before the next run)" for rel in written[:5]]
    if len(written) > 5:
        wrote.append(f"... and to {len(written) - 5} more file(s) of its sandbox (repaired)")
    return replace(verdict, extras={**verdict.extras, "warnings": list(warnings) + wrote})


def _check_control_sites(mutations: list[Mutation], mutants: dict[str, Mutant]) -> None:
    """A control must fire at the invariant's site: in the same file, changing a statement
    of the same innermost function or method (an accumulator's start value two lines above
    the accumulation is the same site), or, at module or class level, overlapping its
    statements."""
    for mutation in mutations:
        if not mutation.invariant or mutation.control not in mutants:
            continue
        mine, theirs = mutants[mutation.name], mutants[mutation.control]
        if not (mine.applied and theirs.applied):
            continue  # reported as not-applied; the site cannot be judged
        mine_region = region_of(mine.original, mine.changed_lines)
        theirs_region = region_of(theirs.original, theirs.changed_lines)
        same_function = bool(enclosing_functions(mine.original, mine.changed_lines)
                             & enclosing_functions(theirs.original, theirs.changed_lines))
        if mine.file != theirs.file or not (same_function or mine_region.lines & theirs_region.lines):
            raise mutation.fail(f"control {mutation.control!r} changes {theirs.file} lines "
                                f"{sorted(theirs_region.lines)}, neither in the same function as this "
                                f"mutation's {mine.file} lines {sorted(mine_region.lines)} nor overlapping "
                                "them", "control")


def _check_contract_ids(group: list[Mutation], baseline: Baseline) -> None:
    for mutation in group:
        for key, entries in (("kills", mutation.kills), ("may_kill", mutation.may_kill)):
            for entry in entries:
                if not any(matches(entry, test) for test in baseline.collected):
                    raise mutation.fail(f"{entry!r} matches no collected test (under "
                                        f"{', '.join(mutation.settings.tests)})", key)


# --- the baseline ------------------------------------------------------------------------

def _source_files(files: list[str], settings: GateSettings) -> list[str]:
    def under(rel: str, folder: str) -> bool:
        return folder in (".", "") or rel.startswith(folder.rstrip("/") + "/")

    return [f for f in files if f.endswith(".py")
            and any(under(f, p) for p in settings.paths)
            and not any(under(f, t) or f == t for t in settings.tests)
            and not f.rsplit("/", 1)[-1].startswith(("test_", "conftest"))]


def _run_baseline(root: Path, files: list[str], settings: GateSettings, group: list[Mutation],
                  pool: Pool, scratch: Scratch, options: LabOptions) -> Baseline:
    deselect = tuple(arg for test in settings.exclude for arg in ("--deselect", test))
    # Test files whose imports never reach a mutated file can run none of its code: they
    # need no baseline and no mutant run (imports.py says why this errs towards running).
    keep = {entry.split("::")[0].split("[")[0] for m in group for entry in m.contract_tests()}
    ignored = unreachable_test_files(root, files, settings.tests, settings.paths,
                                     {m.target.path for m in group}, keep)
    runs = max(1, options.baseline_runs)
    # Line coverage only where mutations are: tracing every source file would slow the
    # tests that reach no mutation, which the gate otherwise never needs to run again.
    targets = tuple(sorted({m.target.path for m in group}))
    scenarios = [Scenario(label=f"baseline-{i + 1}", tests=settings.tests + deselect, confine=settings.confine,
                          timeout=options.baseline_timeout, sys_path=settings.paths,
                          coverage_files=targets if i == 0 else (), ignore=tuple(ignored))
                 for i in range(runs)]
    outcomes: list[RunOutcome] = pool.map(scenarios, lambda worker, s: run_scenario(worker, scratch, root, s))
    first = outcomes[0]
    where = f"baseline of {', '.join(settings.tests)}"
    for outcome in outcomes:
        if outcome.escaped:
            raise GateError(f"{where}: the unmutated tests wrote to the working tree: "
                            f"{', '.join(outcome.escaped)} (restored; what they wrote is kept under "
                            f"{displaced_folder(options.cache_dir)})")
        if outcome.status == "timeout":
            raise GateError(f"{where}: the unmutated tests did not finish in {options.baseline_timeout:.0f}s"
                            + (f" (stuck in {outcome.in_progress})" if outcome.in_progress else ""))
        if outcome.collect_errors:
            node, message = outcome.collect_errors[0]
            raise GateError(f"{where}: collection failed in {node or 'the session'}: "
                            f"{message.splitlines()[-1] if message else ''}")
        if not outcome.finished:
            raise GateError(f"{where}: pytest ended without a report; log tail: {outcome.log_tail[-500:]}")
        if not outcome.collected:
            raise GateError(f"{where}: no tests collected")
    # Flakes first: a test red in one run and green in another is a flake, not a red baseline.
    flaky = sorted({t for o in outcomes[1:] for t, r in o.tests.items()
                    if t in first.tests and first.tests[t].outcome != r.outcome}
                   | {t for o in outcomes[1:] for t in set(o.collected) ^ set(first.collected)})
    if flaky:
        raise GateError(f"{where}: flaky test(s), outcome differs between baseline runs: "
                        + ", ".join(flaky) + "; fix them or list them in [gate] exclude", field="exclude")
    for outcome in outcomes:
        if outcome.red:
            names = ", ".join(sorted(outcome.red))
            raise GateError(f"{where} is red, so no verdict could mean anything; failing: {names}")
    durations = {t: max(o.tests[t].duration for o in outcomes if t in o.tests) for t in first.tests}
    wall = max(o.wall for o in outcomes[1:] or outcomes)  # the run without coverage is the honest one
    overhead = max(wall - sum(durations.values()), 0.2)
    sources = set(_source_files(files, settings))
    imported = tuple(sorted(f for f in first.imported if f in sources))
    return Baseline(settings, first.collected, durations, overhead, first.coverage or {}, runs, wall,
                    imported, tuple(ignored))


# --- one mutant ----------------------------------------------------------------------------

def _select(mutation: Mutation, mutant: Mutant, baseline: Baseline) -> tuple[tuple[str, ...], str, Region]:
    region = region_of(mutant.original, mutant.changed_lines)
    contract = {t for t in baseline.collected if any(matches(e, t) for e in mutation.contract_tests())}
    if region.import_time:
        return baseline.collected, "all tests: the change runs at import", region
    file_coverage = baseline.coverage.get(mutant.file)
    if file_coverage is None:
        return baseline.collected, "all tests: no coverage was recorded for the target file", region
    if region.lines.intersection(file_coverage.get("", ())):
        # A function that runs while tests are collected (say, to build parameters) changes
        # what exists to run: treat it like import-time code.
        return baseline.collected, "all tests: the change runs while tests are collected", \
            Region(region.lines, True)
    reaching = set(region.reached_by(file_coverage))
    chosen = tuple(t for t in baseline.collected if t in reaching or t in contract)
    return chosen, f"{len(reaching)} test(s) reach the change, plus the contract", region


def _timeout(mutation: Mutation, baseline: Baseline, selected: tuple[str, ...]) -> tuple[float, float]:
    unmutated = baseline.overhead + sum(baseline.durations.get(t, 0.0) for t in selected)
    explicit = mutation.timeout or mutation.settings.timeout
    return (explicit if explicit else max(MIN_TIMEOUT, TIMEOUT_FACTOR * unmutated)), unmutated


def _run_mutant(root: Path, worker, scratch: Scratch, job, options: LabOptions):
    mutation, mutant, baseline = job
    selected, selection, original_region = _select(mutation, mutant, baseline)
    timeout, unmutated = _timeout(mutation, baseline, selected)
    base = {"selected": selected, "selection": selection}
    deps = _deps(root, baseline, selected)
    if not selected:
        verdict = Verdict(name=mutation.name, verdict=judge.UNEVIDENCED,
                          detail="no test executes the mutated code, so nothing proves it invisible",
                          **base)
        return verdict, deps
    module = module_name(mutant.file, mutation.settings.paths)
    scenario = Scenario(label=f"mutant-{mutation.name}", tests=selected, timeout=timeout,
                        confine=mutation.settings.confine,
                        sys_path=mutation.settings.paths, writes=((mutant.file, mutant.mutated or ""),),
                        coverage_files=(mutant.file,), mutated_file=mutant.file, expect_module=module,
                        # Tracing costs; a change that does not run at import is only reached
                        # by tests, so tracing starts once collection is done.
                        coverage_after_collection=not original_region.import_time)
    if options.confirm:
        kills = tuple(t for t in selected if any(matches(e, t) for e in mutation.kills))
        scenario = replace(scenario, confirm_kills=kills)
    run = run_to_completion(worker, scratch, root, scenario)
    mutant_region = region_of(mutant.mutated or "", mutant.mutant_changed_lines)
    file_coverage = (run.coverage or {}).get(mutant.file)
    confirm = run.confirmation if run.status == "done" and run.finished else None
    if confirm is not None:
        run = replace(run, wall=max(run.wall - confirm.wall, 0.0))
    reached_by = set(mutant_region.reached_by(file_coverage))
    if run.untraced:
        # A session that died lost its coverage. Up to the first changed statement the
        # mutant runs what the original runs, so a test reaches the change in the mutant
        # exactly when it reaches the changed statements in the baseline.
        reached_by |= set(original_region.reached_by(baseline.coverage.get(mutant.file))) & run.untraced
    evidence = Evidence(run=run, confirm=confirm,
                        reached_by=tuple(sorted(reached_by)),
                        region_executed=mutant_region.executed_at_all(file_coverage),
                        import_time=mutant_region.import_time or original_region.import_time,
                        timeout=timeout, selected_baseline_seconds=unmutated)
    return judge.judge_run(mutation, evidence, base), deps


def _deps(root: Path, baseline: Baseline, selected: tuple[str, ...]) -> dict[str, Any]:
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
    return dependencies(root, executed)


# --- cache round trip ----------------------------------------------------------------------

def _verdict_to_json(verdict: Verdict) -> dict[str, Any]:
    return asdict(verdict)


def _verdict_from_json(data: dict[str, Any]) -> Verdict:
    from killmap.judge import RedTest
    data = dict(data)
    data["red"] = tuple(RedTest(**r) for r in data.get("red", ()))
    for key in ("expected", "missing", "unexpected", "reached_by", "selected"):
        data[key] = tuple(data.get(key, ()))
    data["cached"] = True
    return Verdict(**data)
