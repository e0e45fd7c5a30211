"""`killmap review [BASE]`: a pull request reviewed in one command.

It runs red-first (are the change's tests red without its fix?), then sweeps the source files
the fix changed with `--changed BASE` (the mutants on the changed lines, arid ones not run,
one reported per line or gap), reads the gate's contract changes when the base's and the
head's reports are given, and writes red-first's reports, the sweep's, and the review
(review.md, the pull request's comment, and review.json). Exit 0 the change's tests are
proven, 1 they are not (or, with --fail-on-survivors, a finding sits on the change), 2 bad
input.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from killmap.commands.shared import (
    add_annotations_option,
    add_cache_options,
    add_report_options,
    cache_dir,
    checked_timeout,
    project_root,
    report_dir,
    sweep_ops,
    usable_jobs,
)
from killmap.errors import GateError

if TYPE_CHECKING:  # imported when the command runs, not to parse
    from killmap.engine import Launch
    from killmap.verdict.redfirst import RedFirstResult


def add_parser(sub) -> None:
    review = sub.add_parser(
        "review", help="review a pull request: its tests proven red-first, the survivors on the lines it changed"
    )
    review.add_argument(
        "base",
        nargs="?",
        default=None,
        metavar="BASE",
        help="the revision before the change (default: the merge base with main)",
    )
    review.add_argument(
        "--worktree",
        action="store_true",
        help="the change ends at the working tree (uncommitted files too), not at HEAD",
    )
    review.add_argument(
        "--catalog",
        action="append",
        type=Path,
        default=[],
        dest="catalogs",
        help="take the [gate] tests and paths, and [sweep], from this catalog",
    )
    review.add_argument("--ops", default="killmap,mutmut", help="the sweep's operator families")
    review.add_argument("--timeout", type=float, default=None, help="seconds for one red-first tree's run")
    review.add_argument(
        "--base-report",
        type=Path,
        default=None,
        metavar="FILE",
        help="the base's killmap.json: the gate's contract changes against it are shown",
    )
    review.add_argument(
        "--head-report",
        type=Path,
        default=None,
        metavar="FILE",
        help="the head's killmap.json, for --base-report (default: the report folder's)",
    )
    review.add_argument(
        "--outside-the-diff",
        action="store_true",
        help="also run the mutants outside the changed lines, in the definitions the change touched, "
        "to count the older survivors there",
    )
    review.add_argument(
        "--fail-on-survivors",
        action="store_true",
        help="exit 1 when a survivor or unreached mutant is reported on the changed lines",
    )
    add_report_options(review)
    add_cache_options(review)
    add_annotations_option(review)
    review.set_defaults(main=main)


def main(args: argparse.Namespace) -> int:
    from killmap.engine import Launch
    from killmap.report import redfirst_report, review_report, sweep_report
    from killmap.report.document import check_report_dir

    root = project_root()
    jobs = usable_jobs(args.jobs)
    checked_timeout(args.timeout)
    folder = report_dir(args.report_dir, root)
    check_report_dir(
        folder, [*redfirst_report.REPORT_FILES.values(), *sweep_report.FILES.values(), *review_report.FILES.values()]
    )
    # Bad input is refused before anything runs.
    ops = sweep_ops(args.ops)
    contracts = _contract_changes(args, folder)
    with Launch(2) as launch:  # one sandbox for HEAD, one for the fix reverted
        proven = _red_first(root, args, launch)
    red_doc = redfirst_report.to_document(proven, root)
    sweep_doc = _sweep(root, args, proven, ops, jobs)
    doc = review_report.to_document(red_doc, sweep_doc, contracts, fail_on_survivors=args.fail_on_survivors)
    redfirst_report.write_reports(red_doc, folder)
    if "schema" in sweep_doc:
        sweep_report.write(sweep_doc, folder)
    paths = review_report.write(doc, folder)
    _say("")
    print(review_report.to_markdown(doc, terminal=True), end="")
    shown = os.path.relpath(paths["markdown"]) if paths["markdown"].is_relative_to(Path.cwd()) else paths["markdown"]
    _say(f"\nreports: {shown} (+ {paths['json'].name}, red-first's and the sweep's)")
    _publish(doc, paths["markdown"], args.annotations)
    return doc["exit_code"]


def _say(line: str) -> None:
    print(line, flush=True)


def _red_first(root: Path, args: argparse.Namespace, launch: Launch) -> RedFirstResult:
    from killmap.verdict.redfirst import RedFirstOptions, run_red_first

    options = RedFirstOptions(
        base=args.base, worktree=args.worktree, catalogs=tuple(args.catalogs), timeout=args.timeout, cwd=Path.cwd()
    )
    return run_red_first(root, options, _say, launch)


def _sweep(
    root: Path, args: argparse.Namespace, proven: RedFirstResult, ops: tuple[str, ...], jobs: int
) -> dict[str, Any]:
    """The sweep of the source files the fix changed, scoped to the change since red-first's
    BASE: the same files red-first reverted, so the two halves see one change. No Python
    source changed, nothing is swept (and no sweep report is written)."""
    from killmap.engine import Launch
    from killmap.report.sweep_report import to_document
    from killmap.verdict.changed import ChangeSince
    from killmap.verdict.lab import LabOptions
    from killmap.verdict.sweep import Portion, load_optional_catalogs, resolve_targets, run_sweep

    catalogs = load_optional_catalogs(root, tuple(args.catalogs))
    files = [c.path for c in proven.change.sources if c.path.endswith(".py") and (root / c.path).is_file()]
    if not files:
        return {"sweep": {"mutants": []}}
    targets = resolve_targets(root, files, catalogs)
    options = LabOptions(
        jobs=jobs, use_cache=not args.no_cache, write_cache=not args.no_cache_write, cache_dir=cache_dir(args.cache_dir)
    )
    portion = Portion(change=ChangeSince(root, proven.change.base), lines_only=not args.outside_the_diff)
    with Launch(jobs) as launch:
        result = run_sweep(root, targets, ops, options, catalogs, portion=portion, launch=launch)
    return to_document(result, root)


def _contract_changes(args: argparse.Namespace, folder: Path) -> dict[str, Any] | None:
    if args.base_report is None:
        if args.head_report is not None:
            raise GateError("--head-report goes with --base-report FILE", field="--head-report")
        return None
    from killmap.report import diff_report

    head = args.head_report or folder / "killmap.json"
    return diff_report.compare(diff_report.read_report(args.base_report), diff_report.read_report(head))


def _publish(doc: dict[str, Any], markdown: Path, mode: str) -> None:
    """Warnings at the findings' lines, and review.md as the job summary."""
    from killmap.report.annotations import append_job_summary, enabled
    from killmap.report.review_report import workflow_commands

    if not enabled(mode, os.environ):
        return
    for line in workflow_commands(doc, os.environ.get("GITHUB_WORKSPACE")):
        print(line, flush=True)
    append_job_summary(markdown, [], os.environ)
