"""Guards: what a run may have written where it must not, found and undone after every run.

A mutant is hostile code running as the user. It can append a test to its sandbox's
test file (poisoning every later run on that worker), delete the sandbox, or write into
the user's working tree by absolute path. Prevention is not portable; detection is. A
`TreeGuard` remembers the files of one tree (size, mtime, and a hash taken lazily), and
after each run says which files changed, appeared or vanished, and restores them byte for
byte from the pristine copy the gate made when it started.

Stat first, hash only on a difference: a run that wrote nothing costs one stat per file.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from killmap.engine.treewatch import Found, TreeWatch


@dataclass(frozen=True)
class FileState:
    size: int
    mtime_ns: int
    sha256: str


def pristine_hashes(pristine: Path, files: list[str]) -> dict[str, str]:
    return {rel: _digest(pristine / rel) for rel in files}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class Changes:
    modified: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(sorted(self.modified + self.added + self.removed))

    def __bool__(self) -> bool:
        return bool(self.modified or self.added or self.removed)


class TreeGuard:
    """One tree's files as the gate copied them; `check_and_restore` after every run.

    `pristine` holds the bytes to restore from (the gate's own copy, never the tree
    itself). `watch_new_files` also removes files that appeared (in a sandbox, a new
    conftest.py or test file would change every later run); in the user's working tree
    new files are the user's own business and are left alone.
    """

    def __init__(
        self,
        folder: Path,
        files: list[str],
        pristine: Path,
        *,
        watch_new_files: bool,
        hashes: dict[str, str] | None = None,
    ):
        self.folder = folder
        self.pristine = pristine
        self.watch_new_files = watch_new_files
        # Size and mtime as they are in the guarded tree; the hash of the pristine bytes
        # (`hashes`: already computed for this pristine copy, shared by all its guards).
        self.states = {}
        for rel in files:
            stat = (folder / rel).stat()
            digest = hashes[rel] if hashes and rel in hashes else _digest(pristine / rel)
            self.states[rel] = FileState(stat.st_size, stat.st_mtime_ns, digest)
        # Plain strings for the loop after every run: pathlib's joins cost more than the stats.
        self._prefix = str(folder) + os.sep
        self._lock = threading.Lock()  # the working tree's guard is shared by every worker
        self.last_seen_ns: dict[str, int] = {}  # when a changed file was last written

    def check_and_restore(self, keep_in: Path | None = None) -> Changes:
        """What changed since the copy; undone. `keep_in`: first save what was written
        over a file there, so restoring it loses nothing."""
        with self._lock:
            return self._check_and_restore(keep_in)

    def _check_and_restore(self, keep_in: Path | None) -> Changes:
        modified, removed = [], []
        prefix = self._prefix
        for rel, known in self.states.items():
            try:
                stat = os.stat(prefix + rel)
            except FileNotFoundError:
                removed.append(rel)
                continue
            if stat.st_size == known.size and stat.st_mtime_ns == known.mtime_ns:
                continue
            if stat.st_size == known.size and _digest(Path(prefix + rel)) == known.sha256:
                # Rewritten with the same bytes (the worker restores a mutated file so).
                self.states[rel] = FileState(stat.st_size, stat.st_mtime_ns, known.sha256)
                continue
            modified.append(rel)
        added = self._new_files() if self.watch_new_files else []
        changes = Changes(tuple(modified), tuple(added), tuple(removed))
        if changes:
            for rel in modified:
                self.last_seen_ns[rel] = (self.folder / rel).stat().st_mtime_ns
            if keep_in is not None:
                self._save_displaced(changes, keep_in)
            self._restore(changes)
        return changes

    def _save_displaced(self, changes: Changes, folder: Path) -> None:
        for rel in changes.modified:
            source = self.folder / rel
            if source.is_file():
                dest = folder / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, dest)

    def _new_files(self) -> list[str]:
        found = []
        root = str(self.folder)
        for current, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            base = current[len(root) + 1 :].replace(os.sep, "/")
            for name in names:
                rel = f"{base}/{name}" if base else name
                if rel not in self.states and not name.endswith(".killmap-tmp"):
                    found.append(rel)
        return sorted(found)

    def _restore(self, changes: Changes) -> None:
        for rel in changes.modified + changes.removed:
            dest = self.folder / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(f".{dest.name}.killmap-tmp")
            shutil.copyfile(self.pristine / rel, tmp)
            os.replace(tmp, dest)  # a new inode: a hard link the run made cannot carry it back
            stat = dest.stat()
            self.states[rel] = FileState(stat.st_size, stat.st_mtime_ns, self.states[rel].sha256)
        for rel in changes.added:
            try:
                os.unlink(self.folder / rel)
            except OSError:
                pass
        if changes.added:
            _remove_empty_dirs(self.folder, {str(Path(rel).parent) for rel in changes.added})


def _remove_empty_dirs(root: Path, parents: set[str]) -> None:
    for parent in sorted(parents, key=len, reverse=True):
        folder = root / parent
        while folder != root and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent


def escaped_note(paths: tuple[str, ...], displaced: Path) -> str:
    """What a run wrote into the user's working tree, said one way by every command: the
    files, and the folder that really holds what was written (Containment.displaced)."""
    return (
        f"wrote to the working tree: {', '.join(paths)} (restored byte for byte; what was written "
        f"is kept under {displaced})"
    )


@dataclass(frozen=True)
class Written:
    """What a run wrote into the working tree: every path, and those not put back."""

    paths: tuple[str, ...] = ()
    unrestored: tuple[str, ...] = ()


class Containment:
    """The working tree's guard, shared by every worker, and who is to blame for a write.

    Two workers run at once, so a write into the working tree found after one run may be
    the other's. Every run still in progress when the write happened (its file's mtime)
    is a suspect; each hears of it when its own run ends.

    `watch`: makes the whole-tree watch (treewatch.py), at the start of the first run that
    is not confined; before it, no run could have written into the tree.
    """

    def __init__(self, tree: TreeGuard, displaced: Path, watch: Callable[[], TreeWatch] | None = None):
        self.tree = tree
        self.displaced = displaced  # where overwritten content is kept
        self.test_writes: set[str] = set()  # sandbox files the unmutated tests themselves write
        self._make_watch = watch
        self.watch: TreeWatch | None = None
        self._active: dict[str, float] = {}
        self._pending: dict[str, set[str]] = {}
        self._unrestored: set[str] = set()
        self._lock = threading.Lock()

    def started(self, label: str, when_ns: int, *, confined: bool = True) -> None:
        with self._lock:
            if not confined and self.watch is None and self._make_watch is not None:
                self.watch = self._make_watch()
            self._active[label] = when_ns
            self._pending[label] = set()

    def finished(self, label: str) -> Written:
        """The working-tree files written while this run was in progress, restored."""
        changes = self.tree.check_and_restore(keep_in=self.displaced / label)
        written = {rel: self.tree.last_seen_ns.get(rel) for rel in changes.paths}
        found = self.watch.check(self.displaced / label) if self.watch is not None else Found()
        written.update(found.written)
        with self._lock:
            self._unrestored.update(found.unrestored)
            for rel, when in written.items():
                for other, start in self._active.items():
                    if when is None or when >= start:
                        self._pending[other].add(rel)
            self._active.pop(label, None)
            paths = tuple(sorted(self._pending.pop(label, set())))
            return Written(paths, tuple(p for p in paths if p in self._unrestored))

    def final(self) -> Written:
        """After the last run: anything written since, and in the folders the watch compares
        only at the end (the interpreter's installation), with no run left to blame."""
        if self.watch is None:
            return Written()
        found = self.watch.check(self.displaced / "after-the-runs", final=True)
        return Written(tuple(rel for rel, _ in found.written), found.unrestored)
