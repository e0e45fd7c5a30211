"""`killmap diff BASE.json HEAD.json`: what a change did to the contracts (report/diff_report.py).

Exit 1 when a contract that held on the base does not hold on the head (or a sweep mutant
the base killed survives), else 0; an unreadable report is one line and exit 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from killmap.commands.shared import EXIT_FAILED, EXIT_HELD, add_annotations_option
from killmap.errors import GateError


def add_parser(sub) -> None:
    diff = sub.add_parser("diff", help="compare two killmap reports: the contracts a change broke or fixed")
    diff.add_argument("base", type=Path, metavar="BASE", help="the base's killmap.json or killmap-sweep.json")
    diff.add_argument("head", type=Path, metavar="HEAD", help="the head's report, of the same kind")
    diff.add_argument("--format", choices=("terminal", "markdown", "json"), default="terminal", help="what is printed")
    diff.add_argument("--markdown", type=Path, default=None, metavar="FILE", help="also write the Markdown here")
    diff.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write the JSON here")
    add_annotations_option(diff)
    diff.set_defaults(main=main)


def main(args: argparse.Namespace) -> int:
    from killmap.report import diff_report

    diff = diff_report.compare(diff_report.read_report(args.base), diff_report.read_report(args.head))
    rendered = {
        "terminal": diff_report.to_text,
        "markdown": diff_report.to_markdown,
        "json": lambda d: json.dumps(d, indent=2) + "\n",
    }
    _write(args.markdown, diff_report.to_markdown(diff), "--markdown")
    _write(args.json, rendered["json"](diff), "--json")
    sys.stdout.write(rendered[args.format](diff))
    _annotate_regressions(diff, args.annotations)
    return EXIT_FAILED if diff["regressions"] else EXIT_HELD


def _write(path: Path | None, text: str, option: str) -> None:
    if path is None:
        return
    from killmap.report.cells import write_whole

    try:
        write_whole({path: text})
    except OSError as exc:
        raise GateError(f"cannot write {path}: {exc.strerror}", field=option) from None


def _annotate_regressions(diff: dict, mode: str) -> None:
    """Only the regressions: what this change broke, not the catalog's older failures."""
    from killmap.report.annotations import enabled, escape_data, escape_property, workspace_path

    if not enabled(mode, os.environ):
        return
    workspace = os.environ.get("GITHUB_WORKSPACE")
    for change in diff["changes"]:
        if change["change"] != "regressed":
            continue
        path = workspace_path(diff["root"], change["file"], workspace)
        line = min(change["lines"] or [1])
        title = f"killmap regression: {change['name']}"
        message = f"{change['base']} on the base, {change['head']} here: {change['detail']}"
        props = f"file={escape_property(path)},line={line},title={escape_property(title)}"
        print(f"::error {props}::{escape_data(message)}")
