"""The confirmation copy's process plumbing (plugin.Recorder decides what it re-runs).

The copy is a fork of a run taken before any test ran. Two pipes join them: the run tells
the copy which tests to re-run once its own tests are over, and the copy says when it has
recorded them. The run waits for that word, not for the copy's end: tearing down a fork of
a whole session takes a few milliseconds, which then overlap the run's own ending. The
worker kills and reaps every leftover of a run (reaper.kill_descendants) before any guard
looks at the sandbox, so a copy still exiting is never missed.
"""

from __future__ import annotations

import json
import os
import select
from dataclasses import dataclass


@dataclass
class ConfirmCopyPipes:
    """The run's ends of the pipes to its copy."""

    pid: int
    tell: int  # run -> copy: the tests to re-run, as JSON, then closed
    done: int  # copy -> run: one byte once the re-runs are recorded


def fork_copy() -> tuple[ConfirmCopyPipes | None, tuple[int, int]]:
    """(the link, ...) in the run; (None, (where the copy reads its re-runs, where it reports))
    in the copy."""
    tell_read, tell_write = os.pipe()
    done_read, done_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(tell_write)
        os.close(done_read)
        return None, (tell_read, done_write)
    os.close(tell_read)
    os.close(done_write)
    return ConfirmCopyPipes(pid, tell_write, done_read), (-1, -1)


def read_reruns(tell_read: int) -> set[str]:
    """In the copy: wait for the run's list of tests to re-run."""
    chunks = []
    while chunk := os.read(tell_read, 65536):
        chunks.append(chunk)
    os.close(tell_read)
    return set(json.loads(b"".join(chunks) or b"[]"))


def send_reruns(link: ConfirmCopyPipes, wanted: list[str]) -> None:
    """In the run: tell the copy what to re-run, and wait until it has reported."""
    data = json.dumps(wanted).encode()
    try:
        while data:
            data = data[os.write(link.tell, data) :]
    finally:
        os.close(link.tell)
    await_report(link.pid, link.done)


def report_done(done_write: int) -> None:
    """In the copy, once its re-runs are recorded."""
    os.write(done_write, b"1")


def await_report(pid: int, done: int) -> None:
    """Until the copy has reported, or has ended: a copy that crashed never reports, and one
    whose pipe lives on in a process it started never closes it."""
    try:
        while True:
            if select.select([done], [], [], 0.05)[0]:
                if not os.read(done, 1):  # ended without a word: wait for it, as before
                    os.waitpid(pid, 0)
                return
            if os.waitpid(pid, os.WNOHANG)[0]:
                return
    finally:
        os.close(done)
