"""A mutant's limit is time it could run: on a loaded machine, the time the kernel kept its
run waiting for a CPU is added to its deadline (engine/workers/timeout_cpu.Limit), so its
verdict does not depend on what else the runner ran.

The load is made, not hoped for: the gate shares one CPU with two busy loops, each in a
session of its own, so the mutant's run gets about a third of that CPU whether the kernel
shares a CPU between processes or between sessions (Linux's autogroups, on by default on a
desktop: there a niced gate in its own session got half, and once ran in 2.6 s, unstarved).
The mutant needs 0.8 s of CPU for its run and as much for its red's confirmation, against a
3 s limit (the original needs 0.2 s): without the added wait it would time out."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gatekit import gate_env, write_project

SOURCE = (
    "import time\n\n\ndef burn(seconds):\n    start = time.process_time()\n"
    "    while time.process_time() - start < seconds:\n        pass\n\n\n"
    "def answer():\n    burn(0.2)\n    return 42\n"
)
TEST = "from pkg import answer\n\n\ndef test_answer():\n    assert answer() == 42\n"
CATALOG = (
    '[gate]\ntests = ["tests"]\npaths = ["."]\n\n'
    '[[mutation]]\nname = "answer-off-by-one"\ntarget = "pkg/__init__.py::answer"\nop = "replace"\n'
    'old = "burn(0.2)\\n    return 42"\nnew = "burn(0.8)\\n    return 41"\ntimeout = 3\n'
    'kills = ["tests/test_pkg.py::test_answer"]\n'
)


def _schedstat_here() -> bool:
    return sys.platform.startswith("linux") and Path("/proc/self/schedstat").is_file()


def _starved_gate(tmp_path: Path, catalog: str, source: str = SOURCE) -> dict:
    """The one mutation's report entry, of a gate sharing one CPU with two busy loops."""
    project = write_project(
        tmp_path / "proj",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": source,
            "tests/test_pkg.py": TEST,
            "mutations/pkg.toml": catalog,
        },
    )
    cpu = min(os.sched_getaffinity(0))

    def one_cpu() -> None:
        os.sched_setaffinity(0, {cpu})

    loop = [sys.executable, "-c", "while True:\n    pass\n"]
    hogs = [subprocess.Popen(loop, preexec_fn=one_cpu, start_new_session=True) for _ in range(2)]
    try:
        reports = tmp_path / "reports"
        done = subprocess.run(
            [sys.executable, "-m", "killmap", "run", "--no-cache", "--jobs", "1", "--baseline-runs", "1"]
            + ["--report-dir", str(reports)],
            cwd=project,
            env=gate_env(project),
            capture_output=True,
            text=True,
            timeout=240,
            preexec_fn=one_cpu,
        )
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert (reports / "killmap.json").is_file(), done.stdout + done.stderr
    return json.loads((reports / "killmap.json").read_text())["mutations"][0]


@pytest.mark.skipif(not _schedstat_here(), reason="the run-queue wait is Linux's /proc/PID/schedstat")
def test_a_mutant_starved_of_cpu_past_its_limit_is_judged_by_its_tests_not_timed_out(tmp_path):
    entry = _starved_gate(tmp_path, CATALOG)
    assert entry["verdict"] == "held", entry["detail"]
    assert [red["id"] for red in entry["red"]] == ["tests/test_pkg.py::test_answer"]
    # Starved indeed: its run outlasted the 3 s limit on the clock, and still was not cut off.
    assert entry["duration_seconds"] > 3.0, entry


@pytest.mark.skipif(not _schedstat_here(), reason="the run-queue wait is Linux's /proc/PID/schedstat")
def test_a_starved_loop_times_out_and_its_detail_says_the_clock_ran_on_while_it_waited(tmp_path):
    # "still running after 1.0s" of a run the clock saw for 3 s read as a limit not honoured.
    # The original burns 0.05 s, not 0.2 s: starved on a busy runner its tests took the whole
    # 1 s limit, and the gate rightly called the limit too tight for the machine (inconclusive).
    looping = CATALOG.replace(
        'new = "burn(0.8)\\n    return 41"\ntimeout = 3', 'new = "burn(1e9)\\n    return 41"\ntimeout = 1'
    ).replace('old = "burn(0.2)', 'old = "burn(0.05)')
    assert looping.count("burn(0.05)") == 1 and "timeout = 1" in looping
    entry = _starved_gate(tmp_path, looping, SOURCE.replace("burn(0.2)", "burn(0.05)"))
    assert entry["verdict"] == "timeout", entry["detail"]
    waited = re.search(r"after 1\.0s, not counting (\d+\.\d)s it waited for a CPU", entry["detail"])
    assert waited and float(waited.group(1)) > 0, entry["detail"]


@pytest.mark.skipif(not _schedstat_here(), reason="the run-queue wait is Linux's /proc/PID/schedstat")
def test_a_starved_run_gets_its_wait_back_but_never_past_four_times_its_limit():
    from killmap.engine.workers.timeout_cpu import STRETCH, Limit

    cpu = min(os.sched_getaffinity(0))

    def pinned() -> None:
        os.sched_setaffinity(0, {cpu})

    # Three loops on one CPU, each in a session of its own (as in _starved_gate): the run gets
    # a third of it, and waits two thirds of the time, whether the kernel shares the CPU
    # between processes or between sessions. A niced run in a session of its own beside one
    # loop got half, and once had waited only 0.68 s after 2 s.
    loop = [sys.executable, "-c", "while True:\n    pass\n"]
    hogs = [subprocess.Popen(loop, preexec_fn=pinned, start_new_session=True) for _ in range(2)]
    run = subprocess.Popen(loop, preexec_fn=pinned, start_new_session=True)  # its own group
    try:
        started = time.perf_counter()
        limit = Limit(run.pid, started, 0.25)
        time.sleep(0.5)
        early = limit.deadline()
        assert started + 0.25 < early < started + 0.25 * STRETCH  # the wait so far, added
        time.sleep(2.0)  # it has waited about 1.7 s by now, far more than 3 x 0.25 s
        assert limit.deadline() == started + 0.25 * STRETCH
    finally:
        for process in (*hogs, run):
            process.kill()
            process.wait()
