"""The whole working tree, watched where nothing stops a test from writing into it.

Where Landlock confines the runs (landlock.py) a test cannot write outside its sandbox and the
gate's scratch. Where it cannot (macOS, an older kernel, some containers, KILLMAP_CONFINE=0,
`[gate] confine = false`) a mutant can write anywhere in the user's tree: into `.git/`, an
ignored log, a new file. The tracked files are the TreeGuard's (guard.py), restored from the
pristine copy; this watches everything else.

A fingerprint of every file (path, size, mtime_ns, inode) is taken before the first run that
is not confined, and compared after every run and at the end. What differs is `escaped`:
a new file is moved out of the tree (kept under `displaced/`, never deleted), `.git/index`,
`HEAD`, the refs and the config are restored byte for byte from copies taken with the
fingerprint, and anything else (an ignored file written over: there is no copy of it) is
named as not restored.

Cost: one stat per file. The interpreter's own installation, when it lives in the tree (a
`.venv`: most of a tree's files, 33,000 of 41,000 in killmap's own), is compared only at
the end, not after every run: 0.05 s instead of 0.25 s per run on killmap's tree. A write
into it is still found and named, at the end, without a mutation to blame.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

import killmap
from killmap.git import git_or_none

# What the gate keeps a copy of and restores: what a corrupt or moved write would cost the
# user their staging area, their branch, or their repository's settings.
GIT_KEPT_FILES = ("index", "HEAD", "packed-refs", "config")
INDEX = ".git/index"
GIT_KEPT_FOLDERS = ("refs",)


@dataclass(frozen=True)
class Stamp:
    size: int
    mtime_ns: int
    inode: int


@dataclass(frozen=True)
class Found:
    """What one comparison found: each changed path with when it was last written (None:
    removed), and those that could not be put back as they were."""

    written: tuple[tuple[str, int | None], ...] = ()
    unrestored: tuple[str, ...] = ()


@dataclass
class _Tree:
    files: dict[str, Stamp] = field(default_factory=dict)
    folders: set[str] = field(default_factory=set)


# killmap's own package, when it lives in the tree (killmap gating itself, or vendored): the
# gate imports its modules lazily, and Python writes their bytecode beside them as it runs.
# Found from the package, not from this file, which may sit at any depth inside it.
_OWN_PACKAGE = str(Path(killmap.__file__).resolve().parent) + os.sep


def fingerprint(root: str, skip: frozenset[str], starts: frozenset[str] | None = None) -> _Tree:
    """Every file and folder under `root` (or only under `starts`, absolute), by path relative
    to `root`, but those in `skip` (absolute) and killmap's own bytecode; symbolic links as
    links, never followed. The tree's other `__pycache__` folders are watched: a bytecode file
    that matches its source's size and mtime is loaded instead of it."""
    tree = _Tree()
    stack = sorted(starts) if starts is not None else [root]
    cut = len(root) + 1
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                stat = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                own = entry.name == "__pycache__" and os.path.realpath(entry.path).startswith(_OWN_PACKAGE)
                if not own and entry.path not in skip:
                    tree.folders.add(entry.path[cut:])
                    stack.append(entry.path)
            else:
                tree.files[entry.path[cut:]] = Stamp(stat.st_size, stat.st_mtime_ns, stat.st_ino)
    return tree


def _inside(folder: Path, root: Path) -> bool:
    try:
        folder.resolve().relative_to(root.resolve())
    except (OSError, ValueError):
        return False
    return True


def git_copies(root: Path) -> dict[str, tuple[bytes, int]]:
    """The bytes and mtime of `.git/index`, `HEAD`, the refs and the config, by path."""
    git = root / ".git"
    if not git.is_dir():  # a worktree's or submodule's .git is a file: its repository is elsewhere
        return {}
    paths = [git / name for name in GIT_KEPT_FILES]
    for folder in GIT_KEPT_FOLDERS:
        paths += [p for p in (git / folder).rglob("*") if p.is_file() and not p.is_symlink()]
    copies = {}
    for path in paths:
        try:
            copies[path.relative_to(root).as_posix()] = (path.read_bytes(), path.stat().st_mtime_ns)
        except OSError:
            continue
    return copies


