"""The benchmarks' real projects are unpacked as git checkouts of their own: killmap lists a
project's files with git, and in an ignored folder of this repository git would list none."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

from benchkit import bench_module


def _sdists():
    return bench_module("sdists")


def _tarball(folder: Path) -> Path:
    tarball = folder / "pkg-1.0.tar.gz"
    with tarfile.open(tarball, "w:gz") as archive:
        for rel, text in {"pkg-1.0/pyproject.toml": "[project]\n", "pkg-1.0/tests/test_a.py": "x = 1\n"}.items():
            data = text.encode()
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return tarball


def test_an_sdist_already_downloaded_is_not_fetched_again(tmp_path):
    tarball = _tarball(tmp_path)
    # A python that cannot run: any download would fail.
    assert _sdists().download("pkg==1.0", tmp_path, python=tmp_path / "no-python") == tarball


def test_an_unpacked_sdist_replaces_the_old_copy_and_is_one_commit_holding_all_of_it(tmp_path):
    sdists = _sdists()
    dest = tmp_path / "work" / "pkg-copy"
    (dest / "stale").mkdir(parents=True)
    root = sdists.snapshot(sdists.unpack(_tarball(tmp_path), dest))
    assert root == dest and not (dest / "stale").exists()
    listed = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True).stdout
    assert listed.split() == ["pyproject.toml", "tests/test_a.py"]
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, check=True)
    assert status.stdout == ""
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["pkg-copy"]  # no scratch left behind
