"""A pytest plugin for red-first: which missing name turned a test (or a module) red, and
which lines of the test's own file its exception passed through.

A test can be red with the fix reverted not because the behaviour is wrong but because a
name it imports is missing ("did not compile because it did not exist"). red-first reports
such reds apart, and needs, per red, the missing name and where it was looked up. That is
read from the exception object itself (never from pytest's terminal text):
`AttributeError.name` and `.obj`, `ModuleNotFoundError.name`, and for "cannot import name"
`ImportError.name_from` (Python 3.12+) or, before it, the fixed wording CPython gives that
exception.

Loaded into a run with `-p killmap.engine.inrun.missing_names --killmap-missing-names=FILE`
(runner.Scenario's `extra_args`); it appends one JSON line per ImportError or AttributeError pytest reports
for a test's phase, and one per collector that failed (a test module that does not
import), with the exception that stopped it. This module
is imported in the forked test process, through the already imported `killmap` package.
"""

from __future__ import annotations

import argparse
import json
import re
import types
from typing import Any

import pytest

from killmap.engine.reach.real_paths import real_path

_CANNOT_IMPORT = re.compile(r"^cannot import name '([^']+)' from '([^']+)'")


def pytest_addoption(parser) -> None:
    parser.addoption("--killmap-missing-names", default=None, help=argparse.SUPPRESS)


def pytest_exception_interact(node, call, report) -> None:
    out = node.config.getoption("killmap_missing_names")
    if not out or call.excinfo is None:
        return
    found = missing_name(call.excinfo.value)
    if call.when == "collect":
        # A module that does not import: say why in the exception's own words, whatever
        # it is (pytest's report of it is a formatted traceback).
        found = {**(found or {}), "error": _words(call.excinfo.value)}
    elif call.when == "call":
        found = {**(found or {}), "test_lines": own_lines(call.excinfo.tb, str(getattr(node, "path", "")))}
    if found is not None:
        _write(out, {"id": report.nodeid, "when": call.when, **found})


@pytest.hookimpl(hookwrapper=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """A conftest.py that does not import stops the session before anything is collected
    (no collector reports it): record why, as for a test module."""
    outcome = yield
    try:
        outcome.get_result()
    except BaseException as exc:  # noqa: BLE001 - recorded; pluggy re-raises it to pytest
        out = getattr(early_config.known_args_namespace, "killmap_missing_names", None)
        if out:
            path = getattr(exc, "path", None)
            _write(
                out,
                {
                    "id": "",
                    "when": "conftest",
                    "path": str(path) if path else None,
                    **(missing_name(exc) or {}),
                    "error": _words(exc),
                },
            )


def own_lines(tb, test_file: str) -> list[int]:
    """The lines of `test_file` among the traceback's frames, outermost first."""
    wanted = real_path(test_file) if test_file else None
    lines = []
    while tb is not None and wanted is not None:
        if real_path(tb.tb_frame.f_code.co_filename) == wanted:
            lines.append(tb.tb_lineno)
        tb = tb.tb_next
    return lines


def _write(out: str, record: dict[str, Any]) -> None:
    with open(out, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


def _words(exc: BaseException) -> str:
    root = _root_cause(exc)
    return f"{type(root).__name__}: {root}"[:300]


def missing_name(exc: BaseException | None) -> dict[str, Any] | None:
    """The first ImportError or AttributeError along the exception's chain, as data.

    pytest wraps a test module's ImportError in its own CollectError (`raise ... from e`),
    so the chain (`__cause__`, then `__context__`) is followed.
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ModuleNotFoundError) and exc.name:
            return {"type": "ModuleNotFoundError", "module": exc.name, "name": None, "owner": None}
        if isinstance(exc, ImportError):
            name, module = getattr(exc, "name_from", None), exc.name
            if name is None:
                matched = _CANNOT_IMPORT.match(str(exc.msg or ""))
                if matched:
                    name, module = matched.group(1), module or matched.group(2)
            if name:
                return {"type": "ImportError", "module": module, "name": name, "owner": None}
        if isinstance(exc, AttributeError) and getattr(exc, "name", None):
            obj = getattr(exc, "obj", None)
            if isinstance(obj, types.ModuleType):
                return {"type": "AttributeError", "module": obj.__name__, "name": exc.name, "owner": None}
            owner = obj if isinstance(obj, type) else type(obj)
            return {
                "type": "AttributeError",
                "module": getattr(owner, "__module__", None),
                "name": exc.name,
                "owner": getattr(owner, "__qualname__", None),
            }
        exc = exc.__cause__ or exc.__context__
    return None


def _root_cause(exc: BaseException) -> BaseException:
    seen: set[int] = set()
    while id(exc) not in seen and (cause := exc.__cause__ or exc.__context__) is not None:
        seen.add(id(exc))
        exc = cause
    return exc


def read_records(path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return records
    for line in text.splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue  # a line cut by a kill at the timeout
    return records
