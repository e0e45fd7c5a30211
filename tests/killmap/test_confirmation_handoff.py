"""The run waits for its confirmation copy's report, not for the copy's end.

The copy is a fork of a whole session: tearing its memory down takes a few milliseconds
that the run need not wait for, since the worker reaps every leftover of a run before any
guard looks at the sandbox. But a copy that ends without reporting (a crash), or whose
pipe lives on in a process it started, must never leave the run waiting forever.
"""

from __future__ import annotations

import os
import select
import signal

from killmap.engine.inrun.confirm_pipe import await_report


def _fork(body) -> tuple[int, int]:
    """A child running `body(write_end)`; (its pid, the read end)."""
    done_read, done_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(done_read)
            body(done_write)
        finally:
            os._exit(0)
    os.close(done_write)
    return pid, done_read


def assert_reaped(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return
    raise AssertionError("the copy was left unreaped")


def test_the_run_goes_on_once_the_copy_has_reported_while_the_copy_still_lives():
    hold_read, hold_write = os.pipe()

    def report_then_linger(done: int) -> None:
        os.close(hold_write)
        os.write(done, b"1")
        select.select([hold_read], [], [], 30)  # until the test lets go (or a run that waited gives up)

    pid, done = _fork(report_then_linger)
    os.close(hold_read)
    try:
        await_report(pid, done)
        assert os.waitpid(pid, os.WNOHANG) == (0, 0)  # not waited for: still there
    finally:
        os.close(hold_write)
        os.waitpid(pid, 0)


def test_a_copy_that_ends_without_reporting_is_waited_for_and_reaped():
    pid, done = _fork(lambda _done: os._exit(3))
    await_report(pid, done)
    assert_reaped(pid)


def test_a_copy_whose_pipe_outlives_it_does_not_hold_the_run():
    hold_read, hold_write = os.pipe()
    gone_read, gone_write = os.pipe()

    def leave_a_holder(done: int) -> None:
        # A process the copy started keeps the write end open after the copy is gone.
        if os.fork() == 0:
            os.close(hold_write)
            select.select([hold_read], [], [], 30)
            os._exit(0)  # gone_write closes with it

    pid, done = _fork(leave_a_holder)
    os.close(hold_read)
    os.close(gone_write)
    try:
        await_report(pid, done)
        assert not select.select([gone_read], [], [], 0)[0]  # the holder still lives: not waited for
        assert_reaped(pid)
    finally:
        os.close(hold_write)  # the holder ends
        os.close(gone_read)


def test_a_copy_with_nothing_to_rerun_ends_at_once_and_is_reaped():
    pid, done = _fork(lambda _done: os.kill(os.getpid(), signal.SIGKILL))
    await_report(pid, done)
    assert_reaped(pid)
