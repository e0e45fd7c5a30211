"""A run's limit, in time it could run, and whether a run stopped at it was busy or idle.

A limit is time the run could have used: where the kernel kept the run's process waiting for
a CPU (a loaded runner), the wall-clock deadline moves on by that wait, up to STRETCH times the
limit (Linux's /proc/PID/schedstat; elsewhere the limit is wall-clock time). A mutant's
verdict must not depend on what else the machine ran: without this, a test that needs 1.5 s
of CPU against a 5 s limit timed out on a runner that gave it a quarter of a core.

A timeout is not always an infinite loop: an `await` that never resolves or a thread stuck
in `sleep()` is no loop, and the fix differs, so a timeout says which it was. The worker
measures the CPU time the run's process used over the last part of its limit (Linux's /proc;
elsewhere it cannot say).
"""

from __future__ import annotations

import functools
import json
import os
import sys
from dataclasses import dataclass

# A loop on a shared, loaded machine got as little as a quarter of a core; a wait uses next
# to none (0.01 s in 0.75 s).
BUSY_SHARE = 0.1
WINDOW = 5.0  # at most this many seconds of the limit's end are watched
# A starved run's limit grows by its wait for a CPU to at most this many times itself: a loop
# on a machine that gives it a tenth of a core still ends, at 4 x its limit.
STRETCH = 4.0


def cpu_seconds(pid: int) -> float | None:
    """The CPU time `pid` has used, all its threads together; None where /proc cannot say."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read().decode("ascii", "replace")
    except OSError:
        return None
    # The command name, field 2, is in parentheses and may hold spaces: count after it.
    fields = text.rsplit(")", 1)[-1].split()
    try:
        ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
        return ticks / os.sysconf("SC_CLK_TCK")
    except (IndexError, ValueError, OSError):
        return None


@functools.cache
def limits_count_cpu_wait() -> bool:
    """Whether a run's limit here is time it could run (Linux's schedstat: a loaded machine's
    wait for a CPU moves the deadline on), not clock time."""
    return sys.platform.startswith("linux") and os.path.isfile("/proc/self/schedstat")


def run_delay(group: int) -> float | None:
    """The seconds the threads of process group `group` have spent ready to run but waiting
    for a CPU, all together; None where /proc cannot say. A run is a new group, so every count
    began with it. The tests need not run on the group's first thread, nor in its first process
    (a red is confirmed in a child, after the run): their waits follow one another, and add up.
    Two threads kept waiting at once would count twice, but under the GIL a second runnable
    thread is rare, and STRETCH bounds what any count can add."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    total = None
    for entry in entries:
        if not entry.isdigit() or _group_of(entry) != group:
            continue
        try:
            threads = os.listdir(f"/proc/{entry}/task")
        except OSError:
            continue  # ended since the listing
        for thread in threads:
            try:
                with open(f"/proc/{entry}/task/{thread}/schedstat", "rb") as stat:
                    waited = int(stat.read().split()[1]) / 1e9  # on-CPU, run-queue wait, slices: ns
            except OSError:
                continue
            except (IndexError, ValueError):
                return None
            total = waited if total is None else total + waited
    return total


def _group_of(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return int(stat.read().rsplit(b")", 1)[-1].split()[2])  # pgrp, field 5
    except (OSError, IndexError, ValueError):
        return None


@dataclass(frozen=True)
class Limit:
    """`seconds` from `started` (time.perf_counter) for the run whose process group is `group`,
    in time it could run: the wall-clock deadline is later by the time its threads were kept
    waiting for a CPU, up to STRETCH times the limit."""

    group: int
    started: float
    seconds: float

    def deadline(self) -> float:
        waited = run_delay(self.group) or 0.0
        return self.started + min(self.seconds + waited, self.seconds * STRETCH)

    def moved(self, deadline: float) -> float:
        """How far `deadline` is past the limit's own: the CPU wait a timeout's detail says, so
        that "after 5.0s" is not read as five seconds of the clock."""
        return round(max(0.0, deadline - self.started - self.seconds), 3)


def watch_window(limit: float) -> float:
    """How long before its limit a run's CPU time is first read: its last quarter, up to WINDOW."""
    return min(WINDOW, limit / 4)


@dataclass(frozen=True)
class CpuSample:
    """One reading of a run's CPU time, and when it was taken (time.perf_counter)."""

    cpu: float | None
    at: float

    def state(self, pid: int, now: float) -> str:
        """ "busy" or "idle" from this reading to now, "" when either reading is missing."""
        later = cpu_seconds(pid)
        if self.cpu is None or later is None or now <= self.at:
            return ""
        return "busy" if (later - self.cpu) / (now - self.at) >= BUSY_SHARE else "idle"


@dataclass(frozen=True)
class Cut:
    """A run stopped at one test's own limit: the test, its limit, busy or idle, and how far a
    CPU wait moved its deadline."""

    test: str
    seconds: float
    stuck: str
    waited: float


class TestLimits:
    """Each test's own limit in a run, from the moment the run's events say it started until
    they say it ended: a hang in a test that took milliseconds unmutated is stopped at that
    test's limit, not at the whole selection's (bracex: 23 loops, each in a first test of a few
    milliseconds, cost a sweep 318 of its 399 worker-seconds at a 15 s limit each).

    The events file is the run's own (inrun/plugin.py writes a line as each test starts and
    ends); only what it has flushed is read, so a test is watched from a little after its start."""

    __test__ = False  # not a test class, whatever pytest's naming rules say

    def __init__(self, events: str, limits: dict[str, float], group: int):
        self.events, self.limits, self.group = events, limits, group
        self.read_to = 0
        self.partial = b""
        self.running: tuple[str, Limit] | None = None
        self.sample: CpuSample | None = None  # the running test's CPU time, near its limit

    def cut(self, now: float) -> Cut | None:
        """The running test, where it is past its own limit in time it could run; else None."""
        self._follow(now)
        if self.running is None:
            return None
        test, limit = self.running
        if self.sample is None and now >= limit.started + limit.seconds - watch_window(limit.seconds):
            self.sample = CpuSample(cpu_seconds(self.group), now)
        if now < limit.started + limit.seconds:
            return None
        deadline = limit.deadline()
        if now < deadline:
            return None
        stuck = self.sample.state(self.group, now) if self.sample else ""
        return Cut(test, limit.seconds, stuck, limit.moved(deadline))

    def _follow(self, now: float) -> None:
        try:
            with open(self.events, "rb") as events:
                events.seek(self.read_to)
                chunk = events.read()
        except OSError:
            return
        self.read_to += len(chunk)
        *lines, self.partial = (self.partial + chunk).split(b"\n")
        for line in lines:
            if b'"start"' not in line and b'"test"' not in line:
                continue
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "start" and event.get("id") in self.limits:
                self.running = (event["id"], Limit(self.group, now, self.limits[event["id"]]))
                self.sample = None
            elif event.get("event") == "test" and self.running is not None and event.get("id") == self.running[0]:
                self.running = None
