"""A red test's failure, as the gate records it: the exception, where it was raised, and whether
the mutated file is in its traceback. Read from pytest's own exception info (runs use
`--tb=no`), never from a rendered traceback.
"""

from __future__ import annotations

import dis
import os
import sys
from typing import Any

import pytest

from killmap.engine.reach.real_paths import real_path


def describe_failure(excinfo, report, mutated_file: str | None, sandbox: str) -> dict[str, Any]:
    """What a red test's failure says: its exception, where it was raised (the deepest frame in
    the sandbox, and the innermost anywhere), and whether the mutated file is among its frames."""
    if excinfo is None:  # e.g. a strict xpass: pytest fails it without an exception
        return {
            "assertion": False,
            "exc_type": "XPassStrict",
            "exc_module": "",
            "message": shorten(str(report.longrepr)),
            "raised_at": None,
            "in_mutated_file": False,
            "mutated_file_innermost": False,
        }
    sandbox = sandbox.rstrip(os.sep) + os.sep  # the run's, as it started: a test may have left it
    doctest = _doctest_failure(excinfo.value)
    if doctest is not None and doctest[0] == "output":
        # A doctest's example printed something else than it says: an assertion about
        # behaviour, written in the docs, raised at the example's line (semver's .rst files).
        _, filename, line, text = doctest
        return {
            "assertion": True,
            "exc_type": "DocTestFailure",
            "exc_module": "doctest",
            "message": shorten(text.replace(sandbox, "")),
            "raised_at": list(_relative((filename, line), sandbox)) if filename else None,
            "raised_innermost": None,
            "in_mutated_file": False,
            "mutated_file_innermost": False,
        }
    exc_type, value, tb = doctest[1] if doctest is not None else (excinfo.type, excinfo.value, excinfo.tb)
    frames = _frames(tb)
    mine = [mutated_file is not None and real_path(f[0]) == mutated_file for f in frames]
    in_mutated = [f for f, m in zip(frames, mine, strict=True) if m]
    innermost = frames[-1] if frames else None
    # A reviewer acts on the project's own line (usually the test's assert or its
    # pytest.raises), not on _pytest/outcomes.py: name the deepest frame in the sandbox,
    # and keep the innermost frame anywhere beside it.
    in_project = [f for f in frames if f[0].startswith(sandbox)]
    shown = in_project[-1] if in_project else innermost
    return {
        "assertion": _asserts(value if isinstance(value, BaseException) else None, exc_type, mutated_file),
        "search": is_search_failure(exc_type),
        "exc_type": exc_type.__name__,
        "exc_module": exc_type.__module__,
        "message": shorten(_exception_text(exc_type, value).replace(sandbox, "")),
        "raised_at": list(_relative(shown, sandbox)) if shown else None,
        "raised_innermost": list(_relative(innermost, sandbox)) if innermost else None,
        "in_mutated_file": bool(in_mutated),
        "mutated_file_innermost": bool(
            innermost and in_mutated and innermost == in_mutated[-1] and real_path(innermost[0]) == mutated_file
        ),
        # Asked only of an import's failure: it reads the frame's bytecode.
        "imported_by_mutated_file": issubclass(exc_type, (ImportError, SyntaxError))
        and _imported_by(tb, mine, sandbox),
    }


def _asserts(value: BaseException | None, exc_type: type, mutated_file: str | None) -> bool:
    """Whether the failure is a test's assertion: an AssertionError or pytest's own failure
    (pytest.fail, a pytest.raises that did not raise), or a group of nothing else (Hypothesis
    raises an ExceptionGroup when it finds two distinct failures: natsort's two asserts read as
    a crash, and the cause hung on the search). Not an AssertionError the mutated file's own
    `assert` raised: that is the code under test crashing on its precondition, which a test
    never asserted (voluptuous' Schema.extend)."""
    group = getattr(value, "exceptions", None)
    # By name: Python 3.10 has the exceptiongroup backport's class, 3.11 its own.
    grouped = any(c.__name__ == "BaseExceptionGroup" for c in exc_type.__mro__)
    if value is not None and grouped and isinstance(group, tuple) and group:
        return all(_asserts(e, type(e), mutated_file) for e in group)
    if not issubclass(exc_type, (AssertionError, pytest.fail.Exception)):
        return False
    if issubclass(exc_type, pytest.fail.Exception) or value is None or mutated_file is None:
        return True
    frames = _frames(value.__traceback__)
    return not frames or real_path(frames[-1][0]) != mutated_file


# Hypothesis's own failures, which say how its search went, not what the code did: a test case
# past its deadline (a timing), or a failure its replay did not repeat (Flaky, FlakyFailure).
SEARCH_ERRORS = ("DeadlineExceeded", "Flaky")


