"""SIGTERM and SIGHUP end the gate as ^C does: workers stopped, scratch removed, no report.

A cancelled CI job and `timeout` send SIGTERM (then SIGKILL, later); a closed terminal sends
SIGHUP. By default either ends Python at once, past every `finally`: the workers left on
their own, but the scratch folder (on the RAM disk) and the start folder stayed behind.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from gatekit import gate_env, one_mutation_project, process_ended, tree_digest

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

# The test writes that it has started, then sleeps: the gate is mid-baseline, its workers
# and a pytest session running, when the signal comes.
SLEEPING_TEST = """\
import os
import time

from pkg import one


def test_one():
    with open(os.environ["KM_TEST_STARTED"], "a") as marker:
        marker.write("started\\n")
    time.sleep(60)
    assert one() == 1
"""


def _tagged(tag: str) -> list[int]:
    """Every process whose environment holds `tag`: the gate, its workers and their forks."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if f"KM_GATE_TAG={tag}".encode() in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


@linux_only
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_that_ends_the_gate_mid_run_leaves_no_folder_no_process_and_no_report(tmp_path, signum):
    project = one_mutation_project(tmp_path / "project", "def one():\n    return 1\n", SLEEPING_TEST)
    temp, reports, tag = tmp_path / "temp", tmp_path / "reports", uuid.uuid4().hex
    temp.mkdir()
    marker = temp / "started"
    # Unconfined: the marker is how this test learns the run has started, and Landlock grants a
    # test no folder outside the gate's own scratch (signals, not confinement, are tested here).
    env = gate_env(
        project, {"TMPDIR": str(temp), "KM_TEST_STARTED": str(marker), "KM_GATE_TAG": tag, "KILLMAP_CONFINE": "0"}
    )
    before = tree_digest(project)
    gate = subprocess.Popen(
        [sys.executable, "-m", "killmap", "run", "--no-cache", "--report-dir", str(reports)],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert gate.poll() is None and time.monotonic() < deadline, gate.communicate()
        time.sleep(0.05)
    running = _tagged(tag)
    assert gate.pid in running and len(running) >= 3  # the gate, a worker, its test session
    assert any(p.name.startswith("killmap-start-") for p in temp.iterdir())
    gate.send_signal(signum)
    stdout, stderr = gate.communicate(timeout=60)
    assert gate.returncode == 128 + signum, (stdout, stderr)
    name = signal.Signals(signum).name
    assert f"killmap: interrupted by {name}; the working tree was not touched" in stderr.splitlines()
    assert "Traceback" not in stderr, stderr
    assert sorted(p.name for p in temp.iterdir()) == ["started"]  # no scratch, no start folder
    assert all(process_ended(pid) for pid in running), [pid for pid in running if not process_ended(pid, 0)]
    assert tree_digest(project) == before
    assert not reports.exists()


def test_a_command_called_in_process_gives_back_the_signal_handlers_it_found(tmp_path, monkeypatch):
    from killmap.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "pkg"\nversion = "0"\n', encoding="utf-8")
    before = (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP))
    main(["list"])
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)) == before
