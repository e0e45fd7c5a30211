"""`killmap run`: the gate. Every selected mutation's verdict, the reports, and the exit code."""

from __future__ import annotations

import argparse
import re
import threading
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from killmap import timeline
from killmap.commands.shared import (
    EXIT_HELD,
    add_annotations_option,
    add_cache_options,
    add_report_options,
    cache_dir,
    project_root,
    report_dir,
    reports_line,
    usable_jobs,
)
from killmap.errors import GateError
from killmap.wording import counted

if TYPE_CHECKING:  # imported where it starts the workers, not before
    from killmap.engine import Launch

_ASCII_NUMBER = re.compile(r"[0-9]{1,9}")


def add_parser(sub) -> None:
    run = sub.add_parser("run", help="run the gate")
    run.add_argument("catalogs", nargs="*", type=Path, help="catalog files (default: mutations/*.toml)")
    run.add_argument("--only", action="append", default=[], metavar="NAME", help="run only this mutation")
    add_report_options(run)
    add_cache_options(run)
    run.add_argument(
        "--changed",
        nargs="?",
        const="",
        default=None,
        metavar="BASE",
        help="only mutations whose target, kills tests or entry changed since BASE "
        "(default: the merge base with the main branch)",
    )
    run.add_argument("--baseline-runs", type=int, default=2, help="baseline runs for the flake guard")
    run.add_argument("--no-confirm", action="store_true", help="skip the confirming re-run")
    run.add_argument(
        "--seed",
        default=None,
        metavar="N|random",
        help="what Hypothesis and pytest-randomly draw from (default: a fixed seed; "
        "'random': a new draw every run, to explore; docs/randomized.md)",
    )
    run.add_argument(
        "--no-swap",
        action="store_true",
        help="run every mutant in a fresh pytest session instead of swapping its code into a fork of the collected one",
    )
    run.add_argument(
        "--reach-tracer",
        choices=("auto", "coverage"),
        default="auto",
        help="what records which lines each baseline test runs: auto is sys.monitoring "
        "on Python 3.12+, probes in the target files' code on 3.10 and 3.11 (tests at full speed "
        "either way), coverage's C tracer where those cannot vouch or turn a test red; coverage: "
        "coverage's C tracer always",
    )
    run.add_argument(
        "--shard",
        default=None,
        metavar="K/N",
        help="run only shard K of N (1-based); join the reports with 'killmap merge'",
    )
    run.add_argument(
        "--durations",
        type=Path,
        default=None,
        metavar="REPORT",
        help="an earlier killmap.json: shards balanced by its mutations' durations (default: round-robin)",
    )
    add_annotations_option(run)
    run.set_defaults(main=main)


def main(args: argparse.Namespace) -> int:
    root = project_root()
    args.jobs = usable_jobs(args.jobs)
    if args.baseline_runs < 1:
        raise GateError("--baseline-runs must be at least 1", field="--baseline-runs")
    from killmap.engine import Launch

    timeline.mark("launch")
    # The workers start now, while the gate imports and reads its catalogs (launch.py says why).
    with Launch(args.jobs, parse_seed(args.seed)) as launch:  # no more sandboxes than jobs (lab._sandboxes)
        return _run_launched(root, args, launch)


def _run_launched(root: Path, args: argparse.Namespace, launch: Launch) -> int:
    timeline.mark("launched")
    with timeline.span("imports"):
        from killmap.catalog.plan import read_plan
        from killmap.report.document import check_report_dir
        from killmap.verdict.lab import LabOptions, check_gates_alone, run_mutations

    reports = report_dir(args.report_dir, root)
    check_report_dir(reports)
    options = _lab_options(args, LabOptions)
    progress = _LateProgress()
    names = None
    if args.changed is not None:
        from killmap.verdict.changed import changed_mutations

        names = changed_mutations(root, options, args.changed or None)
        options = LabOptions(**{**options.__dict__, "names": tuple(names)})
    with timeline.span("plan"):
        plan = read_plan(root, options)  # before the run: a bad --durations costs no time
    if names is not None:
        progress.console().print(
            f"--changed: {counted(len(names), 'mutation')} {'sees' if len(names) == 1 else 'see'} a change: "
            f"{', '.join(names) or 'none'}",
            markup=False,
        )
        if not names:
            return EXIT_HELD
    if not plan.mutations:  # nothing to gate: the [gate] tables are all there is to refuse
        with timeline.span("gates alone"):
            check_gates_alone(root, plan.catalogs, launch)
    with progress, timeline.span("lab"):
        result = run_mutations(root, plan.mutations, options, progress, launch=launch, recorded=plan.durations)
    from killmap.report.console import render

    console = progress.console()
    with timeline.span("render"):
        render(console, result, plan.named)
    with timeline.span("reports"):
        return _reported(root, args, options, plan, result, reports, console)


