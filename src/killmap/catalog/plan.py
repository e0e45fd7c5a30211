"""The plan of a run: its options, and which mutations of the catalogs it takes.

Kept apart from the lab so that commands that only read catalogs (list, show, pin, check,
merge) start without importing the engine, pytest or the judge.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from killmap.catalog.entries import did_you_mean
from killmap.catalog.reader import Catalog, Mutation, discover_catalogs, load_catalogs
from killmap.catalog.shards import Split, read_durations, split_items
from killmap.errors import GateError

# The gate's seed when `--seed` names none (docs/randomized.md); pytest-randomly's since
# before there was a --seed.
DEFAULT_SEED = 20261201


@dataclass(frozen=True)
class LabOptions:
    catalogs: tuple[Path, ...] = ()
    only: tuple[str, ...] = ()
    names: tuple[str, ...] | None = None  # a pre-filtered set (e.g. from --changed)
    jobs: int = max(os.cpu_count() or 1, 1)
    use_cache: bool = True  # reuse cached verdicts and mutants (--no-cache: not)
    write_cache: bool = True  # store this run's verdicts and mutants (--no-cache-write: not)
    cache_dir: Path | None = None
    baseline_runs: int = 2
    baseline_timeout: float = 900.0
    confirm: bool = True
    shard: tuple[int, int] | None = None  # (k, n), 1-based
    durations: Path | None = None  # an earlier report whose durations balance the shards
    # Only these tests (node ids or prefixes) run under each mutant: "which defects does
    # this test catch?" asks about one test, not about the contract.
    focus: tuple[str, ...] | None = None
    swap: bool = True  # run swappable mutants in a fork of the collected session
    tracer: str = "auto"  # the baseline's line recorder: auto (sys.monitoring on 3.12+) or coverage
    # What randomized suites draw from (Hypothesis, pytest-randomly): an int, or None for
    # `--seed random` (engine/inrun/foreign_plugins.py).
    seed: int | None = DEFAULT_SEED


@dataclass(frozen=True)
class Plan:
    """What a run takes from its catalogs, each file read once: the catalogs, the mutations
    selected, the split a shard was cut from (None without --shard), and the seconds each
    mutation took in the report --durations names (None without it)."""

    catalogs: list[Catalog]
    mutations: list[Mutation]
    split: Split | None
    durations: dict[str, float] | None

    @property
    def named(self) -> int:
        """How many mutations the catalogs name, selected or not."""
        return sum(len(c.mutations) for c in self.catalogs)


def load(
    root: Path, options: LabOptions, entry_errors: list[GateError] | None = None
) -> tuple[list[Catalog], list[Mutation]]:
    """`entry_errors`: as load_catalogs takes it (`check`: every entry's error, not the first)."""
    plan = read_plan(root, options, entry_errors)
    return plan.catalogs, plan.mutations


def read_plan(root: Path, options: LabOptions, entry_errors: list[GateError] | None = None) -> Plan:
    """The catalogs, and the mutations --only selects (an invariant brings its control), then
    the shard, then `names` (--changed) keeps."""
    paths = list(options.catalogs) or discover_catalogs(root)
    catalogs = load_catalogs(root, [p if p.is_absolute() else (Path.cwd() / p) for p in paths], entry_errors)
    mutations = [m for c in catalogs for m in c.mutations]
    known = {m.name for m in mutations}
    for name in options.only:
        if name not in known:
            raise GateError(
                f"--only {name!r} names no mutation in the catalog(s){did_you_mean(name, known)}", field="--only"
            )
    if options.only:
        wanted = set(options.only)
        # An invariant needs its control in the same run, so the control comes along.
        wanted |= {m.control for m in mutations if m.name in wanted and m.control}
        mutations = [m for m in mutations if m.name in wanted]
    durations = recorded_durations(options)
    split = None
    if options.shard is not None:
        split = split_mutations(mutations, options.shard[1], durations)
        chosen = split.members(options.shard[0])
        mutations = [m for m in mutations if m.name in chosen]
    if options.names is not None:
        wanted = set(options.names) | {m.control for m in mutations if m.name in options.names and m.control}
        mutations = [m for m in mutations if m.name in wanted]
    return Plan(catalogs, mutations, split, durations)


def shard_mutations(
    mutations: list[Mutation], k: int, n: int, durations: Mapping[str, float] | None = None
) -> list[Mutation]:
    """Shard k of n (shards.py: by time with durations, else round-robin); an invariant
    stays with its control, since it is judged against the control's verdict in the same run."""
    chosen = split_mutations(mutations, n, durations).members(k)
    return [m for m in mutations if m.name in chosen]


def split_mutations(mutations: list[Mutation], n: int, durations: Mapping[str, float] | None = None) -> Split:
    return split_items(_groups(mutations), n, durations)


def recorded_durations(options: LabOptions) -> dict[str, float] | None:
    """Seconds per mutation from the report --durations names, if any."""
    return read_durations(options.durations, "run") if options.durations is not None else None


def _groups(mutations: list[Mutation]) -> list[list[str]]:
    """The mutations that must share a shard: an invariant and its control."""
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
    return groups
