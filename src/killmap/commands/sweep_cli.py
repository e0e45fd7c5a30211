"""`killmap sweep`: the command, from parsed arguments to the reports and an exit code.

Exit 0 when the sweep ran (survivors are its findings, listed, not a failed gate), 2 for
bad input or an unusable mutmut, like every other command.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from killmap.commands.shared import (
    add_cache_options,
    add_report_options,
    cache_dir,
    project_root,
    reports_line,
    sweep_ops,
    usable_jobs,
)
from killmap.commands.shared import report_dir as given_report_dir
from killmap.errors import GateError

if TYPE_CHECKING:  # imported where it starts the workers, not before
    from killmap.engine import Launch


def add_parser(sub) -> None:
    sweep = sub.add_parser(
        "sweep",
        help="anonymous mutants (mutmut's and killmap's operators) over the "
        "catalog's targets: find what the named catalog misses",
    )
    sweep.add_argument(
        "targets",
        nargs="*",
        metavar="TARGET",
        help="files, folders or file::Qualified.name (default: every catalog target)",
    )
    sweep.add_argument(
        "--ops", default="mutmut,killmap", help="operator families, comma-separated: mutmut, killmap (default both)"
    )
    sweep.add_argument(
        "--catalog",
        action="append",
        type=Path,
        default=[],
        dest="catalogs",
        help="catalog(s) whose targets and [gate] to use; with --promote, the one to write",
    )
    sweep.add_argument(
        "--tests",
        action="append",
        default=[],
        metavar="PATH",
        help="pytest targets to run instead of the catalog's [gate] tests (repeatable)",
    )
    add_report_options(sweep)
    add_cache_options(sweep)
    sweep.add_argument("--baseline-runs", type=int, default=2, help="baseline runs for the flake guard")
    sweep.add_argument("--no-confirm", action="store_true", help="skip the confirming re-run")
    sweep.add_argument(
        "--every-red",
        action="store_true",
        help="run each killed mutant's every selected test, for its whole red set "
        "(slower; by default a mutant's run stops at its first red test)",
    )
    sweep.add_argument(
        "--promote",
        metavar="ID",
        default=None,
        help="turn this killed mutant of the last sweep into a named catalog entry",
    )
    sweep.add_argument("--name", default=None, help="with --promote: the new mutation's name")
    _add_portion_options(sweep)


def _add_portion_options(sweep) -> None:
    """Which of the mutants this sweep runs: a shard of them, those of a change."""
    sweep.add_argument(
        "--shard",
        default=None,
        metavar="K/N",
        help="sweep only shard K of N (1-based); join the reports with 'killmap merge'",
    )
    sweep.add_argument(
        "--durations",
        type=Path,
        default=None,
        metavar="REPORT",
        help="an earlier killmap-sweep.json: shards balanced by its mutants' durations (default: round-robin)",
    )
    sweep.add_argument(
        "--changed",
        nargs="?",
        const="",
        default=None,
        metavar="BASE",
        help="only the definitions the change since BASE touched, its lines marked (default: the merge base "
        "with the main branch)",
    )
    sweep.add_argument(
        "--lines-only",
        action="store_true",
        help="with --changed: run only the mutants on the changed lines; the definitions' others are counted",
    )
    sweep.set_defaults(main=main)


def main(args: argparse.Namespace) -> int:
    root = project_root()
    report_dir = given_report_dir(args.report_dir, root)
    if args.promote is not None:
        return _promote(root, args, report_dir)
    if args.name is not None:
        raise GateError("--name goes with --promote ID", field="--name")
    jobs = usable_jobs(args.jobs)
    if args.baseline_runs < 1:
        raise GateError("--baseline-runs must be at least 1", field="--baseline-runs")
    from killmap.engine import Launch

    # The workers start now, while the sweep imports libcst and mutmut and enumerates its
    # mutants (about 0.9 s of one core on a 200-line module), as `run` starts them at its
    # first line (launch.py says why).
    with Launch(jobs) as launch:
        return _sweep_launched(root, args, report_dir, jobs, launch)


def _sweep_launched(root: Path, args: argparse.Namespace, report_dir: Path, jobs: int, launch: Launch) -> int:
    from killmap.report.console import make_console
    from killmap.report.document import check_report_dir
    from killmap.report.sweep_report import SweepProgress, render, to_document, write
    from killmap.verdict.lab import LabOptions
    from killmap.verdict.sweep import load_optional_catalogs, resolve_targets, run_sweep, unsaid_gates

    ops = sweep_ops(args.ops)
    check_report_dir(report_dir)
    catalogs = load_optional_catalogs(root, tuple(args.catalogs))
    targets = resolve_targets(root, list(args.targets), catalogs)
    if args.tests:
        targets = _with_tests(targets, tuple(args.tests))
    options = LabOptions(
        jobs=jobs,
        use_cache=not args.no_cache,
        write_cache=not args.no_cache_write,
        cache_dir=cache_dir(args.cache_dir),
        baseline_runs=args.baseline_runs,
        confirm=not args.no_confirm,
    )
    console = make_console()
    portion = _portion(root, args)
    if not args.catalogs and not args.tests:
        for line in unsaid_gates(targets, catalogs):
            console.print(line, markup=False, highlight=False)
    with SweepProgress(console) as progress:
        result = run_sweep(
            root, targets, ops, options, catalogs, progress, portion, every_red=args.every_red, launch=launch
        )
    document = to_document(result, root)
    render(console, document)
    paths = write(document, report_dir)
    console.print(reports_line(paths), markup=False)  # the report folder is the user's path
    return 0


def _portion(root: Path, args: argparse.Namespace):
    """--shard, --durations and --changed: which of the enumerated mutants this sweep runs."""
    from killmap.catalog.shards import read_durations
    from killmap.commands.run import parse_shard
    from killmap.verdict.sweep import Portion

    shard = parse_shard(args.shard)
    if args.durations is not None and shard is None:
        raise GateError("--durations balances shards: it goes with --shard K/N", field="--durations")
    durations = read_durations(args.durations, "sweep") if args.durations is not None else None
    change = None
    if args.lines_only and args.changed is None:
        raise GateError("--lines-only goes with --changed [BASE]", field="--lines-only")
    if args.changed is not None:
        from killmap.verdict.changed import ChangeSince

        change = ChangeSince(root, args.changed or None)
    return Portion(shard, durations, change, lines_only=args.lines_only)


def _with_tests(targets, tests: tuple[str, ...]):
    """--tests: the same rule as [gate] tests, paths or node ids inside the project."""
    from dataclasses import replace

    from killmap.catalog.entries import why_outside_project

    for entry in tests:
        problem = why_outside_project(entry)
        if problem:
            raise GateError(f"{entry!r} {problem}: --tests takes paths or node ids inside the project", field="--tests")
    return [replace(t, settings=replace(t.settings, tests=tests)) for t in targets]


def _promote(root: Path, args: argparse.Namespace, report_dir: Path) -> int:
    from killmap.commands.promote import promote

    if not args.name:
        raise GateError("--promote ID needs --name NAME: the named mutation it becomes", field="--name")
    if args.targets or len(args.catalogs) > 1:
        raise GateError("--promote takes no TARGET and at most one --catalog", field="--promote")
    print(promote(root, args.promote, args.name, args.catalogs[0] if args.catalogs else None, report_dir))
    return 0
