"""A mutant: a mutation applied to text. The record only; mutants.py builds them.

Kept apart from the operators so that reading a cached mutant costs no libcst import.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
from dataclasses import dataclass, field

from killmap.catalog.reader import Mutation
from killmap.mutate.patching import split_lines


@dataclass(frozen=True)
class Mutant:
    """A mutation applied to text: what the sandbox will hold instead of the original."""

    mutation: Mutation
    file: str  # relative to the project root
    original: str
    mutated: str | None  # None when not applied
    sites: int
    reason: str = ""  # why it was not applied, when mutated is None
    target_sha256: str = ""  # sha256 of the target symbol's (or file's) exact text
    changed_lines: tuple[int, ...] = field(default=())  # 1-based, in the original
    mutant_changed_lines: tuple[int, ...] = field(default=())  # 1-based, in the mutant
    target_pin: str = ""  # ast1:sha256 of the target's normalized syntax (see syntax.py)

    @property
    def applied(self) -> bool:
        return self.mutated is not None

    @functools.cached_property  # the cache key, the reports and the memo each ask for it
    def diff(self) -> str:
        if self.mutated is None:
            return ""
        return "".join(
            difflib.unified_diff(
                split_lines(self.original),
                split_lines(self.mutated),
                fromfile=f"a/{self.file}",
                tofile=f"b/{self.file}",
            )
        )

    @property
    def mutant_sha256(self) -> str:
        return hashlib.sha256((self.mutated or "").encode()).hexdigest()


def sha256_text(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
