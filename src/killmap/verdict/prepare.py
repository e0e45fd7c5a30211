"""Before anything runs: each mutation's mutant, remembered or built, and what is known of
it without a run (stale pin, not applied, broken), and whether each invariant's control
fires at its site. The lab (lab.py) calls these while the early baseline's baseline runs.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from killmap.catalog.reader import Mutation
from killmap.errors import GateError
from killmap.mutate.mutant import Mutant
from killmap.mutate.pins import check_pins
from killmap.mutate.validity.check import Validity, check_mutant
from killmap.verdict import judge
from killmap.verdict.cache import VerdictCache
from killmap.verdict.judge import Verdict
from killmap.verdict.reach import enclosing_functions, headed_classes, region_of

if TYPE_CHECKING:
    from killmap.mutate.mutants import Sources


class MutantBuilder:
    """The operators' parsed sources, parsed (and libcst imported) only when a mutant must
    be built: a fully cached run needs neither."""

    def __init__(self, root: Path):
        self.root = root
        self._sources: Sources | None = None

    def build(self, mutation: Mutation) -> Mutant:
        from killmap.mutate.mutants import Sources, build_mutant

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


def remembered_mutant(root: Path, mutation: Mutation, cache: VerdictCache | None) -> Mutant | None:
    """The mutant, when the same operator already ran on the same text; else None."""
    found = _mutant_key(root, mutation) if cache is not None else None
    if cache is None or found is None:
        return None
    key, text = found
    known = cache.mutant(key)
    if known is None:
        return None
    return Mutant(
        mutation,
        mutation.target.path,
        text,
        known["mutated"],
        known["sites"],
        known["reason"],
        known["target_sha256"],
        tuple(known["changed_lines"]),
        tuple(known["mutant_changed_lines"]),
        known["target_pin"],
    )


def mutant_to_show(root: Path, mutation: Mutation, cache_dir: Path | None = None) -> Mutant:
    """The mutant, for a command that only shows it: the one a gate run remembered for this
    very text (no libcst import, no parse), or built now. The cache is only read."""
    return remembered_mutant(root, mutation, VerdictCache(root, cache_dir)) or MutantBuilder(root).build(mutation)


def build_and_remember(root: Path, mutation: Mutation, sources: MutantBuilder, cache: VerdictCache | None) -> Mutant:
    """The mutant, built, and remembered in the cache for the next run."""
    found = _mutant_key(root, mutation) if cache is not None else None
    if cache is None or found is None:
        return sources.build(mutation)
    key, _ = found
    mutant = sources.build(mutation)
    cache.store_mutant(
        key,
        {
            "mutated": mutant.mutated,
            "sites": mutant.sites,
            "reason": mutant.reason,
            "target_sha256": mutant.target_sha256,
            "changed_lines": list(mutant.changed_lines),
            "mutant_changed_lines": list(mutant.mutant_changed_lines),
            "target_pin": mutant.target_pin,
        },
    )
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
    cache.store_mutant(
        key,
        {"ok": validity.ok, "problem": validity.problem, "cause": validity.cause, "warnings": list(validity.warnings)},
    )
    return validity


def static_verdict(
    root: Path, mutation: Mutation, mutant: Mutant, cache: VerdictCache | None = None
) -> tuple[Verdict | None, tuple[str, ...]]:
    """The verdict known before anything runs, if any, and the mutant's dead-code warnings."""

    def verdict(kind: str, detail: str, **extras: Any) -> Verdict:
        return Verdict(name=mutation.name, verdict=kind, detail=detail, expected=mutation.kills, extras=extras)

    stale = check_pins(root, mutation, mutant)
    if stale:
        return verdict(judge.STALE, stale), ()
    if not mutant.applied:
        return verdict(judge.NOT_APPLIED, mutant.reason, sites=mutant.sites), ()
    validity = _validity(mutant, mutation.lint_is_error, cache)
    if not validity.ok:
        return verdict(judge.BROKEN_VERDICT, validity.problem, broken_cause=validity.cause), validity.warnings
    return None, validity.warnings


def with_warnings(verdict: Verdict, warnings: tuple[str, ...]) -> Verdict:
    # Recomputed on every run (cheap, static), so a cached verdict shows them too.
    written = list(verdict.extras.get("sandbox_writes", ()))
    wrote = [f"the mutant wrote to {rel} in its sandbox (repaired before the next run)" for rel in written[:5]]
    if len(written) > 5:
        wrote.append(f"... and to {len(written) - 5} more file(s) of its sandbox (repaired)")
    return replace(verdict, extras={**verdict.extras, "warnings": list(warnings) + wrote})


def check_control_sites(mutations: list[Mutation], mutants: dict[str, Mutant]) -> None:
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
        same_function = bool(
            enclosing_functions(mine.original, mine.changed_lines)
            & enclosing_functions(theirs.original, theirs.changed_lines)
        )
        same_class = any(
            first <= line <= last
            for first, last in headed_classes(mine.original, mine.changed_lines)
            for line in theirs.changed_lines
        )
        if mine.file != theirs.file or not (same_function or same_class or mine_region.lines & theirs_region.lines):
            problems.append(
                mutation.fail(
                    f"control {mutation.control!r} changes {theirs.file} lines "
                    f"{sorted(theirs_region.lines)}, neither in the same function as this "
                    f"mutation's {mine.file} lines {sorted(mine_region.lines)} nor overlapping "
                    "them",
                    "control",
                )
            )
    return problems
