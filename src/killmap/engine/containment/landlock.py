"""Landlock: on Linux 5.13+, a test process may write only where a test run should.

Defence in depth behind the guards (guard.py, tree_watch.py), which stay the guarantee:
detection and restore work everywhere, this works only where the kernel has Landlock. A run,
and every process it starts, may write beneath its sandbox, the gate's scratch folder (its
run files, tmp_path, and the private temporary folder given to the tests as TMPDIR) and /dev;
a write anywhere else, the user's working tree and home included, fails with PermissionError.
The system's temporary folder is not granted: a project that lives under /tmp is protected
too. Reading is not restricted. Reached through raw system calls with ctypes: there is no
library for it in the standard library, and the calls are three.

KILLMAP_CONFINE=0 switches it off for every run, as on a platform without Landlock (macOS):
the whole-tree watch (tree_watch.py) then stands alone, and the tests can prove it does.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same on every Linux arch
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_DUMPABLE = 4

# Write-type rights (ABI 1), then REFER (ABI 2: renames across folders) and TRUNCATE (ABI 3).
_WRITES_V1 = sum(1 << bit for bit in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12))
_REFER, _TRUNCATE = 1 << 13, 1 << 14


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


SWITCH_ENV = "KILLMAP_CONFINE"


def switched_off() -> bool:
    """Whether the user switched confinement off for every run (KILLMAP_CONFINE=0)."""
    return os.environ.get(SWITCH_ENV, "").strip().lower() in ("0", "false", "no", "off")


def available() -> bool:
    """Whether a run asked to be confined will be: Landlock exists and is not switched off.
    Where it is not, the gate watches the whole working tree instead (tree_watch.py)."""
    return not switched_off() and abi_version() >= 1


def hide_from_tests() -> None:
    """On Linux, this process's /proc entries (cwd, environ, fds) can no longer be read by
    other processes of the same user: a test can find its gate by its parent's parent, and
    the gate's folder is, most often, the user's working tree. Its own entries, and every
    process it starts (exec makes a process readable again), are as they were."""
    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


_CAP_VERSION_3, _CAP_SYS_PTRACE, _PR_CAPBSET_DROP = 0x20080522, 19, 24


def drop_ptrace() -> None:
    """On Linux, this process and all it starts lose CAP_SYS_PTRACE, which root has: with it
    a test run as root (a CI container) reads any process's /proc entries, the gate's
    hidden ones (`hide_from_tests`) included. Nothing for a user without it."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_CAPBSET_DROP, _CAP_SYS_PTRACE, 0, 0, 0)  # for what it execs (needs CAP_SETPCAP)
        header, data = _CapHeader(_CAP_VERSION_3, 0), (_CapData * 2)()
        if libc.capget(ctypes.byref(header), data) != 0:
            return
        keep = ~(1 << _CAP_SYS_PTRACE) & 0xFFFFFFFF
        data[0].effective &= keep
        data[0].permitted &= keep
        data[0].inheritable &= keep
        libc.capset(ctypes.byref(header), data)
    except (OSError, AttributeError):
        pass


@functools.cache
def abi_version() -> int:
    """The kernel's Landlock ABI, or 0 where there is none (not Linux, too old, disabled)."""
    if not sys.platform.startswith("linux"):
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    version = libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def confine_writes(writable: list[str]) -> bool:
    """Deny this process and its descendants writes outside `writable`. True if in force."""
    abi = abi_version()
    if abi < 1:
        return False
    rights = _WRITES_V1 | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
    libc = ctypes.CDLL(None, use_errno=True)
    attr = _RulesetAttr(rights)
    ruleset = libc.syscall(
        _CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0)
    )
    if ruleset < 0:
        return False
    try:
        for path in writable:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a folder that does not exist needs no rule
            try:
                rule = _PathBeneathAttr(rights, fd)
                libc.syscall(
                    _ADD_RULE,
                    ctypes.c_int(ruleset),
                    ctypes.c_int(_RULE_PATH_BENEATH),
                    ctypes.byref(rule),
                    ctypes.c_uint32(0),
                )
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        return libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) == 0
    finally:
        os.close(ruleset)
