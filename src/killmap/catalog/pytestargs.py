"""The user's own pytest arguments for the gate's runs: `PYTEST_ADDOPTS`, then `[gate] pytest_args`.

pytest reads its arguments in this order, each later one winning: the project's `addopts`
(ini), `PYTEST_ADDOPTS`, the command line. The gate keeps that order: the workers get the
variable's arguments, then the catalog's (the command line a user would type), then the gate's
own flags (runner.GATE_FLAGS), which win where they must: every failure seen, the file's order.
What would pick, reorder or re-run tests from earlier runs is switched off in the run itself
(engine/inrun/foreign_plugins.py). What can only make every verdict wrong, running no test or stopping at a
prompt, is refused here, in one line that names where it came from.
"""

from __future__ import annotations

import os
import shlex
from typing import Any

from killmap.errors import GateError

ENVIRONMENT = "PYTEST_ADDOPTS"

# Options under which pytest runs no test, or waits for someone at a debugger prompt: every
# verdict would be vacuous, or the gate would stop at its time limit.
REFUSED = {
    "--collect-only": "runs no test",
    "--co": "runs no test",
    "--collectonly": "runs no test",
    "--setup-only": "runs no test",
    "--setup-plan": "runs no test",
    "--fixtures": "runs no test",
    "--fixtures-per-test": "runs no test",
    "--markers": "runs no test",
    "--help": "runs no test",
    "-h": "runs no test",
    "--version": "runs no test",
    "-V": "runs no test",
    "--pdb": "stops at a debugger prompt",
    "--trace": "stops at a debugger prompt",
}


def refused(args: tuple[str, ...]) -> tuple[str, str] | None:
    """The first argument the gate cannot run under, and why; None when there is none."""
    for arg in args:
        option = arg.split("=", 1)[0]
        if option in REFUSED:
            return arg, REFUSED[option]
    return None


def environment_args() -> tuple[str, ...]:
    """`PYTEST_ADDOPTS` split as pytest splits it (shlex), or a one-line refusal naming it."""
    text = os.environ.get(ENVIRONMENT, "")
    try:
        args = tuple(shlex.split(text))
    except ValueError as exc:
        raise GateError(f"{ENVIRONMENT}={text!r} cannot be split as pytest splits it ({exc})") from None
    bad = refused(args)
    if bad is not None:
        raise GateError(
            f"{ENVIRONMENT} has {bad[0]}, under which pytest {bad[1]}, so no test could judge a mutant: "
            f"run killmap without it (env -u {ENVIRONMENT} killmap ...)"
        )
    return args


def read_pytest_args(value: Any, error: GateError) -> tuple[str, ...]:
    """The [gate] field: a string split as pytest splits `addopts`, or a list of arguments."""
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError:
            raise error from None
    if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise error


def pytest_arguments(field: tuple[str, ...]) -> tuple[str, ...]:
    """What goes before the gate's flags in every run under these settings."""
    return environment_args() + field
