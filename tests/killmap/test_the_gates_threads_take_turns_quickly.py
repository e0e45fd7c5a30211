"""While an engine is open, the gate's threads wait less for the GIL (core.Engine): their
turns are system calls, taken between the main thread's mutant building."""

from __future__ import annotations

import sys

import pytest
from gatekit import write_project

from killmap.catalog.project import project_files
from killmap.engine.core import THREAD_SWITCH_SECONDS, Engine

PROJECT = {
    "pyproject.toml": '[project]\nname = "turns"\nversion = "0"\n',
    "src/turns/__init__.py": "",
    "tests/test_nothing.py": "def test_nothing():\n    pass\n",
}


def test_an_open_engine_shortens_the_switch_interval_and_gives_it_back(tmp_path):
    project = write_project(tmp_path / "project", PROJECT)
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)  # the interpreter's own default
        with Engine(project, project_files(project), 1):
            assert sys.getswitchinterval() <= THREAD_SWITCH_SECONDS
        assert sys.getswitchinterval() == pytest.approx(0.005, abs=2e-6)
    finally:
        sys.setswitchinterval(before)


def test_a_shorter_interval_set_by_someone_else_is_kept(tmp_path):
    project = write_project(tmp_path / "project", PROJECT)
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.0001)  # shorter than the engine's
        with Engine(project, project_files(project), 1):
            assert sys.getswitchinterval() == pytest.approx(0.0001, abs=2e-6)  # whole microseconds
        assert sys.getswitchinterval() == pytest.approx(0.0001, abs=2e-6)
    finally:
        sys.setswitchinterval(before)
