"""The benchmarks keep one venv per Python: another interpreter's venv is never reused."""

from __future__ import annotations

import sys
from pathlib import Path

from benchkit import bench_module


def _venvs():
    return bench_module("venvs")


def _made_by(folder: Path, version: str) -> Path:
    folder.mkdir()
    (folder / "pyvenv.cfg").write_text(f"home = /usr/bin\nversion = {version}\n", encoding="utf-8")
    return folder


def test_a_venv_made_by_this_python_is_used(tmp_path):
    here = ".".join(map(str, sys.version_info[:3]))
    venv = _made_by(tmp_path / ".venv", here)
    assert _venvs().for_this_python(venv) == venv


def test_a_venv_made_by_another_python_gets_a_sibling_named_for_this_one(tmp_path):
    other = "3.9.18" if sys.version_info[:2] != (3, 9) else "3.8.18"
    venv = _made_by(tmp_path / ".venv", other)
    mine = ".".join(map(str, sys.version_info[:2]))
    assert _venvs().for_this_python(venv) == tmp_path / f".venv-{mine}"


def test_a_venv_not_made_yet_is_made_where_asked(tmp_path):
    assert _venvs().for_this_python(tmp_path / ".venv") == tmp_path / ".venv"
