"""A mutant: a mutation applied to text. The record only; mutants.py builds them.

Kept apart from the operators so that reading a cached mutant costs no libcst import.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
from dataclasses import dataclass, field

from killmap.catalog.reader import Mutation
from killmap.mutate.patching import equal_ends, split_lines

CONTEXT = 3  # unified_diff's own default: lines of context around a change


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
        return unified_diff(split_lines(self.original), split_lines(self.mutated), self.file)

    def tree_line(self, line: int) -> int | None:
        """The line of the original that the mutant's `line` (1-based) stands for, where the
        lines the mutation removed or added above it moved it (toposort: a deleted statement
        and its comments put a raise at 76 that stands at 83 in the user's tree). None where
        it stands where it stood, or inside what the mutation changed."""
        if self.mutated is None:
            return None
        before, after = self.original.splitlines(), self.mutated.splitlines()
        if len(before) == len(after):
            return None
        prefix = _common_prefix(before, after)
        suffix = min(_common_prefix(before[::-1], after[::-1]), min(len(before), len(after)) - prefix)
        if line <= prefix or line <= len(after) - suffix:
            return None  # above the change, or in it
        return line + len(before) - len(after)

    @property
    def mutant_sha256(self) -> str:
        return hashlib.sha256((self.mutated or "").encode()).hexdigest()


def _common_prefix(first: list[str], second: list[str]) -> int:
    count = 0
    for one, other in zip(first, second, strict=False):
        if one != other:
            break
        count += 1
    return count


def sha256_text(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def unified_diff(a: list[str], b: list[str], path: str) -> str:
    """difflib's unified diff of two versions of `path`, compared only where they differ.

    A mutant changes a line or a few of a file that may hold a thousand: difflib's matcher
    indexes and searches the whole of both (a millisecond a mutant on packaging's
    specifiers.py, a third of a second to report a sweep of it). The lines both versions share
    at the start and at the end are left out but for the context the hunks show, and the
    hunks' line numbers are moved back to the file's.

    Taken only when no changed line of either side is among the other side's lines compared:
    then all the two sides share there are the equal runs around the change, which difflib
    finds whichever way it is asked (26,100 random edits of real modules agreed, and
    test_a_mutant_diff_is_difflibs_own holds it). A line moved, or one repeated beside its
    copy, can be placed more than one way, and difflib's choice depends on the whole file:
    then the whole files are compared, as difflib alone would."""
    head, tail = equal_ends(a, b)
    start = max(0, head - CONTEXT)
    keep = min(tail, CONTEXT)
    a_part, b_part = a[start : len(a) - tail + keep], b[start : len(b) - tail + keep]
    if set(a[head : len(a) - tail]) & set(b_part) or set(b[head : len(b) - tail]) & set(a_part):
        a_part, b_part, start = a, b, 0
    lines = list(difflib.unified_diff(a_part, b_part, fromfile=f"a/{path}", tofile=f"b/{path}", n=CONTEXT))
    return "".join(_moved(line, start) if line.startswith("@@ ") else line for line in lines)


def _moved(header: str, offset: int) -> str:
    """A hunk header "@@ -3,7 +3,6 @@" with both first lines moved down by `offset`."""
    if not offset:
        return header
    _, old, new, rest = header.split(" ", 3)
    return f"@@ {_shift(old, offset)} {_shift(new, offset)} {rest}"


def _shift(side: str, offset: int) -> str:
    sign, numbers = side[0], side[1:]
    first, _, length = numbers.partition(",")
    return f"{sign}{int(first) + offset}" + (f",{length}" if length else "")
