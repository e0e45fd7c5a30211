"""A sweep of an ambiguous `file::symbol` is refused as its targets are read, told what to
sweep instead.

typing_extensions 4.16.0: `killmap sweep src/typing_extensions.py::ParamSpec` (a class
defined in both arms of an `if`) was refused 14 s in, once mutmut had enumerated the file,
and told to "narrow with op 'replace'": advice for a catalog entry, since a sweep has no op.
"""

from __future__ import annotations

import pytest
from gatekit import killmap_command, write_project

from killmap.errors import GateError
from killmap.verdict.sweep import resolve_targets

MODULE = "src/pkg/mod.py"

# One name defined in both arms of an `if`, at the module's level and in a class's body.
TWICE = """\
import os

if os.name == "nt":
    def sep():
        return ";"
else:
    def sep():
        return ":"


class Paths:
    if os.name == "nt":
        def join(self, a, b):
            return a + "\\\\" + b
    else:
        def join(self, a, b):
            return a + "/" + b
"""


def _project(tmp_path):
    return write_project(
        tmp_path / "project",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "src/pkg/__init__.py": "",
            MODULE: TWICE,
            "tests/test_mod.py": "from pkg.mod import sep\n\n\ndef test_sep():\n    assert sep()\n",
        },
    )


def _refusal(root, target: str) -> str:
    with pytest.raises(GateError) as caught:
        resolve_targets(root, [target], [])
    assert caught.value.field == "TARGET"
    return str(caught.value)


def test_an_ambiguous_sweep_target_is_told_to_sweep_the_scope_that_holds_them_all(tmp_path):
    root = _project(tmp_path)
    at_module = _refusal(root, f"{MODULE}::sep")
    assert "'sep' is defined 2 times" in at_module and f"(sweep the file: {MODULE})" in at_module
    in_class = _refusal(root, f"{MODULE}::Paths.join")
    assert f"(sweep the scope that holds them all: {MODULE}::Paths)" in in_class
    # The catalog's advice names an op, which a sweep does not take.
    assert "replace" not in at_module + in_class
    # A name not there is refused as early, with the resolver's own words.
    assert f"no symbol 'seps' in {MODULE}" in _refusal(root, f"{MODULE}::seps")


def test_killmap_sweep_of_an_ambiguous_target_exits_2_with_the_sweeps_own_advice(tmp_path):
    root = _project(tmp_path)
    done = killmap_command(root, "sweep", f"{MODULE}::sep", "--report-dir", str(tmp_path / "reports"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"the target is ambiguous (sweep the file: {MODULE})" in done.stderr
