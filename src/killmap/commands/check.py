"""`killmap check`: everything about the catalogs that is known without running a mutant.

It loads and validates every catalog (as `run` does), builds each mutant (an operator that
matches the wrong number of sites is an error here, not a verdict later), checks the
mutant's static validity and the pins, and resolves every `kills` and `may_kill` entry
against pytest's collection. The collection goes through the gate's own path (a warm
worker in a sandbox copy, the same flags, the same `sys.path` isolation) with pytest's
`--collect-only`, so the ids are the ones `run` would see, and no test runs.

Every problem is one line naming file, mutation and field; any problem exits 2. This is
the fast hook for `pre-commit` (see .pre-commit-hooks.yaml).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from killmap.commands.shared import project_root
from killmap.errors import GateError
from killmap.wording import counted

if TYPE_CHECKING:  # the catalogs, the engine and libcst are imported when the command runs, not to parse
    from killmap.catalog.reader import GateSettings, Mutation
    from killmap.engine import Launch
    from killmap.mutate.mutant import Mutant
    from killmap.verdict.collection import Collection

EXIT_OK, EXIT_ERROR = 0, 2


@dataclass
class CheckResult:
    catalogs: int = 0
    mutations: int = 0  # read and checked
    unread: int = 0  # [[mutation]] entries that could not be read (each a problem)
    collected: int = 0
    problems: list[GateError] = field(default_factory=list)
    # When a catalog could not be read: the catalogs found, and the one that failed. "0
    # catalog(s)" left the user wondering whether theirs was found at all.
    found: tuple[str, ...] = ()
    unreadable: str | None = None

    def counts(self) -> str:
        if self.unreadable is not None:
            return (
                f"{counted(len(self.found), 'catalog')} found ({', '.join(self.found)}); {self.unreadable} has an "
                "error, so no mutation was checked"
            )
        # h11: two entries with a bad target read "1 mutation ...: 2 problems".
        mutations = counted(self.mutations + self.unread, "mutation")
        if self.unread:
            mutations += f" ({self.unread} could not be read)"
        counts = [counted(self.catalogs, "catalog"), mutations, counted(self.collected, "test")]
        return f"{', '.join(counts)} collected"


def check(root: Path, catalogs: tuple[Path, ...] = (), launch: Launch | None = None) -> CheckResult:
    """`launch`: the worker the command started at its first line (launch.py), which imports
    pytest while this reads the catalogs and builds the mutants."""
    from killmap.catalog.entries import missing_excluded_files, missing_test_paths
    from killmap.catalog.project import project_files
    from killmap.verdict.lab import LabOptions, collect, load, targets_not_copied

    result = CheckResult()
    entry_errors: list[GateError] = []  # an entry that cannot be read: said, and the rest checked
    try:
        loaded, mutations = load(root, LabOptions(catalogs=catalogs), entry_errors)
    except GateError as exc:  # the catalog itself: nothing further can be judged
        result.problems.append(exc)
        result.found, result.unreadable = _found(root, catalogs, exc)
        return result
    for error in entry_errors:
        others, error.also = error.also, ()  # each said on a line of its own here
        result.problems.extend((error, *others))
    # A control error names an entry that was read (and is checked on): not one left unread.
    read = {m.name for m in mutations}
    result.catalogs, result.mutations = len(loaded), len(mutations)
    result.unread = sum(1 for error in entry_errors if error.mutation not in read)
    # The rules `run` refuses by (a test path not there, a git-ignored target), each said.
    missing = missing_test_paths(root, ((c.path, c.settings) for c in loaded))
    result.problems.extend(missing)
    result.problems.extend(missing_excluded_files(root, ((c.path, c.settings) for c in loaded)))
    files = project_files(root)
    result.problems.extend(targets_not_copied(mutations, files))
    problems, loadable = _mutant_problems(root, mutations)
    result.problems.extend(problems)
    if missing:
        return result  # pytest would only say it again, in its own words

    groups, where = _groups(loaded, mutations)
    try:
        collected = collect(root, list(groups), launch, loadable, files, where)
    except GateError as exc:
        result.problems.append(exc)
        return result
    # Each test once: two catalogs whose [gate] differ in another field collect the same tests.
    result.collected = len({test for collection in collected.values() for test in collection.ids})
    for settings, group in groups.items():
        collection = collected[settings]
        result.problems.extend(collection.problems)
        if collection.failed:
            continue  # ids from a failed collection would only add noise
        result.problems.extend(_unresolved_ids(root, group, collection, settings, where[settings]))
        result.problems.extend(collection.unloadable)
    return result


def _groups(loaded, mutations: list[Mutation]) -> tuple[dict[GateSettings, list[Mutation]], dict[GateSettings, str]]:
    """The mutations by [gate] setting, and the catalog each setting comes from. A catalog of
    [gate] alone (set up to sweep before naming anything) is a group too: its tests must still
    collect, and its excludes match, or the sweep would fail later on the same typo."""
    groups: dict[GateSettings, list[Mutation]] = {}
    for mutation in mutations:
        groups.setdefault(mutation.settings, []).append(mutation)
    where: dict[GateSettings, str] = {}
    for catalog in loaded:
        if not catalog.mutations:
            groups.setdefault(catalog.settings, [])
            where.setdefault(catalog.settings, catalog.path)
    for settings, group in groups.items():
        if group:
            where.setdefault(settings, group[0].catalog)
    return groups, where


def _found(root: Path, catalogs: tuple[Path, ...], error: GateError) -> tuple[tuple[str, ...], str | None]:
    """The catalogs a failed load was given or found, and the one its error names; none when
    the error names no catalog file there is (a catalog not found)."""
    from killmap.catalog.reader import discover_catalogs

    try:
        paths = [p if p.is_absolute() else Path.cwd() / p for p in catalogs] or discover_catalogs(root)
    except GateError:
        return (), None
    paths = [p for p in paths if p.is_file()]  # one not found is not said to be
    names = tuple(_shown(root, p) for p in paths)
    named = error.file or ""
    failed = next((n for n, p in zip(names, paths, strict=True) if named and (named == n or Path(named) == p)), None)
    return (names, failed) if failed else ((), None)


def _shown(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _mutant_problems(root: Path, mutations: list[Mutation]) -> tuple[list[GateError], dict[str, Mutant]]:
    """What building each mutant tells without pytest: it builds, its pins hold, it applies
    and is valid, and each invariant's control fires at its site. With the mutants that
    passed all of it: the ones whose import is worth trying."""
    from killmap.mutate.blame import broken_field, not_applied_field
    from killmap.mutate.mutants import Sources, build_mutant
    from killmap.mutate.pins import check_pins
    from killmap.mutate.validity.check import check_mutant
    from killmap.verdict.prepare import control_site_problems

    problems: list[GateError] = []
    sources = Sources(root)
    mutants = {}
    loadable: dict[str, Mutant] = {}
    for mutation in mutations:
        try:
            mutant = build_mutant(root, mutation, sources)
        except GateError as exc:
            problems.append(exc)
            continue
        mutants[mutation.name] = mutant
        try:
            stale = check_pins(root, mutation, mutant)
        except GateError as exc:  # a revert-patch's changed byte: nothing else of it is checked
            problems.append(exc)
            continue
        if stale:
            problems.append(mutation.fail(f"stale pin: {stale}", "pin"))
        if not mutant.applied:
            problems.append(mutation.fail(f"not applied: {mutant.reason}", not_applied_field(mutation, mutant.reason)))
            continue
        validity = check_mutant(mutant.original, mutant.mutated or "", mutant.file, mutation.lint_is_error)
        if not validity.ok:
            problems.append(mutation.fail(f"the mutant is broken: {validity.problem}", broken_field(mutation)))
        elif not stale:
            loadable[mutation.name] = mutant
    problems.extend(control_site_problems(mutations, mutants))
    return problems, loadable


def _unresolved_ids(
    root: Path, group: list[Mutation], collection: Collection, settings: GateSettings, catalog: str
) -> list[GateError]:
    """Every `exclude` entry of the [gate] that deselects no test, and every `kills` and
    `may_kill` entry of the group that names no test the [gate] collects."""
    from killmap.catalog.entries import names_absent_module
    from killmap.catalog.testids import TestIndex
    from killmap.verdict.baseline import deselected_note, ignored_note, names_skipped, names_xfail, unmatched_excludes

    index, deselected = TestIndex(collection.ids), TestIndex(tuple(collection.deselected))
    ignored = settings.ignored(root)
    skipped = set(collection.skipped)
    never_red = set(collection.never_red)
    # An entry naming a test module that is not there is said once, by missing_excluded_files.
    present = replace(settings, exclude=tuple(e for e in settings.exclude if not names_absent_module(root, e)))
    problems = [
        GateError(note, file=catalog, field="exclude")
        for note in unmatched_excludes(present, collection.ids, collection.deselected, ignored)
    ]
    for mutation in group:
        for key, entries in (("kills", mutation.kills), ("may_kill", mutation.may_kill)):
            for entry in entries:
                named = index.named_by(entry)
                if key == "kills" and skipped.intersection(named):
                    problems.append(mutation.fail(names_skipped(entry, named, skipped, "a skip mark skips"), key))
                    continue
                if key == "kills" and named and set(named) <= never_red:
                    problems.append(mutation.fail(names_xfail(entry, named), key))
                    continue
                if named:
                    continue
                under = ", ".join(settings.tests)
                named = deselected.named_by(entry)
                left_out = ignored_note(entry, ignored)
                if named:
                    problems.append(mutation.fail(deselected_note(entry, named, collection.deselected, under), key))
                else:
                    problems.append(mutation.fail(left_out or index.unmatched_note(entry, under), key))
    return problems


def add_parser(sub) -> None:
    command = sub.add_parser("check", help="validate catalogs, mutants, pins and test ids; run no mutant")
    command.add_argument("catalogs", nargs="*", type=Path, help="catalog files (default: mutations/*.toml)")
    command.set_defaults(main=main)


def main(args: argparse.Namespace) -> int:
    root = project_root()
    from killmap.engine import Launch

    with Launch(1) as launch:
        result = check(root, tuple(args.catalogs), launch)
    for problem in result.problems:
        print(f"killmap check: {problem}", file=sys.stderr)
    counts = result.counts()
    if result.problems:
        print(f"killmap check: {counts}: {counted(len(result.problems), 'problem')}")
        return EXIT_ERROR
    print(f"killmap check: {counts}: every mutation applies, every test id resolves, no stale pin")
    return EXIT_OK
