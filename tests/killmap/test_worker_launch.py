"""Workers started at a command's first line, adopted by its engine (launch.py)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from gatekit import copy_fixture, process_ended
from reviewkit import change_repo

from killmap.catalog.project import project_files
from killmap.cli import main
from killmap.engine.containment.sandbox import OWNER_FILE
from killmap.engine.core import Engine
from killmap.engine.runner import Scenario
from killmap.engine.workers import launch as launch_module
from killmap.engine.workers import pool as pool_module
from killmap.engine.workers.launch import Launch
from killmap.engine.workers.pool import Worker
from killmap.engine.workers.reaper import is_zombie
from killmap.verdict.lab import LabOptions, run_lab

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _pids(processes, folder: Path) -> list[int]:
    """Each worker's pid, from its ready line (a sibling's is known no other way)."""
    workers = [Worker(index, folder / f"sandbox-{index}", process) for index, process in enumerate(processes)]
    for worker in workers:
        worker.wait_ready()
    return [worker.process.pid for worker in workers]


def test_an_engine_adopts_the_workers_its_command_launched_and_runs_on_them(tmp_path):
    project = copy_fixture("basic", tmp_path)
    with Launch(2) as launch:
        launched = list(launch.processes)
        with Engine(project, project_files(project), 2, launch=launch) as engine:
            assert [worker.process for worker in engine.workers] == launched
            scenario = Scenario(label="plain", tests=("tests",), timeout=120, sys_path=("src",))
            outcome = engine.run(engine.workers[1], scenario)
            assert outcome.status == "done"
            assert outcome.tests and all(t.outcome == "passed" for t in outcome.tests.values())
        assert launch.processes is None  # adopted: the engine stopped them, not the launch
    assert launched[0].poll() is not None


def test_a_launch_nobody_adopts_is_stopped_with_its_start_folder(tmp_path):
    with Launch(2) as launch:
        folder = launch.folder
        pids = _pids(launch.processes, tmp_path)
        if sys.platform.startswith("linux"):
            # An empty folder of its own: nothing there can shadow pytest on the worker's path.
            assert os.readlink(f"/proc/{pids[0]}/cwd") == str(folder)
        assert [p.name for p in folder.iterdir()] == [OWNER_FILE]
    assert all(process_ended(pid) for pid in pids), "a launched worker outlived its launch"
    assert not folder.exists()


def test_the_start_folder_of_a_gate_killed_outright_is_removed_by_the_next_launch(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid whose process has ended
    abandoned = tmp_path / "killmap-start-abandoned"
    abandoned.mkdir()
    (abandoned / OWNER_FILE).write_text(f"{gone.pid}@{socket.gethostname()}", encoding="utf-8")
    alive = tmp_path / "killmap-start-alive"
    alive.mkdir()
    (alive / OWNER_FILE).write_text(f"{os.getpid()}@{socket.gethostname()}", encoding="utf-8")
    with Launch(1) as launch:
        assert launch.folder.parent == tmp_path
        assert not abandoned.exists()
        assert alive.exists()  # its gate is still running


def test_a_dismissed_launch_stops_its_workers_at_once_and_hands_none_over(tmp_path):
    with Launch(2) as launch:
        pids = _pids(launch.processes, tmp_path)
        launch.dismiss()
        # Stopped while the command goes on, not only as it ends.
        assert all(process_ended(pid) for pid in pids), "a dismissed worker is still running"
        assert launch.adopt(1) is None


def test_a_run_whose_every_verdict_is_cached_dismisses_its_launch(tmp_path):
    project = copy_fixture("basic", tmp_path)
    options = LabOptions(jobs=2, cache_dir=tmp_path / "cache")
    first = run_lab(project, options)
    assert first.verdicts and not any(v.cached for v in first.verdicts)
    with Launch(2) as launch:
        again = run_lab(project, options, launch=launch)
        assert all(v.cached for v in again.verdicts)
        assert launch.dismissed


@linux_only
def test_an_engine_with_fewer_sandboxes_lets_the_spare_launched_workers_go(tmp_path):
    project = copy_fixture("basic", tmp_path)
    with Launch(3) as launch:
        first = launch.processes[0]
        with Engine(project, project_files(project), 1, launch=launch) as engine:
            assert [worker.process for worker in engine.workers] == [first]
            engine.workers[0].wait_sandbox()
            # The spares are the first worker's children (worker_forks.py): each leaves at the
            # end of file on its pipes, and none is left running beside the engine's worker.
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and _live_children(first.pid):
                time.sleep(0.02)
            assert _live_children(first.pid) == []


def _live_children(pid: int) -> list[int]:
    children = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as listing:
            children += [int(child) for child in listing.read().split()]
    return [child for child in children if not is_zombie(child)]


COMMANDS = {
    "check": ("basic", ["check"]),
    "red-first": ("rf-fold", ["red-first"]),
    "run": ("basic", ["run", "--no-cache", "--jobs", "2"]),
    "try": (
        "basic",
        [
            "try",
            "src/basicpkg/core.py::classify",
            "--op",
            "replace",
            "--old",
            'return "even"',
            "--new",
            'return "EVEN"',
            "--jobs",
            "2",
        ],
    ),
    "prove": ("provable", ["prove", "tests/test_fees.py::test_exact_member_fee", "--jobs", "2"]),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_that_runs_pytest_starts_its_workers_once_and_hands_them_to_its_engine(
    command, tmp_path, monkeypatch
):
    # Were the launch not handed down, the engine would start workers of its own: two
    # starts, and the launched ones idle for the whole command.
    fixture, arguments = COMMANDS[command]
    project = change_repo(fixture, tmp_path) if command == "red-first" else copy_fixture(fixture, tmp_path)
    starts = []
    real = launch_module.start_workers

    def counted(count, start_dir, *seed):
        starts.append(count)
        return real(count, start_dir, *seed)

    monkeypatch.setattr(launch_module, "start_workers", counted)
    monkeypatch.setattr(pool_module, "start_workers", counted)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(project)
    extra = ["--report-dir", str(tmp_path / "reports")] if command in ("run", "red-first") else []
    assert main(arguments + extra) in (0, 1)
    assert starts == [1 if command == "check" else 2]


# What each command must not have imported when its workers start: the heavy half of the
# gate's own start (libcst, the lab), which their start is meant to overlap.
_HEAVY = ("libcst", "killmap.verdict.lab")
_PROBE = """
import sys
from killmap.engine.workers import launch
def refuse(self, jobs, *seed):
    print(",".join(sorted(m for m in {heavy!r} if m in sys.modules)) or "none", flush=True)
    raise SystemExit(0)
launch.Launch.__init__ = refuse
from killmap.cli import main
raise SystemExit(main({argv!r}))
"""


@pytest.mark.parametrize("argv", [["run"], ["sweep", "src/basicpkg/core.py", "--ops", "mutmut"]], ids=["run", "sweep"])
def test_a_command_starts_its_workers_before_it_imports_libcst_and_the_lab(tmp_path, argv):
    project = copy_fixture("basic", tmp_path)
    probe = _PROBE.format(heavy=_HEAVY, argv=argv)
    done = subprocess.run([sys.executable, "-c", probe], cwd=project, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "none"
