"""Each worker copies its own sandbox from the gate's pristine copy (pool.Worker.begin_copy)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from gatekit import write_project

from killmap.catalog.project import project_files
from killmap.engine.containment.sandbox import Scratch, as_listed
from killmap.engine.core import Engine
from killmap.engine.workers.pool import Pool
from killmap.errors import GateError

PROJECT = {
    "pyproject.toml": '[project]\nname = "copied"\nversion = "0"\n',
    "src/copied/__init__.py": "",
    "src/copied/core.py": "def one():\n    return 1\n",
    "tests/test_core.py": "from copied.core import one\n\n\ndef test_one():\n    assert one() == 1\n",
    "tests/data/table.csv": "a,b\n1,2\n",
}


def test_every_worker_copies_its_sandbox_byte_for_byte_and_guards_it_as_copied(tmp_path):
    project = write_project(tmp_path / "project", PROJECT)
    files = project_files(project)
    with Engine(project, files, 2) as engine:
        for worker in engine.workers:
            worker.wait_sandbox()
            assert worker.guard is not None and worker.guard.folder == worker.sandbox
            assert {rel: (worker.sandbox / rel).read_bytes() for rel in files} == {
                rel: (project / rel).read_bytes() for rel in files
            }
            (worker.sandbox / "src/copied/core.py").write_text("def one():\n    return 2\n")
            assert worker.guard.check_and_restore().modified == ("src/copied/core.py",)
            assert (worker.sandbox / "src/copied/core.py").read_bytes() == (project / "src/copied/core.py").read_bytes()


def test_a_sandbox_that_cannot_be_copied_is_an_error_naming_its_worker(tmp_path):
    source = write_project(tmp_path / "source", {"present.py": "x = 1\n"})
    manifest = tmp_path / "files.json"
    manifest.write_text('["present.py", "gone.py"]')
    pool = Pool([tmp_path / "sandbox-0"], start_dir=tmp_path)
    try:
        worker = pool.workers[0]
        worker.begin_copy(source, ["present.py", "gone.py"], manifest)
        with pytest.raises(GateError, match="worker 0 could not copy its sandbox .*gone.py"):
            worker.wait_sandbox()
        assert worker.guard is None
    finally:
        pool.close()


@pytest.mark.parametrize("watch", ["1", "0"], ids=["inotify", "stamps alone"])
def test_a_pristine_file_deleted_under_a_folder_whose_mtime_was_set_back_is_repaired(tmp_path, monkeypatch, watch):
    """Every restore copies from the pristine copy: a run that deletes a file there and puts its
    folder's mtime back as it was must not leave the next restore without a source."""
    monkeypatch.setenv("KILLMAP_INOTIFY", watch)
    project = write_project(tmp_path / "project", PROJECT)
    scratch = Scratch(str(tmp_path))
    try:
        pristine = scratch.pristine_copy(project, project_files(project))
        folder = pristine / "src" / "copied"
        before = folder.stat()
        (folder / "core.py").unlink()
        os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert scratch.repair_pristine()
        assert (folder / "core.py").read_text() == PROJECT["src/copied/core.py"]
        assert not scratch.repair_pristine()
        (folder / "core.py").unlink()  # the copy made again is watched as the first was
        assert scratch.repair_pristine()
        assert (folder / "core.py").exists()
    finally:
        scratch.remove()


def test_a_pristine_copy_the_kernel_heard_nothing_happen_to_costs_no_stat(tmp_path, monkeypatch):
    from killmap.engine.containment import sandbox as sandbox_module
    from killmap.engine.containment.inotify_watch import InotifyWatch

    if InotifyWatch.open("/", [""], []) is None:
        pytest.skip("no inotify on this platform")
    project = write_project(tmp_path / "project", PROJECT)
    scratch = Scratch(str(tmp_path))
    try:
        scratch.pristine_copy(project, project_files(project))
        stamped = []
        real = sandbox_module.folder_stamp
        monkeypatch.setattr(sandbox_module, "folder_stamp", lambda path: stamped.append(path) or real(path))
        assert not scratch.repair_pristine()
        assert stamped == []
    finally:
        scratch.remove()


def test_a_sandbox_lists_each_folder_as_the_project_does(tmp_path):
    # jmespath numbers its compliance cases by os.listdir: the sandbox, on a RAM disk that lists
    # the newest entry first, gave them other ids than plain pytest did.
    names = ["mango.json", "apple.json", "zebra.json", "kiwi.json", "banana.json", "cherry.json", "nested"]
    files = {f"tests/cases/{name}": "{}\n" for name in names if name != "nested"}
    files["tests/cases/nested/inner.json"] = "{}\n"
    project = write_project(tmp_path / "project", {**PROJECT, **files})
    listed = os.listdir(project / "tests" / "cases")
    with Engine(project, project_files(project), 1) as engine:
        worker = engine.workers[0]
        worker.wait_sandbox()
        assert os.listdir(worker.sandbox / "tests" / "cases") == listed
        assert os.listdir(engine.scratch.pristine / "tests" / "cases") == listed


def test_the_copy_order_is_the_listing_order_or_its_reverse(tmp_path):
    folder = tmp_path / "tree"
    (folder / "d").mkdir(parents=True)
    for name in ("c", "a", "b", "d/y", "d/x"):
        (folder / name).write_text("")
    files = ["a", "b", "c", "d/x", "d/y"]
    forward = as_listed(folder, files, newest_first=False)
    assert list(dict.fromkeys(rel.split("/")[0] for rel in forward)) == os.listdir(folder)
    assert [rel for rel in forward if rel.startswith("d/")] == [f"d/{name}" for name in os.listdir(folder / "d")]
    assert as_listed(folder, files, newest_first=True) == forward[::-1]


def _hash_seed_of(pid: int) -> str | None:
    entries = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return next((e.split(b"=", 1)[1].decode() for e in entries if e.startswith(b"PYTHONHASHSEED=")), None)


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads a process's environment in /proc")
def test_a_worker_and_its_replacement_run_under_the_engine_s_hash_seed(tmp_path, monkeypatch):
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    project = write_project(tmp_path / "project", PROJECT)
    with Engine(project, project_files(project), 1, seed=7) as engine:
        worker = engine.workers[0]
        worker.wait_sandbox()
        assert _hash_seed_of(worker.process.pid) == "7"
        worker.process.kill()  # a run killed it: its replacement keeps the seed
        worker.process.wait()
        worker.replace()
        worker.wait_sandbox()
        assert _hash_seed_of(worker.process.pid) == "7"
    with Engine(project, project_files(project), 1, seed=None) as engine:  # --seed random
        engine.workers[0].wait_sandbox()
        assert _hash_seed_of(engine.workers[0].process.pid) is None
