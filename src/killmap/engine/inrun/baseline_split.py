"""How the parallel runs of one baseline pass share out its tests: each claims a test before it runs it.

Each run walks the same tests in the same order and runs a test only if it is the first to
claim it. A run that started late, or is slowed by what it traces, finds more tests already
claimed, and the runs end together; a fixed split (run k of n the k-th n-th) left the earlier
run's worker idle at the end. A test is the unit, not a file: one test file often holds most
of a suite (packaging's test_specifiers.py), and a split by file would leave a run waiting on
it. A module's fixtures are set up in each run that holds one of its tests, as they were when
every run ran everything. A test that needs another to have run before it in the same session
can go red in a split run: the baseline then runs the whole suite in each run, in pytest's own
order, before it says anything (verdict/baseline.py).

This module is imported by the warm worker before it forks; it must not import the project
under test.
"""

from __future__ import annotations

import fcntl
import os
from collections import deque
from collections.abc import Iterable
from typing import Any


class ClaimFile:
    """One byte per key of a file shared by the runs, set under an exclusive lock: four system
    calls a claim, on any file system (a file per claim cost 75 us to create in a disk-backed
    /tmp). A key's byte is its place among the sorted keys, the same in every run, whatever
    order each collected in."""

    def __init__(self, path: str, keys: Iterable[str]):
        self.path = path
        self._at = {key: index for index, key in enumerate(sorted(set(keys)))}
        self._fd: int | None = None

    def take(self, key: str) -> bool:
        """Whether this run takes `key`: True when no other run took it first, and when no
        claim could be made at all (a file run twice costs time, a file run by nobody loses
        its tests' evidence)."""
        index = self._at.get(key)
        if index is None:
            return True
        try:
            if self._fd is None:
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                taken = os.pread(self._fd, 1, index) == b"\1"
                if not taken:
                    os.pwrite(self._fd, b"\1", index)
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        except OSError:
            return True
        return not taken

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class ClaimedItems:
    """A run's items, claimed test by test as the run goes.

    pytest's run loop (and the collected session's, session.py) iterates over `session.items`
    itself and reads the next item from it before each test, for the teardown that follows
    (`nextitem`: a module's fixtures stay up while the next test is in the same module). So
    the list is kept one item ahead of the loop: when item k starts, item k + 2 is claimed,
    and the loop finds item k + 1 final when it asks for it."""

    def __init__(self, path: str, items: list[Any]):
        self.claims = ClaimFile(path, [item.nodeid for item in items])
        self._waiting = deque(items)
        self.items = items
        items[:] = []  # the same list object: the loop holds it
        self._claim_until(2)

    def starting(self, index: int) -> None:
        """Item `index` starts: claim ahead so that the loop's next `nextitem` is final."""
        self._claim_until(index + 3)

    def _claim_until(self, length: int) -> None:
        while len(self.items) < length and self._waiting:
            item = self._waiting.popleft()
            if self.claims.take(item.nodeid):
                self.items.append(item)
