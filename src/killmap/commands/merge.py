"""`killmap merge`: shard reports joined into one document, and every format rendered again."""

from __future__ import annotations

import argparse
from pathlib import Path

from killmap.commands.shared import (
    add_annotations_option,
    add_catalog_option,
    catalog_options,
    project_root,
    report_dir,
    reports_line,
)
from killmap.wording import counted


def add_parser(sub) -> None:
    merge = sub.add_parser("merge", help="join shard reports into one, and render every format")
    merge.add_argument(
        "reports",
        nargs="+",
        type=Path,
        metavar="REPORT",
        help="killmap.json files, or a sweep's killmap-sweep.json files",
    )
    merge.add_argument("--report-dir", type=Path, default=None, help="where the merged reports go")
    add_catalog_option(merge)
    add_annotations_option(merge)
    merge.set_defaults(main=main)


def main(args: argparse.Namespace) -> int:
    root = project_root()
    from killmap.catalog.plan import load
    from killmap.report.annotations import publish
    from killmap.report.cells import held_count
    from killmap.report.document import check_report_dir, merge, write_reports
    from killmap.report.sweep_report import is_sweep_report

    reports = report_dir(args.report_dir, root)
    check_report_dir(reports)
    if is_sweep_report(args.reports[0]):
        return _merge_sweeps(args.reports, reports)
    _, mutations = load(root, catalog_options(args))
    document = merge(args.reports, [m.name for m in mutations])
    paths = write_reports(document, reports)
    print(
        f"merged {counted(len(args.reports), 'report')}: "
        f"{held_count(document)}/{len(document['mutations'])} contracts held; "
        f"{reports_line({'json': paths['json']})}"
    )
    publish(document, paths["markdown"], args.annotations)
    return document["exit_code"]


def _merge_sweeps(paths: list[Path], folder: Path) -> int:
    """Sweep shard reports (killmap-sweep.json) joined, and the sweep's formats rendered."""
    from killmap.report.console import make_console
    from killmap.report.sweep_report import merge, render, write

    document = merge(paths)
    console = make_console()
    render(console, document)
    written = write(document, folder)
    said = f"merged {counted(len(paths), 'sweep report')}; {reports_line({'json': written['json']})}"
    console.print(said, markup=False)  # the report folder is the user's path
    return 0
