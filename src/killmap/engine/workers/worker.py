"""A warm worker: one long-lived process per sandbox, forking a fresh child per run.

Why fork: a fresh interpreter per mutation pays for Python, pytest and its plugins every
time. The worker imports pytest and coverage once; each run is a fork of that warm
process. The worker never imports the project under test, so every child imports the
project's modules afresh from the sandbox: no module state, cache or registry can leak
from one mutation to the next.

Protocol: JSON lines on stdin (requests) and stdout (responses). The child's own output
goes to a log file, never to the protocol stream. The wall-clock limit covers the whole
child, so a looping __repr__ entered while pytest formats a failure still times out.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import sys
import time
import traceback
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from killmap import timeline
from killmap.engine.containment.sandbox import copy_files
from killmap.engine.inrun.foreign_plugins import ForeignPluginsOff
from killmap.engine.inrun.initial_paths import GateInitialPaths
from killmap.engine.inrun.plugin import Recorder, conclude_run
from killmap.engine.inrun.selected_ids import SelectedIds
from killmap.engine.swap.unit_compile import Place, code_places, unit_to_hand, units_of
from killmap.engine.workers.before_fork import preload_for_forks
from killmap.engine.workers.reaper import become_subreaper, die_with_parent, is_zombie, kill_descendants
from killmap.engine.workers.sandbox_entry import collection_recorder, enter_sandbox
from killmap.engine.workers.session import FALLBACK, SessionServer
from killmap.engine.workers.timeout_cpu import CpuSample, Cut, Limit, TestLimits, cpu_seconds, watch_window
from killmap.engine.workers.worker_forks import fork_workers, pipes_from

_current_child: list[int] = []
_gate: list[int] = [0]  # the gate's pid: a worker whose gate is gone stops itself (_gate_gone)
_siblings: list[int] = []  # in the first worker: the workers it forked (worker_forks.py)
# The folder the worker started in, as `python -m` put it first on sys.path (None when
# PYTHONSAFEPATH left it out). A run puts its sandbox there instead, so its tests see the
# sys.path that `python -m pytest` run in the sandbox would give them.
_start_entry: list[str | None] = [None]


def main() -> int:
    try:
        return _main()
    except BrokenPipeError:
        # The gate closed its end of the protocol pipe (interrupted or killed, perhaps
        # while this worker was still starting): nobody is left to answer. Leave without
        # a traceback; os._exit, because flushing the dead pipe at exit would print one.
        kill_descendants()
        os._exit(0)


def _main() -> int:
    timeline.adopt()
    timeline.mark("worker imported")
    _gate[0] = os.getppid()
    _start_entry[0] = sys.path[0] if sys.path and sys.path[0] == os.getcwd() else None
    signal.signal(signal.SIGTERM, _terminate)
    preload_for_forks()
    # The other workers are forks of this one, warm from here on (worker_forks.py). Each watches
    # the gate itself (_gate_gone): this worker may die first.
    _siblings[:], _ = fork_workers(pipes_from(sys.argv))
    become_subreaper()
    timeline.mark("worker ready")
    out = sys.stdout
    sys.stdout = sys.stderr  # nothing but protocol lines may reach the real stdout
    # What pytest (and the gate) imported before any run: a project module among them can
    # never be imported from a sandbox (baseline.check_runner_imports).
    out.write(json.dumps({"ready": True, "pid": os.getpid(), "preloaded": sorted(sys.modules)}) + "\n")
    out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            with timeline.span("serve", id=request.get("id")):
                response = serve(request)
        except Exception as exc:  # noqa: BLE001 - report, keep serving
            response = {
                "id": request.get("id"),
                "status": "error",
                "error": f"{type(exc).__name__}: {exc}",
                "trace": traceback.format_exc(),
            }
        out.write(json.dumps(response) + "\n")
        out.flush()
    # The gate closed its pipe: it ended (its SIGTERM may come too late to be handled), or
    # was killed outright. A session server left alive would end its pytest session on its
    # own and write bytecode into the scratch as, or after, the gate removes it.
    kill_descendants()
    return 0


def _gate_gone() -> bool:
    """Whether the gate has ended. A sibling's parent is the first worker, which a mutant can
    kill while the gate goes on (it replaces that worker): a sibling whose parent changed
    asks after the gate itself, and stops only when the gate is gone."""
    if os.getppid() == _gate[0]:
        return False
    try:
        os.kill(_gate[0], 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # it exists (another user's pid would say so too: rare, and harmless)
    return is_zombie(_gate[0])


def _terminate(signum, frame):  # pragma: no cover - exercised by interrupt tests
    for pid in _current_child:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    kill_descendants()  # the session servers too, and the siblings
    os._exit(143)


def serve(request: dict[str, Any]) -> dict[str, Any]:
    if "copy" in request:  # the sandbox, from the gate's pristine copy (pool.Worker.begin_copy)
        order = request["copy"]
        files = json.loads(Path(order["manifest"]).read_text(encoding="utf-8"))
        copy_files(Path(order["source"]), files, Path(order["sandbox"]))
        return {"id": request["id"], "status": "copied"}
    sandbox = Path(request["sandbox"])
    prefix = request.get("pycache_prefix")
    originals: dict[Path, bytes] = {}
    if request.get("session"):
        # The session collects the unmutated sandbox: start it before the mutant is written.
        _session_server(request)
        request["session"]["restart"] = False
    for rel, text in request.get("writes", {}).items():
        path = sandbox / rel
        # The catalog already refuses targets outside the project; this is the last line.
        if not path.resolve().is_relative_to(sandbox.resolve()):
            raise ValueError(f"refusing to write outside the sandbox: {rel}")
        originals[path] = path.read_bytes()
        _write(path, text.encode("utf-8"), prefix)
    try:
        if request.get("session"):
            response, reason = _run_in_session(request)
            if response is not None:
                return response
            response = _run_child(request)
            return {**response, "path": "fallback", "fallback": reason}
        return _run_child(request)
    finally:
        for path, data in originals.items():
            _write(path, data, prefix)


def _write(path: Path, data: bytes, pycache_prefix: str | None) -> None:
    """Replace the file with a new inode, and drop any bytecode cached for it.

    A new inode means a hard link can never carry a mutant back to another tree. Bytecode
    is validated by source mtime and size, so a same-size edit within one second could
    reuse a stale cache: every cache of this file is deleted whenever it is written, both
    beside it and under the worker's private pycache prefix.
    """
    tmp = path.with_name(f".{path.name}.killmap-tmp")
    path.parent.mkdir(parents=True, exist_ok=True)  # a mutant may have deleted its sandbox
    tmp.write_bytes(data)
    os.replace(tmp, path)
    shutil.rmtree(path.parent / "__pycache__", ignore_errors=True)
    if pycache_prefix:
        cached = Path(pycache_prefix + str(path.resolve().parent))
        for stale in cached.glob(f"{path.stem}.*.pyc"):
            stale.unlink()


def _run_child(request: dict[str, Any]) -> dict[str, Any]:
    """Fork the run and wait for it, polling: no threads in the worker.

    A worker with threads would fork a multi-threaded process (deadlock-prone, and
    deprecated since Python 3.12). Polling also watches the gate: a gate killed outright
    (SIGKILL) cannot stop its workers, so a worker whose parent changed stops itself.
    """
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        _child(request)
    _current_child.append(pid)
    _name_run(request, pid)
    limit = Limit(pid, started, request["timeout"])
    deadline = started + request["timeout"]  # /proc is read only once a limit is reached
    watch_from = deadline - watch_window(request["timeout"])
    sample: CpuSample | None = None
    stuck = ""
    pause = 0.0005
    timed_out = False
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if _gate_gone():
            _terminate(signal.SIGTERM, None)
        if sample is None and time.perf_counter() >= watch_from:
            sample = CpuSample(cpu_seconds(pid), time.perf_counter())
        if time.perf_counter() >= deadline:
            deadline = limit.deadline()  # later by what a loaded machine kept it waiting
            if time.perf_counter() < deadline:
                continue
            timed_out = True
            stuck = sample.state(pid, time.perf_counter()) if sample else ""
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
            _, status = os.waitpid(pid, 0)
            break
        time.sleep(pause)
        pause = min(pause * 2, 0.01)
    _current_child.remove(pid)
    try:
        os.killpg(pid, signal.SIGKILL)  # what is left in the run's own process group
    except OSError:
        pass
    kill_descendants(keep=_server_pids() + tuple(_siblings))
    wall = time.perf_counter() - started
    return {
        "id": request["id"],
        "status": "timeout" if timed_out else "done",
        "child_exit": os.waitstatus_to_exitcode(status),
        "wall": wall,
        "stuck": stuck,
        "waited": limit.moved(deadline) if timed_out else 0.0,
    }


# --- the collected session (session.py): one per worker, forked per run ------------------


@dataclass
class _Server:
    key: str
    pid: int
    requests: Any  # file, worker -> server
    responses: int  # raw fd, server -> worker: read with select, so no hidden buffer
    pending: bytes = b""
    traced: list[str] | None = None  # the files whose lines its forks can record
    tracer: str | None = None  # what it asked to record them: auto or coverage
    traced_collection: bool = False  # whether it recorded them while collecting too
    collect_seconds: float = 0.0  # from its fork to its collection's end: what a fresh session pays
    ended: bool = False  # its end of the pipe closed: the process is gone
    status: int | None = None  # its wait status, once reaped (close)

    def close(self) -> None:
        try:
            self.requests.close()
        except OSError:
            pass
        try:
            os.close(self.responses)
        except OSError:
            pass
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        if not self.ended:
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass


_servers: list[_Server] = []  # at most one: the session of the last key asked for
_unavailable: set[str] = set()  # keys whose session could not collect: never retried


def _server_pids() -> tuple[int, ...]:
    return tuple(server.pid for server in _servers)


def _session_server(request: dict[str, Any]) -> _Server | None:
    """The collected session for the request's key: the running one, or a new one (None when
    that key's session could not collect, now or before)."""
    spec = request["session"]
    key = spec["key"]
    if spec.get("restart"):
        while _servers:
            _servers.pop().close()
    if _servers and _servers[0].key == key:
        return _servers[0]
    while _servers:
        _servers.pop().close()
    if key in _unavailable:
        return None
    return _start_session_server(request, spec, key)


