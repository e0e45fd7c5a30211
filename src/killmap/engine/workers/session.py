"""The collected session: pytest started and collected once per worker, then forked per mutant.

A fresh pytest session per mutant pays for configuration, plugins and collection (which
imports every test module and the project) before its first test. The session server is
a child of the worker that runs pytest over the unmutated sandbox up to the end of
collection and then, inside `pytest_runtestloop`, serves runs: for each it forks, and the
fork runs only the selected items, with fixtures set up afresh. Two forks share nothing:
each starts from the same pristine post-collection state.

In the fork the mutant's code is swapped into the imported module (code_swap.py), when the
gate has shown that this is the same program as importing it afresh; when the fork
itself finds it is not (a module not imported during collection, a closure over other
variables), it exits with FALLBACK before running anything and the worker runs the mutant
in a fresh session instead.

Protocol on two pipes, JSON lines: the worker sends a run; the server answers {"pid"} at
once (so the worker can enforce the time limit) and {"exit"} when the fork has ended.
"""

from __future__ import annotations

import json
import linecache
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from killmap import timeline
from killmap.engine.inrun.foreign_plugins import reseed
from killmap.engine.inrun.plugin import Recorder, conclude_run, deselected_by
from killmap.engine.inrun.working_tree_imports import ImportWatch, modules_from_working_tree
from killmap.engine.reach import probes
from killmap.engine.reach.line_monitor import LineMonitor
from killmap.engine.reach.real_paths import resolve_loaded_paths
from killmap.engine.swap.code_swap import LiveFunctions, swap_in
from killmap.engine.swap.unit_compile import CompiledUnit
from killmap.engine.workers.reaper import die_with_parent

FALLBACK = 75  # the fork's exit status for "run me in a fresh session instead"


