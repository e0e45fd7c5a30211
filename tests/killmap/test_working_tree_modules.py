"""The origin proof's look for project modules the run imported from the working tree
(working_tree_imports.modules_from_working_tree), and what it remembers between looks."""

from __future__ import annotations

import os
import sys
import types

import pytest

from killmap.engine.inrun.working_tree_imports import modules_from_working_tree


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
    assert "pkg_wt_probe" in modules_from_working_tree(str(working), None, os.getcwd())


def test_a_module_replaced_under_the_same_name_is_looked_at_afresh(trees, monkeypatch):
    # The collected session looks at every module once, and its forks remember the answer:
    # a test that drops the sandbox's module and imports the working tree's instead leaves
    # another object under the same name, and that one is looked at again.
    working, sandbox = trees
    monkeypatch.setitem(sys.modules, "pkg_wt_swap", _module("pkg_wt_swap", sandbox / "src/pkg/helper.py"))
    assert "pkg_wt_swap" not in modules_from_working_tree(str(working), None, os.getcwd())
    monkeypatch.setitem(sys.modules, "pkg_wt_swap", _module("pkg_wt_swap", working / "src/pkg/helper.py"))
    assert "pkg_wt_swap" in modules_from_working_tree(str(working), None, os.getcwd())
    monkeypatch.setitem(sys.modules, "pkg_wt_swap", _module("pkg_wt_swap", sandbox / "src/pkg/helper.py"))
    assert "pkg_wt_swap" not in modules_from_working_tree(str(working), None, os.getcwd())


def test_a_working_tree_file_with_no_copy_in_the_sandbox_is_not_a_shadow(trees, monkeypatch):
    # A venv inside the project: its modules lie in the working tree, but nothing shadows them.
    working, sandbox = trees
    (working / ".venv").mkdir()
    (working / ".venv" / "installed.py").write_text("")
    monkeypatch.setitem(sys.modules, "installed_probe", _module("installed_probe", working / ".venv/installed.py"))
    assert "installed_probe" not in modules_from_working_tree(str(working), None, os.getcwd())


# --- the session server's ImportWatch: a fork that loads nothing need not look again ------
# An audit hook cannot be removed: each case runs in a child interpreter of its own.
_WATCH_CASE = """
import importlib.util, json, os, sys, types
from killmap.engine.inrun.working_tree_imports import ImportWatch, modules_from_working_tree
working, sandbox, case = sys.argv[1], sys.argv[2], sys.argv[3]
os.chdir(sandbox)
helper = os.path.join(working, "src", "pkg", "helper.py")
sys.modules["km_stand_in"] = types.ModuleType("km_stand_in")
early = importlib.util.module_from_spec(importlib.util.spec_from_file_location("km_early", helper))
watch = ImportWatch(["km_was_there"] if case == "found-before" else [])
quiet_before = watch.quiet()
if case == "import":
    sys.path.insert(0, os.path.join(working, "src"))
    import pkg.helper
elif case == "exec":
    spec = importlib.util.spec_from_file_location("km_stand_in", helper)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["km_stand_in"] = module  # in place of another: as many entries as before
elif case == "added":
    sys.modules["km_early"] = early  # made before the watch, put in by hand: one entry more
elif case == "extension":
    # Compiled code runs no exec: only the import event tells (one entry dropped, one added).
    import importlib.machinery, shutil
    for name in ("_lzma", "_bz2", "mmap", "_dbm", "_curses", "_testbuffer"):
        spec = None if name in sys.modules else importlib.util.find_spec(name)
        if spec and spec.origin and spec.origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            break
    else:
        print(json.dumps({"skip": "no compiled module to load"}))
        sys.exit(0)
    for tree in (working, sandbox):
        shutil.copy(spec.origin, os.path.join(tree, "src", os.path.basename(spec.origin)))
    sys.path.insert(0, os.path.join(working, "src"))
    del sys.modules["km_stand_in"]
    __import__(name)
    named = modules_from_working_tree(working, watch, os.getcwd())
    print(json.dumps({"quiet": watch.quiet(), "named": named, "name": name}))
    sys.exit(0)
elif case == "by-hand":
    stand_in = types.ModuleType("km_stand_in")
    stand_in.__file__ = helper
    sys.modules["km_stand_in"] = stand_in  # no import, no exec, as many entries
print(json.dumps({"quiet_before": quiet_before, "quiet": watch.quiet(),
                  "named": modules_from_working_tree(working, watch, os.getcwd())}))
"""


def _watched(trees, case: str) -> dict:
    import json
    import subprocess

    working, sandbox = trees
    done = subprocess.run(
        [sys.executable, "-c", _WATCH_CASE, str(working), str(sandbox), case],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    ("case", "module"),
    [
        ("import", "pkg.helper"),  # a fork that imports from the working tree
        ("exec", "km_stand_in"),  # as many entries as before: only the exec of its code tells
        ("added", "km_early"),  # its code ran before the watch began: only sys.modules' size tells
    ],
    ids=["imported from the working tree", "executed by hand in place of another", "added without an import"],
)
def test_a_module_that_came_since_the_look_is_looked_at_again(trees, case, module):
    seen = _watched(trees, case)
    assert seen["quiet_before"] is True
    assert seen["quiet"] is False
    assert module in seen["named"]


def test_a_compiled_module_imported_in_place_of_another_is_looked_at_again(trees):
    seen = _watched(trees, "extension")
    if "skip" in seen:
        pytest.skip(seen["skip"])
    assert seen["quiet"] is False
    assert seen["name"] in seen["named"]


def test_a_finding_before_the_forks_is_never_reused(trees):
    # The module found then may be gone: only an empty finding is taken as still true.
    seen = _watched(trees, "found-before")
    assert seen["quiet_before"] is False
    assert seen["named"] == []


def test_a_quiet_watch_skips_the_look(trees):
    # The one thing it cannot see, and the proof that it does skip: a module object with a
    # working-tree file, made by hand and put in place of another, with no import or exec.
    seen = _watched(trees, "by-hand")
    assert seen["quiet"] is True
    assert seen["named"] == []
