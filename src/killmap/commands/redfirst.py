"""`killmap red-first [BASE]`: the command, from parsed arguments to its reports and an exit code.

It parses, runs red-first (verdict.redfirst) on workers started at its first line, and writes
and prints the reports (report.redfirst_report). Exit 0 the claim holds, 1 it does not, 2 bad
input.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from killmap.commands.shared import REPORTS_HELP, checked_timeout, project_root, report_dir


def add_parser(sub) -> None:
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
    red.add_argument("--report-dir", type=Path, default=None, help=REPORTS_HELP)
    red.set_defaults(main=main)


def main(args: argparse.Namespace) -> int:
    from killmap.engine import Launch
    from killmap.report.document import check_report_dir
    from killmap.report.redfirst_report import REPORT_FILES, to_document, to_markdown, write_reports
    from killmap.verdict.redfirst import RedFirstOptions, run_red_first

    root = project_root()
    checked_timeout(args.timeout)
    # The workers start now, while the command reads git and builds its trees (launch.py says why).
    with Launch(2) as launch:  # one sandbox for HEAD, one for the fix reverted
        folder = report_dir(args.report_dir, root)
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
    markdown = paths["markdown"]
    shown = os.path.relpath(markdown) if markdown.is_relative_to(Path.cwd()) else markdown
    print(f"\nreports: {shown} (+ {', '.join(p.name for k, p in paths.items() if k != 'markdown')})")
    return document["exit_code"]
