"""Before anything runs: the verdict a mutant gets without a run (stale pin, not applied,
broken: mutate/memo.py finds out which), its warnings, and whether each invariant's control
fires at its site. The lab (lab.py) calls these while the early baseline's baseline runs.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from killmap.catalog.reader import Mutation
from killmap.errors import GateError
from killmap.mutate.memo import MutantBuilder, Prepared, remembered_mutant
from killmap.mutate.mutant import Mutant
from killmap.verdict import judge
from killmap.verdict.cache import VerdictCache
from killmap.verdict.judge import Verdict
from killmap.verdict.reach import enclosing_functions, headed_classes, region_of
from killmap.wording import counted


def mutant_to_show(root: Path, mutation: Mutation, cache_dir: Path | None = None) -> Mutant:
    """The mutant, for a command that only shows it: the one a gate run remembered for this
    very text (no libcst import, no parse), or built now. The cache is only read."""
    return remembered_mutant(root, mutation, VerdictCache(root, cache_dir).mutants) or MutantBuilder(root).build(
        mutation
    )


def static_verdict(mutation: Mutation, prepared: Prepared) -> tuple[Verdict | None, tuple[str, ...]]:
    """The verdict known before anything runs, if any, and the mutant's dead-code warnings."""

    def verdict(kind: str, detail: str, **extras: Any) -> Verdict:
        return Verdict(name=mutation.name, verdict=kind, detail=detail, expected=mutation.kills, extras=extras)

    mutant, validity = prepared.mutant, prepared.validity
    if prepared.stale:
        return verdict(judge.STALE, prepared.stale), ()
    if not mutant.applied:
        return verdict(judge.NOT_APPLIED, mutant.reason, sites=mutant.sites), ()
    assert validity is not None  # checked for every applied mutant whose pins hold (memo.prepared_mutant)
    if not validity.ok:
        return verdict(judge.BROKEN_VERDICT, validity.problem, broken_cause=validity.cause), validity.warnings
    return None, validity.warnings


def with_warnings(verdict: Verdict, warnings: tuple[str, ...]) -> Verdict:
    # Recomputed on every run (cheap, static), so a cached verdict shows them too.
    written = list(verdict.extras.get("sandbox_writes", ()))
    wrote = [f"the mutant wrote to {rel} in its sandbox (repaired before the next run)" for rel in written[:5]]
    if len(written) > 5:
        wrote.append(f"... and to {counted(len(written) - 5, 'more file')} of its sandbox (repaired)")
    left = list(verdict.extras.get(judge.LEFT_BY_STOPPED_TEST, ()))
    if left:
        wrote.append(
            f"the test its limit stopped left {counted(len(left), 'file')} in its sandbox, its teardown never "
            f"run (first: {left[0]}; repaired before the next run)"
        )
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
