"""A name an assignment also binds still targets its one def or class.

typing_extensions 4.16.0 writes `if hasattr(typing, "override"): override = typing.override`
and `else: def override(arg, /): ...` (and so `get_original_bases`, `is_protocol`, `Doc`,
`type_repr`, `deprecated`): every one of those targets was refused as "defined 2 times".
An assignment there is another way of getting the name, like the import beside it, so the
def or class is the target; two defs or classes, or assignments alone, stay as they were.
"""

from __future__ import annotations

import pytest
from gatekit import killmap_command, write_project
from sweepkit import require_mutmut

from killmap.catalog.reader import load_catalog
from killmap.errors import GateError
from killmap.mutate.mutants import build_mutant
from killmap.verdict.sweep import enumerate_mutants, resolve_targets

MODULE = "src/pkg/mod.py"

# typing_extensions' shape: the name from `typing` where it has it, defined here otherwise;
# `Doc` a class, and `scale` rebound after its def at the top level.
REBOUND = """\
import functools
import typing

if hasattr(typing, "override"):
    override = typing.override
    Doc = typing.Doc
else:
    def override(arg, /):
        arg.__override__ = True
        return arg

    class Doc:
        def __init__(self, text):
            self.text = text


def scale(x):
    return x * 2


scale = functools.lru_cache(scale)
"""

TESTS = """\
from pkg.mod import override, scale


def test_marks():
    assert override(lambda: 0).__override__


def test_scales():
    assert scale(2) == 4
"""


def _project(tmp_path, source: str = REBOUND):
    return write_project(
        tmp_path / "project",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "src/pkg/__init__.py": "",
            MODULE: source,
            "tests/test_mod.py": TESTS,
        },
    )


def _mutant(root, target: str, old: str, new: str):
    """The catalog path `run`, `check`, `try` and `pin` all build a mutant through."""
    catalog = root / "mutations" / "pkg.toml"
    catalog.parent.mkdir(exist_ok=True)
    catalog.write_text(
        f'[gate]\ntests = ["tests"]\npaths = ["src"]\n\n[[mutation]]\nname = "m"\ntarget = "{MODULE}::{target}"\n'
        f'op = "replace"\nold = "{old}"\nnew = "{new}"\nkills = ["tests/test_mod.py::test_marks"]\n'
    )
    [mutation] = load_catalog(root, catalog).mutations
    return build_mutant(root, mutation)


def test_a_def_or_class_beside_an_assignment_of_its_name_is_the_target(tmp_path):
    root = _project(tmp_path)
    marked = _mutant(root, "override", "arg.__override__ = True", "pass")
    assert marked.applied and "    def override(arg, /):\n        pass\n" in marked.mutated
    assert "override = typing.override" in marked.mutated
    doc = _mutant(root, "Doc.__init__", "self.text = text", "self.text = None")
    assert doc.applied and "self.text = None" in doc.mutated
    scaled = _mutant(root, "scale", "x * 2", "x * 3")
    assert scaled.applied and "return x * 3" in scaled.mutated


def test_killmap_check_and_the_sweep_take_the_same_target(tmp_path):
    root = _project(tmp_path)
    _mutant(root, "override", "arg.__override__ = True", "pass")
    done = killmap_command(root, "check")
    assert done.returncode == 0, done.stdout + done.stderr
    require_mutmut()
    # The sweep resolves `file::symbol` with the same resolver: `scale`'s mutants are its
    # body's, not the assignment's nor the file's.
    found = enumerate_mutants(root, resolve_targets(root, [f"{MODULE}::scale"], []), ("mutmut",))
    assert found.mutants and {m.function for m in found.mutants} == {"scale"}


def test_two_definitions_beside_an_assignment_stay_ambiguous(tmp_path):
    root = _project(
        tmp_path, REBOUND.replace("    class Doc:", "    def override(arg):\n        return arg\n\n    class Doc:")
    )
    with pytest.raises(GateError) as caught:
        _mutant(root, "override", "return arg", "return None")
    assert caught.value.field == "target" and "'override' is defined 2 times" in str(caught.value)


def test_a_name_only_assignments_bind_is_ambiguous_when_bound_twice(tmp_path):
    root = _project(tmp_path, "import os\n\nif os.name == 'nt':\n    SEP = ';'\nelse:\n    SEP = ':'\n")
    with pytest.raises(GateError) as caught:
        _mutant(root, "SEP", "':'", "'.'")
    assert "'SEP' is defined 2 times" in str(caught.value)
