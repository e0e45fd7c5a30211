"""An interrupt is never lost, wherever it lands (killmap/interrupts.py).

CI once saw a ^C land inside a lazy import whose C code clears every error (`_elementtree`'s):
the gate ran on to its end and exited 0. And a ^C inside Popen, after its fork, left a worker
that nothing stopped, which printed a traceback once its start folder was gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from gatekit import copy_fixture, gate_env

from killmap import interrupts

INTERRUPTED = "killmap: interrupted; the working tree was not touched"

# A command whose ^C is swallowed where it lands, as C code that clears errors swallows it;
# then it goes on working (`long`) or returns at once (`short`).
SWALLOWED = """\
import os, signal, sys, time
import killmap.cli as cli

shape = sys.argv.pop(1)

def dispatch(args):
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)
    except KeyboardInterrupt:
        pass  # what a C extension's initialisation does with it
    print("swallowed", flush=True)
    if shape == "long":
        for _ in range(600):
            time.sleep(0.05)
    print("finished", flush=True)
    return 0

cli._dispatch = dispatch
cli.entry()
"""


@pytest.mark.parametrize("shape", ["short", "long"])
def test_an_interrupt_swallowed_where_it_landed_still_ends_the_command_as_interrupted(tmp_path, shape):
    done = subprocess.run(
        [sys.executable, "-c", SWALLOWED, shape, "list"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 130, (done.returncode, done.stdout, done.stderr)
    assert done.stderr.strip() == INTERRUPTED
    assert "swallowed" in done.stdout
    # Sent again until it is taken: a long command stops, and does not run on to its end.
    assert ("finished" in done.stdout) == (shape == "short")


# A ^C that lands the moment the first worker process exists, before Popen returns it.
INTERRUPT_AFTER_THE_FORK = """\
import os, signal, subprocess, sys
import killmap.cli as cli

real = subprocess.Popen

class Popen(real):
    def __init__(self, args, *rest, **options):
        super().__init__(args, *rest, **options)
        if "killmap.engine.workers.worker" in args:
            with open(os.environ["KM_WORKERS"], "a") as listed:
                listed.write(f"{self.pid}\\n")
            os.kill(os.getpid(), signal.SIGINT)
            self.returned = True  # the interrupt lands here, before the caller has the process

subprocess.Popen = Popen
cli.entry()
"""


def test_an_interrupt_inside_popen_after_its_fork_leaves_no_worker_running(tmp_path):
    basic = copy_fixture("basic", tmp_path)
    listed = tmp_path / "workers"
    env = gate_env(basic, {"KM_WORKERS": str(listed)})
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPT_AFTER_THE_FORK, "run", "--no-cache", "--report-dir", str(tmp_path / "out")],
        cwd=basic,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 130, (done.returncode, done.stdout, done.stderr)
    assert done.stderr.strip() == INTERRUPTED
    pids = [int(pid) for pid in listed.read_text().split()]
    assert pids
    for pid in pids:  # stopped and reaped by the gate before it left
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not (tmp_path / "out").exists()


def test_a_signal_while_held_is_raised_when_the_block_ends():
    heard: list[int] = []
    reached: list[bool] = []

    def handler(signum, frame):
        heard.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with interrupts.held():
                signal.raise_signal(signal.SIGINT)
                reached.append(True)  # not raised inside the block
        assert reached and heard == [signal.SIGINT]
        assert signal.getsignal(signal.SIGINT) is handler
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_signal_that_comes_while_an_interrupt_unwinds_is_ignored(monkeypatch):
    monkeypatch.setattr(interrupts, "REPEAT_SECONDS", 600)  # never sent again to this process
    state = interrupts.Interrupts()
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            try:
                state.handle(signal.SIGINT, None)
            except KeyboardInterrupt:
                pytest.fail("raised again while the first interrupt was still being handled")
        with pytest.raises(KeyboardInterrupt):
            state.handle(signal.SIGINT, None)
        assert state.pending() is not None  # owed until the command line takes it
        state.taken = True
        state.handle(signal.SIGINT, None)  # taken: the command is ending, nothing is raised
        assert state.pending() is None
    finally:
        state.end()


# SIGTERM the moment the gate's run is over and its workers are being stopped.
TERMINATED_WHILE_THE_WORKERS_STOP = """\
import os, signal
import killmap.cli as cli
from killmap.engine.workers.pool import Pool

real = Pool.stop

def stop(self):
    os.kill(os.getpid(), signal.SIGTERM)
    return real(self)

Pool.stop = stop
cli.entry()
"""


def test_a_signal_while_the_workers_stop_still_removes_the_scratch(tmp_path):
    basic = copy_fixture("basic", tmp_path / "p")
    temp = tmp_path / "temp"
    temp.mkdir()
    env = gate_env(basic, {"TMPDIR": str(temp)})  # the scratch goes here, where it can be seen
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            TERMINATED_WHILE_THE_WORKERS_STOP,
            "run",
            "--no-cache",
            "--report-dir",
            str(tmp_path / "o"),
        ],
        cwd=basic,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 128 + signal.SIGTERM, (done.stdout, done.stderr)
    assert "killmap: interrupted by SIGTERM; the working tree was not touched" in done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert list(temp.iterdir()) == []  # no scratch, no start folder


# SIGTERM the moment the pool has adopted the launch's workers, before the engine holds the pool.
TERMINATED_AS_THE_POOL_ADOPTS = """\
import os, signal
import killmap.cli as cli
from killmap.engine.workers.pool import Pool

real = Pool.__init__

def adopting(self, *args, **options):
    real(self, *args, **options)
    with open(os.environ["KM_WORKERS"], "a") as listed:
        listed.write("".join(f"{w.process.pid}\\n" for w in self.workers if w.process.pid))
    os.kill(os.getpid(), signal.SIGTERM)
    self.adopted = True  # the signal lands here, before the engine has the pool to stop

Pool.__init__ = adopting
cli.entry()
"""


def test_a_signal_as_the_pool_adopts_the_workers_leaves_none_running(tmp_path):
    basic = copy_fixture("basic", tmp_path / "p")
    listed = tmp_path / "workers"
    done = subprocess.run(
        [sys.executable, "-c", TERMINATED_AS_THE_POOL_ADOPTS, "run", "--no-cache", "--report-dir", str(tmp_path / "o")],
        cwd=basic,
        env=gate_env(basic, {"KM_WORKERS": str(listed)}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 128 + signal.SIGTERM, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    pids = [int(pid) for pid in listed.read_text().split()]
    assert pids
    for pid in pids:  # stopped by the engine's close before the gate left
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
