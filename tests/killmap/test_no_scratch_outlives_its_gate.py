"""No process of a gate writes into its scratch once the gate has removed it.

A worker's collected session (session.py) is the worker's child in a session of its own:
the gate's SIGTERM to the worker's group never reaches it. A worker that ended without
killing it left it alive: its pipe closed before the gate's SIGTERM came, and Python's
exit put SIGTERM's default back, so the worker ended without its handler; or it was killed
outright (by its first worker as that one ended, or by the gate's last resort). The session
then ended its pytest session on its own, and its plugins' last imports wrote bytecode under
the scratch's pycache prefix, making `killmap-XXXXXXXX/pycache-0` again on the RAM disk
(which confinement grants, as /dev) after the gate had removed it: 68 folders in an hour.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
import uuid
from pathlib import Path

import pytest
from gatekit import copy_fixture, gate_env, process_ended, run_gate

from killmap.catalog.project import project_files
from killmap.engine.containment.sandbox import LEFTOVER_AGE, remove_abandoned
from killmap.engine.core import Engine
from killmap.engine.runner import Scenario

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

# Run by a pytest session only when it ends on its own: a collected session the gate stopped
# is killed, and never gets there.
FINISHING_CONFTEST = """\
import os


def pytest_sessionfinish(session):
    with open(os.environ["KM_SESSION_FINISHED"], "a") as marker:
        marker.write(f"{os.getpid()}\\n")
"""


def _in_folder(folder: Path) -> list[int]:
    """Every process whose working directory is `folder`: a session server in its sandbox."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.readlink(entry / "cwd") == str(folder.resolve()):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _end_by_closing_its_pipe(worker) -> None:
    worker.process.stdin.close()  # as the gate's end does, before its SIGTERM is handled


def _end_by_killing_it(worker) -> None:
    os.kill(worker.process.pid, signal.SIGKILL)


@linux_only
@pytest.mark.parametrize("end", [_end_by_closing_its_pipe, _end_by_killing_it], ids=["pipe-closed", "killed"])
def test_a_collected_session_ends_with_its_worker_and_never_finishes_its_session_alone(tmp_path, monkeypatch, end):
    project = copy_fixture("basic", tmp_path)
    (project / "tests" / "conftest.py").write_text(FINISHING_CONFTEST, encoding="utf-8")
    finished = tmp_path / "session-finished"
    monkeypatch.setenv("KM_SESSION_FINISHED", str(finished))
    engine = Engine(project, project_files(project), 1)
    try:
        worker = engine.workers[0]
        scenario = Scenario(
            label="collected", tests=("tests",), timeout=120, sys_path=("src",), session_tests=("tests",), confine=False
        )
        assert engine.run(worker, scenario).status == "done"
        servers = _in_folder(worker.sandbox)
        assert servers, "no collected session is serving in the sandbox"
        end(worker)
        worker.process.wait(timeout=30)
        assert all(process_ended(pid) for pid in servers), "a collected session outlived its worker"
        time.sleep(0.5)  # what a session left alone would have done by now
        assert not finished.exists(), "a collected session ended its pytest session after its worker"
    finally:
        engine.close()


# A session that ends on its own imports more as it ends (pytest's plugins do; Hypothesis's
# wrote most of the folders found), a moment later here: its bytecode goes under the scratch's
# pycache prefix.
LATE_IMPORTING_CONFTEST = """\
import os
import sys
import time


def pytest_sessionfinish(session):
    time.sleep(0.3)
    sys.path.insert(0, os.environ["KM_LATE_LIB"])  # outside the scratch: it is there still
    import late_module  # noqa: F401
"""


@linux_only
@pytest.mark.skipif(not os.access("/dev/shm", os.W_OK), reason="no writable /dev/shm")
def test_after_a_gate_run_no_folder_of_its_scratch_remains_on_the_ram_disk(tmp_path):
    project = copy_fixture("selection", tmp_path)
    (project / "tests" / "conftest.py").write_text(LATE_IMPORTING_CONFTEST, encoding="utf-8")
    library = tmp_path / "lib"
    library.mkdir()
    (library / "late_module.py").write_text("LATE = True\n", encoding="utf-8")
    # Beneath /dev, as the RAM disk is: confinement grants a run /dev, so a session left alone
    # could make its folders there again (anywhere else it may write only in the scratch as it
    # was). A folder of this test's own, so no other gate's scratch is counted.
    temp = Path("/dev/shm") / f"km-test-{uuid.uuid4().hex}"
    temp.mkdir()
    try:
        env = gate_env(project, {"TMPDIR": str(temp), "KM_LATE_LIB": str(library)})
        # Whether a worker reads the end of its pipe before the gate's SIGTERM is a race: the
        # gate runs twice here (each order is made to happen in the test above).
        for args in (("run",), ("run", "--no-cache")):
            run = run_gate(project, *args, env=env)
            assert run.code in (0, 1), run.stderr
            time.sleep(1.0)  # what a session left alone would have written by now
            assert sorted(p.name for p in temp.iterdir() if p.name.startswith("killmap-")) == []
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def _leftover_like(parent: Path, name: str, *, age: float, extra: str | None = None) -> Path:
    """What a late writer made again: bytecode under pycache-0, a rewritten module, no owner file."""
    folder = parent / name
    (folder / "pycache-0" / "work" / "lib").mkdir(parents=True)
    (folder / "pycache-0" / "work" / "lib" / "mod.cpython-311.pyc").write_bytes(b"\0" * 16)
    (folder / "rewrites").mkdir()
    (folder / "rewrites" / "0123.rewritten").write_bytes(b"\0")
    if extra is not None:
        (folder / extra).mkdir()
    when = time.time() - age
    for path in [folder, *folder.rglob("*")]:
        os.utime(path, (when, when))
    return folder


def test_an_owner_less_folder_of_bytecode_unchanged_for_minutes_is_removed_and_nothing_else(tmp_path):
    old = LEFTOVER_AGE + 60
    leftover = _leftover_like(tmp_path, "killmap-leftover", age=old)
    recent = _leftover_like(tmp_path, "killmap-recent", age=10)  # its writer may still be at work
    sandboxes = _leftover_like(tmp_path, "killmap-sandboxes", age=old, extra="sandbox-0")  # more than a leftover
    other = _leftover_like(tmp_path, "someone-else", age=old)  # not killmap's
    remove_abandoned(tmp_path, keep=tmp_path / "killmap-mine")
    assert not leftover.exists()
    assert recent.exists() and sandboxes.exists() and other.exists()