class TreeWatch:
    """The working tree's every file but the tracked ones (`tracked`: the TreeGuard's).

    `skip`: the gate's own folders, when they are inside the tree (its cache, its scratch);
    `slow`: folders compared only at the end (the interpreter's installation)."""

    def __init__(self, root: Path, tracked: set[str], *, skip: list[Path], slow: list[Path]):
        self.root = root
        self.tracked = tracked
        self._skip = frozenset(str(root / p.resolve().relative_to(root.resolve())) for p in skip if _inside(p, root))
        self._slow = frozenset(str(root / p.resolve().relative_to(root.resolve())) for p in slow if _inside(p, root))
        self._lock = threading.Lock()
        self.git = git_copies(root)
        self.fast = fingerprint(str(root), self._skip | self._slow)
        self.slow = fingerprint(str(root), self._skip, self._slow)

    def check(self, keep_in: Path, *, final: bool = False) -> Found:
        """Compare with the fingerprint; restore and move out what can be; say the rest.
        `final`: the slow folders too (at the end of the gate)."""
        with self._lock:
            now = fingerprint(str(self.root), self._skip | self._slow)
            found = self._compare(self.fast, now, keep_in)
            if final and self._slow:
                now = fingerprint(str(self.root), self._skip, self._slow)
                found = _joined(found, self._compare(self.slow, now, keep_in))
            return found

    def _compare(self, before: _Tree, now: _Tree, keep_in: Path) -> Found:
        written: dict[str, int | None] = {}
        unrestored: list[str] = []
        for rel, stamp in now.files.items():
            known = before.files.get(rel)
            if known == stamp or rel in self.tracked:
                continue
            if known is not None and rel == INDEX and self._refreshed(stamp, before):
                continue
            written[rel] = stamp.mtime_ns
            if known is None:
                if not self._move_out(rel, keep_in):
                    unrestored.append(rel)
                    before.files[rel] = stamp
            elif not self._restore(rel, keep_in, before):
                unrestored.append(rel)
                before.files[rel] = stamp
        for rel in sorted(set(before.files) - set(now.files) - self.tracked):
            written[rel] = None
            if not self._restore(rel, keep_in, before):
                unrestored.append(rel)
                del before.files[rel]
        for rel in sorted(now.folders - before.folders, key=len, reverse=True):
            try:  # a folder the run made, emptied by moving its files out
                os.rmdir(self.root / rel)
                written.setdefault(rel + "/", None)
            except OSError:
                before.folders.add(rel)
        return Found(tuple(sorted(written.items())), tuple(sorted(unrestored)))

    def _refreshed(self, stamp: Stamp, before: _Tree) -> bool:
        """Whether `.git/index` was only refreshed: the same entries staged, new stat data.
        `git status` (a shell prompt's, an editor's) rewrites it so whenever a tracked file's
        mtime changed, and the guard restores tracked files: calling that an escape, and
        putting the old index back, would fight the user's own git. The new one is kept."""
        path = self.root / INDEX
        saved, _ = self.git.get(INDEX, (b"", 0))
        try:
            current = path.read_bytes()
            if not _sealed(current, saved):
                return False
            with tempfile.NamedTemporaryFile(prefix="killmap-index-") as copy:
                copy.write(saved)
                copy.flush()
                staged = _staged(self.root, str(path))
                same = staged is not None and staged == _staged(self.root, copy.name)
        except OSError:
            return False
        if same:
            self.git[INDEX] = (current, stamp.mtime_ns)
            before.files[INDEX] = stamp
        return same

    def _move_out(self, rel: str, keep_in: Path) -> bool:
        """A file the run made: out of the tree, kept, never deleted (it may be the user's)."""
        dest = keep_in / "new" / rel
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(self.root / rel), str(dest))
        except OSError:
            return False
        return True

    def _restore(self, rel: str, keep_in: Path, before: _Tree) -> bool:
        """A kept `.git` file, written over or removed: what was written is kept, then the
        copy's bytes and mtime put back. False for a file the gate has no copy of."""
        if rel not in self.git:
            return False
        data, mtime_ns = self.git[rel]
        path = self.root / rel
        try:
            if path.is_file():
                dest = keep_in / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, dest)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.killmap-tmp")
            tmp.write_bytes(data)
            os.utime(tmp, ns=(mtime_ns, mtime_ns))
            os.replace(tmp, path)
            stat = path.stat()
        except OSError:
            return False
        before.files[rel] = Stamp(stat.st_size, stat.st_mtime_ns, stat.st_ino)
        return True


def _sealed(index: bytes, saved: bytes) -> bool:
    """Whether `index` ends in the checksum git writes over everything before it (SHA-1, or
    SHA-256 in a SHA-256 repository), as every index git itself writes does. Git does not
    check it when it reads an index, so bytes appended to a valid one (a mutant's junk) can
    still list the same entries: only the seal tells git's own rewrite from a write into it.
    An all-zero trailer (`index.skipHash`) is taken only where the saved index had one too."""
    for size, algorithm in ((20, "sha1"), (32, "sha256")):
        trailer = index[-size:]
        if len(index) > size and trailer == hashlib.new(algorithm, index[:-size]).digest():
            return True
        if trailer == bytes(size) and saved[-size:] == bytes(size):
            return True
    return False


def _staged(root: Path, index: str) -> str | None:
    """What an index file stages (`git ls-files -s`: mode, object, stage, path), or None when
    git cannot read it (a corrupt index, no git)."""
    staged = git_or_none(root, "ls-files", "-s", "-z", index=index)
    return staged.decode(errors="replace") if staged is not None else None


def _joined(one: Found, other: Found) -> Found:
    return Found(tuple(sorted(one.written + other.written)), tuple(sorted(one.unrestored + other.unrestored)))
