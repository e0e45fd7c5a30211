"""Landlock: on Linux 5.13+, a test process may write only where a test run should.

Defence in depth behind the guards (guard.py), which stay the guarantee: detection and
restore work everywhere, this works only where the kernel has Landlock. A run, and every
process it starts, may write beneath its sandbox, the temporary folder (tests' tmp_path
and tempfile live there, and so do killmap's run files) and /dev; a write anywhere else,
the user's working tree and home included, fails with PermissionError. Reading is not
restricted. Reached through raw system calls with ctypes: there is no library for it in
the standard library, and the calls are three.
"""

from __future__ import annotations

import ctypes
import os
import sys

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same on every Linux arch
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# Write-type rights (ABI 1), then REFER (ABI 2: renames across folders) and TRUNCATE (ABI 3).
_WRITES_V1 = sum(1 << bit for bit in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12))
_REFER, _TRUNCATE = 1 << 13, 1 << 14


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


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
