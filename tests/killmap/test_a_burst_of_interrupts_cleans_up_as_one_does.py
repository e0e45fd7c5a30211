"""A burst of ^C (SIGINT) ends the gate as a single one does (issue 32, item 4).

A user who presses ^C again and again while the gate stops, or a tool that sends SIGINT to
every process it knows, must not cut the stopping short: the second KeyboardInterrupt used to
land in the `finally` that stops the workers and removes the scratch, so the scratch stayed on
the RAM disk, where nothing but the next gate would remove it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from gatekit import gate_env, one_mutation_project, tree_digest

SLEEPING_TEST = "import time\n\nfrom pkg import one\n\n\ndef test_one():\n    time.sleep(60)\n    assert one() == 1\n"


def folders_of(pid: int) -> list[Path]:
    """The scratch and start folders of the gate `pid`, wherever a gate makes them."""
    owner = f"{pid}@{socket.gethostname()}"
    found = []
    for place in {Path("/dev/shm"), Path(tempfile.gettempdir())}:
        for folder in place.glob("killmap-*"):
            try:
                if (folder / "killmap-owner").read_text(encoding="utf-8") == owner:
                    found.append(folder)
            except OSError:
                continue
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the RAM disk is Linux's /dev/shm")
def test_a_burst_of_interrupts_leaves_no_scratch_no_start_folder_and_no_traceback(tmp_path):
    project = one_mutation_project(tmp_path / "project", "def one():\n    return 1\n", SLEEPING_TEST)
    env = gate_env(project)
    env.pop("TMPDIR", None)  # the scratch goes to the RAM disk, where a gate would put it
    before = tree_digest(project)
    gate = subprocess.Popen(
        [sys.executable, "-m", "killmap", "run", "--no-cache", "--report-dir", str(tmp_path / "reports")],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not any(list(folder.glob("runs/*")) for folder in folders_of(gate.pid)):
        assert gate.poll() is None and time.monotonic() < deadline, gate.communicate()
        time.sleep(0.05)
    time.sleep(1.0)  # the baseline's test is asleep
    for _ in range(40):  # through the whole of the gate's stopping
        try:
            os.kill(gate.pid, signal.SIGINT)
        except ProcessLookupError:
            break
        time.sleep(0.01)
    stdout, stderr = gate.communicate(timeout=60)
    assert gate.returncode == 130, (stdout, stderr)
    assert "Traceback" not in stderr, stderr
    assert folders_of(gate.pid) == []
    assert tree_digest(project) == before
    assert not (tmp_path / "reports").exists()
