"""Workers after the first are forked from it once it has imported pytest (siblings.py)."""

from __future__ import annotations

import os
import sys
import time

import pytest

from gatekit import copy_fixture
from killmap.engine import Engine
from killmap.pool import Pool
from killmap.project import project_files
from killmap.runner import Scenario
from killmap.siblings import SiblingProcess

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])


def _gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.02)
    return False


@linux_only
def test_only_the_first_worker_is_started_and_the_others_are_its_forks_in_their_own_sessions(tmp_path):
    pool = Pool([tmp_path / f"sandbox-{i}" for i in range(3)], start_dir=tmp_path)
    try:
        for worker in pool.workers:
            worker.wait_ready()
        first, *siblings = (worker.process for worker in pool.workers)
        assert not isinstance(first, SiblingProcess)
        assert all(isinstance(sibling, SiblingProcess) for sibling in siblings)
        assert [_parent_of(sibling.pid) for sibling in siblings] == [first.pid, first.pid]
        # Each its own session and group, as start_new_session gave a started worker: the
        # gate stops a worker by its group, and a run's timeout kills only its own group.
        assert [os.getsid(s.pid) for s in siblings] == [os.getpgid(s.pid) for s in siblings] == [s.pid for s in siblings]
        assert len({first.pid, *(s.pid for s in siblings)}) == 3
    finally:
        pool.close()
    assert all(_gone(sibling.pid) for sibling in siblings), "a forked worker outlived its pool"


def test_every_forked_worker_answers_on_its_own_pipes(tmp_path):
    pool = Pool([tmp_path / f"sandbox-{i}" for i in range(3)], start_dir=tmp_path)
    try:
        pids = []
        for worker in reversed(pool.workers):   # not in fork order: each pipe is its own
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
            scenario = Scenario(label=f"plain-{worker.index}-{len(outcomes)}", tests=("tests",), timeout=120,
                                sys_path=("src",))
            outcomes.append(engine.run(worker, scenario))
        assert [o.status for o in outcomes] == ["done"] * 4
        assert all(o.tests and all(t.outcome == "passed" for t in o.tests.values()) for o in outcomes)
        assert second.process.alive()
