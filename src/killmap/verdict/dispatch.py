"""Dispatch: each mutant to a worker as soon as it is built and the baseline is in.

The early baseline (early_baseline.py) runs the first baseline while the gate builds and checks the
mutants, and neither waits for the other to end. A mutant's run needs only its own text and the
baseline: the dispatch hands each one to the next free worker from the moment both are there,
while the gate builds the rest. (Waiting for the last mutant to be built would leave a worker
whose baseline run is done idle: about 0.1 s of both workers per gate on draftroute's catalog.)

Order among the mutants ready at a time: dearest first, by what they took in an earlier run
when the caller knows it, else by what their selected tests took in the baseline. What this
changes is only when a run starts, never what it runs or how it is judged. The verdicts come
back to the gate, which stores, announces and orders them as it does for any run.

A catalog error found while building is still the error reported: the gate cancels the
dispatch (its runs are discarded with their workers) and raises its own. A contract id the
baseline does not know stops the dispatch too: mutations are checked in the order they are
offered, which is the catalog's, so the first such id is the one named, as before.

The baseline is whole when a mutant starts: its runs, each of every test in pytest's order,
give every mutant's selection and limits (baseline.run_baseline).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from killmap import timeline
from killmap.catalog.reader import GateSettings, Mutation
from killmap.engine import Worker
from killmap.mutate.mutant import Mutant
from killmap.verdict.baseline import Baseline, check_contract_ids, check_focus
from killmap.verdict.trial import expected_seconds, select_tests

Progress = Callable[[str, Any], None]


class Dispatch:
    """Runs one settings group's mutants on the workers as they are offered, once its
    baseline is in. Every group goes through one: the early baseline's while the gate still
    builds (`baseline` joins the early baseline), any other after it (`baseline` runs it).

    `run(worker, (mutation, mutant, baseline), selection)` is the trial; `on_done(mutation,
    result)` hears of each result as it lands. Offer every mutant that must run, then
    `close()`; `results()` waits for the last and returns them by mutation name.
    """

    def __init__(
        self,
        settings: GateSettings,
        baseline: Callable[[], Baseline],
        workers: list[Worker],
        run: Callable[..., Any],
        progress: Progress,
        on_done: Callable[[Mutation, Any], None],
        recorded: Mapping[str, float] | None = None,
        focus: tuple[str, ...] | None = None,
    ):
        self.settings = settings
        self._focus = focus  # the tests a focused run names (prove's): checked as contract ids are
        self._recorded = recorded or {}
        self._baseline_source = baseline
        self._workers = workers
        self._run = run
        self._progress = progress
        self._on_done = on_done
        self._lock = threading.Condition()
        self._offered: list[tuple[Mutation, Mutant]] = []
        # Per mutation: its selection and what its tests took in the baseline, worked out once
        # (a sweep offers hundreds, and every take compares every one still waiting).
        self._selections: dict[str, tuple[tuple, float]] = {}
        self._closed = False
        self._cancelled = False
        self._error: BaseException | None = None
        self._results: dict[str, Any] = {}
        self.baseline: Baseline | None = None  # the baseline mutants are selected and run by
        # Verdicts landed before the baseline was said: said right after it, in landing order.
        self._unsaid: list[tuple[Mutation, Any]] = []
        self._announced = False
        self._say_decided: Callable[[], None] | None = None  # close()'s, called once, before the baseline
        self._thread = threading.Thread(target=self._serve, name="killmap-dispatch", daemon=True)
        self._thread.start()

    def offer(self, mutation: Mutation, mutant: Mutant) -> None:
        with self._lock:
            self._offered.append((mutation, mutant))
            self._lock.notify_all()

    def close(self, say_decided: Callable[[], None] | None = None) -> None:
        """No more mutants will be offered. `say_decided` says the verdicts the caller decided
        without a run (static, cached): the dispatch calls it just before the baseline's lines,
        once every offered mutant's contract ids are checked, so that a catalog error is all a
        user sees (the cached lines of other mutations printed before it read as a run begun)."""
        with self._lock:
            self._closed = True
            if say_decided is not None:
                self._say_decided = say_decided
            self._lock.notify_all()
            unsaid = self._announce_baseline()
        self._say(unsaid)  # a failure here is the caller's, which stops the dispatch

    def cancel(self) -> None:
        """Start nothing more; the caller stops the workers (the engine's close)."""
        with self._lock:
            self._cancelled = True
            self._lock.notify_all()

    def join(self) -> None:
        while self._thread.is_alive():
            self._thread.join(0.2)  # short joins keep ^C responsive

    def results(self) -> dict[str, Any]:
        """Every offered mutant's result, once all have run; the first error, if any."""
        self.close()
        self.join()
        if self._error is not None:
            raise self._error
        return dict(self._results)

    def _serve(self) -> None:
        try:
            with timeline.span("await baseline"):
                source = self._baseline_source()
            with self._lock:
                self.baseline = source
                unsaid = self._announce_baseline()  # the last mutant may be offered already
            self._say(unsaid)
        except BaseException as exc:  # noqa: BLE001 - re-raised by results()
            self._fail(exc)
            return
        threads = [threading.Thread(target=self._drain, args=(worker,), daemon=True) for worker in self._workers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def _announce_baseline(self) -> list[tuple[Mutation, Any]]:
        """Say the baseline is in (under the lock), once: when the last mutant has been
        offered; the verdicts that landed before it, to be
        said by the caller outside the lock.

        Not as soon as it is in: a catalog error found while the gate still builds is then the
        only thing a user sees, however fast the baseline was (the workers start first, so it
        is often in before the first mutant is built); the gate cancels the dispatch before it
        says its error. Nor when the first mutant is taken: the verdicts the gate decided
        while it built (static, cached) are said here, first, so on every run they come before
        the baseline's lines, and every verdict that ran comes after them."""
        if self._announced or self.baseline is None or not self._closed:
            return []
        self._select_offered()  # a catalog error is all the user sees: before any verdict's line
        check_focus(self._focus, self.baseline)
        self._announced = True
        say_decided, self._say_decided = self._say_decided, None
        if say_decided is not None:
            say_decided()
        self._progress("baseline", self.settings)
        self._progress("baseline-done", self.baseline)
        unsaid, self._unsaid = self._unsaid, []
        return unsaid

    def _select_offered(self) -> None:
        """Each offered mutant's selection and cost, worked out once (under the lock), in
        catalog order: an unknown contract id is a catalog error (exit 2), the first one named,
        and nothing more starts."""
        assert self.baseline is not None
        for mutation, mutant in self._offered:
            if mutation.name not in self._selections:
                check_contract_ids([mutation], self.baseline)
                selection = select_tests(mutation, mutant, self.baseline)
                cost = self._recorded.get(mutation.name)
                if cost is None:
                    cost = expected_seconds(selection[0], self.baseline)
                self._selections[mutation.name] = (selection, cost)

    def _say(self, landed: list[tuple[Mutation, Any]]) -> None:
        for mutation, result in landed:
            self._on_done(mutation, result)

    def _stopped(self) -> bool:
        return self._cancelled or self._error is not None

    def _fail(self, exc: BaseException) -> None:
        with self._lock:
            if self._error is None:
                self._error = exc
            self._lock.notify_all()

    def _next(self) -> tuple[Mutation, Mutant, tuple] | None:
        """The dearest mutant offered and not yet taken; None when there will be none."""
        assert self.baseline is not None
        with self._lock:
            while not self._stopped() and not (self._offered or self._closed):
                self._lock.wait()
            if self._stopped():
                return None
            if not self._offered:  # closed, and all taken
                return None
            self._select_offered()
            # Dearest first (the classic rule for sharing jobs among workers): a long run
            # started last would leave the other workers idle while it finishes. What a mutant
            # took in an earlier run, when the caller has it (a sweep's --durations), says
            # better than the baseline what it costs: a mutant that loops costs its limits,
            # though its tests took milliseconds green.
            dearest = max(self._offered, key=lambda job: self._selections[job[0].name][1])
            self._offered.remove(dearest)
            return dearest[0], dearest[1], self._selections[dearest[0].name][0]

    def _drain(self, worker) -> None:
        while True:
            try:
                job = self._next()
            except BaseException as exc:  # noqa: BLE001 - a contract id the baseline lacks
                self._fail(exc)
                return
            if job is None:
                return
            mutation, mutant, selection = job
            try:
                with timeline.span("mutant", mutation=mutation.name, worker=worker.index):
                    result = self._run(worker, (mutation, mutant, self.baseline), selection)
            except BaseException as exc:  # noqa: BLE001 - re-raised by results()
                self._fail(exc)
                return
            self._land(mutation, result)

    def _land(self, mutation: Mutation, result: Any) -> None:
        """A result stored and heard of."""
        with self._lock:
            self._results[mutation.name] = result
            if not self._announced:
                self._unsaid.append((mutation, result))  # said with the baseline, once all are offered
                return
        self._on_done(mutation, result)
