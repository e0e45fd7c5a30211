"""red-first's second tree: the fix reverted in behaviour only, the names it adds kept.

`keep_added` is given a module's text at BASE and at HEAD; what it returns must import, hold
every definition HEAD adds, and leave every definition BASE has as BASE has it.
"""

from __future__ import annotations

import ast
import sys
import types

from killmap.verdict.redfirst.change import keep_added

BASE = '''"""Routes."""
from routemap.exceptions import NotFound


class Map:
    def __init__(self):
        self.rules = {}

    def add(self, path, endpoint):
        self.rules[path] = endpoint
'''

HEAD = '''"""Routes."""
from routemap.exceptions import DuplicateRule, NotFound

LIMIT = 3


class Map:
    strict = True

    def __init__(self):
        self.rules = {}

    def add(self, path, endpoint):
        if path in self.rules:
            raise DuplicateRule(path)
        self.rules[path] = endpoint

    @property
    def size(self):
        return len(self.rules)


def helper():
    return LIMIT
'''


def _namespace(text: str, monkeypatch) -> dict:
    """The module's names once it has run, `routemap.exceptions` a real module of two classes."""
    exceptions = types.ModuleType("routemap.exceptions")
    exceptions.NotFound = type("NotFound", (Exception,), {})
    exceptions.DuplicateRule = type("DuplicateRule", (Exception,), {})
    monkeypatch.setitem(sys.modules, "routemap", types.ModuleType("routemap"))
    monkeypatch.setitem(sys.modules, "routemap.exceptions", exceptions)
    names: dict = {}
    exec(compile(text, "map.py", "exec"), names)
    return names


def test_a_changed_module_keeps_base_s_definitions_and_gains_head_s_new_ones(monkeypatch):
    text, kept = keep_added(BASE, HEAD)
    assert kept == ("DuplicateRule", "LIMIT", "Map.size", "Map.strict", "helper")
    names = _namespace(text, monkeypatch)
    m = names["Map"]()
    m.add("/a", "a")
    m.add("/a", "b")  # BASE's add: no check, the second rule replaces the first
    assert m.rules == {"/a": "b"} and m.size == 1 and names["Map"].strict and names["helper"]() == 3


def test_an_import_that_binds_a_new_name_is_narrowed_to_it():
    text, _ = keep_added(BASE, HEAD)
    imports = [n for n in ast.parse(text).body if isinstance(n, ast.ImportFrom)]
    assert [[a.name for a in n.names] for n in imports] == [["NotFound"], ["DuplicateRule"]]


def test_a_module_that_only_adds_definitions_is_head_s_text():
    head = BASE + "\n\nclass Extra(Exception):\n    def __init__(self, path):\n        self.path = path\n"
    assert keep_added(BASE, head) == (head, ("Extra",))


def test_a_definition_that_would_bind_a_base_name_again_is_left_out():
    head = BASE + "\n\nNotFound, FOUND = None, True\n"
    text, kept = keep_added(BASE, head)
    assert kept == () and "FOUND" not in text
