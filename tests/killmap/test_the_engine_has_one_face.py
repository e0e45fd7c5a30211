"""Every other layer reaches the engine through killmap.engine alone, which loads nothing it
is not asked for."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import killmap.engine


@pytest.mark.parametrize("name", [n for n in killmap.engine.__all__ if n != "MISSING_NAMES_PLUGIN"])
def test_each_name_of_the_face_is_its_homes_own(name):
    home = importlib.import_module(killmap.engine._HOMES[name])
    assert getattr(killmap.engine, name) is getattr(home, name)


def test_the_missing_names_plugin_the_face_names_is_a_module_pytest_can_load():
    plugin = importlib.import_module(killmap.engine.MISSING_NAMES_PLUGIN)
    assert callable(plugin.pytest_exception_interact)


def test_a_name_the_face_does_not_hand_on_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        killmap.engine.Nothing  # noqa: B018


def test_importing_the_face_imports_no_module_of_the_engine():
    # A worker and a run's pytest plugin import the face on their way to their own module.
    code = "import sys, killmap.engine; print(sorted(m for m in sys.modules if m.startswith('killmap.engine.')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
