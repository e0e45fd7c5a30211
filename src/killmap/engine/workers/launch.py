"""Starting and stopping worker processes, and starting them before the gate needs them.

A small gate's longest chain is its first worker's: start an interpreter and import pytest
(about 0.25 s of a core), copy the sandbox, collect, run the baseline. Meanwhile the gate
itself starts too (rich, the catalog, the project's file list: about 0.2 s) and builds the
mutants, on the other core. Nothing in a worker's start depends on what the gate will run:
only how many workers there may be. So a command that may run something starts its workers
at its first line (`Launch`), and the engine adopts them when it begins; its chain then
overlaps the gate's start instead of following it.

A launch nobody adopts (every verdict was cached, or the catalog was wrong) is stopped with
the command: it cost the other core a quarter of a second, not the gate.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from killmap import interrupts, timeline
from killmap.catalog.plan import DEFAULT_SEED
from killmap.engine.containment.landlock import hide_from_tests
from killmap.engine.containment.sandbox import OWNER_FILE, owner, remove_abandoned_everywhere
from killmap.engine.workers.worker_forks import open_pipes

WorkerProcess = Any  # subprocess.Popen or worker_forks.ForkedWorkerProcess: what pool.Worker drives


def start_workers(count: int, start_dir: Path, hash_seed: int | None = DEFAULT_SEED) -> list[WorkerProcess]:
    """Start one worker process; it forks the other `count - 1` once it has imported pytest
    (worker_forks.py). The processes in order, the started one first. `hash_seed`: the
    tests' PYTHONHASHSEED (None: a random one, as plain pytest has)."""
    env = dict(os.environ)
    # A set's order is the hash seed's: isodate parametrizes a test over a set, and its ids
    # changed at every gate (a kills id matched in one run and nothing in the next). One seed,
    # the gate's, as for random and Hypothesis: the same ids and draws in every run. A seed
    # the user exported is theirs.
    if hash_seed is not None and "PYTHONHASHSEED" not in env:
        env["PYTHONHASHSEED"] = str(hash_seed % 2**32)
    # The gate's own folder (the user's tree, most often) is named nowhere a test could read
    # it: not in the workers' environment (a test's /proc/self/environ is its worker's), and
    # not in the gate's /proc entries (landlock.hide_from_tests).
    env["PWD"] = env["OLDPWD"] = str(start_dir)
    hide_from_tests()
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    # Its arguments reach every run explicitly, in pytest's order (catalog/pytestargs.py): read
    # here again by pytest, they would come twice.
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("COVERAGE_CORE", None)  # per-test contexts need the C tracer; see worker
    arguments, inherited, siblings = open_pipes(count - 1)
    timeline.mark("start workers", count=count)
    try:
        first = subprocess.Popen(
            [sys.executable, "-m", "killmap.engine.workers.worker", *arguments],
            cwd=start_dir,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
            start_new_session=True,
            pass_fds=inherited,
        )
    except BaseException:
        for sibling in siblings:
            _close_pipes(sibling)
        raise
    finally:
        for fd in inherited:  # theirs now: an end of file must mean the worker is gone
            os.close(fd)
    return [first, *siblings]


def stop_workers(processes: list[WorkerProcess]) -> None:
    """Close their pipes, stop each by its process group, and wait for them to end."""
    signal_workers(processes)
    for process in processes:
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass


def signal_workers(processes: list[WorkerProcess]) -> None:
    """Close their pipes and send each process group SIGTERM, without waiting."""
    # A sibling whose ready line was never read has no known pid: the first worker, its
    # parent, kills it as it ends (worker._terminate).
    for process in processes:
        try:
            if process.stdin:
                process.stdin.close()
        except OSError:
            pass
        if process.poll() is None and process.pid is not None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except OSError:
                pass


def _close_pipes(process: WorkerProcess) -> None:
    """The gate's ends of a worker's protocol pipes: at their end of file the worker leaves."""
    for stream in (process.stdin, process.stdout):
        try:
            if stream:
                stream.close()
        except OSError:
            pass


def _finish(threads: list[threading.Thread]) -> None:
    """Every thread ended, though ^C or SIGTERM comes meanwhile (then raised once they have): the
    interrupted gate leaves by os._exit, which would end one midway, the scratch half removed."""
    interrupted: KeyboardInterrupt | None = None
    for thread in threads:
        while thread.is_alive():
            try:
                thread.join()
            except KeyboardInterrupt as interrupt:
                interrupted = interrupted or interrupt
    if interrupted is not None:
        raise interrupted


class Launch:
    """Workers started before the engine that will use them; a context manager.

    `count`: the most workers the command may want. The engine adopts as many as it has
    sandboxes (`adopt`); siblings beyond that are let go at once, and whatever was not
    adopted is stopped when the launch closes. The workers start in a folder of their own
    that holds only its owner's name, so nothing there can shadow pytest or killmap on the
    path `python -m` gives them.
    """

    def __init__(self, count: int, hash_seed: int | None = DEFAULT_SEED):
        self.folder = Path(tempfile.mkdtemp(prefix="killmap-start-"))
        # Named by its gate, as a scratch folder is: a gate killed outright leaves it, and the
        # next one removes it, with any scratch folder such a gate left (sandbox.remove_abandoned).
        (self.folder / OWNER_FILE).write_text(owner(), encoding="utf-8")
        remove_abandoned_everywhere(keep=self.folder)
        self.processes: list[WorkerProcess] | None = None
        self.dismissed = False
        self._behind: list[threading.Thread] = []
        try:
            # Held until the launch holds them: ^C inside Popen, after its fork, left a worker
            # that nothing stopped (it printed its traceback once this folder was gone).
            with interrupts.held():
                self.processes = start_workers(max(1, count), self.folder, hash_seed)
        except BaseException:
            self.close()
            raise

    def adopt(self, count: int) -> list[WorkerProcess] | None:
        """The first `count` workers, once; None when there are not that many to hand over
        (the caller starts its own)."""
        if self.processes is None or self.dismissed or count > len(self.processes):
            return None
        adopted, spare = self.processes[:count], self.processes[count:]
        self.processes = None
        for sibling in spare:
            _close_pipes(sibling)  # a spare is a sibling: its parent, an adopted worker, reaps it
        return adopted

    def dismiss(self) -> None:
        """Nothing will be adopted: stop the workers now, so they take no more of the
        machine while the command finishes, and wait for them only at `close`."""
        if self.processes is not None:
            self.dismissed = True
            signal_workers(self.processes)

    def behind(self, work: Callable[[], None]) -> None:
        """Do `work` on a thread of its own while the command goes on (its reports), done by the
        time the launch closes: what an engine leaves when it closes (removing its scratch,
        keeping its rewrites) decides nothing the command still has to say."""
        thread = threading.Thread(target=work, name="killmap-behind")
        thread.start()
        self._behind.append(thread)

    def close(self) -> None:
        if self.processes is not None:
            stop_workers(self.processes)
            self.processes = None
        try:
            _finish(self._behind)
        finally:
            self._behind = []
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Launch:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
