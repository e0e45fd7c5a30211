"""Guards: what a run may have written where it must not, found and undone after every run.

A mutant is hostile code running as the user. It can append a test to its sandbox's
test file (poisoning every later run on that worker), delete the sandbox, or write into
the user's working tree by absolute path. Prevention is not portable; detection is. A
`TreeGuard` remembers the files of one tree (size, mtime, ctime, and a hash taken lazily),
and after each run says which files changed, appeared or vanished, and restores them byte
for byte from the pristine copy the gate made when it started.

Stat first, hash only on a difference (of size, mtime or ctime): a run that wrote nothing
costs one stat per file, and one per folder for the files it might have added
(`FolderStamps`). The ctime because a run can write a file's bytes and set its mtime back;
nothing but the kernel sets a ctime. Where the kernel can say what happened in the tree
(inotify_watch.py), a check that heard nothing, or only what it was told to expect, stats nothing.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from killmap.engine.containment.inotify_watch import InotifyWatch
from killmap.engine.containment.tree_watch import Found, TreeWatch


@dataclass(frozen=True)
class FileState:
    size: int
    mtime_ns: int
    ctime_ns: int  # a run can set a file's mtime back (os.utime), never its ctime
    sha256: str

    @classmethod
    def of(cls, stat: os.stat_result, sha256: str) -> FileState:
        return cls(stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, sha256)

    def stamped(self, stat: os.stat_result) -> bool:
        """Whether the file still has the size and times it had: then it was not written."""
        return stat.st_size == self.size and stat.st_mtime_ns == self.mtime_ns and stat.st_ctime_ns == self.ctime_ns


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
        self._prefix = str(folder) + os.sep
        # Begun before the files are stat'ed: whatever happens meanwhile is heard at the first check.
        folders = every_folder(self._prefix) if watch_new_files else sorted({rel.rpartition("/")[0] for rel in files})
        self._watch = InotifyWatch.open(self._prefix, folders, files)
        # Size and times as they are in the guarded tree; the hash of the pristine bytes
        # (`hashes`: already computed for this pristine copy, shared by all its guards).
        self.states = {}
        for rel in files:
            stat = (folder / rel).stat()
            digest = hashes[rel] if hashes and rel in hashes else _digest(pristine / rel)
            self.states[rel] = FileState.of(stat, digest)
        # Plain strings for the loop after every run (the prefix above): pathlib's joins cost
        # more than the stats.
        self._lock = threading.Lock()  # the working tree's guard is shared by every worker
        self.last_seen_ns: dict[str, int] = {}  # when a changed file was last written
        # The folders listed once, for the watch above and for these stamps.
        self._folders = FolderStamps(self._prefix, folders) if watch_new_files else None

    def check_and_restore(self, keep_in: Path | None = None, expected: Collection[str] = ()) -> Changes:
        """What changed since the copy; undone. `keep_in`: first save what was written
        over a file there, so restoring it loses nothing. `expected`: files rewritten with
        their own bytes meanwhile (the worker writes a mutant and puts the original back)."""
        with self._lock:
            if self._heard_nothing_else(expected):
                if self._folders is not None:
                    self._folders.settle()  # for the next check that does look
                return Changes()
            changes = self._check_and_restore(keep_in)
            self._watch_new_folders()
            return changes

    def _heard_nothing_else(self, expected: Collection[str]) -> bool:
        """Whether the watch heard nothing, or only the `expected` files replaced by a copy of
        their own bytes (and the worker's temporary file and bytecode beside them)."""
        watch = self._watch
        heard = watch.heard() if watch is not None else None
        if watch is None or heard is None:
            return False
        allowed: set[str] = set()
        for rel in expected:
            parent, _, name = rel.rpartition("/")
            allowed.update((rel, f"{parent}/.{name}.killmap-tmp".lstrip("/"), f"{parent}/__pycache__".lstrip("/")))
        if not heard <= allowed:
            return False
        for rel in heard & set(expected):
            if rel not in self.states or not self._same_bytes(rel):
                return False
            if not watch.watch(rel):  # a new inode: the old one's watch went with it
                self._drop_watch()
        return True

    def _same_bytes(self, rel: str) -> bool:
        known = self.states[rel]
        try:
            stat = os.stat(self._prefix + rel)
        except FileNotFoundError:
            return False
        if known.stamped(stat):
            return True
        if stat.st_size == known.size and _digest(Path(self._prefix + rel)) == known.sha256:
            self.states[rel] = FileState.of(stat, known.sha256)
            return True
        return False

    def _watch_new_folders(self) -> None:
        """A folder a run added and the restore kept (bytecode in it) is heard from now on."""
        if self._watch is None or self._folders is None:
            return
        for folder in self._folders.stamps:
            if folder not in self._watch.folders and not self._watch.watch(folder, folder=True):
                self._drop_watch()
                return

    def _drop_watch(self) -> None:
        """A watch refused (the user's limit): every check looks at everything from now on."""
        if self._watch is not None:
            self._watch.close()
            self._watch = None

    def close(self) -> None:
        if self._watch is not None:
            self._watch.close()

    def _check_and_restore(self, keep_in: Path | None) -> Changes:
        modified, removed = [], []
        prefix = self._prefix
        for rel, known in self.states.items():
            try:
                stat = os.stat(prefix + rel)
            except FileNotFoundError:
                removed.append(rel)
                continue
            if known.stamped(stat):
                continue
            if stat.st_size == known.size and _digest(Path(prefix + rel)) == known.sha256:
                # Rewritten with the same bytes (the worker restores a mutated file so).
                self.states[rel] = FileState.of(stat, known.sha256)
                continue
            modified.append(rel)
            # When it was written, by its ctime: a write whose mtime was set back to before
            # every run would otherwise be blamed on none of them.
            self.last_seen_ns[rel] = stat.st_ctime_ns
        added = self._folders.new_files(self.states) if self._folders is not None else []
        changes = Changes(tuple(modified), tuple(added), tuple(removed))
        if changes:
            if keep_in is not None:
                self._save_displaced(changes, keep_in)
            self._restore(changes)
        if self._folders is not None:
            self._folders.restamp()  # after the restore, which moves the folders it touches
        return changes

    def _save_displaced(self, changes: Changes, folder: Path) -> None:
        for rel in changes.modified:
            source = self.folder / rel
            if source.is_file():
                dest = folder / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, dest)

    def _restore(self, changes: Changes) -> None:
        # What the run added goes first: a link it put where a folder was (to a folder outside
        # the tree) would otherwise carry the restored files there.
        for rel in changes.added:
            try:
                os.unlink(self.folder / rel)
            except OSError:
                pass
        if changes.added:
            _remove_empty_dirs(self.folder, {str(Path(rel).parent) for rel in changes.added})
        for rel in changes.modified + changes.removed:
            dest = self.folder / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            tmp = dest.with_name(f".{dest.name}.killmap-tmp")
            shutil.copyfile(self.pristine / rel, tmp)
            os.replace(tmp, dest)  # a new inode: a hard link the run made cannot carry it back
            self.states[rel] = FileState.of(dest.stat(), self.states[rel].sha256)


