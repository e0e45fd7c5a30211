"""Test ids and the contract entries that name them.

An entry names a node id, or a prefix of node ids that ends at a boundary (`::`, `[`, or a
folder's `/`). Every verdict asks which collected tests an entry names; on a suite of
thousands of tests, asking each id in turn for each entry of each mutation was most of
the time between the baseline and the first mutant run. `TestIndex` answers from the
sorted ids instead: the ids an entry can name all start with it, so they sit together.
"""

from __future__ import annotations

import difflib
import re
from bisect import bisect_left
from collections.abc import Iterable


def matches(entry: str, node_id: str) -> bool:
    """A contract entry names a node id or a prefix ending at a '::' or '[' boundary.

    Never a loose substring: 'test_a' must not match 'test_ab'.
    """
    entry = entry.rstrip("/")
    if node_id == entry:
        return True
    if not node_id.startswith(entry):
        return False
    rest = node_id[len(entry) :]
    return rest.startswith("::") or rest.startswith("[") or (entry.endswith(".py") is False and rest.startswith("/"))


# pytest's id for a parameter it cannot name: the argument's name and its place (`expected18`).
_PLACED = re.compile(r"([A-Za-z_][A-Za-z_0-9]*?)(\d+)")


class TestIndex:
    """The collected ids, sorted once, for `matches` over all of them at once."""

    __test__ = False  # a name pytest would otherwise try to collect

    def __init__(self, ids: Iterable[str]):
        self._sorted = sorted(set(ids))

    def named_by(self, entry: str) -> list[str]:
        """Every id `entry` names, in sorted order."""
        prefix = entry.rstrip("/")
        found = []
        for index in range(bisect_left(self._sorted, prefix), len(self._sorted)):
            node_id = self._sorted[index]
            if not node_id.startswith(prefix):
                break
            if matches(entry, node_id):
                found.append(node_id)
        return found

    def _started_by(self, entry: str) -> list[str]:
        """The ids that start with `entry` as text, in sorted order, boundary or not."""
        found = []
        for index in range(bisect_left(self._sorted, entry), len(self._sorted)):
            if not self._sorted[index].startswith(entry):
                break
            found.append(self._sorted[index])
        return found

    def names_any(self, entry: str) -> bool:
        return bool(self.named_by(entry))

    def named_by_any(self, entries: Iterable[str]) -> set[str]:
        return {node_id for entry in entries for node_id in self.named_by(entry)}

    def closest(self, entry: str) -> str | None:
        """The id or boundary prefix (a file, a class) nearest to an entry that names none, by
        difflib's ratio: a letter off is a typo worth naming; nothing near, None."""
        candidates = set(self._sorted)
        for node_id in self._sorted:
            parts = node_id.split("::")
            candidates.update("::".join(parts[:n]) for n in range(1, len(parts)))
            candidates.add(node_id.split("[", 1)[0])
        entry = entry.rstrip("/")
        file, named, name = entry.partition("::")
        if named:
            # A file the tests have: only the names in it are compared. The whole ids share the
            # file's path, which made any name in it look near (`test_nope`, `test_merge`).
            within = {c[len(file) + 2 :]: c for c in candidates if c.startswith(file + "::")}
            found = difflib.get_close_matches(name, sorted(within), n=1, cutoff=0.8)
            if found:
                return within[found[0]]
            # tomli: the test was in the file beside the one named; the name, exactly, elsewhere.
            elsewhere = sorted(c for c in candidates if c.partition("::")[2] == name)
            if elsewhere:
                return difflib.get_close_matches(entry, elsewhere, n=1, cutoff=0.0)[0]
            if within:
                return None
        found = difflib.get_close_matches(entry, sorted(candidates), n=1, cutoff=0.8)
        return found[0] if found else None

    def _uncollected_class(self, entry: str) -> str:
        """Where the entry's file has tests but none in the class it names: pytest collected
        no such class (six: `EnsureTests`, a plain class whose name does not start with Test)."""
        file, cls = entry.split("::", 1)[0], _class_part(entry)
        if cls is None or not self.names_any(file):
            return ""
        inside = f"{file}::{cls}"
        if any(node_id == inside or node_id.startswith(inside + "::") for node_id in self._sorted):
            return ""
        return (
            f": pytest collected no test in a class {cls} of {file}; it collects the classes its "
            "python_classes names (by default, those whose name starts with Test) and unittest's TestCase classes"
        )

    def unmatched_note(self, entry: str, under: str) -> str:
        """What a contract entry that names no collected test is told, with the nearest one."""
        # Quoted as the nearest id is, to paste back: repr doubled a backslash the id holds.
        said = f"{toml_literal(entry)} matches no collected test (under {under})"
        escaped = entry.encode("unicode_escape").decode("ascii")
        if escaped != entry and self.names_any(escaped):
            # A TOML basic string reads "\u2028" as the character itself; pytest's ids spell
            # it out, backslash and all (python-slugify's line-ending cases).
            return (
                f"{said}: it holds a character pytest's ids spell as an escape; write the id in "
                f"single quotes, as TOML reads it literally: {toml_literal(escaped)}"
            )
        file = entry.split("::", 1)[0].rstrip("/")
        roots = [u.strip().split("::", 1)[0].rstrip("/").removeprefix("./") for u in under.split(",")]
        if file.endswith(".py") and not any(r in ("", ".") or file == r or file.startswith(r + "/") for r in roots):
            # Not a typo to correct from the nearest id: a file the gate does not run (boltons:
            # `prove tests/test_mathutils.py` was offered tests/test_strutils.py).
            return f"{said}: {file} is not under the gate's tests; add it to [gate] tests to run it"
        test, space, _ = entry.partition(" [")
        if space and self.names_any(test):
            # semantic_version: a unittest subTest's label, as pytest's SUBFAIL line prints it.
            return (
                f"{said}: it names a subtest of {test}, as pytest prints a failing subtest; kills "
                f"names tests, and a test with a failing subtest is red: name {toml_literal(test)}"
            )
        started = self._started_by(entry)
        if started:
            # blinker: `::test_mute` for `::test_mute_signal` got no hint, the whole ids being
            # too long for the nearest to be near.
            first = started[0]
            more = f"{len(started)} test ids, the first {first}" if len(started) > 1 else f"the test id {first}"
            return (
                f"{said}: it is the start of {more}, not a whole name; an entry names a test, or "
                f"a file, class or folder, ending where its name does; did you mean {toml_literal(first)}?"
            )
        near = self.closest(entry)
        if near is None:
            return said + self._uncollected_class(entry)
        said += f"; did you mean {toml_literal(near)}?"
        numbered = renumbered(entry, near)
        if numbered:
            said += (
                f" pytest names the parameter {numbered!r} by its place among the parameters, which "
                "moves when they come from a set or a folder's listing: give them ids "
                "(pytest.param(..., id=...)) or sort them"
            )
        return said


