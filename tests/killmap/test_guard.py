"""The sandbox guard: after a run, every file written, added or deleted is named and undone.

A mutant's tests can poison the sandbox that every later mutant on the same worker runs in:
a new conftest.py in a test folder, an edited test, a deleted module. These tests hold the
guard itself to that, on a real tree and a real pristine copy, twice: with the kernel's
inotify watch (inotify_watch.py, Linux) and with stat alone, as on a platform without one.
"""

from __future__ import annotations

import os
import shutil
import time

import pytest

from killmap.engine.containment import guard as guard_module
from killmap.engine.containment import inotify_watch
from killmap.engine.containment.guard import TreeGuard


@pytest.fixture(autouse=True, params=["watch", "stat"])
def checked_by(request, monkeypatch):
    """Every test under both ways of checking; "watch" only where the kernel has one."""
    if request.param == "watch":
        if inotify_watch.InotifyWatch.open("/", [""], []) is None:
            pytest.skip("no inotify on this platform")
        monkeypatch.delenv("KILLMAP_INOTIFY", raising=False)
    else:
        monkeypatch.setenv("KILLMAP_INOTIFY", "0")
    return request.param


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


def settled_guard(tmp_path):
    """A sandbox and its guard, checked once after its folders have settled (guard.RECENT_NS)."""
    pristine = make_tree(tmp_path / "pristine")
    sandbox = tmp_path / "sandbox"
    shutil.copytree(pristine, sandbox)
    guard = TreeGuard(sandbox, FILES, pristine, watch_new_files=True)
    time.sleep(0.06)
    assert not guard.check_and_restore()
    return sandbox, guard


def test_a_run_that_added_nothing_lists_no_folder(tmp_path, monkeypatch):
    sandbox, guard = settled_guard(tmp_path)
    (sandbox / "src" / "pkg" / "core.py").write_text("# same size!\n")  # a stat finds this one
    listed = []
    real_scandir = os.scandir
    monkeypatch.setattr(os, "scandir", lambda path: listed.append(path) or real_scandir(path))
    assert guard.check_and_restore().modified == ("src/pkg/core.py",)
    assert listed == []


def test_a_file_added_where_the_run_set_the_folders_mtime_back_is_found(tmp_path):
    sandbox, guard = settled_guard(tmp_path)
    folder = sandbox / "tests"
    before = folder.stat()
    (folder / "conftest.py").write_text("import pytest\n")
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))  # the ctime moves all the same
    assert guard.check_and_restore().added == ("tests/conftest.py",)
    assert not (folder / "conftest.py").exists()


def test_a_new_folder_that_stays_is_watched_from_then_on(tmp_path):
    sandbox, guard = settled_guard(tmp_path)
    cache = sandbox / "plugins" / "__pycache__"
    cache.mkdir(parents=True)
    (cache / "x.cpython-311.pyc").write_bytes(b"\0")
    assert not guard.check_and_restore()  # bytecode only: nothing to report, the folder stays
    time.sleep(0.06)
    assert not guard.check_and_restore()  # now the sandbox's own folder has settled too
    (sandbox / "plugins" / "conftest.py").write_text("import pytest\n")  # moves plugins/ alone
    assert guard.check_and_restore().added == ("plugins/conftest.py",)


def test_a_link_to_a_folder_is_a_new_file(tmp_path):
    sandbox, guard = settled_guard(tmp_path)
    os.symlink(tmp_path / "pristine" / "src", sandbox / "tests" / "more")
    assert guard.check_and_restore().added == ("tests/more",)
    assert not os.path.lexists(sandbox / "tests" / "more")


def test_a_folder_changed_within_the_clocks_tick_is_listed_whatever_its_stamp(tmp_path, monkeypatch):
    """A file created in the very tick the folder was stamped leaves the stamp as it was (the
    clock of file times ticks in milliseconds, or seconds): such a folder is listed anyway."""
    pristine = make_tree(tmp_path / "pristine")
    sandbox = tmp_path / "sandbox"
    shutil.copytree(pristine, sandbox)
    frozen = (1, 5_000_000_123, 5_000_000_123)
    monkeypatch.setattr(guard_module, "folder_stamp", lambda path: frozen)
    monkeypatch.setattr(guard_module.time, "time_ns", lambda: frozen[2] + 1_000_000)
    guard = TreeGuard(sandbox, FILES, pristine, watch_new_files=True)
    (sandbox / "tests" / "conftest.py").write_text("import pytest\n")
    assert guard.check_and_restore().added == ("tests/conftest.py",)


def test_a_folder_replaced_by_a_link_to_another_folder_is_undone_without_touching_that_folder(tmp_path):
    """The link is what the run added; the folder's files come back in the sandbox, not through
    the link into the folder it points at, and nothing there is taken for the run's own."""
    sandbox, guard = settled_guard(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("the user's\n")
    shutil.rmtree(sandbox / "tests")
    os.symlink(outside, sandbox / "tests")
    changes = guard.check_and_restore()
    assert changes.added == ("tests",)
    assert changes.removed == ("tests/test_core.py",)
    assert sorted(os.listdir(outside)) == ["precious.txt"]
    assert not os.path.islink(sandbox / "tests")
    assert (sandbox / "tests" / "test_core.py").read_text() == "# tests/test_core.py\n"


def test_a_file_rewritten_at_its_size_with_its_mtime_set_back_is_found_and_undone(tmp_path):
    """Same size, same mtime (os.utime): only the ctime tells, and the run cannot set it."""
    sandbox, guard = settled_guard(tmp_path)
    target = sandbox / "tests" / "test_core.py"
    before = target.stat()
    target.write_text("# tests/test_xxxx.py\n")  # the same length as "# tests/test_core.py\n"
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_size == before.st_size and target.stat().st_mtime_ns == before.st_mtime_ns

    changes = guard.check_and_restore()

    assert changes.modified == ("tests/test_core.py",)
    assert target.read_text() == "# tests/test_core.py\n"
    assert guard.last_seen_ns["tests/test_core.py"] > before.st_mtime_ns  # when it was really written
    assert not guard.check_and_restore()


def test_a_folder_on_a_clock_of_whole_seconds_is_listed_for_seconds_after_it_changed(tmp_path, monkeypatch):
    """A stamp in whole milliseconds says the filesystem keeps coarse times (HFS+, FAT): a file
    made a second after the stamp may still carry the same time, so 50 ms is not enough."""
    pristine = make_tree(tmp_path / "pristine")
    sandbox = tmp_path / "sandbox"
    shutil.copytree(pristine, sandbox)
    frozen = (1, 5_000_000_000, 5_000_000_000)  # whole seconds
    monkeypatch.setattr(guard_module, "folder_stamp", lambda path: frozen)
    monkeypatch.setattr(guard_module.time, "time_ns", lambda: frozen[2] + 1_000_000_000)
    guard = TreeGuard(sandbox, FILES, pristine, watch_new_files=True)
    (sandbox / "tests" / "conftest.py").write_text("import pytest\n")
    assert guard.check_and_restore().added == ("tests/conftest.py",)