Stamp = tuple[int, int, int]  # a folder's inode, mtime and ctime


def folder_stamp(path: str) -> Stamp | None:
    """What changes whenever an entry of the folder is created, removed or renamed; None
    when it is gone. The ctime too: a run can set a folder's mtime back (os.utime), never
    its ctime, which that very call moves to now."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns)


# A folder changed this recently is listed again at the next check whatever its stamp says: a
# file's times come from a clock that ticks in milliseconds (a jiffy), so a file created in
# the same tick as the stamp was taken would leave the stamp as it was. A filesystem that
# keeps whole seconds (HFS+; FAT, two) needs seconds of margin (the "racy git" problem).
RECENT_NS = 50_000_000
RECENT_COARSE_NS = 3_000_000_000


class FolderStamps:
    """Every folder of a tree by its stamp, to find the files a run added without listing
    the whole tree after every run: only a folder whose stamp moved can hold a new entry, so
    a run that added nothing costs a stat per folder. Listing the tree (os.walk) after every
    run cost the gate more than all its other checks of the run together."""

    def __init__(self, prefix: str, folders: list[str] | None = None):
        """`folders`: the tree's, already listed (every_folder), or None to list them."""
        self.prefix = prefix  # the tree's path, with its trailing separator
        self.stamps: dict[str, Stamp | None] = {}
        self._moved: set[str] = set()
        for folder in every_folder(prefix) if folders is None else folders:
            self.stamps[folder] = self._settled(folder)

    def new_files(self, known: Collection[str]) -> list[str]:
        """The files not in `known` in every folder whose stamp moved (or that is new),
        sorted; bytecode folders and the guard's own temporary files left out."""
        found: list[str] = []
        for folder, stamp in self.stamps.items():
            if stamp is None or folder_stamp(self.prefix + folder) != stamp:
                self._moved.add(folder)
                found.extend(self._listed(folder, known))
        return sorted(found)

    def settle(self) -> None:
        """Stamp the folders that had changed too recently to be stamped, where they since
        settled: called when nothing changed in the tree since they were last looked at."""
        for folder, stamp in self.stamps.items():
            if stamp is None:
                self.stamps[folder] = self._settled(folder)

    def restamp(self) -> None:
        """Stamp again the folders found moved or new, as the restore left them: a new folder
        that is still there (bytecode in it, say) is watched from now on."""
        for folder in self._moved:
            if os.path.isdir(self.prefix + folder):
                self.stamps[folder] = self._settled(folder)
            else:
                self.stamps.pop(folder, None)
        self._moved.clear()

    def _listed(self, folder: str, known: Collection[str]) -> list[str]:
        found: list[str] = []
        if os.path.islink(self.prefix + folder):
            return found  # a link the run put in a folder's place: its parent lists the link itself
        try:
            entries = list(os.scandir(self.prefix + folder))
        except OSError:
            return found  # gone: its files are found removed, one stat each
        for entry in entries:
            rel = f"{folder}/{entry.name}" if folder else entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__" and rel not in self.stamps:
                    self._moved.add(rel)  # new: listed whole, and watched from now on if it stays
                    found.extend(self._listed(rel, known))
            elif rel not in known and not entry.name.endswith(".killmap-tmp"):
                found.append(rel)  # a symbolic link too, to a folder or not: the run made it
        return found

    def _settled(self, folder: str) -> Stamp | None:
        """The folder's stamp, or None (list it at every check) while it changed too recently
        for the stamp to be trusted."""
        stamp = folder_stamp(self.prefix + folder)
        if stamp is None:
            return None
        changed = max(stamp[1], stamp[2])
        coarse = stamp[1] % 1_000_000 == 0  # whole milliseconds: a clock of seconds, most likely
        return stamp if time.time_ns() - changed >= (RECENT_COARSE_NS if coarse else RECENT_NS) else None


def every_folder(prefix: str) -> list[str]:
    """A tree's folders but bytecode's, tree-relative ("" for the tree), not following links."""
    folders = []
    for current, dirs, _ in os.walk(prefix):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        folders.append(current[len(prefix) :].replace(os.sep, "/").strip("/"))
    return folders


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

    `watch`: makes the whole-tree watch (tree_watch.py), at the start of the first run that
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
