"""reaper.die_with_parent: a run, or a session server, never outlives the process that started
it (a mutant that kills its worker must not leave the run going on, recording tests)."""

from __future__ import annotations

import os
import sys
import time

import pytest

from killmap.engine.workers import reaper

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")


def _alive(pid: int) -> bool:
    """Running, sleeping or stopped; a zombie or a reaped process is dead."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def _grandchild_after_its_parent_ends(arm: bool) -> int:
    """The pid of a process whose parent ended after it (perhaps) asked to die with it."""
    reaper._prctl()  # looked up here, before the forks, as the session server does
    ready_read, ready_write = os.pipe()
    middle = os.fork()
    if middle == 0:
        child = os.fork()
        if child == 0:
            if arm:
                reaper.die_with_parent()
            os.write(ready_write, f"{os.getpid()}\n".encode())
            os.close(ready_write)  # the test reads to the end of the pipe: not this one's
            time.sleep(30)
            os._exit(0)
        os.read(ready_read, 64)  # the grandchild is armed: its parent may go
        os.write(ready_write, f"{child}\n".encode())
        os._exit(0)
    os.waitpid(middle, 0)
    os.close(ready_write)
    with os.fdopen(ready_read) as lines:
        return int(lines.read().split()[-1])


def _dies_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return False


def test_a_process_that_asked_dies_when_its_parent_ends():
    pid = _grandchild_after_its_parent_ends(arm=True)
    assert _dies_within(pid, 5.0)


def test_a_process_that_did_not_ask_outlives_its_parent():
    # The test's own control: without the request the orphan lives on.
    pid = _grandchild_after_its_parent_ends(arm=False)
    try:
        assert not _dies_within(pid, 0.5)
    finally:
        os.kill(pid, 9)
