"""Sandboxes: private copies of the project that mutants are written into.

The user's working tree is only ever read. Each sandbox lives under one temporary folder
that is removed when the gate ends, however it ends; a killed gate leaves at most a
stray temp folder, never a changed source file, and the next gate removes that folder.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

from killmap.engine.containment.guard import Stamp, folder_stamp
from killmap.engine.containment.inotify_watch import InotifyWatch

# Written in every scratch folder: "pid@host" of the gate that owns it. Only a folder holding
# this file, made on this host (a container sharing /tmp has its own pids), whose gate is
# gone, is ever removed by another gate.
OWNER_FILE = "killmap-owner"


def owner() -> str:
    return f"{os.getpid()}@{socket.gethostname()}"


# A RAM disk for the scratch folder when the user chose no TMPDIR: a gate run creates and
# removes thousands of small files (sandboxes, run folders, every test's tmp_path), and a
# disk-backed /tmp (Ubuntu's, CI runners') pays for each in the kernel. On this project's
# machine the bundled gate took 30% less wall time in /dev/shm, in three paired runs.
RAM_DISK = "/dev/shm"
RAM_DISK_SPARE = 256 << 20  # left free beyond the copies' own bytes


def mount_of(folder: str) -> tuple[str, frozenset[str]] | None:
    """(file system type, mount options) of the mount at `folder` (the last one listed, the
    one in force), or None when nothing is mounted there. Linux only."""
    with open("/proc/self/mounts", encoding="utf-8") as mounts:
        entries = [line.split() for line in mounts]
    found = [e for e in entries if len(e) >= 4 and e[1] == folder][-1:]
    return (found[0][2], frozenset(found[0][3].split(","))) if found else None


def scratch_parent(project_bytes: int, copies: int) -> str | None:
    """The folder to make the scratch folder in; None for tempfile's choice ($TMPDIR, /tmp).

    The RAM disk only where it is one (tmpfs), may hold executables (a project's built
    extension modules are loaded from the sandbox: `noexec` would fail their import), is
    writable, and has room for every copy with RAM_DISK_SPARE to spare (a container's
    /dev/shm is often 64 MB)."""
    if os.environ.get("TMPDIR") or not sys.platform.startswith("linux"):
        return None
    try:
        mount = mount_of(RAM_DISK)
        if mount is None or mount[0] != "tmpfs" or "noexec" in mount[1]:
            return None
        if not os.access(RAM_DISK, os.W_OK | os.X_OK):
            return None
        stats = os.statvfs(RAM_DISK)
    except (OSError, IndexError):
        return None
    free = stats.f_bavail * stats.f_frsize
    return RAM_DISK if free >= project_bytes * copies + RAM_DISK_SPARE else None


class Scratch:
    """One temporary folder holding every sandbox and run artifact of one gate run."""

    def __init__(self, parent: str | None = None) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="killmap-", dir=parent))
        (self.path / OWNER_FILE).write_text(owner(), encoding="utf-8")
        remove_abandoned_everywhere(keep=self.path)
        # Numbers for run folders and basetemps, asked for by every pool thread at once:
        # next() on a count is one atomic step, where `+= 1` and a later read were not.
        self._numbers = itertools.count(1)
        self.pristine: Path | None = None
        # What the pristine copy was made from, and its folders as made (repair_pristine).
        self._pristine_source: tuple[Path, list[str]] | None = None
        self._pristine_folders: dict[str, Stamp | None] = {}
        self._pristine_watch: InotifyWatch | None = None  # what the kernel heard there (inotify_watch.py)
        self._pristine_lock = threading.Lock()
        # pytest's rewritten test modules (assert_rewrites.py): written here by this gate's
        # sessions, read from here and from `kept_rewrites`, which outlives the gate.
        self.rewrites = self.path / "rewrites"
        self.kept_rewrites: Path | None = None

    def pristine_copy(self, root: Path, files: list[str]) -> Path:
        """The project as the gate found it: every sandbox is copied from here, and every
        file a run wrote where it must not is restored from here, byte for byte."""
        if self.pristine is None:
            self.pristine = copy_files(root, files, self.path / "pristine")
            self._pristine_source = (root, files)
            self._stamp_pristine()
        return self.pristine

    def _stamp_pristine(self) -> None:
        assert self.pristine is not None
        if self._pristine_watch is not None:
            self._pristine_watch.close()
        prefix = str(self.pristine) + os.sep
        self._pristine_watch = InotifyWatch.open(prefix, (f[len(prefix) :] for f, _, _ in os.walk(prefix)), ())
        self._pristine_folders = folder_stamps(self.pristine)

    def repair_pristine(self) -> bool:
        """Copy the pristine copy again if a run deleted, added or renamed anything in it
        (a mutant that deletes the folders beside its sandbox); whether it did.

        Every later run copies and restores from it. A file removed, created or renamed
        changes its folder's mtime and ctime (guard.folder_stamp: a run can set the mtime back,
        not the ctime), so the folders alone are compared: a stat each, a run; none where the
        kernel heard nothing happen in them (inotify_watch.py)."""
        with self._pristine_lock:
            if self.pristine is None or self._pristine_source is None:
                return False
            if self._pristine_watch is not None and self._pristine_watch.heard() == set():
                return False
            if all(folder_stamp(folder) == stamp for folder, stamp in self._pristine_folders.items()):
                return False
            shutil.rmtree(self.pristine, ignore_errors=True)
            copy_files(*self._pristine_source, self.pristine)
            self._stamp_pristine()
            return True

    def tree_copy(self, contents: dict[str, bytes], name: str) -> Path:
        """A tree written from given contents (another version of the project)."""
        folder = self.path / name
        for rel, data in contents.items():
            dest = folder / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def manifest(self, files: list[str], name: str) -> Path:
        """`files` written down for a worker that copies them (a list too long for a pipe)."""
        path = self.path / f"{name}.json"
        path.write_text(json.dumps(files), encoding="utf-8")
        return path

    def sandbox_path(self, index: int) -> Path:
        """Where sandbox `index` is (or will be) copied: its worker starts before the copy."""
        return self.path / f"sandbox-{index}"

    def run_dir(self, label: str) -> Path:
        folder = self.path / "runs" / f"{next(self._numbers):05d}-{label}"
        folder.mkdir(parents=True)
        return folder

    def temp_dir(self) -> Path:
        """A run's pytest basetemp, named by number only: a mutation's name in the path
        would leak into every tmp_path, and tests may (rightly) read their paths."""
        number = next(self._numbers)
        parent = self.path / "tmp"
        parent.mkdir(exist_ok=True)  # pytest creates the basetemp itself, not its parents
        return parent / f"{number:05d}"

    def close_watch(self) -> None:
        if self._pristine_watch is not None:
            self._pristine_watch.close()

    def remove_files(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)

    def remove(self) -> None:
        self.close_watch()
        self.remove_files()


def remove_abandoned(folder: Path, keep: Path) -> None:
    """Scratch folders of gates that were killed outright (SIGKILL, a CI job cancelled),
    which could not remove their own. A folder whose owner is alive (or might be: a pid in
    use by another user) is left alone, and so is one without the owner file, unless it is
    a leftover (`is_leftover`)."""
    try:
        candidates = [p for p in folder.iterdir() if p.name.startswith("killmap-") and p != keep]
    except OSError:
        return
    host = socket.gethostname()
    for candidate in candidates:
        try:
            pid_text, _, made_on = (candidate / OWNER_FILE).read_text(encoding="utf-8").partition("@")
            pid = int(pid_text)
            if made_on != host or pid <= 0:
                continue
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(candidate, ignore_errors=True)  # its gate is gone
        except FileNotFoundError:
            if is_leftover(candidate):
                shutil.rmtree(candidate, ignore_errors=True)
        except (OSError, ValueError):
            continue  # not a scratch folder, not ours to read, or its gate may be running


# What a process left alive wrote after its gate removed the scratch, making its folders again
# (engine/workers/worker.py kills them first now): only bytecode and rewritten test modules, with no
# owner file. A gate's scratch has its owner file from the moment it is made to its removal.
LEFTOVER_ENTRY = re.compile(r"pycache-\d+|rewrites")
# Nothing in it changed for this long: a folder a gate is making or removing right now (its
# owner file not yet written, or already deleted) is never taken for one.
LEFTOVER_AGE = 10 * 60


def is_leftover(folder: Path, now: float | None = None) -> bool:
    """Whether `folder`, a killmap-* folder without an owner file, is such a leftover: it holds
    nothing but `pycache-N` and `rewrites`, and nothing in it changed for LEFTOVER_AGE."""
    try:
        if not all(LEFTOVER_ENTRY.fullmatch(name) for name in os.listdir(folder)):
            return False
        newest = os.lstat(folder).st_mtime
        for parent, dirs, files in os.walk(folder):
            for name in dirs + files:
                newest = max(newest, os.lstat(os.path.join(parent, name)).st_mtime)
    except OSError:
        return False  # changing under us, or not ours to read: not provably abandoned
    return (time.time() if now is None else now) - newest > LEFTOVER_AGE


def remove_abandoned_everywhere(keep: Path) -> None:
    """remove_abandoned beside `keep` and wherever else a gate may have made its folders:
    tempfile's choice (the start folder, a scratch under TMPDIR) and the RAM disk (a scratch
    when no TMPDIR was set). Called as every gate starts, so a gate whose every verdict is
    cached, which makes no scratch of its own, still clears the RAM disk."""
    places = {keep.parent, Path(tempfile.gettempdir())}
    if sys.platform.startswith("linux"):
        places.add(Path(RAM_DISK))
    for place in places:
        remove_abandoned(place, keep)


def folder_stamps(root: Path) -> dict[str, Stamp | None]:
    """The stamp of `root` and of every folder beneath it (guard.folder_stamp: its inode, mtime
    and ctime, which a run cannot set back), by path; {} when it is gone."""
    return {folder: folder_stamp(folder) for folder, _, _ in os.walk(root)}


def copy_files(source_root: Path, files: list[str], dest_root: Path) -> Path:
    """`files` (relative paths) from one tree into another: the pristine copy, and each
    sandbox, which its worker copies from the pristine one (pool.Worker.begin_copy). Each
    folder lists its entries as the source's does, where the destination's file system
    lists by creation (as_listed)."""
    source, dest = str(source_root) + os.sep, str(dest_root) + os.sep
    made: set[str] = set()
    dest_root.mkdir(parents=True, exist_ok=True)
    for rel in as_listed(source_root, files, newest_first=lists_newest_first(dest_root)):
        folder = rel.rpartition("/")[0]
        if folder not in made:  # one mkdir per folder, not one per file
            os.makedirs(dest + folder, exist_ok=True)
            made.add(folder)
        # copyfile, never a link: a mutant written here must not reach the user's tree.
        shutil.copyfile(source + rel, dest + rel)
    return dest_root


def as_listed(root: Path, files: list[str], *, newest_first: bool) -> list[str]:
    """`files` in the order that, created one by one (each folder with its first file), makes
    every folder list its entries as it does under `root`: a test that numbers its cases by
    `os.listdir` (jmespath's compliance files) had other ids in the sandbox than under plain
    pytest. Depth first, each folder's entries in `root`'s order, or its reverse where the
    destination lists the newest first (tmpfs). A file system that lists by name hash (ext4)
    orders the copy itself, alike on alike."""
    children: dict[str, set[str]] = {}
    for rel in files:
        parts = rel.split("/")
        for depth in range(len(parts)):
            children.setdefault("/".join(parts[:depth]), set()).add(parts[depth])
    ordered: list[str] = []

    def visit(folder: str) -> None:
        wanted = children[folder]
        try:
            listed = [name for name in os.listdir(root / folder) if name in wanted]
        except OSError:
            listed = []
        names = listed + sorted(wanted.difference(listed))
        for name in reversed(names) if newest_first else names:
            rel = f"{folder}/{name}" if folder else name
            if rel in children:
                visit(rel)
            else:
                ordered.append(rel)

    if files:
        visit("")
    return ordered


# Each file system's answer, by device: a fact of the kernel's, asked once per process.
_NEWEST_FIRST: dict[int, bool] = {}


def lists_newest_first(folder: Path) -> bool:
    """Whether a new folder's entries, created in `folder`, list newest first (tmpfs's do):
    asked by a probe folder made and removed there."""
    _known = _NEWEST_FIRST
    try:
        device = os.stat(folder).st_dev
        if device not in _known:
            probe = Path(tempfile.mkdtemp(prefix=".killmap-order-", dir=folder))
            try:
                (probe / "a").touch()
                (probe / "b").touch()
                _known[device] = os.listdir(probe) == ["b", "a"]
            finally:
                shutil.rmtree(probe, ignore_errors=True)
        return _known[device]
    except OSError:
        return False
