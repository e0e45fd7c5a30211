"""Workers after the first are forked from it, not started: one interpreter imports pytest.

A worker's start is an interpreter, pytest and its built-in plugins: about 0.2 s of a core,
paid again by every worker although each ends up in exactly the same state. On a machine
whose cores are all busy while the gate starts (the gate builds mutants, the first worker
collects), that is time taken from the baseline. So the gate starts one worker process and
hands it the pipes of the others; once it has imported pytest it forks one sibling per pipe
pair, and each sibling goes on exactly as a started worker would (worker._main).

What a started worker had, a sibling gets too:
- its own protocol pipes (the gate's ends stay with the gate, the sibling's with it alone,
  so an end of file on either side still means the other is gone);
- its own session and process group (`setsid`, as `start_new_session` did), so the gate
  stops it, and a run's timeout kills its runs, exactly as before;
- child subreaper status, which a fork does not inherit (reaper.become_subreaper).

What differs: a sibling is the first worker's child, not the gate's. The first worker keeps
its siblings out of the leftovers it kills after each run (worker.py), and reaps them when
they end. Every worker watches the gate itself, a sibling too: a mutant can kill the first
worker, and the gate then replaces it and goes on (pool.Worker.replace), so a sibling stops
itself only when the gate is gone. The gate knows a sibling's pid from its ready line, and
cannot wait for it as for a child: `ForkedWorkerProcess` polls.
"""

from __future__ import annotations

import os
import subprocess
import time
from typing import IO

from killmap.engine.workers.reaper import is_zombie

ARGUMENT = "--forked-workers"


class ForkedWorkerProcess:
    """The gate's handle on a forked worker: what `pool.Worker` uses of a `subprocess.Popen`."""

    def __init__(self, stdin: IO[str], stdout: IO[str]):
        self.stdin = stdin
        self.stdout = stdout
        self.pid: int | None = None  # from its ready line (pool.Worker.wait_ready)

    def poll(self) -> int | None:
        """Its exit status, as Popen.poll: never known here, since the first worker reaps it."""
        return None

    def alive(self) -> bool:
        if self.pid is None:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except OSError:
            return True
        return not is_zombie(self.pid)

    def wait(self, timeout: float) -> None:
        """Until it has ended (its parent, the first worker, reaps it), at most `timeout` s."""
        deadline = time.monotonic() + timeout
        while self.alive():
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"killmap worker {self.pid}", timeout)
            time.sleep(0.005)


def open_pipes(count: int) -> tuple[list[str], tuple[int, ...], list[ForkedWorkerProcess]]:
    """Pipes for `count` siblings: (the first worker's arguments, the fds it must inherit,
    the gate's handles). The caller closes the inherited fds once the first worker runs."""
    arguments, inherited, handles = [], [], []
    for _ in range(count):
        requests_read, requests_write = os.pipe()  # gate -> sibling
        responses_read, responses_write = os.pipe()  # sibling -> gate
        arguments.append(f"{requests_read},{responses_write}")
        inherited += [requests_read, responses_write]
        handles.append(
            ForkedWorkerProcess(
                os.fdopen(requests_write, "w", encoding="utf-8", buffering=1),
                os.fdopen(responses_read, "r", encoding="utf-8"),
            )
        )
    return ([ARGUMENT, ";".join(arguments)] if count else []), tuple(inherited), handles


def pipes_from(argv: list[str]) -> list[tuple[int, int]]:
    """The first worker's side of `open_pipes`: (requests, responses) fds per sibling."""
    if ARGUMENT not in argv:
        return []
    spec = argv[argv.index(ARGUMENT) + 1]
    pairs = [pair.split(",") for pair in spec.split(";") if pair]
    return [(int(requests), int(responses)) for requests, responses in pairs]


def fork_workers(pipes: list[tuple[int, int]]) -> tuple[list[int], bool]:
    """In the first worker, once pytest is imported: (the siblings' pids, whether this
    process is a sibling). A sibling returns with its pipes as its stdin and stdout, in its
    own session, and with no other sibling's fds; the first worker, with none of them."""
    pids: list[int] = []
    for requests, responses in pipes:
        pid = os.fork()
        if pid == 0:
            os.setsid()
            os.dup2(requests, 0)
            os.dup2(responses, 1)
            for fd in {fd for pair in pipes for fd in pair}:
                os.close(fd)
            return [], True
        pids.append(pid)
    for fd in {fd for pair in pipes for fd in pair}:
        os.close(fd)
    return pids, False
