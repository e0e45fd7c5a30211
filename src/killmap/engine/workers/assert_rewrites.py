"""pytest's rewritten test modules, kept by their content and shared by every session.

pytest rewrites the asserts of every test module it imports (an AST walk, then a compile)
and keeps the result beside the module, or under `sys.pycache_prefix`. A gate's worker
keeps its bytecode in a private prefix that dies with the gate, under its own sandbox's
paths: so each worker's collected session rewrote every test module again, in every gate
run (on the bundled suite a third of a session's collection, on S1000's hundred test
files half a second per session).

The rewritten code depends only on the module's bytes, the interpreter, pytest's version,
one ini option and the optimisation level, never on where the file is: pytest's own cache
moves code between paths too, fixing the file name in the loaded code. So a rewrite is
kept under a hash of exactly those inputs. Sessions read the user's persistent folder
and the gate's scratch folder, and write only to the scratch one, the only one a
confined run may write; the engine keeps what they wrote when it closes (`keep_new`).
`--no-cache` leaves these alone: the same bytes give the same code, and no verdict is
read from them.

pytest's `_rewrite_test` is private. If it is missing, or returns what this module does
not know how to keep, sessions rewrite as before.
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import os
import shutil
import sys
import tempfile
import types
from pathlib import Path

KEPT_ENTRIES = 2000  # a persistent folder beyond this loses its oldest entries (tens of projects)


def install(write_to: str, read_from: list[str]) -> None:
    """In a session's process, before pytest imports a test module."""
    try:
        from _pytest.assertion import rewrite

        original = rewrite._rewrite_test
    except (ImportError, AttributeError):
        return
    import pytest

    folders = [write_to, *read_from]

    def rewrite_kept(fn, config, *args, **kwargs):
        try:
            source = Path(fn).read_bytes()
        except OSError:
            return original(fn, config, *args, **kwargs)
        name = _entry_name(source, pytest.__version__, _pass_hook(config))
        for folder in folders:
            code = _load(os.path.join(folder, name), str(fn))
            if code is not None:
                return importlib.util.source_hash(source), code
        result = original(fn, config, *args, **kwargs)
        # pytest 8.4+ returns (source hash, code); an older one a stat result, which is
        # not what was asked for here: that is simply not kept.
        if (
            isinstance(result, tuple)
            and len(result) == 2
            and isinstance(result[0], bytes)
            and isinstance(result[1], types.CodeType)
        ):
            _store(write_to, name, result[1])
        return result

    rewrite._rewrite_test = rewrite_kept


def _pass_hook(config) -> bool:
    try:
        return bool(config.getini("enable_assertion_pass_hook"))
    except (ValueError, AttributeError):
        return False


def _entry_name(source: bytes, pytest_version: str, pass_hook: bool) -> str:
    digest = hashlib.sha256()
    for part in (
        importlib.util.MAGIC_NUMBER,
        sys.implementation.cache_tag or "",
        pytest_version,
        str(pass_hook),
        str(sys.flags.optimize),
    ):
        digest.update(str(part).encode() + b"\0")
    digest.update(source)
    return digest.hexdigest() + ".rewritten"


def _load(path: str, filename: str) -> types.CodeType | None:
    try:
        with open(path, "rb") as kept:
            code = marshal.load(kept)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(code, types.CodeType):
        return None
    return _with_filename(code, filename)


def _with_filename(code: types.CodeType, filename: str) -> types.CodeType | None:
    """The code with every nested code object naming `filename`, as tracebacks, coverage
    and the line monitor read it: importlib's own fix for a moved pyc (in place). An
    interpreter without it rewrites the module instead."""
    try:
        # A private CPython helper (what importlib calls for a moved pyc): typeshed lists none.
        from _imp import _fix_co_filename  # type: ignore[attr-defined]
    except ImportError:
        return None
    _fix_co_filename(code, filename)
    return code


def _store(folder: str, name: str, code: types.CodeType) -> None:
    try:
        os.makedirs(folder, exist_ok=True)
        handle, tmp = tempfile.mkstemp(prefix=".rewrite.", dir=folder)
        with os.fdopen(handle, "wb") as out:
            marshal.dump(code, out)
        os.replace(tmp, os.path.join(folder, name))  # readers see all of it or none
    except OSError:
        pass  # not kept: the next session rewrites it again


def keep_new(scratch_folder: Path, persistent: Path) -> None:
    """Move what this gate's sessions rewrote into the persistent folder; trim that folder."""
    try:
        new = [p for p in scratch_folder.iterdir() if p.name.endswith(".rewritten")]
    except OSError:
        return
    if not new:
        return
    try:
        persistent.mkdir(parents=True, exist_ok=True)
        for path in new:
            shutil.move(str(path), str(persistent / path.name))
        kept = sorted(persistent.glob("*.rewritten"), key=lambda p: p.stat().st_mtime)
        for old in kept[: max(0, len(kept) - KEPT_ENTRIES)]:
            old.unlink()
    except OSError:
        pass
