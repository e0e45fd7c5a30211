"""Command line: a thin parser. Exit 0 all held, 1 a contract failed, 2 bad input.

Each command's logic lives in its own module under killmap/commands/ (run, merge, check, init,
list and show, pin, red-first, try, prove, sweep); this file only parses arguments and dispatches.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import os
import signal
import sys
import threading

from killmap import timeline
from killmap.commands.shared import EXIT_ERROR, EXIT_INTERRUPTED
from killmap.errors import GateError
from killmap.interrupts import ENDING_SIGNALS, Terminated, interrupt_behind, raised_in_main_thread


class _Parser(argparse.ArgumentParser):
    given: list[str] | None = None  # the command line parsed, for the nearest option to an unknown one

    def parse_known_args(self, args=None, namespace=None):
        if self.given is None:
            self.given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str):  # one line, exit 2, like every other bad input
        self.exit(EXIT_ERROR, f"killmap: {message}{self._nearest_option(message)}\n")

    def _nearest_option(self, message: str) -> str:
        """ "; did you mean --condition?" for an option a letter or two off one of the
        command's (pycodestyle: `try --conditon x` got "unrecognized arguments" alone, where a
        catalog's misspelt field is told the nearest)."""
        if not message.startswith("unrecognized arguments: "):
            return ""
        choices = self._subparsers._group_actions[0].choices if self._subparsers else None
        commands: dict[str, argparse.ArgumentParser] = choices if isinstance(choices, dict) else {}
        command = next((word for word in self.given or () if word in commands), "")
        parser = commands.get(command, self)
        known = [option for action in parser._actions for option in action.option_strings if option.startswith("--")]
        from killmap.catalog.entries import nearest

        for word in message.split(": ", 1)[1].split():
            near = nearest(word.split("=", 1)[0], known) if word.startswith("--") else []
            if near:
                return f"; did you mean {' or '.join(near)}?"
        return ""


# Every command, in the order `killmap --help` lists them: each module declares its parser
# (`add_parser`, which sets `main`) and keeps what only running needs out of its imports.
COMMANDS = (
    "run",
    "merge",
    "diff",
    "comment",
    "check",
    "init",
    "redfirst",
    "trying",
    "prove",
    "browse",
    "pin",
    "sweep_cli",
    "review",
)


def build_parser() -> argparse.ArgumentParser:
    from importlib import import_module

    from killmap import __version__

    parser = _Parser(prog="killmap", description="Mutation-testing gate built on named mutations.")
    parser.add_argument("--version", action="version", version=f"killmap {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS:
        import_module(f"killmap.commands.{name}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    timeline.begin()
    timeline.mark("main")
    with raised_in_main_thread() as interrupts:
        args = build_parser().parse_args(argv)
        timeline.mark("parsed")
        try:
            code = _run(args)
            swallowed = interrupts.pending()
            if swallowed is not None:  # caught by code that clears every error: still owed
                raise swallowed
        except KeyboardInterrupt as interrupt:
            interrupts.taken = True
            return _interrupted(interrupt)
        return code


def _run(args: argparse.Namespace) -> int:
    try:
        return _dispatch(args)
    except GateError as exc:
        print(f"killmap: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return _reader_gone()
    except RuntimeError as exc:
        # ^C while a class is being created (libcst's, imported while the workers start)
        # reaches us on Python 3.11 wrapped: "Error calling __set_name__", caused by it.
        behind = interrupt_behind(exc)
        if behind is None:
            raise
        raise behind from None


# An interrupted gate's exit code: 130 for ^C, 128 + the signal's number for the others.
INTERRUPTED_CODES = frozenset({EXIT_INTERRUPTED, *(128 + s for s in ENDING_SIGNALS)})


def _interrupted(interrupt: KeyboardInterrupt) -> int:
    if isinstance(interrupt, Terminated):
        name = signal.Signals(interrupt.signum).name
        print(f"killmap: interrupted by {name}; the working tree was not touched", file=sys.stderr)
        return 128 + interrupt.signum
    print("killmap: interrupted; the working tree was not touched", file=sys.stderr)
    return EXIT_INTERRUPTED


def entry() -> None:
    """The console script and `python -m killmap`: main()'s code is the process's.

    CPython 3.11 marks a KeyboardInterrupt raised inside code run by exec() of a string
    (every dataclass's generated methods) as unhandled, even when it was handled, and
    then ends the process by SIGINT instead of the exit code (-2, not 130). An interrupted
    gate has already stopped its workers and removed its sandboxes, so it leaves at once,
    with its own code (130, or 143 and 129 for SIGTERM and SIGHUP, raised the same way).
    """
    code = main()
    timeline.mark("exit")
    if code in INTERRUPTED_CODES:
        _flushed()  # a reader gone too (^C on `killmap run | less`) leaves no traceback
        os._exit(code)
    if _stdout_reader_left():
        code = _reader_gone()
    if _flushed() and _nothing_runs_at_exit():
        # The interpreter's teardown clears every module and frees, one by one, every object
        # the run left (libcst's node classes, rich, the report): 40 ms of a 1.5 s gate, for
        # memory the process is about to give back. When nothing is waiting to run at exit,
        # leaving now loses nothing: the gate's files are closed where they are written.
        os._exit(code)
    # Otherwise the last collections at least are skipped (they walked every object: 0.1 s);
    # objects still die by reference count, and atexit and open files are handled as before.
    gc.freeze()
    raise SystemExit(code)


def _flushed() -> bool:
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a stream closed: the interpreter's own exit says so
        return False
    return True


def _stdout_reader_left() -> bool:
    """Whether the last of stdout found its reader gone (`killmap list | head`)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return True
    except (OSError, ValueError):
        return False  # said by the interpreter's own exit, as it always was
    return False


# A writer whose pipe's reader left (`killmap list | head`): the code a shell gives it.
EXIT_READER_GONE = 128 + signal.SIGPIPE


def _reader_gone() -> int:
    """stdout's reader left: the rest of the output has no one to read it, so it goes to the
    null device, with no traceback and no "Exception ignored" as the interpreter exits."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)
    return EXIT_READER_GONE


def _nothing_runs_at_exit() -> bool:
    """No atexit callback (coverage saving its data, a weakref.finalize, logging's flush, a
    plugin's) and no other thread, which the interpreter would wait for."""
    callbacks = getattr(atexit, "_ncallbacks", None)  # CPython's own count (3.10-3.13 have it)
    return callbacks is not None and callbacks() == 0 and threading.active_count() == 1


def _dispatch(args: argparse.Namespace) -> int:
    return args.main(args)
