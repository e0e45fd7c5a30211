"""Whether a run stopped at its limit was busy or idle when it was stopped.

A timeout is not always an infinite loop: an `await` that never resolves or a thread stuck
in `sleep()` is no loop, and the fix differs, so a timeout says which it was. The worker
measures the CPU time the run's process used over the last part of its limit (Linux's /proc;
elsewhere it cannot say).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

# A loop on a shared, loaded machine got as little as a quarter of a core; a wait uses next
# to none (0.01 s in 0.75 s).
BUSY_SHARE = 0.1
WINDOW = 5.0  # at most this many seconds of the limit's end are watched


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
