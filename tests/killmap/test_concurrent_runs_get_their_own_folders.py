"""Runs on different workers at once never share a run folder or a pytest basetemp.

The pool runs one thread per worker, and each asks the shared Scratch for folders. The
counter used to be read again after calls that let another thread in: two runs could get
the same basetemp, and pytest, which empties its basetemp at start, deleted the other
run's tmp_path mid-test (a FileNotFoundError read as flaky or inconclusive).
"""

from __future__ import annotations

import sys
import threading

from killmap.engine.containment.sandbox import Scratch


def test_concurrent_threads_get_distinct_run_folders_and_basetemps():
    scratch = Scratch()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        got: list[str] = []
        errors: list[BaseException] = []

        def ask() -> None:
            try:
                for _ in range(200):
                    got.append(str(scratch.temp_dir()))
                    got.append(str(scratch.run_dir("mutant")))
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=ask) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
        scratch.remove()
    assert not errors, errors[0]
    assert len(got) == len(set(got)) == 8 * 200 * 2
