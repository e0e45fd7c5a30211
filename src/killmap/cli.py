"""Command line: a thin parser. Exit 0 all held, 1 a contract failed, 2 bad input.

Each command's logic lives in its own module (lab, report, check, init, annotations, sweep);
this file only parses arguments and dispatches.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from killmap.errors import GateError

if TYPE_CHECKING:  # imported where it starts the workers, not before
    from killmap.engine.launch import Launch

EXIT_HELD, EXIT_FAILED, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130
_ASCII_NUMBER = re.compile(r"[0-9]{1,9}")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, like every other bad input
        self.exit(EXIT_ERROR, f"killmap: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    from killmap import __version__

    parser = _Parser(prog="killmap", description="Mutation-testing gate built on named mutations.")
    parser.add_argument("--version", action="version", version=f"killmap {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = sub.add_parser("run", help="run the gate")
    run.add_argument("catalogs", nargs="*", type=Path, help="catalog files (default: mutations/*.toml)")
    run.add_argument("--only", action="append", default=[], metavar="NAME", help="run only this mutation")
    run.add_argument("--report-dir", type=Path, default=None, help="where reports go (default: reports/)")
    run.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1, help="parallel sandboxes")
    run.add_argument("--no-cache", action="store_true", help="ignore and do not reuse cached verdicts")
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
        "--no-swap",
        action="store_true",
        help="run every mutant in a fresh pytest session instead of swapping its code into a fork of the collected one",
    )
    run.add_argument(
        "--reach-tracer",
        choices=("auto", "coverage"),
        default="auto",
        help="what records which lines each baseline test runs: auto is sys.monitoring "
        "on Python 3.12+ (tests at full speed), else coverage's C tracer",
    )
    run.add_argument(
        "--shard",
        default=None,
        metavar="K/N",
        help="run only shard K of N (1-based); join the reports with 'killmap merge'",
    )
    merge = sub.add_parser("merge", help="join shard reports into one, and render every format")
    merge.add_argument("reports", nargs="+", type=Path, metavar="REPORT", help="killmap.json files")
    merge.add_argument("--report-dir", type=Path, default=None, help="where the merged reports go")
    merge.add_argument("--catalog", action="append", type=Path, default=[], dest="catalogs")
    for cmd in (run, merge):
        cmd.add_argument(
            "--annotations",
            choices=("auto", "github", "none"),
            default="auto",
            help="github: workflow-command annotations per failed contract and the job "
            "summary; auto (default): github when GITHUB_ACTIONS=true",
        )
    check = sub.add_parser("check", help="validate catalogs, mutants, pins and test ids; run no mutant")
    check.add_argument("catalogs", nargs="*", type=Path, help="catalog files (default: mutations/*.toml)")
    init = sub.add_parser("init", help="write a starter catalog, mutations/<package>.toml")
    init.add_argument("--package", default=None, help="the package to aim at (default: detected)")
    from killmap.commands import reviewcli

    reviewcli.add_commands(sub)  # red-first, try, prove
    for name, help_text in (
        ("list", "list the mutations"),
        ("show", "show a mutant as a diff"),
        ("pin", "pin mutations to the current text of their targets"),
    ):
        cmd = sub.add_parser(name, help=help_text)
        cmd.add_argument("names", nargs="*" if name != "show" else 1, metavar="NAME")
        cmd.add_argument("--catalog", action="append", type=Path, default=[], dest="catalogs")
    from killmap.commands.sweep_cli import add_parser as add_sweep

    add_sweep(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _dispatch(args)
    except GateError as exc:
        print(f"killmap: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return _interrupted()
    except RuntimeError as exc:
        # ^C while a class is being created (libcst's, imported while the workers start)
        # reaches us on Python 3.11 wrapped: "Error calling __set_name__", caused by it.
        if _caused_by_interrupt(exc):
            return _interrupted()
        raise


def _interrupted() -> int:
    print("killmap: interrupted; the working tree was not touched", file=sys.stderr)
    return EXIT_INTERRUPTED


def _caused_by_interrupt(exc: BaseException) -> bool:
    seen = 0
    cause: BaseException | None = exc
    while cause is not None and seen < 20:
        if isinstance(cause, KeyboardInterrupt):
            return True
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return False


def entry() -> None:
    """The console script and `python -m killmap`: main()'s code is the process's.

    CPython 3.11 marks a KeyboardInterrupt raised inside code run by exec() of a string
    (every dataclass's generated methods) as unhandled, even when it was handled, and
    then ends the process by SIGINT instead of the exit code (-2, not 130). An interrupted
    gate has already stopped its workers and removed its sandboxes, so it leaves at once,
    with its own code.
    """
    code = main()
    if code == EXIT_INTERRUPTED:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    # The interpreter's last collections walk every object the run left (libcst trees, the
    # baseline's coverage, the report): about 0.1 s, a twentieth of a small gate, spent
    # freeing memory the process is about to give back. Frozen, they are skipped; objects
    # still die by reference count, and atexit and open files are handled as before.
    gc.freeze()
    raise SystemExit(code)


def _dispatch(args: argparse.Namespace) -> int:
    from killmap.catalog.project import find_root

    root = find_root(Path.cwd())
    if args.command == "check":
        from killmap.commands.check import main as check_main

        return check_main(root, tuple(args.catalogs))
    if args.command == "init":
        from killmap.commands.init import main as init_main

        return init_main(root, args.package)
    from killmap.commands import reviewcli

    if args.command in reviewcli.COMMANDS:
        return reviewcli.dispatch(root, args)
    if args.command == "run":
        return _run(root, args)
    if args.command == "merge":
        return _merge(root, args)
    if args.command == "list":
        return _list(root, args)
    if args.command == "show":
        return _show(root, args)
    if args.command == "sweep":
        from killmap.commands.sweep_cli import main as sweep

        return sweep(root, args, _report_dir(root, args.report_dir))
    return _pin(root, args)


def _run(root: Path, args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise GateError("--jobs must be at least 1", field="--jobs")
    if args.baseline_runs < 1:
        raise GateError("--baseline-runs must be at least 1", field="--baseline-runs")
    from killmap.engine.launch import Launch

    # The workers start now, while the gate imports and reads its catalogs (launch.py says why).
    with Launch(args.jobs) as launch:  # no run has more sandboxes than jobs (lab._sandboxes)
        return _run_launched(root, args, launch)


def _run_launched(root: Path, args: argparse.Namespace, launch: Launch) -> int:
    from killmap.report.console import LiveProgress, make_console, render
    from killmap.report.document import check_report_dir, to_json, write_reports
    from killmap.verdict.lab import LabOptions, run_lab

    report_dir = _report_dir(root, args.report_dir)
    check_report_dir(report_dir)
    options = LabOptions(
        catalogs=tuple(args.catalogs),
        only=tuple(args.only),
        jobs=args.jobs,
        use_cache=not args.no_cache,
        baseline_runs=args.baseline_runs,
        confirm=not args.no_confirm,
        shard=_shard(args.shard),
        swap=not args.no_swap,
        tracer=args.reach_tracer,
    )
    console = make_console()
    if args.changed is not None:
        from killmap.commands.changed import changed_mutations

        names = changed_mutations(root, options, args.changed or None)
        console.print(f"--changed: {len(names)} mutation(s) see a change: {', '.join(names) or 'none'}")
        if not names:
            return EXIT_HELD
        options = LabOptions(**{**options.__dict__, "names": tuple(names)})
    with LiveProgress(console) as progress:
        result = run_lab(root, options, progress, launch)
    render(console, result)
    document = to_json(result, root)
    if options.shard:
        document["shard"] = args.shard
    paths = write_reports(document, report_dir)
    console.print(f"reports: {paths['json']} (+ {', '.join(p.name for k, p in paths.items() if k != 'json')})")
    _publish(document, root, paths, args.annotations)
    return document["exit_code"]


def _publish(document, root: Path, paths, mode: str) -> None:
    from killmap.report.annotations import publish

    sys.stdout.flush()
    publish(document, paths["markdown"], mode)


def _report_dir(root: Path, given: Path | None) -> Path:
    folder = given or root / "reports"
    return folder if folder.is_absolute() else Path.cwd() / folder


def _shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    k, _, n = text.partition("/")
    # ASCII digits only: str.isdigit() also accepts '²' and '³', which int() refuses, and
    # a bounded length keeps int() clear of its 4300-digit limit.
    if not (_ASCII_NUMBER.fullmatch(k) and _ASCII_NUMBER.fullmatch(n)) or not 1 <= int(k) <= int(n):
        raise GateError(f"--shard takes K/N with 1 <= K <= N, got {text!r}", field="--shard")
    return int(k), int(n)


def _merge(root: Path, args: argparse.Namespace) -> int:
    from killmap.catalog.plan import load
    from killmap.report.document import check_report_dir, merge, write_reports

    report_dir = _report_dir(root, args.report_dir)
    check_report_dir(report_dir)
    _, mutations = load(root, _catalog_options(args))
    document = merge(args.reports, [m.name for m in mutations])
    paths = write_reports(document, report_dir)
    held = sum(m["verdict"] == "held" for m in document["mutations"])
    print(
        f"merged {len(args.reports)} report(s): {held}/{len(document['mutations'])} contracts held; "
        f"reports: {paths['json']}"
    )
    _publish(document, root, paths, args.annotations)
    return document["exit_code"]


def _catalog_options(args: argparse.Namespace):
    from killmap.catalog.plan import LabOptions

    return LabOptions(catalogs=tuple(args.catalogs))


def _list(root: Path, args: argparse.Namespace) -> int:
    from killmap.catalog.plan import load

    _, mutations = load(root, _catalog_options(args))
    for m in mutations:
        if args.names and m.name not in args.names:
            continue
        contract = "invariant (control: %s)" % m.control if m.invariant else f"kills {len(m.kills)}"
        print(f"{m.name:40} {m.op:16} {str(m.target):60} {contract}")
    return EXIT_HELD


def _show(root: Path, args: argparse.Namespace) -> int:
    from killmap.catalog.plan import load
    from killmap.verdict.prepare import mutant_to_show

    _, mutations = load(root, _catalog_options(args))
    wanted = args.names[0]
    found = [m for m in mutations if m.name == wanted]
    if not found:
        raise GateError(f"no mutation named {wanted!r}", field="NAME")
    mutant = mutant_to_show(root, found[0])
    if not mutant.applied:
        print(f"not applied: {mutant.reason}")
        return EXIT_FAILED
    sys.stdout.write(mutant.diff)
    return EXIT_HELD


def _pin(root: Path, args: argparse.Namespace) -> int:
    from killmap.catalog.plan import load
    from killmap.mutate.mutants import build_mutant
    from killmap.mutate.pins import pins_for, rewrite_pins

    catalogs, mutations = load(root, _catalog_options(args))
    known = {m.name for m in mutations}
    for name in args.names:
        if name not in known:
            raise GateError(f"no mutation named {name!r}", field="NAME")
    chosen = [m for m in mutations if not args.names or m.name in args.names]
    by_catalog: dict[str, dict[str, dict[str, str]]] = {}
    for mutation in chosen:
        by_catalog.setdefault(mutation.catalog, {})[mutation.name] = pins_for(
            root, mutation, build_mutant(root, mutation)
        )
    for catalog, updates in by_catalog.items():
        path = root / catalog
        text = path.read_text(encoding="utf-8")
        new = rewrite_pins(text, updates, catalog)
        if new != text:
            path.write_text(new, encoding="utf-8")
        print(f"{catalog}: pinned {', '.join(updates)}")
    return EXIT_HELD
