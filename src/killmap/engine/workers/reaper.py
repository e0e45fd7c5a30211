"""Containment of processes: no process a run started outlives it, or takes the machine's memory.

A worker is a child subreaper (Linux), so every orphan of a run comes back to it, and after
each run it kills whatever is left. Every run's processes carry a memory limit, sized by the
engine (`memory_limit_for`) and applied by the worker (`limit_memory`). Kept apart because
it is the one part of the gate that knows about /proc, prctl and rlimits.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
import time

_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_PDEATHSIG = 1


def become_subreaper() -> None:
    """On Linux, orphans of a run come back to the worker instead of init.

    A mutant can start a daemon that detaches every way there is (a new session, a double
    fork, setsid): as a child subreaper the worker still inherits it when its parent dies,
    and kills it after the run. Elsewhere (macOS) only the run's process group is killed;
    the README's known limits say what can remain.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        _prctl()(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


@functools.cache
def _prctl():
    """libc's prctl, looked up once per process: a fork of the collected session asks for it
    in every run, and loading the library's handle anew cost some 60 copied pages each time."""
    import ctypes

    return ctypes.CDLL(None, use_errno=True).prctl


def die_with_parent() -> None:
    """On Linux, this process is killed (SIGKILL) the moment its parent ends; elsewhere nothing.

    A run whose worker a mutant killed would otherwise go on past the test that did it, and
    record later tests as if nothing had happened."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    try:
        _prctl()(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it ended before the request took effect
        os._exit(70)


def _children(pid: int) -> list[int]:
    """Direct children of `pid`, from /proc (Linux); [] where there is no /proc."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as listing:
                found += [int(p) for p in listing.read().split()]
        except OSError:
            return _children_by_scan(pid)
    return found


def _children_by_scan(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _stat_fields(int(entry))
        if fields and int(fields[1]) == pid:
            found.append(int(entry))
    return found


def _stat_fields(pid: int) -> list[str]:
    """The fields of /proc/PID/stat after the command name (state, parent, ...); [] when
    there is no such file (the process is gone, or there is no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def is_zombie(pid: int) -> bool:
    """Ended, and not yet reaped by its parent (Linux; elsewhere there is no telling: False)."""
    fields = _stat_fields(pid)
    return bool(fields) and fields[0] == "Z"


def kill_descendants(keep: tuple[int, ...] = ()) -> None:
    """Kill and reap every process left over from a run.

    Between runs the worker has no children of its own, so every child it has is the
    run's leftover or an orphan handed back by the subreaper. Killing one orphans its own
    children, which come back in turn: repeat until none is left.
    """
    me = os.getpid()
    for _ in range(1000):
        _reap()
        kids = [pid for pid in _children(me) if pid not in keep]
        if not kids:
            return
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.001)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


# --- how many workers ---------------------------------------------------------------------------

# Open files the gate keeps for itself (its imports, the reports, git, its guards), and what each
# worker costs it while the workers start: two pipes, both ends open until the first worker has
# inherited them (worker_forks.open_pipes).
GATE_FILES = 64
FILES_PER_WORKER = 4


def workers_the_machine_holds() -> tuple[int | None, str]:
    """The most workers this gate can start (None: no bound known), and the limit that says so:
    the open files it may hold (`ulimit -n`). Past it, starting them fails midway with
    "Too many open files"."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, ValueError, OSError):
        return None, ""
    if soft == resource.RLIM_INFINITY:
        return None, ""
    return max(1, (soft - GATE_FILES) // FILES_PER_WORKER), f"ulimit -n is {soft}"


# --- memory ----------------------------------------------------------------------------------

MEMORY_ENV = "KILLMAP_MEMORY_MB"


def memory_limit_for(jobs: int) -> int | None:
    """Bytes a run's process may allocate: $KILLMAP_MEMORY_MB (0: no limit), or by default
    an equal share of the machine's memory per job, one share kept for everything else.

    A mutant that allocates without end would otherwise take the machine down with it: the
    kernel's OOM killer chooses its victim, and it may be the gate, a worker or the user's
    editor. Under the limit the allocation fails inside the test (MemoryError), so the run
    goes on and the mutant gets a verdict. Raises ValueError for a malformed setting."""
    raw = os.environ.get(MEMORY_ENV, "").strip()
    if raw:
        if not raw.isdigit():
            raise ValueError(f"{raw!r} is not a whole number of megabytes (0: no limit)")
        return int(raw) * 1024 * 1024 or None
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
    return max(2 * 1024**3, total // (max(1, jobs) + 1))


def limit_memory(limit: int | None) -> None:
    """In a run's process: cap its data (heap and private mappings, RLIMIT_DATA) at `limit`,
    never above a limit it already has. Best effort: macOS does not enforce it."""
    if not limit:
        return
    import resource

    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        cap = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        if soft == resource.RLIM_INFINITY or soft > cap:
            resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    except (ValueError, OSError, AttributeError):
        pass