def is_search_failure(exc_type: type) -> bool:
    """Whether the exception is one of Hypothesis's SEARCH_ERRORS, by its classes' names and
    module: asking costs no import of Hypothesis in a run that never used it."""
    return any(c.__module__ == "hypothesis.errors" and c.__name__ in SEARCH_ERRORS for c in exc_type.__mro__)


def unrendered_failure(excinfo, style=None) -> str:
    """What a gate run's report holds for a red test instead of pytest's rendered traceback:
    the exception's one line. Set as each item's `repr_failure` (and `_repr_failure_py`, for
    setup and teardown) by the Recorder; pytest prints it only in the run's own log."""
    return _exception_text(excinfo.type, excinfo.value)


def _doctest_failure(error: BaseException):
    """A doctest's failure, unwrapped: ("output", file, line, what differed) for an example
    whose output differs, ("raised", (type, value, traceback)) for one that raised, or None.
    pytest raises doctest's own DocTestFailure and UnexpectedException, or its
    MultipleDoctestFailures holding them (`--doctest-continue-on-failure`): the first counts."""
    doctest = sys.modules.get("doctest")
    if doctest is None:
        # No doctest ran in this process, so this is not one; importing the module to ask
        # cost each fork its import (it is not among what the collected session imported).
        return None
    if type(error).__name__ == "MultipleDoctestFailures" and (failures := getattr(error, "failures", None)):
        error = failures[0]
    if isinstance(error, doctest.DocTestFailure):
        test, example = error.test, error.example
        line = test.lineno + example.lineno + 1 if test.lineno is not None else None
        text = f"DocTestFailure: expected {example.want.strip()!r}, got {error.got.strip()!r}"
        return "output", test.filename, line, text
    if isinstance(error, doctest.UnexpectedException):
        return "raised", error.exc_info
    return None


def _imported_by(tb, mine: list[bool], sandbox: str) -> bool:
    """Whether the failure is an import statement of the mutated file's that failed: its last
    frame stopped at an `import` or `from ... import`, and below it ran only the import
    machinery, libraries (outside the sandbox) and modules' top levels being imported. Not a
    call (`import_module(name)`, whose name the mutant may have changed: behaviour, as any
    other value), nor a function of the project's that refuses an import on purpose
    (python-slugify's tests install an importer that refuses a backend)."""
    if True not in mine:
        return False
    last = len(mine) - 1 - mine[::-1].index(True)
    index = 0
    while tb is not None:
        code = tb.tb_frame.f_code
        if index == last and _instruction_at(code, tb.tb_lasti) not in ("IMPORT_NAME", "IMPORT_FROM"):
            return False
        if index > last and code.co_filename.startswith(sandbox) and code.co_name != "<module>":
            return False
        tb, index = tb.tb_next, index + 1
    return True


def _instruction_at(code, offset: int) -> str | None:
    return next((i.opname for i in dis.get_instructions(code) if i.offset == offset), None)


def _frames(tb) -> list[tuple[str, int]]:
    """(file, line) of each frame of the failure, as pytest's own traceback would list them.

    Read from the raw traceback: pytest's TracebackEntry.path stats every file, which
    cost more than the test itself on a red run with a deep stack. A frame pytest would
    hide (`__tracebackhide__`) is kept: the gate wants the place, not the presentation.
    """
    found = []
    while tb is not None:
        found.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    return found


def _relative(frame: tuple[str, int], sandbox: str) -> tuple[str, int]:
    """The frame's file below the sandbox, `..` folded: sortedcontainers' tests put `tests/..`
    on sys.path, and `tests/../sortedcontainers/sortedlist.py` was said where the user's
    tree has `sortedcontainers/sortedlist.py` (and matched no mutated file for its line)."""
    path, line = frame
    path = os.path.normpath(path) if os.path.isabs(path) else path
    return (path[len(sandbox) :] if path.startswith(sandbox) else path), line


def _exception_text(exc_type, value) -> str:
    try:
        return f"{exc_type.__name__}: {value}"
    except Exception:  # noqa: BLE001 - a looping or failing __str__ must not stop the report
        return exc_type.__name__


def shorten(text: str, limit: int = 600) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shorten_middle(text: str, limit: int = 1200) -> str:
    """A traceback cut in its middle: its first line says what failed, its last ones name
    the exception (a collection error's "E   ModuleNotFoundError: ..." comes after the
    importlib frames, and a cut at the end lost it)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    half = (limit - 5) // 2
    return text[:half] + "\n...\n" + text[-half:]
