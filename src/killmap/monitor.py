"""Per-test lines of the mutation targets from sys.monitoring (Python 3.12+), not a tracer.

The baseline's reach evidence used to be coverage's C tracer with a context per test. Any
trace function puts the whole interpreter on its slow path, so a traced test ran 2-5x
slower even where it ran nothing of a target file. sys.monitoring instead arms LINE events
on the target files' code objects alone; everything else runs at full speed.

What it records must be what the C tracer records, or selection would miss a test:

- every code object of a target file that exists when the run starts is armed: those of
  the live functions and suspended generators (one heap scan, done by the session server
  before it forks: swap.LiveFunctions) and the code nested in them (lambdas, inner
  functions, comprehensions);
- a code object that appears later (a module imported or reloaded during a test, a
  function built from a copied code object, `exec`) is armed on its first start: PY_START
  is on for every code object, and returns DISABLE for any that is not a target's, so it
  costs one callback per code object and test;
- each line reports once and is DISABLEd; switching the context (each test) re-arms every
  disabled event (`restart_events`), so a second test running the same line is credited.

Lines that run while tests are collected stay with coverage (the session server traces
its collection): they are merged in as the "" context, as before.
`benchmarks/monitoring_experiment.py` measured the idea on packaging and click: the same
line sets for every test as the C tracer, at about the untraced run's cost.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any, Iterable

AVAILABLE = sys.version_info >= (3, 12)
NAME = "killmap-reach"


def _nested(code: types.CodeType) -> Iterable[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _nested(const)


def free_tool_id() -> int | None:
    """A sys.monitoring tool id nobody holds; the named ones last, since a debugger,
    coverage or a profiler inside the tests would ask for theirs."""
    for tool in (3, 4, 2, 5, 1, 0):
        if sys.monitoring.get_tool(tool) is None:
            return tool
    return None


class LineMonitor:
    """The lines of `include` (file paths) that ran, by context, as coverage would record them.

    Duck-types the part of coverage.Coverage the Recorder uses: start, stop and
    switch_context. `collection`: the coverage that traced collection, whose lines
    are the "" context. `known`: code objects alive now, by their co_filename.
    """

    def __init__(self, include: Iterable[str], known: dict[str, list[types.CodeType]],
                 collection: Any = None, tool: int | None = None):
        self.targets = {os.path.realpath(p) for p in include}
        self.collection = collection
        self.tool = tool
        self.context = ""
        self.lines: dict[str, dict[str, set[int]]] = {}   # co_filename -> context -> lines
        self._is_target: dict[str, bool] = {}
        self._armed: set[int] = set()
        self._known = known
        self._registered = False
        self._started = False

    def _target(self, filename: str) -> bool:
        found = self._is_target.get(filename)
        if found is None:
            found = self._is_target[filename] = os.path.realpath(filename) in self.targets
        return found

    def _arm(self, code: types.CodeType) -> None:
        events = sys.monitoring.events
        for each in _nested(code):
            if id(each) not in self._armed:
                self._armed.add(id(each))
                sys.monitoring.set_local_events(self.tool, each, events.LINE)

    def _register(self) -> None:
        monitoring = sys.monitoring
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
        # Kept alive here: code objects are compared by id, and a freed one's id can be reused.
        self._keep = [code for filename, codes in self._known.items() if self._target(filename)
                      for code in codes]
        for code in self._keep:
            self._arm(code)
        monitoring.set_events(self.tool, monitoring.events.PY_START)
        self._registered = True

    def start(self) -> None:
        if not self._registered:
            self._register()
        self._started = True
        sys.monitoring.restart_events()

    def stop(self) -> None:
        self._started = False

    def switch_context(self, context: str) -> None:
        self.context = context
        sys.monitoring.restart_events()

    def close(self) -> None:
        if self._registered:
            sys.monitoring.set_events(self.tool, 0)
            sys.monitoring.free_tool_id(self.tool)
            self._registered = False

    def contexts(self) -> dict[str, dict[str, list[int]]]:
        """{real path: {context: sorted lines}}: collection's lines (coverage) and the tests'."""
        from killmap.tracing import coverage_contexts
        merged: dict[str, dict[str, set[int]]] = {}
        if self.collection is not None:
            for path, by_context in coverage_contexts(self.collection).items():
                mine = merged.setdefault(path, {})
                for context, found in by_context.items():
                    mine.setdefault(context, set()).update(found)
        for filename, by_context in self.lines.items():
            mine = merged.setdefault(os.path.realpath(filename), {})
            for context, found in by_context.items():
                mine.setdefault(context, set()).update(found)
        return {path: {c: sorted(found) for c, found in by_context.items()} for path, by_context in merged.items()}


def line_monitor(include: Iterable[str], known: dict[str, list[types.CodeType]],
                 collection: Any = None) -> LineMonitor | None:
    """A LineMonitor, or None where sys.monitoring is missing or every tool id is taken."""
    if not AVAILABLE:
        return None
    tool = free_tool_id()
    if tool is None:
        return None
    return LineMonitor(include, known, collection, tool)
