"""Which shard runs which item, for `run --shard` and `sweep --shard`: the same on every runner.

Every runner computes the whole split and keeps its own part, so the split is made only from
what all runners share: the items (catalog mutations or sweep mutants, by their stable ids),
the groups that must stay together (an invariant with its control), and the durations of an
earlier report given with --durations; never from one runner's local cache. It ignores the
order the items come in: ties are broken by id.

With durations, groups go longest first, each to the shard with the least work so far (LPT);
an item the report does not know costs the median of those it does. Without any, groups are
dealt round-robin in the order of their ids. Each shard's report records the split's digest,
so `merge` can refuse shards that were cut from different splits.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from killmap.errors import GateError

TIME, ROUND_ROBIN = "time", "round-robin"


@dataclass(frozen=True)
class Split:
    shards: int
    method: str  # TIME or ROUND_ROBIN
    assignment: tuple[tuple[str, int], ...]  # (item id, 0-based shard), sorted by id
    loads: tuple[float, ...]  # the predicted seconds per shard; zeros for round-robin

    def members(self, k: int) -> frozenset[str]:
        """The ids of shard k (1-based)."""
        return frozenset(item for item, shard in self.assignment if shard == k - 1)

    @property
    def digest(self) -> str:
        text = f"{self.shards}\n" + "".join(f"{item}\t{shard}\n" for item, shard in self.assignment)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def describe(self, k: int) -> dict[str, object]:
        """What a shard's report records about the split it ran."""
        return {"shard": f"{k}/{self.shards}", "method": self.method, "digest": self.digest}


def split_items(groups: Sequence[Sequence[str]], shards: int, durations: Mapping[str, float] | None = None) -> Split:
    """Groups of item ids (each group goes to one shard) dealt over `shards` shards."""
    canonical = sorted(tuple(sorted(group)) for group in groups if group)
    known = [durations[item] for group in canonical for item in group if durations and item in durations]
    if not known:
        home = {group: index % shards for index, group in enumerate(canonical)}
        return _split(shards, ROUND_ROBIN, home, [0.0] * shards)
    median = statistics.median(known)
    assert durations is not None  # known is empty without them
    cost = {group: sum(durations.get(item, median) for item in group) for group in canonical}
    loads = [0.0] * shards
    heap = [(0.0, shard) for shard in range(shards)]  # (work so far, shard): ties to the lower shard
    home = {}
    for group in sorted(canonical, key=lambda g: (-cost[g], g)):
        load, shard = heapq.heappop(heap)
        home[group] = shard
        loads[shard] = load + cost[group]
        heapq.heappush(heap, (loads[shard], shard))
    return _split(shards, TIME, home, loads)


def _split(shards: int, method: str, home: dict[tuple[str, ...], int], loads: list[float]) -> Split:
    assignment = tuple(sorted((item, shard) for group, shard in home.items() for item in group))
    return Split(shards, method, assignment, tuple(round(load, 4) for load in loads))


def read_durations(path: Path, kind: str) -> dict[str, float]:
    """Seconds per item from an earlier report: `kind` "run" reads killmap.json (by mutation
    name), "sweep" reads killmap-sweep.json (by mutant id)."""
    schema, field = ("killmap-report/1" if kind == "run" else "killmap-sweep/1"), "--durations"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GateError(f"cannot read the report: {exc}", file=str(path), field=field) from None
    if not isinstance(doc, dict) or doc.get("schema") != schema:
        raise GateError(f"{kind} --durations takes a {schema} report", file=str(path), field=field)
    entries = doc["mutations"] if kind == "run" else doc.get("sweep", {}).get("mutants", [])
    key = "name" if kind == "run" else "id"
    try:
        durations = {str(e[key]): float(e["duration_seconds"]) for e in entries}
    except (KeyError, TypeError, ValueError):
        raise GateError("an entry has no name or duration_seconds", file=str(path), field=field) from None
    # NaN compares false with everything: the split and the dispatch order would then hang on
    # the order entries come in, and differ between runners.
    bad = next((item for item, seconds in durations.items() if not (math.isfinite(seconds) and seconds >= 0)), None)
    if bad is not None:
        raise GateError(
            f"{bad}: duration_seconds must be a finite, non-negative number of seconds, not {durations[bad]}",
            file=str(path),
            field=field,
        )
    return durations


def refuse_mixed_splits(splits: Sequence[tuple[Path, str | None]]) -> None:
    """Shard reports cut from different splits do not join: some items ran twice, others never."""
    digests = {digest for _, digest in splits}
    if len(digests) > 1:
        named = ", ".join(f"{path} ({digest or 'no split'})" for path, digest in splits)
        raise GateError(f"these shards were cut from different splits: {named}; run every shard with the same inputs")


def names_in_short(names: Sequence[str], limit: int = 5) -> str:
    """Names for a one-line error: the first few, and how many more."""
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")
