"""The origin proof's look for project modules the run imported from the working tree
(plugin.modules_from_working_tree), and what it remembers between looks."""

from __future__ import annotations

import sys
import types

import pytest

from killmap.engine.plugin import modules_from_working_tree


@pytest.fixture
def trees(tmp_path, monkeypatch):
    working, sandbox = tmp_path / "working", tmp_path / "sandbox"
    for tree in (working, sandbox):
        (tree / "src" / "pkg").mkdir(parents=True)
        (tree / "src" / "pkg" / "helper.py").write_text("VALUE = 1\n")
    monkeypatch.chdir(sandbox)  # a run's cwd is its sandbox
    return working, sandbox


def _module(name: str, file) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = str(file)
    return module


def test_a_project_module_loaded_from_the_working_tree_is_named(trees, monkeypatch):
    working, sandbox = trees
    monkeypatch.setitem(sys.modules, "pkg_wt_probe", _module("pkg_wt_probe", working / "src/pkg/helper.py"))
    assert "pkg_wt_probe" in modules_from_working_tree(str(working))


def test_a_module_replaced_under_the_same_name_is_looked_at_afresh(trees, monkeypatch):
    # The collected session looks at every module once, and its forks remember the answer:
    # a test that drops the sandbox's module and imports the working tree's instead leaves
    # another object under the same name, and that one is looked at again.
    working, sandbox = trees
    monkeypatch.setitem(sys.modules, "pkg_wt_swap", _module("pkg_wt_swap", sandbox / "src/pkg/helper.py"))
    assert "pkg_wt_swap" not in modules_from_working_tree(str(working))
    monkeypatch.setitem(sys.modules, "pkg_wt_swap", _module("pkg_wt_swap", working / "src/pkg/helper.py"))
    assert "pkg_wt_swap" in modules_from_working_tree(str(working))
    monkeypatch.setitem(sys.modules, "pkg_wt_swap", _module("pkg_wt_swap", sandbox / "src/pkg/helper.py"))
    assert "pkg_wt_swap" not in modules_from_working_tree(str(working))


def test_a_working_tree_file_with_no_copy_in_the_sandbox_is_not_a_shadow(trees, monkeypatch):
    # A venv inside the project: its modules lie in the working tree, but nothing shadows them.
    working, sandbox = trees
    (working / ".venv").mkdir()
    (working / ".venv" / "installed.py").write_text("")
    monkeypatch.setitem(sys.modules, "installed_probe", _module("installed_probe", working / ".venv/installed.py"))
    assert "installed_probe" not in modules_from_working_tree(str(working))
