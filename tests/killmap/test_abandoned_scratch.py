"""A gate killed outright leaves its scratch folder behind; the next gate removes it, and
nothing else.

SIGKILL (a cancelled CI job, an OOM kill) gives the gate no chance to clean up: its
sandboxes stay in the temporary folder, and on a self-hosted runner they pile up. Each
scratch folder names its owner ("pid@host"), and a new gate removes only folders whose owner
is gone, made on this host. A folder without that file is never touched, nor is one whose
gate is alive.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest
from gatekit import copy_fixture, gate_env, run_gate

from killmap.engine.containment.sandbox import OWNER_FILE, RAM_DISK, Scratch, mount_of


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _scratch_like(parent, name, owner=None):
    folder = parent / name
    (folder / "sandbox-0").mkdir(parents=True)
    (folder / "sandbox-0" / "core.py").write_text("x = 1\n", encoding="utf-8")
    if owner is not None:
        (folder / OWNER_FILE).write_text(owner, encoding="utf-8")
    return folder


def test_a_new_scratch_removes_folders_of_gates_that_are_gone_and_nothing_else(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    host = socket.gethostname()
    abandoned = _scratch_like(tmp_path, "killmap-abandoned", f"{_dead_pid()}@{host}")
    running = _scratch_like(tmp_path, "killmap-running", f"{os.getpid()}@{host}")
    elsewhere = _scratch_like(tmp_path, "killmap-elsewhere", f"{_dead_pid()}@another-host")
    unowned = _scratch_like(tmp_path, "killmap-unowned")
    scratch = Scratch()
    try:
        assert not abandoned.exists()
        assert running.exists() and elsewhere.exists() and unowned.exists()
        assert (scratch.path / OWNER_FILE).read_text(encoding="utf-8") == f"{os.getpid()}@{host}"
    finally:
        scratch.remove()


def _ram_disk_takes_scratch() -> bool:
    try:
        mount = mount_of(RAM_DISK)
    except OSError:
        return False
    return mount is not None and mount[0] == "tmpfs" and "noexec" not in mount[1]


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or not _ram_disk_takes_scratch(), reason="no executable tmpfs at /dev/shm"
)
def test_a_gate_whose_every_verdict_is_cached_still_removes_an_abandoned_scratch_on_the_ram_disk(tmp_path):
    # With no TMPDIR the scratch goes on the RAM disk and the start folder in /tmp; a cached gate
    # makes no scratch, but its start must clean both places, or a killed gate's copies stay
    # in memory until the next uncached one.
    project = copy_fixture("basic", tmp_path)
    env = gate_env(project)
    env.pop("TMPDIR", None)
    assert run_gate(project, "run", env=env).code == 0  # fills the cache
    abandoned = _scratch_like(
        Path(RAM_DISK), f"killmap-abandoned-{uuid.uuid4().hex}", f"{_dead_pid()}@{socket.gethostname()}"
    )
    try:
        cached = run_gate(project, "run", env=env)
        assert cached.code == 0, cached.stderr
        assert cached.report is not None and all(m["cached"] for m in cached.report["mutations"])
        assert not abandoned.exists()
    finally:
        shutil.rmtree(abandoned, ignore_errors=True)