def _start_session_server(request: dict[str, Any], spec: dict[str, Any], key: str) -> _Server | None:
    """Fork the server, and wait until it has collected and says it is ready."""
    traced = (request.get("coverage") or {}).get("include")
    requests_read, requests_write = os.pipe()  # worker -> server
    responses_read, responses_write = os.pipe()  # server -> worker
    timeline.mark("collect", "begin")
    began = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the server: collect once, then serve forks (never returns)
        os.close(requests_write)
        os.close(responses_read)
        _serve_session(request, spec, traced, requests_read, responses_write)
    os.close(requests_read)
    os.close(responses_write)
    _name_run(request, pid)
    server = _Server(
        key,
        pid,
        os.fdopen(requests_write, "w", encoding="utf-8"),
        responses_read,
        traced=traced,
        tracer=(request.get("coverage") or {}).get("tracer"),
        traced_collection=bool(traced) and (request.get("coverage") or {}).get("collection", True),
    )
    ready = _read_line(server, began + spec["timeout"])
    server.collect_seconds = time.perf_counter() - began
    timeline.mark("collect", "end")
    if not (ready and ready.get("ready")):
        server.close()
        _unavailable.add(key)
        return None
    _servers.append(server)
    return server


def _serve_session(
    request: dict[str, Any], spec: dict[str, Any], traced: list[str] | None, requests_read: int, responses_write: int
) -> None:
    """The server process: pytest collects in the sandbox, then SessionServer serves forks.
    Never returns."""
    code = 70
    try:
        # Killed with its worker however the worker ends (SIGKILL: its first worker's end, the
        # gate's last resort, a mutant): never alive in a scratch its gate has removed.
        die_with_parent()
        enter_sandbox(request, spec["log"], _start_entry[0])
        cov = None
        if traced:
            # Collection recorded (what runs at import is reach evidence), then paused:
            # a traced baseline run resumes it, mutant runs never do.
            cov = collection_recorder(
                traced,
                request["coverage"].get("tracer", "auto"),
                collection=request["coverage"].get("collection", True),
            )
        plugin = SessionServer(requests_read, responses_write, request.get("blocked_root"), spec.get("prepare"), cov)
        # The session's own seed: a run that reseeds (runner.Scenario.reseed) does so in its fork.
        seed = spec["seed"] if "seed" in spec else request.get("seed")
        pytest.main(list(spec["args"]), plugins=[plugin, ForeignPluginsOff(seed)])
        code = 0
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
    finally:
        os._exit(code)


