"""The early baseline: the engine and the first baseline, begun while the gate builds the mutants.

Building mutants (libcst transforms, pyflakes) is the gate's own work, on one core; starting
workers (each imports pytest) and the baseline (the whole suite, twice) is the workers'.
Neither needs the other: the baseline depends only on which files the mutations target and
which tests their contracts name, both known from the catalog. So when the gate can tell
that something will run (a mutant that is not remembered, or a verdict that is not cached),
it starts both on a thread and builds the mutants meanwhile.

The early baseline is the baseline for every mutation that might run. If some of them turn
out to need no run (a static verdict, a cached one), that baseline covers more targets than
needed: a superset of the evidence, never less. A mutation of other settings gets its own
baseline afterwards, as before.

Failure order is kept: a catalog error found while building mutants is reported, not the
baseline's; the early baseline is cancelled (its workers killed) without waiting for it.
"""

from __future__ import annotations

import threading
from pathlib import Path

from killmap import timeline
from killmap.catalog.reader import GateSettings, Mutation
from killmap.engine import Engine
from killmap.verdict.baseline import Baseline, run_baseline


class EarlyBaseline:
    """The baseline of `group` (one settings) on `engine`, started on a thread.

    The engine is made by the caller, on its own thread: copying the sandboxes is many
    small system calls, and on a thread that shares the GIL with the mutant builder each
    of them would wait for its turn.
    """

    def __init__(
        self, root: Path, files: list[str], group: list[Mutation], engine: Engine, *, runs: int, timeout: float
    ):
        self.settings: GateSettings = group[0].settings
        # What the baseline depends on besides the settings (baseline.py): the files traced and
        # the tests the contracts name. A sweep starts one before its mutants exist.
        self.targets = frozenset(m.target.path for m in group)
        self.contract = frozenset(test for m in group for test in m.contract_tests())
        self.engine = engine
        self._baseline: Baseline | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(root, files, group, runs, timeout), name="killmap-early-baseline", daemon=True
        )
        self._thread.start()

    def _run(self, root, files, group, runs, timeout) -> None:
        try:
            with timeline.span("baseline"):
                self._baseline = run_baseline(
                    root, files, self.settings, group, self.engine, runs=runs, timeout=timeout
                )
        except BaseException as exc:  # noqa: BLE001 - re-raised in the gate's thread by baseline()
            self._error = exc

    def covers(self, group: list[Mutation]) -> bool:
        """Whether this baseline is evidence enough for `group`: the same settings, no file it
        did not trace, no contract test it did not name."""
        return (
            bool(group)
            and all(m.settings == self.settings for m in group)
            and all(m.target.path in self.targets for m in group)
            and all(test in self.contract for m in group for test in m.contract_tests())
        )

    def baseline(self) -> Baseline:
        """The baseline, once its runs are in (baseline.run_baseline)."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._baseline is not None
        return self._baseline

    def cancel(self) -> None:
        """Stop it without waiting for the baseline: the workers are killed, its thread ends."""
        self.engine.close()
        self._thread.join()
