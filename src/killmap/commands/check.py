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

import sys
from dataclasses import dataclass, field
from pathlib import Path

from killmap.catalog.reader import GateSettings, Mutation
from killmap.catalog.testids import TestIndex
from killmap.engine import Launch, error_line, refused_arguments
from killmap.errors import GateError

EXIT_OK, EXIT_ERROR = 0, 2
COLLECT_TIMEOUT = 300.0


@dataclass(frozen=True)
class Collection:
    """One [gate] setting's collection: its ids, its problems, whether it failed (a file that
    fails in several is said once), and the tests the project's options deselect, with what."""

    ids: tuple[str, ...]
    problems: list[GateError]
    failed: bool
    deselected: dict[str, str]


@dataclass
class CheckResult:
    catalogs: int = 0
    mutations: int = 0
    collected: int = 0
    problems: list[GateError] = field(default_factory=list)


def check(root: Path, catalogs: tuple[Path, ...] = (), launch: Launch | None = None) -> CheckResult:
    """`launch`: the worker the command started at its first line (launch.py), which imports
    pytest while this reads the catalogs and builds the mutants."""
    from killmap.verdict.lab import LabOptions, load

    result = CheckResult()
    try:
        loaded, mutations = load(root, LabOptions(catalogs=catalogs))
    except GateError as exc:  # the catalog itself: nothing further can be judged
        result.problems.append(exc)
        return result
    result.catalogs, result.mutations = len(loaded), len(mutations)
    result.problems.extend(_mutant_problems(root, mutations))

    groups: dict[GateSettings, list[Mutation]] = {}
    for mutation in mutations:
        groups.setdefault(mutation.settings, []).append(mutation)
    # A catalog of [gate] alone (set up to sweep before naming anything): its tests must
    # still collect, or the sweep would fail later on the same typo.
    for catalog in loaded:
        if not catalog.mutations:
            groups.setdefault(catalog.settings, [])
    try:
        collected = _collect(root, list(groups), launch)
    except GateError as exc:
        result.problems.append(exc)
        return result
    for settings, group in groups.items():
        collection = collected[settings]
        result.collected += len(collection.ids)
        result.problems.extend(collection.problems)
        if collection.failed:
            continue  # ids from a failed collection would only add noise
        result.problems.extend(_unresolved_ids(group, collection, settings))
    return result


def _mutant_problems(root: Path, mutations: list[Mutation]) -> list[GateError]:
    """What building each mutant tells without pytest: it builds, its pins hold, it applies
    and is valid, and each invariant's control fires at its site."""
    from killmap.mutate.blame import broken_field, not_applied_field
    from killmap.mutate.mutants import Sources, build_mutant
    from killmap.mutate.pins import check_pins
    from killmap.mutate.validity.check import check_mutant
    from killmap.verdict.prepare import control_site_problems

    problems: list[GateError] = []
    sources = Sources(root)
    mutants = {}
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
    problems.extend(control_site_problems(mutations, mutants))
    return problems


def _unresolved_ids(group: list[Mutation], collection: Collection, settings: GateSettings) -> list[GateError]:
    """Every `kills` and `may_kill` entry of the group that names no test its [gate] collects."""
    from killmap.verdict.baseline import deselected_note

    index, deselected = TestIndex(collection.ids), TestIndex(tuple(collection.deselected))
    problems = []
    for mutation in group:
        for key, entries in (("kills", mutation.kills), ("may_kill", mutation.may_kill)):
            for entry in entries:
                if index.names_any(entry):
                    continue
                under = ", ".join(settings.tests)
                named = deselected.named_by(entry)
                if named:
                    problems.append(mutation.fail(deselected_note(entry, named, collection.deselected, under), key))
                else:
                    problems.append(mutation.fail(f"{entry!r} matches no collected test (under {under})", key))
    return problems


def _collect(
    root: Path, settings_list: list[GateSettings], launch: Launch | None = None
) -> dict[GateSettings, Collection]:
    """pytest's collection for each [gate] setting, in one warm worker's sandbox.

    Through the engine, like every command: the sandbox and the working tree are guarded
    after the collection as after any run (a conftest may write)."""
    from killmap.catalog.project import project_files
    from killmap.engine import Engine, Scenario, escaped_note

    found: dict[GateSettings, Collection] = {}
    said: set[str] = set()
    with Engine(root, project_files(root), 1, launch=launch) as engine:
        worker = engine.workers[0]
        for index, settings in enumerate(settings_list):
            deselect = tuple(arg for test in settings.exclude for arg in ("--deselect", test))
            scenario = Scenario(
                label=f"collect-{index + 1}",
                tests=settings.tests + deselect,
                timeout=COLLECT_TIMEOUT,
                sys_path=settings.paths,
                collect_only=True,
            )
            outcome = engine.run(worker, scenario)
            where = f"collection of {', '.join(settings.tests)}"
            errors: list[GateError] = []
            if outcome.escaped:
                # Restored already; said, because a collection that writes into the user's
                # tree would do it again under every mutant of `killmap run`.
                errors.append(GateError(f"{where} {escaped_note(outcome.escaped, engine.displaced)}"))
            if outcome.status == "timeout":
                errors.append(GateError(f"{where} did not finish in {COLLECT_TIMEOUT:.0f}s"))
            for node, message in outcome.collect_errors:
                failure = f"{node or 'the session'}: {error_line(message)}"
                if failure not in said:
                    said.add(failure)
                    errors.append(GateError(f"{where} failed in {failure}"))
            failed = bool(errors or outcome.collect_errors)  # said once, by an earlier collection
            if not failed and not outcome.finished:
                errors.append(GateError(f"{where}: pytest ended without a report; log tail: {outcome.log_tail[-300:]}"))
            if not failed and refused_arguments(outcome):
                errors.append(GateError(f"{where}: pytest stopped before collecting: {refused_arguments(outcome)}"))
            if not failed and not outcome.collected:
                errors.append(GateError(f"{where}: no tests collected"))
            deselected = dict(outcome.deselected)
            found[settings] = Collection(outcome.collected, errors, bool(failed or errors), deselected)
    return found


def main(root: Path, catalogs: tuple[Path, ...]) -> int:
    with Launch(1) as launch:
        result = check(root, catalogs, launch)
    for problem in result.problems:
        print(f"killmap check: {problem}", file=sys.stderr)
    counts = f"{result.catalogs} catalog(s), {result.mutations} mutation(s), {result.collected} test(s) collected"
    if result.problems:
        print(f"killmap check: {counts}: {len(result.problems)} problem(s)")
        return EXIT_ERROR
    print(f"killmap check: {counts}: every mutation applies, every test id resolves, no stale pin")
    return EXIT_OK
