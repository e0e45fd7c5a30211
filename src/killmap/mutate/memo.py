"""Each mutation's mutant, built or remembered, and what is known of it before anything runs:
whether its pins hold, and whether it can run as written.

Building a mutant costs a libcst parse and transform, and checking it pyflakes over both
texts: most of a fully cached run. The same operator on the same target text (and patch)
gives the same mutant, and the same two texts the same validity, so both are remembered
under a key of everything they are a pure function of, the gate's own code and versions
among it (`env`). The table is kept in the verdict cache's file, which hands it here and
saves it (verdict/cache.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from killmap.catalog.reader import Mutation
from killmap.mutate.mutant import Mutant
from killmap.mutate.pins import check_pins
from killmap.mutate.validity.check import Validity, check_mutant

if TYPE_CHECKING:
    from killmap.mutate.mutants import Sources


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


class MutantMemo:
    """The mutants and validities of earlier runs, by what makes them. `reads`: reuse what it
    holds (--no-cache: nothing)."""

    # Mutants, by what makes them: building one costs a libcst parse and transform, which is
    # most of a fully cached run; the same operator on the same file text gives the same mutant.
    MUTANT_ENTRIES = 2000

    def __init__(self, entries: dict[str, Any], env: Callable[[], dict[str, str]], *, reads: bool = True):
        self.entries = entries  # the cache file's entries: the table is its "#mutants"
        self.env = env  # the gate's own code and versions, worked out once asked
        self.reads = reads

    def mutant_key(self, mutation, text: str, patch_text: str | None) -> str:
        return _digest(
            {
                "target": str(mutation.target),
                "op": mutation.op,
                "params": [list(p) for p in mutation.params],
                "count": mutation.count,
                "text": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                "patch": patch_text,
                "env": self.env(),
            }
        )

    def validity_key(self, original: str, mutated: str, file: str, werror: bool) -> str:
        return _digest(
            {
                "original": hashlib.sha256(original.encode("utf-8")).hexdigest(),
                "mutated": hashlib.sha256(mutated.encode("utf-8")).hexdigest(),
                "file": file,
                "werror": werror,
                "env": self.env(),
            }
        )

    def recall(self, key: str) -> dict[str, Any] | None:
        return self.entries.get("#mutants", {}).get(key) if self.reads else None

    def keep(self, key: str, fields: dict[str, Any]) -> None:
        mutants = self.entries.setdefault("#mutants", {})
        mutants.pop(key, None)
        mutants[key] = fields
        while len(mutants) > self.MUTANT_ENTRIES:
            mutants.pop(next(iter(mutants)))


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


def _mutant_key(root: Path, mutation: Mutation, memo: MutantMemo) -> tuple[str, str] | None:
    """(the memo key, the target's text), or None when a file cannot be read (the builder
    reports that itself)."""
    try:
        text = (root / mutation.target.path).read_text(encoding="utf-8")
        patch = mutation.param("patch")
        patch_text = (root / patch).read_text(encoding="utf-8") if patch else None
    except (OSError, UnicodeDecodeError):
        return None
    return memo.mutant_key(mutation, text, patch_text), text


def remembered_mutant(root: Path, mutation: Mutation, memo: MutantMemo | None) -> Mutant | None:
    """The mutant, when the same operator already ran on the same text; else None."""
    found = _mutant_key(root, mutation, memo) if memo is not None else None
    if memo is None or found is None:
        return None
    key, text = found
    known = memo.recall(key)
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


def build_and_remember(root: Path, mutation: Mutation, sources: MutantBuilder, memo: MutantMemo | None) -> Mutant:
    """The mutant, built, and remembered in the cache for the next run."""
    found = _mutant_key(root, mutation, memo) if memo is not None else None
    if memo is None or found is None:
        return sources.build(mutation)
    key, _ = found
    mutant = sources.build(mutation)
    memo.keep(
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


def checked_validity(mutant: Mutant, werror: bool, memo: MutantMemo | None) -> Validity:
    """pyflakes over the mutant, remembered with the mutant: it is a pure function of the two
    texts, and the slowest step of a fully cached run."""
    if memo is None:
        return check_mutant(mutant.original, mutant.mutated or "", mutant.file, werror)
    key = memo.validity_key(mutant.original, mutant.mutated or "", mutant.file, werror)
    known = memo.recall(key)
    if known is not None:
        return Validity(known["ok"], known["problem"], known["cause"], tuple(known["warnings"]))
    validity = check_mutant(mutant.original, mutant.mutated or "", mutant.file, werror)
    memo.keep(
        key,
        {"ok": validity.ok, "problem": validity.problem, "cause": validity.cause, "warnings": list(validity.warnings)},
    )
    return validity


@dataclass(frozen=True)
class Prepared:
    """A mutant, and what is known of it before anything runs. `stale`: the sentence saying
    which pin no longer holds; `validity`: None when it was not checked (a stale or not
    applied mutant is not)."""

    mutant: Mutant
    stale: str | None
    validity: Validity | None


def prepared_mutant(
    root: Path, mutation: Mutation, known: Mutant | None, sources: MutantBuilder, memo: MutantMemo | None
) -> Prepared:
    """The mutant (`known`, else built and remembered), its pins, then its validity."""
    mutant = known or build_and_remember(root, mutation, sources, memo)
    stale = check_pins(root, mutation, mutant)
    if stale or not mutant.applied:
        return Prepared(mutant, stale, None)
    return Prepared(mutant, None, checked_validity(mutant, mutation.lint_is_error, memo))
