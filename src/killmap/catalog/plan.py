"""The plan of a run: its options, and which mutations of the catalogs it takes.

Kept apart from the lab so that commands that only read catalogs (list, show, pin, check,
merge) start without importing the engine, pytest or the judge.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from killmap.catalog.reader import Catalog, Mutation, discover_catalogs, load_catalogs
from killmap.errors import GateError


@dataclass(frozen=True)
class LabOptions:
    catalogs: tuple[Path, ...] = ()
    only: tuple[str, ...] = ()
    names: tuple[str, ...] | None = None  # a pre-filtered set (e.g. from --changed)
    jobs: int = max(os.cpu_count() or 1, 1)
    use_cache: bool = True
    cache_dir: Path | None = None
    baseline_runs: int = 2
    baseline_timeout: float = 900.0
    confirm: bool = True
    shard: tuple[int, int] | None = None  # (k, n), 1-based
    # Only these tests (node ids or prefixes) run under each mutant: "which defects does
    # this test catch?" asks about one test, not about the contract.
    focus: tuple[str, ...] | None = None
    swap: bool = True  # run swappable mutants in a fork of the collected session
    tracer: str = "auto"  # the baseline's line recorder: auto (sys.monitoring on 3.12+) or coverage


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
        mutations = shard_mutations(mutations, *options.shard)
    if options.names is not None:
        wanted = set(options.names) | {m.control for m in mutations if m.name in options.names and m.control}
        mutations = [m for m in mutations if m.name in wanted]
    return catalogs, mutations


def shard_mutations(mutations: list[Mutation], k: int, n: int) -> list[Mutation]:
    """Deal mutations round-robin in catalog order; an invariant stays with its control,
    since it is judged against the control's verdict in the same run."""
    group_of: dict[str, int] = {}
    groups: list[list[str]] = []
    by_name = {m.name: m for m in mutations}
    for mutation in mutations:
        partner = mutation.control if mutation.invariant else None
        home = group_of.get(partner) if partner else None
        if home is None:
            home = next(
                (
                    group_of[m.name]
                    for m in mutations
                    if m.invariant and m.control == mutation.name and m.name in group_of
                ),
                None,
            )
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
