"""What changed in a tree since the last look, as the kernel tells it (inotify, Linux).

A guard (guard.py) stats every file of its tree after every run: about 2.5 microseconds a
file, so a project of 600 files costs 1.5 ms a run for the sandbox and as much again for the
working tree, and on a sweep of 640 mutants that was a fifth of the gate's CPU. Nearly every
run writes nothing. The kernel already knows: an inotify watch on every folder hears each
entry created, deleted, renamed, written or closed after writing, and one on every file
hears what is done to it through another name (a hard link made elsewhere). A guard that
hears nothing but what it expects skips its look; anything else, or a queue that overflowed,
and it looks at everything as before. Where inotify is missing (macOS) or refuses a watch
(the user's limit), there is no watch and every check looks at everything.

Reached through ctypes as landlock.py reaches Landlock: the standard library has no binding,
and the calls are three.
"""

from __future__ import annotations

import ctypes
import functools
import os
import struct
import sys
import threading
from collections.abc import Callable, Iterable

_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_IN_Q_OVERFLOW, _IN_IGNORED = 0x4000, 0x8000
_IN_ONLYDIR, _IN_DONT_FOLLOW = 0x01000000, 0x02000000
_IN_NONBLOCK, _IN_CLOEXEC = os.O_NONBLOCK, os.O_CLOEXEC
_WRITTEN = _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_DELETE_SELF | _IN_MOVE_SELF
FOLDER_EVENTS = _WRITTEN | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE | _IN_ONLYDIR | _IN_DONT_FOLLOW
FILE_EVENTS = _WRITTEN
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, length of the name that follows


@functools.cache
def _libc():
    return ctypes.CDLL(None, use_errno=True)


def switched_off() -> bool:
    """KILLMAP_INOTIFY=0 switches the watches off, every check then looks at everything;
    KILLMAP_CHANGEFEED=0, its earlier name, still does (docs/containment.md names both)."""
    return os.environ.get("KILLMAP_INOTIFY", os.environ.get("KILLMAP_CHANGEFEED")) == "0"


class InotifyWatch:
    """Watches on a tree's folders and files. `heard()` says which of its paths something
    happened to since the last call, or None when that cannot be told."""

    def __init__(self, fd: int, prefix: str):
        self.fd = fd
        self.prefix = prefix  # the tree's path, with its trailing separator
        self._paths: dict[int, tuple[str, bool]] = {}  # watch -> (tree-relative path, is a folder)
        self.folders: set[str] = set()  # the folders watched
        self._lost = False  # the queue overflowed since the last call: what was lost is unknown
        self._closing = threading.Lock()

    @classmethod
    def open(cls, prefix: str, folders: Iterable[str], files: Iterable[str]) -> InotifyWatch | None:
        """A watch on `folders` and `files` (tree-relative), or None where there can be none."""
        if not sys.platform.startswith("linux") or switched_off():
            return None
        try:
            fd = _libc().inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        files = list(files)
        if any(os.path.islink(prefix + rel) for rel in files):
            os.close(fd)  # a write through a link is heard at its target, which may lie outside
            return None
        watch = cls(fd, prefix)
        if not (all(watch.watch(rel, folder=True) for rel in folders) and all(watch.watch(rel) for rel in files)):
            watch.close()
            return None  # the user's limit of watches, or a path gone meanwhile: look every time
        return watch

    def watch(self, rel: str, *, folder: bool = False) -> bool:
        """Watch one more path (again, after it was replaced by a new file); whether it took."""
        path = (self.prefix + rel if rel else self.prefix.rstrip(os.sep) or os.sep).encode()
        wd = _libc().inotify_add_watch(self.fd, path, FOLDER_EVENTS if folder else FILE_EVENTS)
        if wd < 0:
            return False
        self._paths[wd] = (rel, folder)
        if folder:
            self.folders.add(rel)
        return True

    def heard(self) -> set[str] | None:
        """The tree-relative paths of everything heard since the last call (a folder's own
        path when the event was the folder's); None when something may have gone unheard."""
        if self.fd < 0:
            return None  # closed: nothing can be told
        heard: set[str] = set()
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            self._parse(data, heard)
        lost, self._lost = self._lost, False  # the caller looks at everything now: known again after
        return None if lost else heard

    def _parse(self, data: bytes, heard: set[str]) -> None:
        offset = 0
        while offset < len(data):
            wd, mask, _, length = _EVENT.unpack_from(data, offset)
            name = data[offset + _EVENT.size : offset + _EVENT.size + length].rstrip(b"\0").decode(errors="replace")
            offset += _EVENT.size + length
            if mask & _IN_Q_OVERFLOW:
                self._lost = True
                continue
            rel, folder = self._paths.get(wd, (None, False))
            if rel is None:
                continue  # a watch already forgotten: its path was heard when it went
            if mask & _IN_IGNORED:
                del self._paths[wd]
            heard.add(f"{rel}/{name}" if folder and name and rel else (name if folder and name else rel))

    def close(self) -> None:
        # Taken before it is closed, under a lock: two closes at once (close_together's threads)
        # must not both reach os.close, the second of which could close a number reused meanwhile.
        with self._closing:
            fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit os may be gone; the fd goes with the process
            pass


def close_together(closes: Iterable[Callable[[], None]]) -> None:
    """Each close called at once, each in a thread of its own; the first error raised again here.

    Closing an inotify instance that held watches waits in the kernel until its watches are
    reaped (a sleep of up to 20 ms, most of it a grace period the reaper waits out), and a gate
    holds one per worker's sandbox, one on the working tree and one on the pristine copy:
    closed one after another at the end of every gate, the waits added up to 13-21 ms; waited
    out together, to about 2 ms. The threads release the GIL while they wait."""
    errors: list[BaseException] = []

    def close(each: Callable[[], None]) -> None:
        try:
            each()
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller
            errors.append(exc)

    threads = [threading.Thread(target=close, args=(each,), name="killmap-close") for each in closes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
