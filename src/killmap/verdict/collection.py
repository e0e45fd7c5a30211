"""pytest's collection of each [gate] setting, in one warm worker's sandbox, with and without
each mutant whose change the collection runs: `killmap check`'s, on an engine the lab builds
(lab.collect)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from killmap.catalog.reader import GateSettings
from killmap.errors import GateError
from killmap.verdict.baseline import check_runner_imports, leave_out_hint, stamped_ids

if TYPE_CHECKING:
    from killmap.engine import Engine
    from killmap.mutate.mutant import Mutant

COLLECT_TIMEOUT = 300.0


@dataclass(frozen=True)
class Collection:
    """One [gate] setting's collection: its ids, its problems, whether it failed (a file that
    fails in several is said once), and the tests the project's options deselect, with what."""

    ids: tuple[str, ...]
    problems: list[GateError]
    failed: bool
    deselected: dict[str, str]
    unloadable: list[GateError] = field(default_factory=list)  # mutants the tests cannot load under
    skipped: tuple[str, ...] = ()  # the tests a run would skip (a skip mark, unittest's skip)
    never_red: tuple[str, ...] = ()  # the tests an xfail mark keeps from going red


def collect_in(
    engine: Engine,
    root: Path,
    settings_list: list[GateSettings],
    mutants: dict[str, Mutant] | None = None,
    catalogs: dict[GateSettings, str] | None = None,
) -> dict[GateSettings, Collection]:
    """pytest's collection for each [gate] setting, in the engine's first warm worker's sandbox,
    and then under each of `mutants` of that setting whose change the collection runs
    (`_unloadable`).

    Through the engine, like every command: the sandbox and the working tree are guarded
    after the collection as after any run (a conftest may write)."""
    from killmap.engine import Scenario, exclusion_arguments

    found: dict[GateSettings, Collection] = {}
    said: set[str] = set()
    worker = engine.workers[0]
    for index, settings in enumerate(settings_list):
        deselect = exclusion_arguments(settings, root)
        ours = [m for m in (mutants or {}).values() if m.mutation.settings == settings]
        scenario = Scenario(
            label=f"collect-{index + 1}",
            tests=settings.tests + deselect,
            timeout=COLLECT_TIMEOUT,
            sys_path=settings.paths,
            user_args=settings.arguments,
            collect_only=True,
            # What the collection runs of each mutated file: a mutant changing none of it
            # loads as the original does (_unloadable).
            coverage_files=tuple(sorted({m.file for m in ours})),
        )
        outcome = engine.run(worker, scenario)
        errors = _collection_errors(
            f"collection of {', '.join(settings.tests)}",
            outcome,
            said,
            engine,
            hint=(root, settings.paths),
            catalog=(catalogs or {}).get(settings),
        )
        stamped = None if errors else stamped_ids(f"collection of {', '.join(settings.tests)}", outcome.collected)
        if stamped is not None:
            errors.append(stamped)  # the baseline would refuse them: said before any run
        try:  # a target pytest itself imports, as every command that runs a mutant refuses it
            check_runner_imports([m.mutation for m in ours], settings, worker.preloaded)
        except GateError as exc:
            errors.append(exc)
        failed = bool(errors or outcome.collect_errors)  # said once, by an earlier collection
        unloadable = [] if failed else _unloadable(engine, worker, index, ours, deselect, outcome.coverage)
        found[settings] = Collection(
            outcome.collected,
            errors,
            failed,
            dict(outcome.deselected),
            unloadable,
            outcome.marked_skip,
            outcome.marked_xfail,
        )
    return found


def _collection_errors(
    where: str,
    outcome,
    said: set[str],
    engine,
    *,
    hint: tuple[Path, tuple[str, ...]] | None = None,
    catalog: str | None = None,
) -> list[GateError]:
    """What a collection's outcome refuses, each said once; `hint`: (the project root, its
    [gate] paths), for naming the paths a workspace package missing from them needs."""
    from killmap.catalog.workspace import missing_module_hint
    from killmap.engine import error_line, escaped_note, nothing_collected, refused_arguments

    errors: list[GateError] = []
    if outcome.escaped:
        # Restored already; said, because a collection that writes into the user's
        # tree would do it again under every mutant of `killmap run`.
        errors.append(GateError(f"{where} {escaped_note(outcome.escaped, engine.displaced)}"))
    if outcome.status == "timeout":
        errors.append(GateError(f"{where} did not finish in {COLLECT_TIMEOUT:.0f}s"))
    for node, message in outcome.collect_errors:
        failure = f"{node or 'the session'}: {error_line(message)}"
        if hint is not None:
            failure += missing_module_hint(hint[0], hint[1], message)
        failure += leave_out_hint(node)
        if failure not in said:
            said.add(failure)
            errors.append(GateError(f"{where} failed in {failure}"))
    if errors or outcome.collect_errors:
        return errors
    if not outcome.finished:
        errors.append(GateError(f"{where}: pytest ended without a report; log tail: {outcome.log_tail[-300:]}"))
    if refused_arguments(outcome):
        errors.append(GateError(f"{where}: pytest stopped before collecting: {refused_arguments(outcome)}"))
    if not outcome.collected:
        errors.append(GateError(f"{where}: {nothing_collected(outcome)}", file=catalog if outcome.deselected else None))
    return errors


def _unloadable(
    engine, worker, index: int, mutants: list[Mutant], deselect: tuple[str, ...], coverage: dict | None
) -> list[GateError]:
    """Each mutant whose tests cannot load: collected with the mutant in the sandbox, as `run`
    runs it, and its mutated module imported if the collection did not (the origin proof).
    A mutant that breaks an import at run time was `broken` only once `run` ran it; it is
    said here in the same words (judge.load_failure). Collection only: no test runs.

    Only the mutants whose change the unmutated collection ran (or could not vouch for): up
    to its first changed statement a mutant runs what the original runs, so a collection that
    never runs the change loads under the mutant as it did (the argument test selection rests
    on, docs/reach.md)."""
    from killmap.catalog.project import module_name
    from killmap.engine import Scenario
    from killmap.mutate.blame import broken_field
    from killmap.verdict.judge import load_failure

    problems = []
    for number, mutant in enumerate(mutants):
        if not _collection_runs_the_change(mutant, (coverage or {}).get(mutant.file)):
            continue
        settings = mutant.mutation.settings
        scenario = Scenario(
            label=f"collect-{index + 1}-mutant-{number + 1}",
            tests=settings.tests + deselect,
            timeout=COLLECT_TIMEOUT,
            sys_path=settings.paths,
            writes=((mutant.file, mutant.mutated or ""),),
            mutated_file=mutant.file,
            expect_module=module_name(mutant.file, settings.paths),
            confine=settings.confine,
            collect_only=True,
            user_args=settings.arguments,
        )
        failure = load_failure(engine.run(worker, scenario), settings.paths)
        if failure is not None:
            problems.append(mutant.mutation.fail(f"broken: {failure}", broken_field(mutant.mutation)))
    return problems


def _collection_runs_the_change(mutant: Mutant, lines: dict[str, list[int]] | None) -> bool:
    """Whether the unmutated collection ran a changed line of the mutant, or cannot say: the
    file never imported while collecting (the origin proof imports it), or not vouched for."""
    from killmap.engine import UNPROVEN
    from killmap.verdict.reach import region_of

    if not lines or "" not in lines or UNPROVEN in lines:
        return True
    region = region_of(mutant.original, mutant.changed_lines)
    return region.import_time or bool(region.lines.intersection(lines[""]))
