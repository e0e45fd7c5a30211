"""The sandbox guard: after a run, every file written, added or deleted is named and undone.

A mutant's tests can poison the sandbox that every later mutant on the same worker runs in:
a new conftest.py in a test folder, an edited test, a deleted module. These tests hold the
guard itself to that, on a real tree and a real pristine copy.
"""

from __future__ import annotations

import os
import shutil

from killmap.engine.guard import TreeGuard

FILES = ["pyproject.toml", "src/pkg/__init__.py", "src/pkg/core.py", "tests/test_core.py"]


def make_tree(root):
    for rel in FILES:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {rel}\n")
    return root


def test_files_added_at_any_depth_edited_or_deleted_are_named_and_undone(tmp_path):
    pristine = make_tree(tmp_path / "pristine")
    sandbox = tmp_path / "sandbox"
    shutil.copytree(pristine, sandbox)
    guard = TreeGuard(sandbox, FILES, pristine, watch_new_files=True)
    (sandbox / "tests" / "conftest.py").write_text("import pytest\n")  # poisons every later run
    (sandbox / "stray.txt").write_text("left behind\n")
    (sandbox / "src" / "pkg" / "core.py").write_text("# rewritten, longer than before\n")
    os.unlink(sandbox / "src" / "pkg" / "__init__.py")
    (sandbox / "src" / "pkg" / "__pycache__").mkdir()
    (sandbox / "src" / "pkg" / "__pycache__" / "core.cpython-311.pyc").write_bytes(b"\0")

    changes = guard.check_and_restore()

    assert changes.added == ("stray.txt", "tests/conftest.py")
    assert changes.modified == ("src/pkg/core.py",)
    assert changes.removed == ("src/pkg/__init__.py",)
    assert not (sandbox / "tests" / "conftest.py").exists() and not (sandbox / "stray.txt").exists()
    for rel in FILES:
        assert (sandbox / rel).read_text() == f"# {rel}\n"
    # Bytecode is not the project's: never reported, never removed by the guard.
    assert (sandbox / "src" / "pkg" / "__pycache__" / "core.cpython-311.pyc").exists()
    assert not guard.check_and_restore()


def test_a_file_rewritten_with_its_own_bytes_is_no_change(tmp_path):
    pristine = make_tree(tmp_path / "pristine")
    sandbox = tmp_path / "sandbox"
    shutil.copytree(pristine, sandbox)
    guard = TreeGuard(sandbox, FILES, pristine, watch_new_files=True)
    target = sandbox / "src" / "pkg" / "core.py"
    target.write_text("# mutated\n")
    target.write_text("# src/pkg/core.py\n")  # the worker restores a mutated file like this
    os.utime(target, ns=(1, 1))
    assert not guard.check_and_restore()
