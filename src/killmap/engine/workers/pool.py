"""The pool of warm workers, one per sandbox, and the requests sent to them."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from killmap import timeline
from killmap.catalog.plan import DEFAULT_SEED
from killmap.engine.containment.guard import Containment, TreeGuard
from killmap.engine.containment.inotify_watch import close_together
from killmap.engine.workers.launch import Launch, start_workers, stop_workers
from killmap.engine.workers.worker_forks import ForkedWorkerProcess
from killmap.errors import GateError


@dataclass
class Worker:
    index: int
    sandbox: Path
    process: subprocess.Popen | ForkedWorkerProcess  # the first worker is started, the others forked from it
    guard: TreeGuard | None = None  # the sandbox, checked and repaired after each run
    containment: Containment | None = None  # the working tree, shared by every worker
    # The sandbox was repaired after a run: the collected session saw the damage (its
    # folder may even be gone), so the next run starts a new one.
    session_stale: bool = False
    started: bool = False  # its "ready" line has been read
    preloaded: frozenset[str] = frozenset()  # modules the worker had imported by then (pytest's)
    memory_limit: int | None = None  # bytes each run's process may allocate (reaper.py)
    # The sandbox's copy, asked for and not yet answered: (source, files, hashes) for its guard.
    copying: tuple[Path, list[str], dict[str, str] | None] | None = None
    # What a replacement needs (replace): where workers start, and the sandbox's copy order.
    start_dir: Path | None = None
    order: tuple[Path, list[str], Path, dict[str, str] | None] | None = None
    replacements: int = 0  # how many workers a run killed here (replace)
    hash_seed: int | None = DEFAULT_SEED  # its tests' PYTHONHASHSEED, a replacement's too (launch.py)
    stopping: bool = False  # the gate is stopping it: its end is no run's doing (Pool.close)
    # Repairs the pristine copy a run may have damaged (sandbox.Scratch.repair_pristine):
    # every later run, and a replacement's sandbox, are copied and restored from it.
    pristine_check: Callable[[], object] | None = None

    def wait_ready(self) -> None:
        """Wait for the worker's first line: it has imported pytest and can take requests.

        Not waited for when the pool starts, so the gate goes on with its own work (mutants,
        validity) while every worker imports pytest."""
        if self.started:
            return
        with timeline.span("await ready", worker=self.index):
            ready = self.process.stdout.readline() if self.process.stdout else ""
        if not ready:
            raise GateError("a killmap worker failed to start: is pytest importable in this Python?")
        said = json.loads(ready)
        timeline.mark("ready", worker=self.index, worker_pid=said.get("pid"))
        self.preloaded = frozenset(said.get("preloaded", ()))
        if isinstance(self.process, ForkedWorkerProcess):
            self.process.pid = said["pid"]
        self.started = True

    def begin_copy(self, source: Path, files: list[str], manifest: Path, hashes: dict[str, str] | None = None) -> None:
        """Ask the worker to copy `files` (listed in `manifest`) from `source` into its sandbox.

        Not waited for: the answer is read before the first run (wait_sandbox), so the copy
        goes on in the worker while the gate does its own work. `hashes`: of `source`'s
        files, already computed, for the sandbox's guard."""
        assert self.process.stdin
        self.copying = (source, files, hashes)
        self.order = (source, files, manifest, hashes)
        try:
            self.process.stdin.write(
                json.dumps(
                    {
                        "id": "copy",
                        "copy": {"source": str(source), "manifest": str(manifest), "sandbox": str(self.sandbox)},
                    }
                )
                + "\n"
            )
            self.process.stdin.flush()
        except BrokenPipeError:
            pass  # the worker is gone: wait_ready says so

    def copied_from_hashes(self, hashes: dict[str, str]) -> None:
        """The hashes of the copy this worker's sandbox is being copied from, known after the
        order went out (Engine hashes the pristine copy while the workers copy it): its guard,
        and a replacement's, are set with them."""
        if self.copying is not None:
            self.copying = (*self.copying[:2], hashes)
        if self.order is not None:
            self.order = (*self.order[:3], hashes)

    def wait_sandbox(self) -> None:
        """Wait until the sandbox is copied, then guard it as copied."""
        self.wait_ready()
        if self.copying is None:
            return
        source, files, hashes = self.copying
        self.copying = None
        answer = self._read_response()
        timeline.mark("copied", worker=self.index)
        if answer.get("status") != "copied":
            raise GateError(
                f"worker {self.index} could not copy its sandbox {self.sandbox}: {answer.get('error', answer)}"
            )
        with timeline.span("sandbox guard", worker=self.index):
            self.guard = TreeGuard(self.sandbox, files, source, watch_new_files=True, hashes=hashes)

    def request(self, payload: dict[str, Any]) -> dict[str, Any]:
        """One run's answer. A worker that dies during the run (a mutant can kill it) answers
        as a run whose process was killed: the test in progress is red by crash, the run
        resumes after it on a new worker, and the gate goes on (replace)."""
        self.wait_sandbox()
        assert self.process.stdin and self.process.stdout
        started = time.perf_counter()
        try:
            self.process.stdin.write(json.dumps(payload) + "\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        except BrokenPipeError:
            line = ""  # gone, as a worker that died mid-run
        if self.pristine_check is not None:
            self.pristine_check()
        if line:
            return json.loads(line)
        if self.stopping:
            raise self._died()
        return self._buried(payload, time.perf_counter() - started)

    def _buried(self, payload: dict[str, Any], wall: float) -> dict[str, Any]:
        """After the worker died in a run: the run it left behind killed, and the answer that
        run would have given had its own process been killed (as it was: reaper.die_with_parent),
        naming the run as the worker's killer. Nothing but a run's code ends a worker while it
        waits for that run: the gate stopping it (`stopping`) is told apart above."""
        status = self._ended()
        if payload.get("events"):
            kill_run(Path(payload["events"]).with_suffix(".pids"))
            try:  # the run's folder is beside the sandbox: a mutant may have deleted it
                with open(payload["log"], "a", encoding="utf-8") as log:
                    log.write(f"\nkillmap: {self.died_words(status)} during this run; a new worker replaces it\n")
            except (KeyError, OSError):
                pass
        self.replace()
        # Said without how it ended: a sibling's status is its parent's to reap, so naming
        # the signal for the first worker alone would word one mutant two ways.
        return {
            "id": payload.get("id"),
            "status": "done",
            "child_exit": -signal.SIGKILL,
            "wall": wall,
            "gate_killed": "the gate's worker",
        }

    def _ended(self) -> int | None:
        """The dead worker's exit status, once it is reaped, and whatever is left of its process
        group killed; None for a sibling (the first worker reaps it)."""
        if not isinstance(self.process, subprocess.Popen):
            return None
        try:
            status = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:  # its pipe closed, yet it lives: end it
            self.process.kill()
            status = self.process.wait()
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # a group outlives its leader; its id is not reused
        except OSError:
            pass
        return status

    def died_words(self, status: int | None) -> str:
        if status is None or status >= 0:
            return f"worker {self.index} died (exit {status})"
        try:
            return f"worker {self.index} died (killed by {signal.Signals(-status).name})"
        except ValueError:
            return f"worker {self.index} died (killed by signal {-status})"

    def replace(self) -> None:
        """A new worker process, in a new sandbox copied as the dead one's was.

        A new folder, not the old one repaired: a process the dead worker could not kill may
        still write there."""
        assert self.start_dir is not None and self.order is not None
        for stream in (self.process.stdin, self.process.stdout):
            try:
                if stream:
                    stream.close()
            except OSError:
                pass
        self.replacements += 1
        self.process = start_workers(1, self.start_dir, self.hash_seed)[0]
        self.sandbox = self.sandbox.with_name(f"sandbox-{self.index}.{self.replacements}")
        if self.guard is not None:
            self.guard.close()
        self.started, self.session_stale, self.guard = False, False, None  # guarded once copied
        source, files, manifest, hashes = self.order
        if not manifest.exists():  # beside the sandboxes: a mutant may have deleted it too
            manifest.write_text(json.dumps(files), encoding="utf-8")
        self.begin_copy(source, files, manifest, hashes)

    def _read_response(self) -> dict[str, Any]:
        assert self.process.stdout
        line = self.process.stdout.readline()
        if not line:
            raise self._died()
        return json.loads(line)

    def _died(self) -> GateError:
        return GateError(f"{self.died_words(self.process.poll())}; its sandbox was {self.sandbox}")


def kill_run(pids: Path) -> None:
    """Kill the process groups listed (worker._name_run): a run whose worker died."""
    try:
        listed = pids.read_text(encoding="ascii").split()
    except OSError:
        return
    for pid in listed:
        try:
            os.killpg(int(pid), signal.SIGKILL)
        except (OSError, ValueError):
            pass


class Pool:
    """Start workers, hand each job to the next free one, stop them all on exit."""

    def __init__(
        self,
        sandboxes: list[Path],
        *,
        start_dir: Path | None = None,
        launch: Launch | None = None,
        hash_seed: int | None = DEFAULT_SEED,
    ):
        """`start_dir`: where the worker processes start, when the sandboxes are not copied
        yet (each run enters its sandbox itself; see sandbox_entry.enter_sandbox). `launch`:
        workers started already, adopted when there are enough of them (launch.py). Each
        worker's guards are set when its sandbox is copied (Worker.begin_copy, Worker.containment)."""
        processes = launch.adopt(len(sandboxes)) if launch is not None else None
        if processes is None:
            processes = start_workers(len(sandboxes), start_dir or sandboxes[0], hash_seed)
        self.workers = [
            Worker(index, sandbox, process, start_dir=start_dir or sandbox.parent, hash_seed=hash_seed)
            for index, (sandbox, process) in enumerate(zip(sandboxes, processes, strict=True))
        ]

    def map(
        self, jobs: list[Any], run: Callable[[Worker, Any], Any], on_done: Callable[[Any, Any], None] | None = None
    ) -> list[Any]:
        """Run every job on some worker; results come back in job order."""
        pending: queue.Queue = queue.Queue()
        for index, job in enumerate(jobs):
            pending.put((index, job))
        results: list[Any] = [None] * len(jobs)
        failures: list[BaseException] = []
        lock = threading.Lock()

        def drain(worker: Worker) -> None:
            while not failures:
                try:
                    index, job = pending.get_nowait()
                except queue.Empty:
                    return
                try:
                    results[index] = run(worker, job)
                    if on_done is not None:
                        with lock:
                            on_done(job, results[index])
                except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
                    failures.append(exc)
                    return

        threads = [threading.Thread(target=drain, args=(w,), daemon=True) for w in self.workers]
        for thread in threads:
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(0.2)  # short joins keep ^C responsive
        if failures:
            raise failures[0]
        return results

    def stop(self) -> list[Callable[[], None]]:
        """The workers stopped; what is left to close, their sandboxes' guards, for the engine
        to close with everything else it closes at the end (inotify_watch.close_together)."""
        for worker in self.workers:
            worker.stopping = True
        stop_workers([worker.process for worker in self.workers])
        return [worker.guard.close for worker in self.workers if worker.guard is not None]

    def close(self) -> None:
        close_together(self.stop())
