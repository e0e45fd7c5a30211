"""Workers after the first are forked from it once it has imported pytest (worker_forks.py)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest
from gatekit import copy_fixture, process_ended, write_project

from killmap.catalog.project import project_files
from killmap.engine.core import Engine
from killmap.engine.runner import Scenario
from killmap.engine.workers.pool import Pool
from killmap.engine.workers.worker_forks import ForkedWorkerProcess

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])


@linux_only
def test_only_the_first_worker_is_started_and_the_others_are_its_forks_in_their_own_sessions(tmp_path):
    pool = Pool([tmp_path / f"sandbox-{i}" for i in range(3)], start_dir=tmp_path)
    try:
        for worker in pool.workers:
            worker.wait_ready()
        first, *siblings = (worker.process for worker in pool.workers)
        assert not isinstance(first, ForkedWorkerProcess)
        assert all(isinstance(sibling, ForkedWorkerProcess) for sibling in siblings)
        assert [_parent_of(sibling.pid) for sibling in siblings] == [first.pid, first.pid]
        # Each its own session and group, as start_new_session gave a started worker: the
        # gate stops a worker by its group, and a run's timeout kills only its own group.
        assert (
            [os.getsid(s.pid) for s in siblings] == [os.getpgid(s.pid) for s in siblings] == [s.pid for s in siblings]
        )
        assert len({first.pid, *(s.pid for s in siblings)}) == 3
    finally:
        pool.close()
    assert all(process_ended(sibling.pid) for sibling in siblings), "a forked worker outlived its pool"


def test_every_forked_worker_answers_on_its_own_pipes(tmp_path):
    pool = Pool([tmp_path / f"sandbox-{i}" for i in range(3)], start_dir=tmp_path)
    try:
        pids = []
        for worker in reversed(pool.workers):  # not in fork order: each pipe is its own
            source = tmp_path / f"source-{worker.index}"
            source.mkdir()
            (source / "mine.txt").write_text(str(worker.index))
            manifest = tmp_path / f"files-{worker.index}.json"
            manifest.write_text('["mine.txt"]')
            worker.begin_copy(source, ["mine.txt"], manifest)
            worker.wait_sandbox()
            pids.append(worker.process.pid)
        assert [(w.sandbox / "mine.txt").read_text() for w in pool.workers] == ["0", "1", "2"]
        assert len(set(pids)) == 3
    finally:
        pool.close()


def test_a_run_on_the_first_worker_leaves_its_forked_sibling_serving(tmp_path):
    # After every run the first worker kills whatever children are left over: its siblings
    # are its children too, and must be spared, or the second worker dies at its next run.
    project = copy_fixture("basic", tmp_path)
    with Engine(project, project_files(project), 2) as engine:
        first, second = engine.workers
        outcomes = []
        for worker in (first, second, first, second):
            scenario = Scenario(
                label=f"plain-{worker.index}-{len(outcomes)}", tests=("tests",), timeout=120, sys_path=("src",)
            )
            outcomes.append(engine.run(worker, scenario))
        assert [o.status for o in outcomes] == ["done"] * 4
        assert all(o.tests and all(t.outcome == "passed" for t in o.tests.values()) for o in outcomes)
        assert second.process.alive()


# A test that outlasts the half second at which a worker waiting on its collected session
# looks whether the one it serves is still there (worker._read_line).
SLOW = {
    "pyproject.toml": '[project]\nname = "slow"\nversion = "0"\n',
    "src/slow/__init__.py": "",
    "src/slow/core.py": "def one():\n    return 1\n",
    "tests/test_core.py": (
        "import os, time\nfrom slow.core import one\n\n\ndef test_one():\n"
        "    open(os.environ['SLOW_STARTED'], 'a').close()\n"
        "    time.sleep(float(os.environ.get('SLOW_SECONDS', '1.5')))\n"
        "    assert one() == 1\n"
    ),
}


def _session_run(label: str) -> Scenario:
    return Scenario(label=label, tests=("tests",), timeout=120, sys_path=("src",), session_tests=("tests",))


def test_a_forked_worker_takes_the_first_worker_not_the_gate_for_the_one_it_serves(tmp_path, monkeypatch):
    # A sibling's parent is the first worker. Watching for the gate's pid instead, it would
    # find its parent "changed" at its first long wait and stop itself mid-run.
    project = write_project(tmp_path / "project", SLOW)
    monkeypatch.setenv("SLOW_STARTED", str(tmp_path / "started"))
    monkeypatch.setenv("KILLMAP_CONFINE", "0")  # the test's marker is outside what Landlock grants
    with Engine(project, project_files(project), 2) as engine:
        outcome = engine.run(engine.workers[1], _session_run("slow-on-sibling"))
        assert outcome.status == "done" and outcome.path == "swap"
        assert [t.outcome for t in outcome.tests.values()] == ["passed"]
        assert engine.workers[1].process.alive()


@linux_only
def test_a_forked_worker_whose_first_worker_dies_goes_on_serving_while_the_gate_lives(tmp_path, monkeypatch):
    # A mutant can kill the first worker (issue 32): the gate replaces it and goes on, so its
    # siblings must not take their parent's death for the gate's. The gate killed outright
    # still stops them all (test_isolation).
    project = write_project(tmp_path / "project", SLOW)
    started = tmp_path / "started"
    monkeypatch.setenv("SLOW_STARTED", str(started))
    monkeypatch.setenv("SLOW_SECONDS", "2")
    monkeypatch.setenv("KILLMAP_CONFINE", "0")  # the test's marker is outside what Landlock grants
    with Engine(project, project_files(project), 2) as engine:
        first, second = engine.workers
        first.wait_ready()
        second.wait_sandbox()
        outcomes: list = []
        runner = threading.Thread(
            target=lambda: outcomes.append(engine.run(second, _session_run("slow-on-sibling"))), daemon=True
        )
        runner.start()
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), "the sibling's run never started"
        os.killpg(first.process.pid, signal.SIGKILL)
        runner.join(60)
        assert outcomes and [t.outcome for t in outcomes[0].tests.values()] == ["passed"]
        assert second.process.alive()


@linux_only
def test_a_forked_worker_that_ended_unreaped_counts_as_gone(tmp_path):
    # The gate cannot wait for a sibling (its parent is the first worker): an ended one that
    # the first worker has not reaped yet must not keep the gate's close waiting.
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    try:
        handle = ForkedWorkerProcess(open(os.devnull, "w"), open(os.devnull))
        handle.pid = pid
        deadline = time.monotonic() + 10
        while handle.alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not handle.alive()
        handle.wait(timeout=1)
        os.kill(pid, 0)  # still there, as a zombie: only the zombie check said it was gone
    finally:
        os.waitpid(pid, 0)
    me = ForkedWorkerProcess(open(os.devnull, "w"), open(os.devnull))
    me.pid = os.getpid()
    assert me.alive()
