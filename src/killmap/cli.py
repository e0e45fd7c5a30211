"""Command line: a thin parser. Exit 0 all held, 1 a contract failed, 2 bad input.

Each command's logic lives in its own module under killmap/commands/ (run, merge, check, init,
list and show, pin, red-first, try, prove, sweep); this file only parses arguments and dispatches.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from pathlib import Path

from killmap.commands.shared import EXIT_ERROR, EXIT_INTERRUPTED
from killmap.errors import GateError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, like every other bad input
        self.exit(EXIT_ERROR, f"killmap: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    from killmap import __version__
    from killmap.commands import browse, merge, pin, reviewcli, run, sweep_cli

    parser = _Parser(prog="killmap", description="Mutation-testing gate built on named mutations.")
    parser.add_argument("--version", action="version", version=f"killmap {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run.add_parser(sub)
    merge.add_parser(sub)
    check = sub.add_parser("check", help="validate catalogs, mutants, pins and test ids; run no mutant")
    check.add_argument("catalogs", nargs="*", type=Path, help="catalog files (default: mutations/*.toml)")
    init = sub.add_parser("init", help="write a starter catalog, mutations/<package>.toml")
    init.add_argument("--package", default=None, help="the package to aim at (default: detected)")
    reviewcli.add_commands(sub)  # red-first, try, prove
    browse.add_parsers(sub)  # list, show
    pin.add_parser(sub)
    sweep_cli.add_parser(sub)
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
    """Each command's module, imported only when it is the one asked for."""
    from killmap.catalog.project import find_root

    root = find_root(Path.cwd())
    command = args.command
    if command == "check":
        from killmap.commands.check import main as check

        return check(root, tuple(args.catalogs))
    if command == "init":
        from killmap.commands.init import main as init

        return init(root, args.package)
    if command == "run":
        from killmap.commands.run import main as run

        return run(root, args)
    if command == "merge":
        from killmap.commands.merge import main as merge

        return merge(root, args)
    if command in ("list", "show"):
        from killmap.commands import browse

        return (browse.list_main if command == "list" else browse.show_main)(root, args)
    if command == "pin":
        from killmap.commands.pin import main as pin

        return pin(root, args)
    if command == "sweep":
        from killmap.commands.shared import report_dir
        from killmap.commands.sweep_cli import main as sweep

        return sweep(root, args, report_dir(args.report_dir, root))
    from killmap.commands import reviewcli

    return reviewcli.dispatch(root, args)  # red-first, try, prove
