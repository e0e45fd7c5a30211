"""The engine: the one way any killmap command runs pytest.

Every command (run, check, try, prove, red-first, sweep) gets its sandboxes, warm workers,
guards and scenarios from here, so that none of them runs pytest its own way and every
one inherits the same guarantees: a private sandbox per worker copied from a pristine
copy, the working tree guarded after every run, no process outliving its run, every
selected test accounted for.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from killmap import interrupts, timeline
from killmap.catalog.plan import DEFAULT_SEED
from killmap.catalog.project import ignored_package_files
from killmap.engine.containment.cache_folders import cache_base, displaced_folder, rewrites_folder
from killmap.engine.containment.guard import Containment, TreeGuard, pristine_hashes
from killmap.engine.containment.inotify_watch import close_together
from killmap.engine.containment.sandbox import Scratch, scratch_parent
from killmap.engine.containment.tree_watch import TreeWatch
from killmap.engine.outcome import RunOutcome
from killmap.engine.runner import Scenario, run_scenario, run_to_completion
from killmap.engine.workers.assert_rewrites import keep_new
from killmap.engine.workers.launch import Launch
from killmap.engine.workers.pool import Pool, Worker
from killmap.engine.workers.reaper import MEMORY_ENV, memory_limit_for
from killmap.errors import GateError

THREAD_SWITCH_SECONDS = 0.0005  # while an engine is open (Engine.__init__ says why)


def _bytes_of(root: Path, files: list[str], trees: list[dict[str, bytes]] | None) -> int:
    if trees is not None:
        return max((sum(len(data) for data in tree.values()) for tree in trees), default=0)
    total = 0
    for rel in files:
        try:
            total += (root / rel).stat().st_size
        except OSError:
            pass
    return total


def memory_limit(jobs: int) -> int | None:
    """What each run's processes may allocate (reaper.memory_limit_for); a malformed
    setting is a GateError, checked by the gate even when every verdict is cached."""
    try:
        return memory_limit_for(jobs)
    except ValueError as exc:
        raise GateError(str(exc), field=MEMORY_ENV) from None


class Engine:
    """Sandboxes and warm workers for one command's runs. Use as a context manager.

    `trees`: one file set per sandbox ({relative path: bytes}), for commands that run
    another version of the project (red-first's fix-reverted tree); by default every
    sandbox is a copy of the working tree's `files`. `tracer`: "auto" or "coverage".
    `launch`: workers the command started at its first line, adopted when there are enough.
    """

    def __init__(
        self,
        root: Path,
        files: list[str],
        sandboxes: int,
        *,
        cache_dir: Path | None = None,
        trees: list[dict[str, bytes]] | None = None,
        tracer: str = "auto",
        launch: Launch | None = None,
        seed: int | None = DEFAULT_SEED,
    ):
        self.root = root
        self.seed = seed  # every run's, whatever its scenario says (runner.Scenario.seed)
        self.tracer = tracer  # what records a baseline's per-test lines (runner.Scenario.tracer)
        if trees is None:  # what the packages need to run, though git ignores it (_version.py)
            files = files + ignored_package_files(root, files)
        count = len(trees) if trees is not None else max(1, sandboxes)
        limit = memory_limit(count)  # a malformed setting is said before any worker starts
        # Where what a run wrote over the user's files is kept: named once (it is stamped with
        # the time), so every message names the folder that really holds it.
        self.displaced = displaced_folder(cache_dir)
        self.cache_dir = cache_dir  # where what outlives the gate goes (cachedirs)
        self.launch = launch  # the command's: it finishes what this engine leaves at its close
        # Every sandbox, the pristine copy, and room for what the runs write beside them.
        self.scratch = Scratch(scratch_parent(_bytes_of(root, files, trees), count + 2))
        self.scratch.kept_rewrites = rewrites_folder(cache_dir)
        self.pool: Pool | None = None
        self.containment: Containment | None = None
        self._switch_interval: float | None = sys.getswitchinterval()
        self._closed = False
        # The gate's threads (one per worker, and an early baseline) spend their turns
        # in system calls: each gives up the GIL and then waits for it while the main thread
        # builds mutants (libcst, pyflakes), up to the switch interval every time. At 5 ms,
        # a sweep's first baseline request left 0.4 s after its workers were ready.
        sys.setswitchinterval(min(self._switch_interval, THREAD_SWITCH_SECONDS))
        try:
            self._start(root, files, trees, count, limit, launch)
        except BaseException:
            self.close()
            raise

    def _start(
        self,
        root: Path,
        files: list[str],
        trees: list[dict[str, bytes]] | None,
        count: int,
        limit: int | None,
        launch: Launch | None,
    ) -> None:
        """The workers started, the pristine copy made and hashed, each sandbox's copy begun,
        and the working tree's guard set on every worker."""
        cache_dir = self.cache_dir
        # The workers import pytest (about 0.3 s each) while the pristine copy is made
        # (many small system calls): neither needs the other before the first request.
        with interrupts.held():  # until the engine holds its workers, to stop them (interrupts.py)
            self.pool = Pool(
                [self.scratch.sandbox_path(i) for i in range(count)],
                start_dir=self.scratch.path,
                launch=launch,
                hash_seed=self.seed,
            )
        for worker in self.pool.workers:
            worker.memory_limit = limit
        with timeline.span("pristine copy"):
            pristine = self.scratch.pristine_copy(root, files)
        # The workers copy their sandboxes from here on, while the gate hashes the copy and
        # sets up the working tree's guard: no sandbox is guarded before its copy is read back.
        self._begin_copies(pristine, files, trees)
        with timeline.span("pristine hashes"):
            hashes = pristine_hashes(pristine, files)  # once, for every guard of this copy
        containment = Containment(
            TreeGuard(root, files, pristine, watch_new_files=False, hashes=hashes),
            self.displaced,
            watch=lambda: TreeWatch(
                root, set(files), skip=[cache_base(cache_dir), self.scratch.path], slow=[Path(sys.prefix)]
            ),
        )
        self.containment = containment
        timeline.mark("tree guard")
        for worker in self.pool.workers:
            if trees is None:
                worker.copied_from_hashes(hashes)
            worker.containment = containment
            worker.pristine_check = self.scratch.repair_pristine

    def _begin_copies(self, pristine: Path, files: list[str], trees: list[dict[str, bytes]] | None) -> None:
        """Each worker copies its own sandbox, in parallel with the others and with the gate's
        own work (hashing the pristine copy, building mutants): copying is thousands of small
        system calls."""
        assert self.pool is not None
        timeline.mark("copies ordered")
        if trees is None:
            manifest = self.scratch.manifest(files, "files")
            for worker in self.pool.workers:
                worker.begin_copy(pristine, files, manifest)
            return
        for worker, tree in zip(self.pool.workers, trees, strict=True):
            own = self.scratch.tree_copy(tree, f"tree-{worker.index}")
            listed = sorted(tree)
            worker.begin_copy(own, listed, self.scratch.manifest(listed, f"files-{worker.index}"))

    @property
    def workers(self) -> list[Worker]:
        assert self.pool is not None
        return self.pool.workers

    def run(self, worker: Worker, scenario: Scenario, *, complete: bool = False) -> RunOutcome:
        """One scenario on one worker. `complete`: resume until every test has an outcome."""
        runner = run_to_completion if complete else run_scenario
        return runner(worker, self.scratch, self.root, replace(scenario, seed=self.seed))

    def run_all(self, scenarios: list[Scenario]) -> list[RunOutcome]:
        return self.map(scenarios, lambda worker, scenario: self.run(worker, scenario))

    def map(
        self, jobs: list[Any], run: Callable[[Worker, Any], Any], on_done: Callable[[Any, Any], None] | None = None
    ) -> list[Any]:
        """Every job on the next free worker; results in job order."""
        assert self.pool is not None
        return self.pool.map(jobs, run, on_done)

    def close(self) -> None:
        with timeline.span("engine close"):
            self._close()

    def _close(self) -> None:
        # Once: a command that stops early closes its engine, and the `with` around it closes it
        # again; the second close handed the same watches to a second close beside the first
        # (a sweep refused on pluggy: EBADF, and a close of whatever reused the number).
        if self._closed:
            return
        self._closed = True
        if self._switch_interval is not None:
            sys.setswitchinterval(self._switch_interval)
            self._switch_interval = None
        closes: list[Callable[[], None]] = []
        try:
            if self.pool is not None:
                # A signal that lands here (a run ending as SIGTERM came) waits until no worker
                # is left; then the scratch is removed all the same, below. It was left.
                with timeline.span("stop workers"), interrupts.held():
                    closes += self.pool.stop()
                self.pool = None
                with timeline.span("final check"):
                    self._final_check()
        finally:
            if self.containment is not None:
                closes.append(self.containment.tree.close)
            # Every process is gone and the tree was checked a last time: what is left (the
            # watches closed, the rewrites kept, the scratch removed) changes no verdict and
            # nothing the command says, so it goes on beside the command's reports when the
            # command has a launch to finish it before the command ends.
            if self.launch is not None:
                self.launch.behind(lambda: self._leave(closes))
            else:
                self._leave(closes)

    def _leave(self, closes: list[Callable[[], None]]) -> None:
        if self.scratch.kept_rewrites is not None:
            keep_new(self.scratch.rewrites, self.scratch.kept_rewrites)
        # All at once: each watch's close waits on the kernel, and the scratch's removal on the
        # disk (inotify_watch.close_together says why that is most of a gate's last 50 ms).
        with timeline.span("scratch removed"):
            close_together([*closes, self.scratch.close_watch, self.scratch.remove_files])

    def _final_check(self) -> None:
        """The whole tree once more, its slow folders included, with no run left to blame:
        said in one line, since no verdict can carry it."""
        if self.containment is None:
            return
        try:
            written = self.containment.final()
        except OSError as exc:  # the scratch must still be removed
            print(f"killmap: the working tree could not be checked a last time: {exc}", file=sys.stderr)
            return
        if written.paths:
            lost = f"; could not restore (no copy kept): {', '.join(written.unrestored)}" if written.unrestored else ""
            print(
                f"killmap: the working tree was written while the gate ran: {', '.join(written.paths)} "
                f"(restored, or moved out, and kept under {self.displaced}){lost}",
                file=sys.stderr,
            )

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
