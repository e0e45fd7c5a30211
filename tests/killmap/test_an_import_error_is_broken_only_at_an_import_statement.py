"""A red by ImportError is the mutant's breakage (`broken`, never a kill) only where an import
statement of the mutated file failed, with nothing of the project's but modules' top levels
below it. A call that imports a computed name (`import_module(name)`) and a project function
that refuses an import on purpose are behaviour: python-slugify's sweep called twelve real
kills broken, "the mutant does not compile cleanly"."""

from __future__ import annotations

import importlib
import sys

import pytest

from killmap.engine.inrun.failures import describe_failure
from killmap.engine.outcome import BROKEN, CRASH, TestResult

MUTATED = (
    "import importlib\n\n\n"
    "def statement():\n    import no_such_module_k1  # noqa\n\n\n"
    "def from_statement():\n    from os import no_such_name_k1  # noqa\n\n\n"
    "def by_call(name):\n    return importlib.import_module(name)\n\n\n"
    "def through(refuse):\n    return refuse('backend')\n"
)
REFUSER = "def refuse(name):\n    raise ModuleNotFoundError(f'must not import {name}', name=name)\n"


def _cause(tmp_path, monkeypatch, call, files=None, raised=ImportError) -> str:
    """The cause of the failure `call(*modules)` raises, the first of `files` the mutated one."""
    files = files or {"mutated_k1": MUTATED, "refuser_k1": REFUSER}
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(text)
        sys.modules.pop(name, None)
    importlib.invalidate_caches()
    modules = [importlib.import_module(name) for name in files]
    with pytest.raises(raised) as excinfo:
        call(*modules)
    mutated = tmp_path / f"{next(iter(files))}.py"
    facts = describe_failure(excinfo, None, str(mutated.resolve()), str(tmp_path.resolve()))
    keys = ("exc_type", "assertion", "in_mutated_file", "mutated_file_innermost", "imported_by_mutated_file")
    return TestResult(id="t", outcome="failed", phase="call", **{k: facts[k] for k in keys}).cause


def test_an_import_statement_of_the_mutated_file_that_fails_is_broken(tmp_path, monkeypatch):
    assert _cause(tmp_path, monkeypatch, lambda m, r: m.statement()) == BROKEN
    assert _cause(tmp_path, monkeypatch, lambda m, r: m.from_statement()) == BROKEN


def test_a_call_that_imports_a_computed_name_is_behaviour(tmp_path, monkeypatch):
    assert _cause(tmp_path, monkeypatch, lambda m, r: m.by_call("no_such_module_k2")) == CRASH


def test_a_project_function_that_refuses_an_import_is_behaviour(tmp_path, monkeypatch):
    assert _cause(tmp_path, monkeypatch, lambda m, r: m.through(r.refuse)) == CRASH


PARSER = (
    "import ast\n\n\n"
    "def refuse(name):\n    raise SyntaxError(f'invalid attribute name {name!r}')\n\n\n"
    "def parse(text):\n    return ast.parse(text)\n"
)


def test_a_syntax_error_the_mutated_file_raises_or_parses_is_behaviour(tmp_path, monkeypatch):
    # asteval: Group.__setattr__'s own `raise SyntaxError(...)` for a name it refuses was read
    # as "the mutant does not compile cleanly": the running mutant compiled.
    files = {"parser_k1": PARSER}
    assert _cause(tmp_path, monkeypatch, lambda p: p.refuse("if"), files, SyntaxError) == CRASH
    assert _cause(tmp_path, monkeypatch, lambda p: p.parse("1 +"), files, SyntaxError) == CRASH
