"""What the kernel hears through inotify (inotify_watch.py): a guard that heard nothing looks at nothing, and
everything a run can do to a file is heard."""

from __future__ import annotations

import os
import shutil
import threading
import time

import pytest

from killmap.engine.containment import inotify_watch
from killmap.engine.containment.guard import TreeGuard
from killmap.engine.containment.inotify_watch import InotifyWatch

FILES = ["pyproject.toml", "src/pkg/__init__.py", "src/pkg/core.py", "tests/test_core.py"]

pytestmark = pytest.mark.skipif(InotifyWatch.open("/", [""], []) is None, reason="no inotify on this platform")


@pytest.fixture
def guarded(tmp_path, monkeypatch):
    monkeypatch.delenv("KILLMAP_INOTIFY", raising=False)
    monkeypatch.delenv("KILLMAP_CHANGEFEED", raising=False)
    pristine = tmp_path / "pristine"
    for rel in FILES:
        (pristine / rel).parent.mkdir(parents=True, exist_ok=True)
        (pristine / rel).write_text(f"# {rel}\n")
    sandbox = tmp_path / "sandbox"
    shutil.copytree(pristine, sandbox)
    guard = TreeGuard(sandbox, FILES, pristine, watch_new_files=True)
    time.sleep(0.06)  # the folders settle (guard.RECENT_NS): until then each check stamps them
    assert not guard.check_and_restore()
    yield sandbox, guard
    guard.close()


def _stats_counted(monkeypatch) -> list[str]:
    seen: list[str] = []
    real = os.stat
    monkeypatch.setattr(os, "stat", lambda path, *a, **k: seen.append(str(path)) or real(path, *a, **k))
    return seen