class SessionServer:
    """A pytest plugin: after collection, serve runs instead of running the tests."""

    def __init__(
        self,
        requests_fd: int,
        responses_fd: int,
        blocked_root: str | None,
        prepare: list[str] | None = None,
        coverage: Any = None,
    ):
        self.requests = os.fdopen(requests_fd, "r", encoding="utf-8")
        self.responses = os.fdopen(responses_fd, "w", encoding="utf-8")
        self.blocked_root = blocked_root
        self.prepare = list(prepare or ())  # files mutants will be swapped into: compiled once
        self.coverage = coverage  # started before collection, when a traced run needs it
        self.functions: LiveFunctions | None = None
        self.recorder: Recorder | None = None  # registered once, begun in each fork
        self.imports: ImportWatch | None = None  # heard by every fork: whether to look again
        self.deselected: list[tuple[list[str], str]] = []  # what collection deselected, and by what

    def pytest_deselected(self, items):
        # Collected once, here: each fork's recorder says it, as a fresh session's would.
        if items:
            self.deselected.append(([item.nodeid for item in items], deselected_by(items)))

    def _say(self, **message: Any) -> None:
        self.responses.write(json.dumps(message) + "\n")
        self.responses.flush()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        if self.coverage is not None:
            self.coverage.stop()  # paused: only a traced run's fork resumes it
        if session.testsfailed:
            return True  # a collection error: no "ready", so the worker never uses this server
        resolve_loaded_paths()  # every fork's origin proof resolves these module paths: once, here
        functions = self.functions = LiveFunctions()  # and every swap looks for the functions of its file
        for path in self.prepare:
            try:
                functions.placed(path, Path(path).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
                pass  # the fork meets the same problem and falls back
        # Registered here, once, for every fork: no hook of it runs in this process, which
        # only forks from here on (a hook of the loop it is in was chosen before it came).
        self.recorder = Recorder()
        session.config.pluginmanager.register(self.recorder, "killmap-recorder-fork")
        if self.blocked_root:
            # And looks at these modules, last before the forks: once, here, and a fork that
            # imports nothing need not look again (working_tree_imports.py).
            self.imports = ImportWatch(modules_from_working_tree(self.blocked_root, None, os.getcwd()))
        self._say(ready=True, collected=len(session.items))
        # One id may name several items (a custom collector's: docopt-ng gives every use case
        # of one example the same id): a run of the id runs each of them, as pytest's does.
        by_id: dict[str, list[Any]] = {}
        for item in session.items:
            by_id.setdefault(item.nodeid, []).append(item)
        for line in self.requests:
            if not line.strip():
                continue
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                self.requests.close()
                self.responses.close()
                _run_fork(self, session, by_id, request)  # never returns
            self._say(pid=pid)
            _, status = os.waitpid(pid, 0)
            self._say(exit=os.waitstatus_to_exitcode(status))
        # The worker closed the pipe: it is done with this session, or gone. Ending the session
        # as pytest would runs every plugin's last hooks, whose imports wrote bytecode into the
        # gate's scratch while, or after, the gate removed it.
        os._exit(0)


def _run_fork(server: SessionServer, session, by_id: dict[str, list[Any]], request: dict[str, Any]) -> None:
    """One run in the fork, step by step in the fork's own order (its output, its items, the
    swap, the recorder, the tests, the report); it never returns: every path ends in os._exit."""
    code = 70
    timeline.mark("fork")
    try:
        os.setsid()  # its own process group: a timeout kills everything it started
        die_with_parent()  # a run outlives no server, as no server outlives its worker
        _write_to_run_log(request["log"])
        named = [by_id.get(test) for test in request["tests"]] if not request.get("all") else []
        items = list(session.items) if request.get("all") else [item for same in named if same for item in same]
        if any(same is None for same in named):
            _fallback(request, "a selected test was not collected by the session")
        if request.get("reseed") is not None:
            reseed(session.config, request["reseed"])
        swap = request.get("swap")
        proof_swap = _swap_mutant_in(server, request, swap) if swap else None
        traced = request.get("coverage")
        if not traced and isinstance(server.coverage, LineMonitor):
            # An untraced fork gives the line monitor's tool id back (3.12+): the mutant's
            # tests may want every sys.monitoring id (Hypothesis explains a failing example
            # with one), as under plain pytest. coverage's C tracer is already off.
            server.coverage.close()
        recorder = _start_recording(server, session, request, items, reach=_reach_recorder(server, traced))
        timeline.mark("tests", "begin", tests=len(items))
        exit_code = _run_items(session)
        timeline.mark("tests", "end")
        if exit_code != 2:  # not interrupted: the fork's own loop, so the plugin's hook never ran
            recorder.confirm_in_place()
        # Only a traced run (a baseline) reports the session's imports: a mutant's run would
        # find the same files the session collected, and the scan is not free.
        conclude_run(
            recorder,
            exit_code,
            request,
            server.blocked_root,
            imports_of=request["sandbox"] if traced else None,
            swap=proof_swap,
            watch=server.imports,
        )
        code = 0
        timeline.mark("concluded")
    except BaseException:  # noqa: BLE001 - the fork must always exit, never return
        _log_traceback(request["log"])
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _write_to_run_log(path: str) -> None:
    """The fork's stdout and stderr, at the fd level and in sys, go to the run's own log."""
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    sys.stdout = open(1, "w", closefd=False)
    sys.stderr = open(2, "w", closefd=False)


def _swap_mutant_in(server: SessionServer, request: dict[str, Any], swap: dict[str, Any]) -> dict[str, Any]:
    """The mutant's code swapped into the collected session's module (code_swap.py), or the fork
    falls back to a fresh session; what the origin proof reports of the swap."""
    if swap["module"] not in sys.modules:
        _fallback(request, f"{swap['module']} was not imported while tests were collected")
    import time

    began = time.perf_counter()
    unit = CompiledUnit.from_bytes(Path(swap["unit"]).read_bytes()) if swap.get("unit") else None
    result = swap_in(
        swap["file"],
        Path(swap["original"]).read_text(encoding="utf-8"),
        lambda: Path(swap["file"]).read_text(encoding="utf-8"),  # read only if the unit will not do
        server.functions,
        unit,
    )
    swap_seconds = time.perf_counter() - began
    if not result.ok:
        _fallback(request, result.reason)
    proof_swap = {
        "swapped": result.swapped,
        "changed": list(result.places),
        "seconds": round(swap_seconds, 4),
        "compiled_by": result.compiled_by,
    }
    # Tracebacks read the mutant's text from disk: the one file that differs from the session's.
    linecache.checkcache(swap["file"])
    return proof_swap


def _reach_recorder(server: SessionServer, traced: dict[str, Any] | None) -> Any:
    """What records a traced run's lines: probes where there is no line monitor and they can
    vouch for every target function (probes.py; the tests then run at full speed), else the
    session's own tracer, resumed; None for an untraced run."""
    if not traced:
        return None
    if probes.AVAILABLE and traced.get("tracer") != "coverage" and not isinstance(server.coverage, LineMonitor):
        reach = probes.probe_reach(traced["include"], server.coverage)
        if reach is not None:
            return reach
    return server.coverage


def _start_recording(server: SessionServer, session, request: dict[str, Any], items: list, *, reach: Any) -> Recorder:
    """The fork's recorder begun, and the session's items narrowed to the run's."""
    recorder = server.recorder
    assert recorder is not None  # registered before the server said it was ready
    recorder.begin(
        request["events"],
        mutated_file=request.get("mutated_file"),
        coverage=reach,
        snapshot=request.get("snapshot"),
        first_red=bool(request.get("first_red")),
    )
    session.items[:] = items
    recorder.set_collected([item.nodeid for item in items])
    for ids, by in server.deselected:
        recorder.emit(event="deselected", ids=ids, by=by)
    if recorder.snapshot and items:
        recorder.take_snapshot(session)  # in the copy, items are now the re-runs
    return recorder


def _log_traceback(path: str) -> None:
    import traceback

    # Into the run's own log, by name: pytest's capture gives fd 2 back to the session's
    # log between tests, so a traceback printed to stderr landed there, and the gate's
    # message quoted an empty log tail (pluggy's baseline).
    try:
        with open(path, "a", encoding="utf-8") as log:
            traceback.print_exc(file=log)
    except OSError:
        traceback.print_exc()


def _fallback(request: dict[str, Any], reason: str) -> None:
    Path(request["events"]).with_suffix(".fallback").write_text(reason, encoding="utf-8")
    os._exit(FALLBACK)


def _run_items(session) -> int:
    """pytest's own run loop over the chosen items; an interruption ends it, as in pytest."""
    items = session.items
    try:
        for index, item in enumerate(items):
            following = items[index + 1] if index + 1 < len(items) else None
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=following)
            if session.shouldfail or session.shouldstop:
                break
    except (KeyboardInterrupt, pytest.exit.Exception):
        return 2
    return 1 if session.testsfailed else 0