def _lab_options(args: argparse.Namespace, lab_options: Any) -> Any:
    """The lab's options as `run`'s flags set them (`lab_options`: LabOptions, imported late)."""
    return lab_options(
        catalogs=tuple(args.catalogs),
        only=tuple(args.only),
        jobs=args.jobs,
        use_cache=not args.no_cache,
        write_cache=not args.no_cache_write,
        cache_dir=cache_dir(args.cache_dir),
        baseline_runs=args.baseline_runs,
        confirm=not args.no_confirm,
        shard=parse_shard(args.shard),
        durations=_durations_for_shards(args),
        swap=not args.no_swap,
        tracer=args.reach_tracer,
        seed=parse_seed(args.seed),
    )


def _reported(root: Path, args: argparse.Namespace, options, plan, result, reports: Path, console) -> int:
    """The reports written and published, the line naming them said; the gate's exit code."""
    from killmap.report.annotations import publish
    from killmap.report.document import to_json, write_reports

    document = to_json(result, root)
    if options.shard:
        document["shard"] = args.shard
        document["split"] = plan.split.describe(options.shard[0]) if plan.split else None
    partial = _selection(options.only, args.changed, len(plan.mutations), plan.named)
    if partial:
        document["selection"] = partial
    paths = write_reports(document, reports)
    # A --report-dir of the user's may hold square brackets: printed as it is, not as markup.
    console.print(reports_line(paths) + (f": {partial['said']}" if partial else ""), markup=False)
    publish(document, paths["markdown"], args.annotations)
    return document["exit_code"]


def _selection(only: tuple[str, ...], changed: str | None, run: int, named: int) -> dict[str, Any] | None:
    """What a report of part of the catalogs says it holds: the reports of a run with --only
    or --changed replace the last full ones (dacite: `run --only NAME` after a full run left
    a report of one mutation, with nothing saying so)."""
    if not only and changed is None:
        return None
    by = "--only" if only else "--changed"
    return {
        "only": list(only),
        "changed": changed,
        "mutations": run,
        "of": named,
        "said": f"the {counted(run, 'mutation')} {by} chose, of the catalogs' {named}",
    }


class _LateProgress:
    """The gate's progress bar, begun at the lab's first event: rich (a tenth of a second, a third
    when the machine is loaded) is imported then, while the workers copy and collect, not on the
    gate's way to its engine, which the workers' sandboxes wait for."""

    def __init__(self) -> None:
        self._stack = ExitStack()
        self._console: Any = None
        self._live: Any = None
        self._lock = threading.Lock()  # the lab's events come from its threads too

    def console(self) -> Any:
        with self._lock:
            return self._made_console()

    def _made_console(self) -> Any:
        if self._console is None:
            from killmap.report.console import make_console

            self._console = make_console()
        return self._console

    def __call__(self, kind: str, data: Any) -> None:
        with self._lock:
            if self._live is None:
                from killmap.report.console import LiveProgress

                self._live = self._stack.enter_context(LiveProgress(self._made_console()))
                timeline.mark("progress begun")
        self._live(kind, data)

    def __enter__(self) -> _LateProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stack.__exit__(*exc)


def _durations_for_shards(args: argparse.Namespace) -> Path | None:
    if args.durations is not None and args.shard is None:
        raise GateError("--durations balances shards: it goes with --shard K/N", field="--durations")
    return args.durations


def parse_seed(text: str | None) -> int | None:
    """--seed: the default fixed seed, a number, or None for 'random'."""
    from killmap.catalog.plan import DEFAULT_SEED

    if text is None:
        return DEFAULT_SEED
    if text == "random":
        return None
    if not _ASCII_NUMBER.fullmatch(text):
        raise GateError(f"--seed takes a whole number, 0 or more, or 'random'; got {text!r}", field="--seed")
    return int(text)


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    k, _, n = text.partition("/")
    # ASCII digits only: str.isdigit() also accepts '²' and '³', which int() refuses, and
    # a bounded length keeps int() clear of its 4300-digit limit.
    if not (_ASCII_NUMBER.fullmatch(k) and _ASCII_NUMBER.fullmatch(n)) or not 1 <= int(k) <= int(n):
        raise GateError(f"--shard takes K/N with 1 <= K <= N, got {text!r}", field="--shard")
    return int(k), int(n)
