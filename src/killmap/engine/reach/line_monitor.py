"""Per-test lines of the mutation targets from sys.monitoring (Python 3.12+), not a tracer.

A trace function (coverage's C tracer, with a context per test) puts the whole interpreter
on its slow path: a traced test runs 2-5x slower even where it runs nothing of a target file.
sys.monitoring arms LINE events on the target files' code objects alone; everything else runs
at full speed.

What it records must be what the C tracer records, or selection would miss a test:

- it starts with the session, before any target module is imported, and PY_START is on
  for every code object: the first start of a target file's code object (its module's
  import, a function's first call, a generator's first step) arms LINE events on it
  before its first line runs; any other code object returns DISABLE, so PY_START costs one
  callback per code object and test. Code that appears later (a module imported or
  reloaded during a test, a function built from a copied code object, `exec`) is armed
  the same way;
- each line reports once and is DISABLEd; switching the context (each test) re-arms every
  disabled event (`restart_events`), so a second test running the same line is credited.

What runs while tests are collected is the "" context, as with coverage.

Invisible to the tests: PY_START fires inside the tests' own call stack, where a test, a
fixture or a plugin can watch every filesystem call. So it resolves no path: a code object is
armed when its file name's last component is a target's, and `contexts` keeps, after the run,
only the names that resolve to a target.
`benchmarks/tracer_agreement.py` compares it with the C tracer on the real-world corpora.
"""

from __future__ import annotations

import os
import sys
import types
from collections.abc import Iterable
from typing import Any

AVAILABLE = sys.version_info >= (3, 12)
NAME = "killmap-reach"

# sys.monitoring exists on Python 3.12+ only, and mypy checks as 3.10 (pyproject), whose sys
# has no such attribute: it is reached through this name, and nothing below runs unless
# AVAILABLE.
if sys.version_info >= (3, 12):
    _monitoring = sys.monitoring
else:
    _monitoring: Any = None


# 4 first: nobody claims it. 5 is CPython's OPTIMIZER_ID, unused by CPython itself; 3 is
# Hypothesis's, which it takes to explain a failing example (held by the gate, Hypothesis
# warns instead, and under `filterwarnings = error` the warning became the test's failure:
# dateutil on 3.12); then the named ones a profiler, coverage or a debugger in the tests asks for.
TOOL_IDS = (4, 5, 3, 2, 1, 0)


def free_tool_id() -> int | None:
    """A sys.monitoring tool id nobody holds, in TOOL_IDS' order."""
    for tool in TOOL_IDS:
        if _monitoring.get_tool(tool) is None:
            return tool
    return None


class LineMonitor:
    """The lines of `include` (file paths) that ran, by context, as coverage would record them.

    Duck-types the part of coverage.Coverage the Recorder uses: start, stop and
    switch_context. Started before the targets are imported: code that already ran when it
    starts is armed only when it next starts, never when a suspended frame resumes.
    """

    def __init__(self, include: Iterable[str], tool: int):
        self.targets = {os.path.realpath(p) for p in include}
        self._names = frozenset(path.rpartition(os.sep)[2] for path in self.targets)
        self.tool = tool
        self.context = ""
        self.lines: dict[str, dict[str, set[int]]] = {}  # co_filename -> context -> lines
        self._is_target: dict[str, bool] = {}
        # Held, not only their ids: a module reloaded twice frees the first reload's code, and
        # a new code object at a freed one's address would pass for armed.
        self._armed: dict[int, types.CodeType] = {}
        self._registered = False
        self._started = False

    def _target(self, filename: str) -> bool:
        """Whether `filename` may be a target's: by its last component, a string method (a
        test can patch what os.path holds); `contexts` settles it."""
        found = self._is_target.get(filename)
        if found is None:
            found = self._is_target[filename] = filename.rpartition(os.sep)[2] in self._names
        return found

    def _arm(self, code: types.CodeType) -> None:
        self._armed[id(code)] = code
        _monitoring.set_local_events(self.tool, code, _monitoring.events.LINE)

    def _register(self) -> None:
        monitoring = _monitoring
        monitoring.use_tool_id(self.tool, NAME)
        lines, disable = self.lines, monitoring.DISABLE

        def on_line(code: types.CodeType, line: int) -> Any:
            if self._started:
                lines.setdefault(code.co_filename, {}).setdefault(self.context, set()).add(line)
            return disable

        def on_start(code: types.CodeType, offset: int) -> Any:
            if id(code) not in self._armed and self._target(code.co_filename):
                self._arm(code)
            return disable

        monitoring.register_callback(self.tool, monitoring.events.LINE, on_line)
        monitoring.register_callback(self.tool, monitoring.events.PY_START, on_start)
        monitoring.set_events(self.tool, monitoring.events.PY_START)
        self._registered = True

    def start(self) -> None:
        if not self._registered:
            self._register()
        self._started = True
        _monitoring.restart_events()

    def stop(self) -> None:
        self._started = False

    def switch_context(self, context: str) -> None:
        self.context = context
        _monitoring.restart_events()

    def close(self) -> None:
        """Give the tool id back: a test tool may take it next, and must not inherit the
        events armed on target code (our callbacks, with no event left on, never fire)."""
        if self._registered:
            monitoring = _monitoring
            monitoring.set_events(self.tool, 0)
            for code in self._armed.values():
                monitoring.set_local_events(self.tool, code, 0)
            monitoring.free_tool_id(self.tool)
            self._armed.clear()
            self._registered = False
            self._started = False

    def contexts(self) -> dict[str, dict[str, list[int]]]:
        """{real path: {context: sorted lines}}, as tracing.coverage_contexts gives coverage's."""
        merged: dict[str, dict[str, set[int]]] = {}
        for filename, by_context in self.lines.items():
            real = os.path.realpath(filename)
            if real not in self.targets:  # a namesake of a target's file
                continue
            mine = merged.setdefault(real, {})
            for context, found in by_context.items():
                mine.setdefault(context, set()).update(found)
        return {path: {c: sorted(found) for c, found in by_context.items()} for path, by_context in merged.items()}


def line_monitor(include: Iterable[str]) -> LineMonitor | None:
    """A LineMonitor, or None where sys.monitoring is missing or every tool id is taken."""
    if not AVAILABLE:
        return None
    tool = free_tool_id()
    if tool is None:
        return None
    return LineMonitor(include, tool)
