"""The import filter's scan (imports.scanned_imports) against the parse it stands in for.

The scan must never miss an import the parse sees: a missed edge would ignore a test file
that can reach a mutation, and selection would be unsound. So it answers only for text it
can vouch for line by line, and otherwise says None (the filter then parses).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from killmap.verdict.imports import parsed_imports, scanned_imports

REPO = Path(__file__).resolve().parents[2]


def _statements(found: list[ast.Import | ast.ImportFrom] | None) -> set[tuple]:
    assert found is not None
    return {
        (
            type(node).__name__,
            getattr(node, "module", None),
            getattr(node, "level", 0),
            tuple((a.name, a.asname) for a in node.names),
        )
        for node in found
    }


def test_lone_imports_are_read_without_a_parse_and_match_it():
    text = (
        "import os\nimport a.b as c, d  # why\nfrom . import sibling\nfrom ..up import (x as y, z)\n"
        "from pkg.mod import *\n\n\ndef test_it():\n    from late import thing\n    assert thing\n"
    )
    assert _statements(scanned_imports(text)) == _statements(parsed_imports(text))
    assert ("ImportFrom", "late", 0, (("thing", None),)) in _statements(scanned_imports(text))


@pytest.mark.parametrize(
    "text",
    [
        "from pkg \\\n    import target\n",  # the statement starts on the line before
        "import os; import target\n",  # two statements on one line
        "if True: import target\n",  # a compound statement on one line
        "try:\n    import x\nexcept ImportError: import target\n",
        "from pkg import (\n    target,\n)\n",  # continued inside brackets
        "# import target later\nimport os\n",  # the word where no import is
        "x = 'import target'\n",
        "import importlib\nimportlib.import_module('pkg.target')\n",  # imports by name at run time
        "pytest_plugins = ['pkg.target']\n",
        "target = __import__('pkg.target')\n",
        'DOC = """\nimport the rest by hand\n"""\n',  # prose that looks like an import
    ],
)
def test_anything_the_scan_cannot_vouch_for_is_left_to_the_parse(text):
    assert scanned_imports(text) is None


def test_an_import_inside_a_string_is_taken_for_a_real_one_which_errs_towards_running():
    text = 'DOC = """\nfrom pkg import target\n"""\nimport os\n'
    assert _statements(parsed_imports(text)) < _statements(scanned_imports(text))


def _python_files() -> list[Path]:
    roots = [REPO / "src", REPO / "tests", REPO / "benchmarks"]
    # Not beneath hidden folders: benchmark venvs and work trees are not this project's code.
    return sorted(
        p
        for root in roots
        for p in root.rglob("*.py")
        if not any(part.startswith(".") for part in p.relative_to(REPO).parts)
    )


def test_on_every_python_file_here_the_scan_finds_at_least_what_the_parse_finds():
    answered = 0
    for path in _python_files():
        text = path.read_text(encoding="utf-8")
        scanned, parsed = scanned_imports(text), parsed_imports(text)
        if scanned is None:
            continue
        answered += 1
        assert parsed is not None, f"{path}: the parse would import by name, the scan did not say so"
        assert _statements(scanned) >= _statements(parsed), path
    assert answered > 50  # the scan is not a parse that always gives up


RELATIVE = {
    "src/pkg/__init__.py": "",
    "src/pkg/target.py": "def f():\n    return 1\n",
    "tests/__init__.py": "",
    "tests/helpers/__init__.py": "",
    "tests/helpers/calls.py": "from pkg.target import f\n",
    "tests/helpers/test_near.py": "from .calls import f\n\n\ndef test_f():\n    assert f() == 1\n",
    "tests/helpers/test_alone.py": "from . import __name__ as here\n\n\ndef test_here():\n    assert here\n",
    "tests/test_far.py": "from .helpers import calls\n\n\ndef test_f():\n    assert calls.f() == 1\n",
}


def test_relative_imports_read_by_the_scan_are_followed_to_the_target(tmp_path):
    from gatekit import write_project

    from killmap.verdict.imports import unreachable_test_files

    root = write_project(tmp_path / "rel", RELATIVE)
    found = unreachable_test_files(root, sorted(RELATIVE), ("tests",), ("src",), {"src/pkg/target.py"}, set())
    tests = {f for f in found.files if f.rsplit("/", 1)[-1].startswith("test_")}
    assert tests == {"tests/helpers/test_alone.py"}  # test_near and test_far reach the target
    assert "tests/helpers/test_alone.py" in found.unparsed  # the scan read it: parsed later
