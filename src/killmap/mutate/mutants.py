"""Mutants: a catalog entry turned into a mutant text (operators.py, with libcst, scoped to
its target), checked and recorded.

Each operator counts the sites it matched inside the target symbol. Anything other than
exactly `count` sites, or a mutant byte-identical to the original, is "not applied": a
mutation that silently did nothing must never be reported as a survivor or a kill.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import libcst as cst

from killmap.catalog.reader import Mutation
from killmap.mutate.cst_tree import Sources, statement_positions
from killmap.mutate.mutant import Mutant, sha256_text  # noqa: F401 - re-exported: the record of a mutant
from killmap.mutate.operators import _OPERATORS, _NotApplicable
from killmap.mutate.patching import equal_ends, split_lines
from killmap.mutate.symbols import SymbolError, resolve_symbol
from killmap.mutate.syntax import syntax_pin
from killmap.wording import counted


def build_mutant(root: Path, mutation: Mutation, sources: Sources | None = None) -> Mutant:
    original, wrapper = (sources or Sources(root)).parsed(mutation)
    scope = target_scope(wrapper.module, mutation)
    # The symbol's own text: libcst hands a statement the blank lines and comments above it
    # (leading_lines); a formatter changing the spacing between functions must not make
    # a pinned mutation stale, so they are left out.
    target_text = wrapper.module.code_for_node(scope.with_changes(leading_lines=())) if scope is not None else original
    target_hash = sha256_text(target_text)
    target_pin = syntax_pin(target_text)

    def not_applied(sites: int, reason: str) -> Mutant:
        return Mutant(mutation, mutation.target.path, original, None, sites, reason, target_hash, target_pin=target_pin)

    try:
        mutated, matched = _OPERATORS[mutation.op](root, wrapper, scope, mutation, original)
    except _NotApplicable as exc:
        return not_applied(exc.sites, str(exc))
    sites = len(matched)
    if sites != mutation.count:
        # Where they are, so the entry can be narrowed (a symbol, a longer text) or counted.
        places = _site_places(wrapper, mutation, original, matched)
        return not_applied(
            sites,
            f"op {mutation.op!r} matched {counted(sites, 'site')} in {mutation.target}, "
            f"expected {mutation.count}" + (f" ({_shown(places, original, sites)})" if places else ""),
        )
    if mutated == original:
        return not_applied(sites, "the mutant is byte-identical to the original")
    old_lines, new_lines = changed_lines(original, mutated)
    return Mutant(
        mutation,
        mutation.target.path,
        original,
        mutated,
        sites,
        "",
        target_hash,
        old_lines,
        new_lines,
        target_pin=target_pin,
    )


def _site_places(wrapper, mutation: Mutation, original: str, matched: list) -> list[tuple[int, int]]:
    """(line, column) of each site an operator matched, both from 1, in the file's order: a
    text offset, or a node of the target's tree (positions are computed only here, for the
    message). One per site: two on one line are two places, not one line."""
    places = []
    positions, offset = None, 0
    for site in matched:
        if isinstance(site, int):
            places.append((original.count("\n", 0, site) + 1, site - original.rfind("\n", 0, site)))
        elif site is not None:
            if positions is None:
                positions, offset = statement_positions(wrapper, mutation, original)
            if site in positions:
                start = positions[site].start
                places.append((original.count("\n", 0, offset) + start.line, start.column + 1))
    return sorted(places)


def _shown(places: list[tuple[int, int]], original: str, sites: int, most: int = 5) -> str:
    """ "line 2 `if count:`, line 6, columns 12 and 30 `return count + count`": where each site
    is and what its line reads, so that a value read as a site (`{count}` in an f-string) shows
    why it counted. A line with several sites names each one's column, so that the sites
    listed add up to the count said (`self.timestamp` matched 3 sites, and two lines were
    listed, one of them holding two)."""
    text = original.splitlines()
    by_line: dict[int, list[int]] = {}
    for number, column in places:
        by_line.setdefault(number, []).append(column)
    said, listed = [], 0
    for number, columns in list(by_line.items())[:most]:
        line = text[number - 1].strip() if 0 < number <= len(text) else ""
        line = line if len(line) <= 60 else line[:57] + "..."
        where = f"line {number}" + (f", columns {_and(columns)}" if len(columns) > 1 else "")
        said.append(f"{where} `{line}`" if line else where)
        listed += len(columns)
    more = f", and {counted(sites - listed, 'more site')}" if sites > listed else ""
    return ", ".join(said) + more


def _and(numbers: list[int]) -> str:
    return ", ".join(map(str, numbers[:-1])) + f" and {numbers[-1]}"


def changed_lines(original: str, mutated: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Lines that differ, on each side. A pure deletion marks the line that follows it."""
    a = [line.rstrip("\r\n") for line in split_lines(original)]
    b = [line.rstrip("\r\n") for line in split_lines(mutated)]
    # A mutant differs from its original in one small stretch: the lines before and after
    # it are equal on both sides, so only the stretch is diffed. On a 3,000-line file the
    # whole-file diff was most of a mutant's build.
    head, tail = equal_ends(a, b)
    middle = difflib.SequenceMatcher(None, a[head : len(a) - tail], b[head : len(b) - tail], autojunk=False)
    old: set[int] = set()
    new: set[int] = set()
    for tag, i1, i2, j1, j2 in middle.get_opcodes():
        if tag == "equal":
            continue
        i1, i2, j1, j2 = i1 + head, i2 + head, j1 + head, j2 + head
        old.update(range(i1 + 1, i2 + 1) if i2 > i1 else [min(i1 + 1, len(a))])
        new.update(range(j1 + 1, j2 + 1) if j2 > j1 else [max(min(j1 + 1, len(b)), 1)])
    return tuple(sorted(old)), tuple(sorted(new))


# --- target resolution -------------------------------------------------------------------


def target_scope(module: cst.Module, mutation: Mutation) -> cst.CSTNode | None:
    symbol = mutation.target.symbol
    if not symbol:
        return None
    try:
        return resolve_symbol(module, symbol, mutation.target.path)
    except SymbolError as error:
        raise mutation.fail(str(error), "target") from None
