"""The reviewer's commands on the command line: red-first, try, prove.

cli.py stays a thin parser: it calls `add_commands` while building its parser and
`dispatch` for these commands; each command's logic lives in its own module (redfirst,
trying, prove). Exit codes as everywhere: 0 the claim holds, 1 it does not, 2 bad input.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from killmap.commands.shared import REPORTS_ON_REQUEST_HELP, add_report_options, report_dir, usable_jobs
from killmap.errors import GateError

if TYPE_CHECKING:  # imported where it starts the workers, not before
    from killmap.engine import Launch

COMMANDS = ("red-first", "try", "prove")


def add_commands(sub) -> None:
    # One declaration per command, in the order `killmap --help` lists them.
    _add_red_first(sub)
    _add_try(sub)
    _add_prove(sub)


def _add_red_first(sub) -> None:
    red = sub.add_parser("red-first", help="revert the fix, keep the tests: do they fail without it?")
    red.add_argument(
        "base",
        nargs="?",
        default=None,
        metavar="BASE",
        help="the revision before the change (default: the merge base with main)",
    )
    red.add_argument(
        "--worktree",
        action="store_true",
        help="the change ends at the working tree (uncommitted files too), not at HEAD",
    )
    red.add_argument(
        "--revert", nargs="+", default=[], metavar="PATH", help="revert only these changed files or folders"
    )
    red.add_argument(
        "--all",
        action="store_true",
        dest="all_tests",
        help="run every test in both trees, not only the changed and reaching ones",
    )
    red.add_argument(
        "--expect",
        nargs="+",
        default=[],
        metavar="ID",
        help="the exact fail-to-pass set (node ids or prefixes, as kills)",
    )
    red.add_argument(
        "--catalog",
        action="append",
        type=Path,
        default=[],
        dest="catalogs",
        help="take the [gate] tests and paths from this catalog",
    )
    red.add_argument("--timeout", type=float, default=None, help="seconds for one tree's run")
    red.add_argument("--report-dir", type=Path, default=None, help="where reports go (default: reports/)")


def _add_try(sub) -> None:
    trying = sub.add_parser("try", help="run one ad-hoc mutation and show what turns red")
    trying.add_argument("target", metavar="TARGET", help="path/to/file.py or path/to/file.py::Qualified.name")
    trying.add_argument("--op", required=True, help="the operator (see 'The catalog' in the README)")
    from killmap.catalog.reader import OP_FIELDS

    for name in OP_FIELDS:
        trying.add_argument(f"--{name}", default=None, metavar="TEXT", help=f"the operator's {name!r} field")
    trying.add_argument("--count", type=int, default=None, help="sites the operator must match (default 1)")
    trying.add_argument("--timeout", type=float, default=None, help="seconds for the mutant's run")
    trying.add_argument("--werror", action="store_true", default=None, help="dead code the mutant leaves is broken")
    trying.add_argument("--note", default=None, help="the saved entry's note")
    trying.add_argument(
        "--save",
        default=None,
        metavar="NAME",
        help="append it to the catalog as NAME, with kills = the observed red set, and a pin",
    )
    trying.add_argument(
        "--catalog",
        type=Path,
        default=None,
        help="the catalog to save into and take [gate] from (default: the only one)",
    )
    # One mutant and its baseline: a third sandbox would have nothing to run.
    add_report_options(trying, jobs=min(os.cpu_count() or 1, 2), reports=REPORTS_ON_REQUEST_HELP)


def _add_prove(sub) -> None:
    prove = sub.add_parser("prove", help="which named defects does this test catch?")
    prove.add_argument("tests", nargs="+", metavar="TEST", help="pytest node ids (or a file)")
    prove.add_argument(
        "--mutation", action="append", default=[], metavar="NAME", help="also run this catalog mutation, reached or not"
    )
    prove.add_argument("--catalog", action="append", type=Path, default=[], dest="catalogs")
    add_report_options(prove, reports=REPORTS_ON_REQUEST_HELP)


def dispatch(root: Path, args: argparse.Namespace) -> int:
    if hasattr(args, "jobs"):
        args.jobs = usable_jobs(args.jobs)
    if getattr(args, "timeout", None) is not None and not 0 < args.timeout <= 86400:
        raise GateError("--timeout must be above 0 and at most 86400 seconds", field="--timeout")
    from killmap.engine import Launch

    # Their workers start now, while the command reads and builds (launch.py says why).
    if args.command == "red-first":
        with Launch(2) as launch:  # one sandbox for HEAD, one for the fix reverted
            return _red_first(root, args, launch)
    with Launch(args.jobs) as launch:
        if args.command == "try":
            return _try(root, args, launch)
        return _prove(root, args, launch)


def _red_first(root: Path, args: argparse.Namespace, launch: Launch) -> int:
    from killmap.report.document import check_report_dir
    from killmap.report.redfirst_report import REPORT_FILES, to_document, to_markdown, write_reports
    from killmap.verdict.redfirst import run_red_first
    from killmap.verdict.redfirst_contract import RedFirstOptions

    folder = args.report_dir or root / "reports"
    folder = folder if folder.is_absolute() else Path.cwd() / folder
    check_report_dir(folder, REPORT_FILES.values())
    options = RedFirstOptions(
        base=args.base,
        worktree=args.worktree,
        revert=tuple(args.revert),
        all_tests=args.all_tests,
        expect=tuple(args.expect),
        catalogs=tuple(args.catalogs),
        timeout=args.timeout,
        cwd=Path.cwd(),
    )
    result = run_red_first(root, options, lambda line: print(line, flush=True), launch)
    document = to_document(result, root)
    paths = write_reports(document, folder)
    print()
    print(to_markdown(document, terminal=True), end="")
    shown = os.path.relpath(paths["markdown"]) if paths["markdown"].is_relative_to(Path.cwd()) else paths["markdown"]
    print(f"\nreports: {shown} (+ {', '.join(p.name for k, p in paths.items() if k != 'markdown')})")
    return document["exit_code"]


def _try(root: Path, args: argparse.Namespace, launch: Launch) -> int:
    from killmap.catalog.reader import OP_FIELDS
    from killmap.commands.trying import TryOptions, run_try

    fields = {name: getattr(args, name) for name in OP_FIELDS if getattr(args, name) is not None}
    options = TryOptions(
        target=args.target,
        op=args.op,
        fields=fields,
        count=args.count,
        timeout=args.timeout,
        werror=args.werror,
        note=args.note,
        save=args.save,
        catalog=args.catalog,
        jobs=args.jobs,
        cwd=Path.cwd(),
        reports=_checked_report_dir(args, root),
    )
    return run_try(root, options, lambda line: print(line, flush=True), launch)


def _prove(root: Path, args: argparse.Namespace, launch: Launch) -> int:
    from dataclasses import asdict

    from killmap.commands.prove import ProveOptions, render, run_prove
    from killmap.commands.shared import write_lab_reports
    from killmap.verdict.baseline import baseline_line

    reports = _checked_report_dir(args, root)

    def progress(kind, data) -> None:
        if kind == "baseline-done":
            print(baseline_line(data), flush=True)

    proofs, result = run_prove(
        root,
        ProveOptions(
            tests=tuple(args.tests), mutations=tuple(args.mutation), catalogs=tuple(args.catalogs), jobs=args.jobs
        ),
        progress,
        launch,
    )
    # The verdicts as the gate's reports, with what prove read from them per test.
    proved = [{"test": p.test, "sentence": p.sentence(), "findings": asdict(p)["findings"]} for p in proofs]
    written = write_lab_reports(result, root, reports, {"prove": proved}) if reports else None
    print()
    print(render(proofs), end="")
    if written:
        print(written)
    return 1 if any(p.caught_none for p in proofs) else 0


def _checked_report_dir(args: argparse.Namespace, root: Path) -> Path | None:
    """--report-dir as run reads it, refused before anything runs if it cannot be written;
    None when not given: try and prove write nothing unless asked."""
    from killmap.report.document import check_report_dir

    if args.report_dir is None:
        return None
    folder = report_dir(args.report_dir, root)
    check_report_dir(folder)
    return folder