def _read_line(server: _Server, deadline: float) -> dict[str, Any] | None:
    """One protocol line from the server, or None at EOF or past the deadline."""
    import select

    while b"\n" not in server.pending:
        left = deadline - time.perf_counter()
        if left <= 0:
            return None
        readable, _, _ = select.select([server.responses], [], [], min(left, 0.5))
        if readable:
            chunk = os.read(server.responses, 65536)
            if not chunk:
                _reap_server(server)
                return None
            server.pending += chunk
        elif _gate_gone():
            _terminate(signal.SIGTERM, None)
    line, server.pending = server.pending.split(b"\n", 1)
    return json.loads(line)


def _reap_server(server: _Server) -> None:
    """At the end of the server's pipe: its status, reaped now, before the reaping of a run's
    leftovers (reaper.kill_descendants) takes it without a word. Only its own exit closes the
    pipe, so the wait is short."""
    server.ended = True
    try:
        _, server.status = os.waitpid(server.pid, 0)
    except ChildProcessError:
        pass


def _run_in_session(request: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """Run in a fork of the collected session; (None, why) when it must run afresh."""
    server = _session_server(request)
    if server is None:
        return None, "the collected session is not available (collection failed in it)"
    wanted = request.get("coverage")
    if wanted and (
        wanted["include"] != server.traced
        or wanted.get("tracer") != server.tracer
        or (wanted.get("collection", True) and not server.traced_collection)
    ):
        return None, "the collected session did not trace its collection of these files"
    started = time.perf_counter()
    pid = _ask_for_fork(server, request, started)
    if pid is None:
        return None, "the collected session ended"
    done, timed_out, stuck, waited, cut = _wait_for_fork(server, request, pid, started)
    if done is None:  # the server itself is gone: nothing it said can be trusted
        if server in _servers:
            _servers.remove(server)
        server.close()
        if server.ended:
            return _server_killed(request, server, started), ""
        return None, "the collected session ended"
    if done["exit"] == FALLBACK and not timed_out:
        why = Path(request["events"]).with_suffix(".fallback")
        return None, why.read_text(encoding="utf-8") if why.exists() else "the swap was refused"
    return {
        "id": request["id"],
        "status": "timeout" if timed_out else "done",
        "child_exit": done["exit"],
        "wall": time.perf_counter() - started,
        "path": "swap",
        "session_seconds": round(server.collect_seconds, 4),
        "stuck": stuck,
        "waited": waited,
        **({"test_limit": {"id": cut.test, "seconds": cut.seconds}} if cut else {}),
    }, ""


def _server_killed(request: dict[str, Any], server: _Server, started: float) -> dict[str, Any]:
    """The answer of a run whose collected session ended under it. The server only waits for
    its fork, so nothing of its own ends it: the run did (a mutant's `os.kill(os.getppid(), 9)`).
    Said as such, and not run again in a fresh session, where the same code would kill the
    worker itself."""
    status = os.waitstatus_to_exitcode(server.status) if server.status is not None else None
    return {
        "id": request["id"],
        "status": "done",
        "child_exit": None,
        "wall": time.perf_counter() - started,
        "path": "swap",
        "session_seconds": round(server.collect_seconds, 4),
        "gate_killed": f"the gate's worker{_by(status)}",
    }


def _by(status: int | None) -> str:
    """ " (SIGKILL)", " (exit 3)": how a gate process ended, from its exit code."""
    if status is None:
        return ""
    if status >= 0:
        return f" (exit {status})"
    try:
        return f" ({signal.Signals(-status).name})"
    except ValueError:
        return f" (signal {-status})"


# What of a run's request its fork reads (session.py); the rest is the worker's own.
_FORK_KEYS = (
    "tests",
    "events",
    "log",
    "mutated_file",
    "expect",
    "snapshot",
    "coverage",
    "sandbox",
    "first_red",
    "claims",
    "reseed",
)


def _unit_for_fork(swap: dict[str, Any], request: dict[str, Any]) -> str | None:
    """The function the mutant changes (or, where that alone cannot say, the whole mutant),
    compiled here for the fork to swap in: the file it is written to, or None, and the fork
    compiles (or finds it cannot). Here, because compiling in a fork writes to some 300 pages
    it shares with the session, each one copied first; this process's pages are its own."""
    sandbox = Path(request["sandbox"])
    written = {str(sandbox / rel): text for rel, text in request.get("writes", {}).items()}
    mutant_text = written.get(swap["file"])
    if mutant_text is None:
        return None
    try:  # no pristine copy ("" names a folder) reads as none: the fork then refuses the swap
        original_text = Path(swap["original"]).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    path = swap["file"]
    try:
        unit = unit_to_hand(
            path, original_text, mutant_text, _units_of(original_text), _original_places(path, original_text)
        )
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # the original does not compile, or a mutant too deep to: the fork meets it and says so
    if unit is None:
        return None  # it does not compile: the fork finds it so, and says why
    handed = Path(request["events"]).with_suffix(".unit")
    handed.write_bytes(unit.to_bytes())
    return str(handed)


_units_of = functools.lru_cache(maxsize=8)(units_of)  # one original text, many mutants


@functools.lru_cache(maxsize=8)
def _original_places(path: str, original_text: str) -> dict[Place, types.CodeType]:
    """The original's code objects by place, which a unit must fit to be swapped alone."""
    return code_places(compile(original_text, path, "exec", dont_inherit=True))


def _ask_for_fork(server: _Server, request: dict[str, Any], started: float) -> int | None:
    """The run sent to the server, and the pid of the fork it started; None (the server
    dropped) when the server is gone."""
    run = {key: request.get(key) for key in _FORK_KEYS}
    swap = request["session"].get("swap")
    with timeline.span("unit"):
        run["swap"] = {**swap, "unit": _unit_for_fork(swap, request)} if swap else None
    run["tests"] = request["session"]["tests"]
    run["all"] = request["session"].get("all", False)
    try:
        server.requests.write(json.dumps(run) + "\n")
        server.requests.flush()
    except OSError:
        _servers.remove(server)
        server.close()
        return None
    forked = _read_line(server, started + 60)
    timeline.mark("forked", fork=(forked or {}).get("pid"))
    if not forked or "pid" not in forked:
        _servers.remove(server)
        server.close()
        return None
    return forked["pid"]


def _wait_for_fork(
    server: _Server, request: dict[str, Any], pid: int, started: float
) -> tuple[dict[str, Any] | None, bool, str, float, Cut | None]:
    """The server's word that the fork ended (None if the server is gone), whether it was
    killed at its limit, and then whether it was busy or idle (timeout_cpu.py), how far its
    deadline had moved for a CPU wait, and the test whose own limit stopped it, if one did;
    everything the fork started is killed either way."""
    _current_child.append(pid)
    _name_run(request, pid)
    # A fork does not collect: its limit is not charged for the collection a fresh session
    # pays (trial.Limits); a fallback below gets the fresh limit from its own start.
    bound = Limit(pid, started, request.get("swap_timeout", request["timeout"]))
    tests = TestLimits(request["events"], request["test_limits"], pid) if request.get("test_limits") else None
    done, stuck, waited, cut = _watched(server, pid, bound, tests)
    timed_out = done is None
    if timed_out:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        done = _read_line(server, time.perf_counter() + 30)
    _current_child.remove(pid)
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    timeline.mark("fork ended")
    kill_descendants(keep=_server_pids() + tuple(_siblings))
    timeline.mark("leftovers killed")
    return done, timed_out, stuck, waited, cut


# How often a run whose tests have limits of their own is looked at: a test is stopped at most
# this much past its limit.
TEST_POLL = 0.1


def _watched(
    server: _Server, pid: int, bound: Limit, tests: TestLimits | None
) -> tuple[dict[str, Any] | None, str, float, Cut | None]:
    """The fork's word; or None, where the server is gone or the run ran past its limit (then
    busy or idle, and the seconds a CPU wait moved the deadline) or a test past its own (the Cut)."""
    deadline = bound.started + bound.seconds
    watch_from = deadline - watch_window(bound.seconds)
    sample: CpuSample | None = None  # the run's CPU time, read as its limit nears
    while True:
        now = time.perf_counter()
        if sample is None and now >= watch_from:
            sample = CpuSample(cpu_seconds(pid), now)
        if now >= deadline:
            deadline = bound.deadline()  # later by what a loaded machine kept it waiting
            if now >= deadline:
                return None, sample.state(pid, now) if sample else "", bound.moved(deadline), None
        cut = tests.cut(now) if tests is not None else None
        if cut is not None:
            return None, cut.stuck, cut.waited, cut
        wake = deadline if sample is not None else watch_from
        done = _read_line(server, wake if tests is None else min(wake, now + TEST_POLL))
        if done is not None or server.ended:
            return done, "", 0.0, None


def _name_run(request: dict[str, Any], pid: int) -> None:
    """Write down the run's process group, beside its events: should this worker die (a
    mutant can kill it), the gate kills the run it leaves behind (pool.Worker.replace)."""
    with open(Path(request["events"]).with_suffix(".pids"), "a", encoding="ascii") as pids:
        pids.write(f"{pid}\n")


def _child(request: dict[str, Any]) -> None:
    code = 70
    try:
        # A run outlives no worker: killed with it, at the test that killed it (the gate
        # names that test, red by crash), not at some later one.
        die_with_parent()
        enter_sandbox(request, request["log"], _start_entry[0])
        cov = None
        if request.get("coverage"):
            # Before collection: what runs at import is evidence too.
            cov = collection_recorder(request["coverage"]["include"], request["coverage"].get("tracer", "auto"))
        recorder = Recorder(
            request["events"],
            mutated_file=request.get("mutated_file"),
            coverage=cov,
            tracing=cov is not None,
            snapshot=request.get("snapshot"),
            first_red=bool(request.get("first_red")),
        )
        plugins: list[object] = [recorder, ForeignPluginsOff(request.get("seed"))]
        if request.get("initial_paths"):
            plugins.append(GateInitialPaths(request["initial_paths"]))
        if request.get("selected_ids"):
            plugins.append(SelectedIds(request["selected_ids"]))
        exit_code = pytest.main(list(request["args"]), plugins=plugins)
        # As in a fork (session.py): only a traced run (a baseline) reports its imports.
        conclude_run(
            recorder,
            int(exit_code),
            request,
            request.get("blocked_root"),
            imports_of=request["sandbox"] if request.get("coverage") else None,
        )
        code = 0
    except BaseException:  # noqa: BLE001 - the child must always exit, never return
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":
    raise SystemExit(main())
