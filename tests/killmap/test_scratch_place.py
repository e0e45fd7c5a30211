"""Where the gate's scratch folder goes: a RAM disk, unless the user chose a TMPDIR or the RAM
disk cannot take it.

A run creates thousands of small files there (sandboxes, run folders, every test's tmp_path);
on a disk-backed /tmp each costs kernel time, and /dev/shm took the bundled gate's wall time
down by about 30% on this machine.
"""

from __future__ import annotations

import os
import sys

import pytest
from gatekit import gate_env, one_mutation_project, run_gate

from killmap.engine.containment import sandbox
from killmap.engine.containment.sandbox import RAM_DISK, scratch_parent


def _ram_disk_is_tmpfs() -> bool:
    try:
        with open("/proc/self/mounts", encoding="utf-8") as mounts:
            return any(
                f[1] == RAM_DISK and f[2] == "tmpfs" and "noexec" not in f[3] for f in (line.split() for line in mounts)
            )
    except OSError:
        return False


needs_ram_disk = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not _ram_disk_is_tmpfs(), reason="no executable tmpfs at /dev/shm here"
)


@needs_ram_disk
def test_with_no_tmpdir_chosen_the_scratch_goes_on_the_ram_disk(monkeypatch):
    monkeypatch.delenv("TMPDIR", raising=False)
    assert scratch_parent(10 << 20, 4) == RAM_DISK


def test_a_tmpdir_the_user_chose_wins(monkeypatch, tmp_path):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert scratch_parent(0, 1) is None  # tempfile's choice: $TMPDIR


@needs_ram_disk
def test_a_ram_disk_without_room_for_every_copy_is_passed_over(monkeypatch):
    monkeypatch.delenv("TMPDIR", raising=False)
    stats = os.statvfs(RAM_DISK)
    free = stats.f_bavail * stats.f_frsize
    assert scratch_parent(free // 3, 3) is None
    monkeypatch.setattr(sandbox, "RAM_DISK_SPARE", 0)
    assert scratch_parent(free // 4, 3) == RAM_DISK


@needs_ram_disk
def test_a_gate_run_gives_its_tests_a_tmp_path_on_the_ram_disk(tmp_path):
    project = one_mutation_project(
        tmp_path / "proj",
        "def one():\n    return 1\n",
        (
            "from pkg import one\n\n\ndef test_one(tmp_path):\n"
            "    assert str(tmp_path).startswith('/dev/shm/killmap-'), tmp_path\n"
            "    assert one() == 1\n"
        ),
        value="2",
    )
    env = gate_env(project)
    env.pop("TMPDIR", None)
    run = run_gate(project, "run", "--no-cache", env=env)
    assert run.code == 0, run.stdout + run.stderr


@pytest.mark.parametrize(
    "mount",
    [
        ("tmpfs", frozenset({"rw", "nosuid", "nodev", "noexec"})),  # built extensions could not load
        ("ext4", frozenset({"rw"})),  # a disk: no gain, maybe no room
        None,  # nothing mounted there
    ],
)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the RAM disk rule is Linux's")
def test_a_ram_disk_that_is_not_an_executable_tmpfs_is_passed_over(monkeypatch, mount):
    monkeypatch.delenv("TMPDIR", raising=False)
    monkeypatch.setattr(sandbox, "mount_of", lambda folder: mount)
    assert scratch_parent(1 << 20, 4) is None


@needs_ram_disk
def test_the_mount_table_says_what_is_mounted_at_the_ram_disk():
    kind, options = sandbox.mount_of(RAM_DISK)
    assert kind == "tmpfs" and "noexec" not in options
    assert sandbox.mount_of("/no/such/mount/point") is None