def _class_part(entry: str) -> str | None:
    """The class an entry names inside its file (`file::Class::test`, `file::Class`), if any."""
    parts = entry.split("[", 1)[0].split("::")
    if len(parts) >= 3 or (len(parts) == 2 and parts[1][:1].isupper()):
        return parts[1]
    return None


def compacted(red: Iterable[str], collected: Iterable[str]) -> list[str]:
    """The red ids as a contract would name them: a parametrized test whose every collected
    case is red, by its name alone (hpack's and rsa's `try --save` wrote 17 ids of one test).
    Order kept; a test some of whose cases stayed green keeps its cases."""
    red = list(red)
    cases: dict[str, set[str]] = {}
    for node_id in collected:
        if "[" in node_id:
            cases.setdefault(node_id.split("[", 1)[0], set()).add(node_id)
    chosen = set(red)
    named: list[str] = []
    for node_id in red:
        base = node_id.split("[", 1)[0]
        entry = base if "[" in node_id and base in cases and cases[base] <= chosen else node_id
        if entry not in named:
            named.append(entry)
    return named


def renumbered(entry: str, near: str) -> str | None:
    """The entry's parameter that pytest named by its place (`expected18`, an object with no
    id of its own) where `near`, the same test, has another number: isodate's cases come from
    a set, whose order, and so every such id, changed between two collections. Else None."""
    if "[" not in entry or "[" not in near or entry.split("[", 1)[0] != near.split("[", 1)[0]:
        return None
    ours, theirs = entry.split("[", 1)[1].split("-"), near.split("[", 1)[1].split("-")
    if len(ours) != len(theirs):
        return None
    differing = [(a.rstrip("]"), b.rstrip("]")) for a, b in zip(ours, theirs, strict=True) if a != b]
    if not differing or not all(_placed_as(a) and _placed_as(a) == _placed_as(b) for a, b in differing):
        return None
    return differing[0][0]


def _placed_as(part: str) -> str | None:
    """The argument's name in a place-numbered parameter id (`expected` of `expected18`)."""
    found = _PLACED.fullmatch(part)
    return found.group(1) if found else None


def toml_literal(text: str) -> str:
    """`text` as a TOML literal string, to be pasted into a catalog as it is: pytest escapes a
    non-ASCII parameter (`[mill\\xf3n]`), and Python's repr doubled that backslash, which
    only a double-quoted TOML string reads back."""
    return f"'{text}'" if "'" not in text and "\n" not in text else repr(text)


def named_count(entries: Iterable[str], ids: Iterable[str]) -> int:
    """How many tests the entries name among `ids`, an entry naming none of them counting as
    one: the "expected" of a red / expected cell, in tests, as the red side counts (a prefix
    of four parametrizations is four tests, not one)."""
    entries = list(entries)
    if not entries:
        return 0
    index = TestIndex(ids)
    named = index.named_by_any(entries)
    return len(named) + sum(1 for entry in entries if not index.names_any(entry))
