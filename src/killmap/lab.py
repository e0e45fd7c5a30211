"""The lab: from catalogs to verdicts. Baseline first, then every mutant, in parallel.

Path of one mutation: catalog entry -> mutant text (mutants) -> static validity
(validity) -> pin check (pins) -> cache lookup (cache) -> baseline-derived test
selection and timeout (reach) -> run in a warm worker's sandbox (runner) -> confirmation
re-run -> verdict (judge) -> reports. See docs/DESIGN.md.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from killmap import judge
from killmap.baseline import Baseline, check_contract_ids, run_baseline
from killmap.cache import VerdictCache, test_files_digest
from killmap.catalog import GateSettings, Mutation
from killmap.errors import GateError
from killmap.engine import Engine, memory_limit
from killmap.headstart import HeadStart
from killmap.judge import Verdict
from killmap.mutant import Mutant
from killmap.pins import check_pins
from killmap.plan import LabOptions, load
from killmap.project import check_targets_copied, project_files
from killmap.reach import enclosing_functions, headed_classes, region_of
from killmap.trial import expected_seconds, run_mutant, select_tests
from killmap.validity import Validity, check_mutant


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


def run_lab(root: Path, options: LabOptions, progress: Progress = lambda kind, data: None) -> LabResult:
    """The gate: every selected mutation of the catalogs, to its verdict."""
    _, mutations = load(root, options)
    return run_mutations(root, mutations, options, progress)


def run_mutations(root: Path, mutations: list[Mutation], options: LabOptions,
                  progress: Progress = lambda kind, data: None,
                  mutants: dict[str, Mutant] | None = None) -> LabResult:
    """The engine's interface for every command: these mutations, to their verdicts.

    The mutations need not come from a catalog (try builds one from the command line,
    sweep from mutmut's operators); `mutants` gives prebuilt mutants by name, for
    mutations no catalog operator can rebuild.
    """
    import time
    started = time.perf_counter()
    memory_limit(1)   # a malformed setting is bad input, whether or not anything runs
    files = project_files(root)
    check_targets_copied(mutations, files)
    # A focused run answers another question than the contract: its verdicts are not the gate's.
    cache = VerdictCache(root, options.cache_dir) if options.use_cache and options.focus is None else None
    sources = _Sources(root)
    prebuilt = dict(mutants or {})
    mutants = {}
    decided: dict[str, Verdict] = {}
    warnings: dict[str, tuple[str, ...]] = {}
    keys: dict[str, str] = {}
    digests: dict[GateSettings, str] = {}

    def key_of(mutation: Mutation, mutant: Mutant) -> str:
        if mutation.settings not in digests:
            digests[mutation.settings] = test_files_digest(root, files, mutation.settings.tests)
        return VerdictCache.static_key(mutation.fingerprint(), mutant.diff, digests[mutation.settings])

    def cached_already(mutation: Mutation, mutant: Mutant | None) -> bool:
        return bool(cache and mutant and cache.lookup(mutation.name, key_of(mutation, mutant)) is not None)

    def settle(mutation: Mutation, mutant: Mutant) -> None:
        """The mutant's static verdict or cached one, if it has either."""
        mutants[mutation.name] = mutant
        early, warnings[mutation.name] = _static_verdict(root, mutation, mutant, cache)
        if early is not None:
            decided[mutation.name] = early
            return
        if cache is None:
            return   # the key hashes every test file and the gate's own source: only a cache needs it
        keys[mutation.name] = key_of(mutation, mutant)
        hit = cache.lookup(mutation.name, keys[mutation.name])
        if hit is not None:
            decided[mutation.name] = _verdict_from_json(hit)

    # What is known already costs nothing: prebuilt or remembered mutants, cached verdicts.
    known = {m.name: prebuilt.get(m.name) or _remembered_mutant(root, m, cache) for m in mutations}
    pending = [m for m in mutations if not cached_already(m, known[m.name])]
    head = None
    early: Engine | None = None
    try:
        if pending:
            # Something will run: begin the engine and its baseline while the mutants are
            # built and checked (headstart.py says why the two are independent).
            first = [m for m in pending if m.settings == pending[0].settings]
            early = Engine(root, files, _sandboxes(options, len(pending)), cache_dir=options.cache_dir,
                           tracer=options.tracer)
            head = HeadStart(root, files, first, early, runs=options.baseline_runs,
                             timeout=options.baseline_timeout)
        for mutation in mutations:
            settle(mutation, known[mutation.name] or _mutant(root, mutation, sources, cache))
        _check_control_sites(mutations, mutants)
    except BaseException:
        # Also when ^C lands between the engine's start and the head start's: no worker
        # may outlive the gate.
        if head is not None:
            head.cancel()
        elif early is not None:
            early.close()
        raise
    mutants = {m.name: mutants[m.name] for m in mutations}
    progress("planned", len(mutations))
    announce = _Announcer(mutations, progress)
    for mutation in mutations:
        if mutation.name in decided:
            announce.done(decided[mutation.name])

    to_run = [m for m in mutations if m.name not in decided]
    baselines: list[Baseline] = []
    if not to_run and head is not None:
        head.cancel()   # everything turned out static or cached
    elif to_run:
        engine = head.engine if head is not None else Engine(
            root, files, _sandboxes(options, len(to_run)), cache_dir=options.cache_dir, tracer=options.tracer)
        with engine:
            groups: dict[GateSettings, list[Mutation]] = {}
            for mutation in to_run:
                groups.setdefault(mutation.settings, []).append(mutation)
            for settings, group in groups.items():
                progress("baseline", settings)
                if head is not None and head.covers(group):
                    baseline = head.baseline()
                else:
                    if head is not None:
                        head.wait()   # one user of the workers at a time; its baseline is not needed
                    baseline = run_baseline(root, files, settings, group, engine, runs=options.baseline_runs,
                                            timeout=options.baseline_timeout)
                baselines.append(baseline)
                check_contract_ids(group, baseline)
                progress("baseline-done", baseline)
                # Dearest first (the classic rule for sharing jobs among workers): a long
                # run started last would leave the other workers idle while it finishes.
                # Results come back per job, and verdicts are listed in catalog order.
                selections = {m.name: select_tests(m, mutants[m.name], baseline) for m in group}
                jobs_for_group = sorted(((m, mutants[m.name], baseline) for m in group),
                                        key=lambda job: -expected_seconds(selections[job[0].name][0], baseline))

                def on_done(job, result):
                    announce.done(result[0])

                results = engine.map(jobs_for_group,
                                     lambda worker, job: run_mutant(root, engine, worker, job,
                                                                    confirm=options.confirm,
                                                                    focus=options.focus,
                                                                    swap=options.swap,
                                                                    selection=selections[job[0].name]),
                                     on_done)
                for (mutation, mutant, _), (verdict, deps) in zip(jobs_for_group, results):
                    decided[mutation.name] = verdict
                    # A run that wrote where it must not proved something about a tree that
                    # was not pristine: never reuse its verdict.
                    tainted = verdict.verdict == judge.ESCAPED or verdict.extras.get("sandbox_writes")
                    if cache is not None and not tainted and verdict.verdict not in (judge.FLAKY, judge.INCONCLUSIVE):
                        cache.store(mutation.name, keys[mutation.name], deps, _verdict_to_json(verdict))
    # Controls are judged last: an invariant holds only if its control held in this run.
    for mutation in mutations:
        if mutation.invariant and mutation.name in decided:
            decided[mutation.name] = judge.judge_control(mutation, decided[mutation.name],
                                                         decided.get(mutation.control or ""))
    announce.rest()
    if cache is not None:
        cache.save()
    verdicts = [_with_warnings(decided[m.name], warnings[m.name]) for m in mutations]
    # Sandboxes actually used: none when every verdict came from the cache or was static.
    return LabResult(verdicts, mutants, baselines, time.perf_counter() - started,
                     min(options.jobs, len(to_run)))


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


class _Sources:
    """The operators' parsed sources, parsed (and libcst imported) only when a mutant must
    be built: a fully cached run needs neither."""

    def __init__(self, root: Path):
        self.root = root
        self._sources = None

    def build(self, mutation: Mutation) -> Mutant:
        from killmap.mutants import Sources, build_mutant
        if self._sources is None:
            self._sources = Sources(self.root)
        return build_mutant(self.root, mutation, self._sources)


def _mutant_key(root: Path, mutation: Mutation) -> tuple[str, str] | None:
    """(the memo key, the target's text), or None when a file cannot be read (the builder
    reports that itself)."""
    try:
        text = (root / mutation.target.path).read_text(encoding="utf-8")
        patch = mutation.param("patch")
        patch_text = (root / patch).read_text(encoding="utf-8") if patch else None
    except (OSError, UnicodeDecodeError):
        return None
    return VerdictCache.mutant_key(mutation, text, patch_text), text


def _remembered_mutant(root: Path, mutation: Mutation, cache: VerdictCache | None) -> Mutant | None:
    """The mutant, when the same operator already ran on the same text; else None."""
    found = _mutant_key(root, mutation) if cache is not None else None
    if found is None:
        return None
    key, text = found
    known = cache.mutant(key)
    if known is None:
        return None
    return Mutant(mutation, mutation.target.path, text, known["mutated"], known["sites"], known["reason"],
                  known["target_sha256"], tuple(known["changed_lines"]),
                  tuple(known["mutant_changed_lines"]), known["target_pin"])


def mutant_to_show(root: Path, mutation: Mutation, cache_dir: Path | None = None) -> Mutant:
    """The mutant, for a command that only shows it: the one a gate run remembered for this
    very text (no libcst import, no parse), or built now. The cache is only read."""
    return _remembered_mutant(root, mutation, VerdictCache(root, cache_dir)) or _Sources(root).build(mutation)


def _mutant(root: Path, mutation: Mutation, sources: _Sources, cache: VerdictCache | None) -> Mutant:
    """The mutant, built, and remembered in the cache for the next run."""
    found = _mutant_key(root, mutation) if cache is not None else None
    if found is None:
        return sources.build(mutation)
    key, _ = found
    mutant = sources.build(mutation)
    cache.store_mutant(key, {"mutated": mutant.mutated, "sites": mutant.sites, "reason": mutant.reason,
                             "target_sha256": mutant.target_sha256, "changed_lines": list(mutant.changed_lines),
                             "mutant_changed_lines": list(mutant.mutant_changed_lines),
                             "target_pin": mutant.target_pin})
    return mutant


def _validity(mutant: Mutant, werror: bool, cache: VerdictCache | None) -> Validity:
    """pyflakes over the mutant, remembered with the mutant: it is a pure function of the two
    texts, and the slowest step of a fully cached run."""
    if cache is None:
        return check_mutant(mutant.original, mutant.mutated or "", mutant.file, werror)
    key = VerdictCache.validity_key(mutant.original, mutant.mutated or "", mutant.file, werror)
    known = cache.mutant(key)
    if known is not None:
        return Validity(known["ok"], known["problem"], known["cause"], tuple(known["warnings"]))
    validity = check_mutant(mutant.original, mutant.mutated or "", mutant.file, werror)
    cache.store_mutant(key, {"ok": validity.ok, "problem": validity.problem, "cause": validity.cause,
                             "warnings": list(validity.warnings)})
    return validity


def _static_verdict(root: Path, mutation: Mutation, mutant: Mutant,
                    cache: VerdictCache | None = None) -> tuple[Verdict | None, tuple[str, ...]]:
    """The verdict known before anything runs, if any, and the mutant's dead-code warnings."""
    def verdict(kind: str, detail: str, **extras: Any) -> Verdict:
        return Verdict(name=mutation.name, verdict=kind, detail=detail, expected=mutation.kills,
                       extras=extras)

    stale = check_pins(root, mutation, mutant)
    if stale:
        return verdict(judge.STALE, stale), ()
    if not mutant.applied:
        return verdict(judge.NOT_APPLIED, mutant.reason, sites=mutant.sites), ()
    validity = _validity(mutant, mutation.lint_is_error, cache)
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
    """A gate stops at the first control at another site (one line, exit 2)."""
    problems = control_site_problems(mutations, mutants)
    if problems:
        raise problems[0]


def control_site_problems(mutations: list[Mutation], mutants: dict[str, Mutant]) -> list[GateError]:
    """Every invariant whose control does not fire at its site. A control must change, in
    the same file, a statement of the same innermost function or method (an accumulator's
    start value two lines above the accumulation is the same site); or, for an invariant in
    a class's header (a decorator such as `@dataclass(...)`, a base), anything inside that
    class; or, at module or class level, overlap its statements. `killmap check` reports
    them all."""
    problems = []
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
        same_class = any(first <= line <= last for first, last in headed_classes(mine.original, mine.changed_lines)
                         for line in theirs.changed_lines)
        if mine.file != theirs.file or not (same_function or same_class or mine_region.lines & theirs_region.lines):
            problems.append(mutation.fail(f"control {mutation.control!r} changes {theirs.file} lines "
                                f"{sorted(theirs_region.lines)}, neither in the same function as this "
                                f"mutation's {mine.file} lines {sorted(mine_region.lines)} nor overlapping "
                                "them", "control"))
    return problems


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
    data["duration"] = 0.0  # a reused verdict cost no run (the README: 0 when cached)
    return Verdict(**data)