def _rewritten(path, data: bytes) -> None:
    """As the worker writes a mutant and puts the original back: a new inode each time."""
    tmp = path.with_name(f".{path.name}.killmap-tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def test_a_check_that_heard_nothing_stats_no_file(guarded, monkeypatch):
    sandbox, guard = guarded
    seen = _stats_counted(monkeypatch)
    assert not guard.check_and_restore()
    assert seen == []


def test_the_mutated_file_put_back_as_it_was_costs_a_look_at_it_alone(guarded, monkeypatch):
    sandbox, guard = guarded
    core = sandbox / "src/pkg/core.py"
    original = core.read_bytes()
    _rewritten(core, b"def mutant(): pass\n")
    _rewritten(core, original)
    seen = _stats_counted(monkeypatch)
    assert not guard.check_and_restore(expected=["src/pkg/core.py"])
    assert seen == [str(core)]


def test_the_mutated_file_left_with_other_bytes_is_found(guarded):
    sandbox, guard = guarded
    core = sandbox / "src/pkg/core.py"
    _rewritten(core, b"# src/pkg/core.py, not put back\n")
    assert guard.check_and_restore(expected=["src/pkg/core.py"]).modified == ("src/pkg/core.py",)
    assert core.read_text() == "# src/pkg/core.py\n"


def test_a_file_put_back_in_a_new_inode_is_still_heard_after(guarded, tmp_path):
    sandbox, guard = guarded
    core = sandbox / "src/pkg/core.py"
    _rewritten(core, core.read_bytes())
    assert not guard.check_and_restore(expected=["src/pkg/core.py"])
    os.link(core, tmp_path / "elsewhere.py")  # written through a name no folder watch hears
    with open(tmp_path / "elsewhere.py", "a") as handle:
        handle.write("# appended\n")
    assert guard.check_and_restore().modified == ("src/pkg/core.py",)


def test_a_write_through_a_hard_link_made_outside_the_tree_is_heard(guarded, tmp_path):
    sandbox, guard = guarded
    os.link(sandbox / "tests/test_core.py", tmp_path / "outside.py")
    with open(tmp_path / "outside.py", "a") as handle:
        handle.write("def test_poison(): assert False\n")
    assert guard.check_and_restore().modified == ("tests/test_core.py",)


def test_an_overflowing_queue_says_nothing_can_be_told(tmp_path, monkeypatch):
    (tmp_path / "busy.txt").write_text("")
    watch = InotifyWatch.open(str(tmp_path) + os.sep, [""], ["busy.txt"])
    assert watch is not None
    try:
        with open("/proc/sys/fs/inotify/max_queued_events") as limit:
            events = int(limit.read())
    except OSError:
        events = 16384
    if events > 200_000:
        pytest.skip("this kernel queues too many events to overflow in a test")
    with open(tmp_path / "busy.txt", "a") as handle:
        for _ in range(events + 10):
            os.utime(handle.fileno())
    assert watch.heard() is None
    assert watch.heard() == set()  # known again once the caller has looked at everything
    watch.close()


def test_a_tree_with_a_linked_file_gets_no_watch(tmp_path):
    (tmp_path / "real.txt").write_text("")
    os.symlink(tmp_path / "real.txt", tmp_path / "link.txt")
    assert InotifyWatch.open(str(tmp_path) + os.sep, [""], ["link.txt"]) is None


@pytest.mark.parametrize("name", ["KILLMAP_INOTIFY", "KILLMAP_CHANGEFEED"])
def test_switched_off_there_is_no_watch(tmp_path, monkeypatch, name):
    monkeypatch.delenv("KILLMAP_INOTIFY", raising=False)
    monkeypatch.delenv("KILLMAP_CHANGEFEED", raising=False)
    monkeypatch.setenv(name, "0")
    assert inotify_watch.InotifyWatch.open(str(tmp_path) + os.sep, [""], []) is None


def test_a_refused_watch_leaves_the_guard_to_look_at_everything(guarded, tmp_path, monkeypatch):
    sandbox, guard = guarded
    core = sandbox / "src/pkg/core.py"
    monkeypatch.setattr(InotifyWatch, "watch", lambda self, rel, folder=False: False)  # the user's limit
    _rewritten(core, core.read_bytes())
    assert not guard.check_and_restore(expected=["src/pkg/core.py"])
    os.link(core, tmp_path / "elsewhere.py")  # the new inode has no watch of its own
    with open(tmp_path / "elsewhere.py", "a") as handle:
        handle.write("# appended\n")
    assert guard.check_and_restore().modified == ("src/pkg/core.py",)


def test_a_closed_watch_says_nothing_can_be_told(tmp_path):
    watch = InotifyWatch.open(str(tmp_path) + os.sep, [""], [])
    assert watch is not None and watch.heard() == set()
    watch.close()
    assert watch.heard() is None


def _inotify_fds() -> int:
    return sum(os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify" for fd in _open_fds())


def _open_fds() -> list[str]:
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # the listing's own, closed meanwhile
        found.append(fd)
    return found


def test_an_engine_closed_leaves_no_watch_open(tmp_path, monkeypatch):
    # The sandboxes', the working tree's and the pristine copy's: a process that opens engine
    # after engine (the tests, a reviewer's session) would run out of inotify instances.
    from gatekit import write_project

    from killmap.catalog.project import project_files
    from killmap.engine.core import Engine

    monkeypatch.delenv("KILLMAP_INOTIFY", raising=False)
    project = write_project(
        tmp_path / "project", {"pyproject.toml": '[project]\nname = "fds"\nversion = "0"\n', "src/fds/__init__.py": ""}
    )
    before = _inotify_fds()
    engine = Engine(project, project_files(project), 2)
    with engine:
        for worker in engine.workers:
            worker.wait_sandbox()
        assert _inotify_fds() == before + 4  # two sandboxes, the working tree, the pristine copy
        tree, closes = engine.containment.tree, []
        real_close = tree.close
        monkeypatch.setattr(tree, "close", lambda: closes.append(1) or real_close())
    assert _inotify_fds() == before  # `engine` still holds them all: closed, not collected
    engine.close()  # again, as a command stopped early and its `with` do: nothing is closed twice
    assert _inotify_fds() == before and closes == [1]


def test_a_watch_closed_from_two_threads_at_once_is_closed_once(tmp_path, monkeypatch):
    # A sweep refused on pluggy closed its engine twice, and two threads closed the same watch:
    # the second os.close raised EBADF in a thread (a traceback), or closed a reused number.
    watch = InotifyWatch.open(str(tmp_path) + os.sep, [""], [])
    assert watch is not None
    closed, real = [], os.close

    def slow_close(fd):
        closed.append(fd)
        time.sleep(0.2)  # the other thread arrives meanwhile
        real(fd)

    monkeypatch.setattr(inotify_watch.os, "close", slow_close)
    threads = [threading.Thread(target=watch.close) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(closed) == 1, closed


def test_watches_are_closed_together_not_one_after_another():
    # Each close waits for the others: called one after another, the first would wait alone
    # until the barrier gave up.
    barrier = threading.Barrier(3, timeout=10)
    closed = []

    def close(name):
        barrier.wait()
        closed.append(name)

    inotify_watch.close_together(lambda name=name: close(name) for name in ("a", "b", "c"))
    assert sorted(closed) == ["a", "b", "c"]


def test_a_close_that_fails_is_raised_after_every_other_close_ran():
    closed = []

    def fails():
        raise OSError("bad file descriptor")

    with pytest.raises(OSError, match="bad file descriptor"):
        inotify_watch.close_together([fails, lambda: closed.append("other")])
    assert closed == ["other"]
