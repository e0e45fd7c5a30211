"""Where the project is: the nearest folder that holds what marks a Python project."""

from __future__ import annotations

import pytest

from killmap.catalog.project import find_root
from killmap.errors import GateError


@pytest.mark.parametrize("marker", ["pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini"])
def test_a_project_is_found_by_any_file_that_marks_one(tmp_path, marker):
    # toolz 1.0.0 has setup.py and setup.cfg, and no pyproject.toml: it was refused.
    (tmp_path / "proj" / "pkg" / "deep").mkdir(parents=True)
    (tmp_path / "proj" / marker).write_text("")
    assert find_root(tmp_path / "proj" / "pkg" / "deep") == (tmp_path / "proj").resolve()


def test_the_nearest_marked_folder_is_the_project(tmp_path):
    (tmp_path / "outer" / "inner" / "src").mkdir(parents=True)
    (tmp_path / "outer" / "pyproject.toml").write_text("")
    (tmp_path / "outer" / "inner" / "setup.cfg").write_text("")
    assert find_root(tmp_path / "outer" / "inner" / "src") == (tmp_path / "outer" / "inner").resolve()


def test_no_marked_folder_is_one_line_naming_what_was_looked_for(tmp_path, monkeypatch):
    monkeypatch.setattr("killmap.catalog.project.ROOT_MARKERS", ("no-such-marker-here.toml", "nor-this.cfg"))
    with pytest.raises(GateError) as caught:
        find_root(tmp_path)
    assert "no no-such-marker-here.toml or nor-this.cfg at or above" in str(caught.value)
