"""The gate's timeline: when each of its phases began and ended, on which process and thread.

Switched on by naming a file in KILLMAP_TIMELINE, and off otherwise (every call is then one
test of a module global). Each process of the gate that knows the file (the gate, its
workers, their session servers and runs) appends one JSON line per event to it:

    {"t": 8123.402113, "pid": 4121, "thread": "MainThread", "event": "baseline", "at": "begin"}

`t` is `time.monotonic()`: one clock for every process of the machine (CLOCK_MONOTONIC on
Linux, mach_absolute_time on macOS), so a reader lines the processes up without converting.
`at` is "begin" or "end" for a span, "mark" for an instant; other keys say what the event
was about (a mutation's name, a worker's index, a run's label). Each line is written by one
`write` on a file opened for appending, so lines of processes writing at once never
interleave within a line. benchmarks/timeline.py reads the file into a chart.

The workers take the file's name out of their environment as they start (`adopt`): the runs
they fork, whose tests could read the environment, never see it, and what they write to the
inherited descriptor happens before a run's first test and after its last.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

ENV = "KILLMAP_TIMELINE"

_sink: list[int] = []  # the open file's descriptor, when recording


def adopt() -> None:
    """Record to the file KILLMAP_TIMELINE names, taking the name out of the environment: what
    this process starts or forks inherits the descriptor, never the variable."""
    path = os.environ.pop(ENV, None)
    if path and not _sink:
        _sink.append(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644))


def begin() -> None:
    """Record to the file KILLMAP_TIMELINE names, leaving it in the environment for the workers
    the gate starts (they `adopt` it)."""
    path = os.environ.get(ENV)
    if path and not _sink:
        _sink.append(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644))


def recording() -> bool:
    return bool(_sink)


def mark(event: str, at: str = "mark", **about: Any) -> None:
    """One event, now; nothing when not recording."""
    if not _sink:
        return
    line = {
        "t": round(time.monotonic(), 6),
        "pid": os.getpid(),
        "thread": threading.current_thread().name,
        "event": event,
        "at": at,
        **about,
    }
    try:
        os.write(_sink[0], (json.dumps(line, default=str) + "\n").encode())
    except OSError:
        pass  # a measurement lost is no reason to fail the gate


@contextmanager
def span(event: str, **about: Any) -> Iterator[None]:
    """The event's begin and its end (also when what it spans raises)."""
    if not _sink:
        yield
        return
    mark(event, "begin", **about)
    try:
        yield
    finally:
        mark(event, "end", **about)
