"""The validity check's pyflakes binds only the builtins its text names (mutate/validity/flakes.py),
and finds exactly what pyflakes with every builtin finds."""

from __future__ import annotations

import ast
from collections import Counter

import pytest
from pyflakes import checker

from killmap.mutate.validity import flakes

TEXTS = {
    "a builtin read": "def f(xs):\n    return len(xs) + sum(xs)\n",
    "an undefined name": "def f(xs):\n    return lenn(xs)\n",
    "a builtin named only in a string annotation": 'def f(x: "list[int]") -> "dict":\n    return x\n',
    "an undefined name in a string annotation": 'def f(x: "lst") -> None:\n    return None\n',
    "a cast to a builtin named in a string": 'from typing import cast\n\n\ndef f(y):\n    return cast("int", y)\n',
    "builtins exported by __all__": '__all__ = ["open", "nope"]\n',
    "a builtin shadowed, then read": "list = [1]\n\n\ndef f():\n    return list\n",
    "a builtin deleted": "def f():\n    del len\n",
    "a global declared for a builtin": "def f():\n    global print\n    print = None\n",
    "a builtin spelled in full-width letters": "def f(xs):\n    return ｌｅｎ(xs)\n",
    "magic globals": "def f():\n    return __file__, __name__, WindowsError\n",
}


def _messages(found: checker.Checker) -> Counter:
    return Counter((type(m).__name__, str(m.message_args), m.lineno) for m in found.messages)


@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS.keys())
def test_the_findings_are_pyflakes_own_with_every_builtin(text):
    tree = ast.parse(text)
    everything = checker.Checker(ast.parse(text), filename="m.py")
    assert _messages(flakes.check(tree, "m.py", text)) == _messages(everything)


def _bound_builtins(found: checker.Checker) -> set[str]:
    module = next(scope for scope in found.deadScopes if isinstance(scope, checker.ModuleScope))
    return {name for name, binding in module.items() if isinstance(binding, checker.Builtin)}


def test_only_the_builtins_the_text_names_are_bound():
    text = "def f(xs):\n    return len(xs)  # zip is not read\n"
    bound = _bound_builtins(flakes.check(ast.parse(text), "m.py", text))
    assert "len" in bound
    assert "zip" in bound  # a word of the text, if only of a comment: bound, harmlessly
    assert "sorted" not in bound and "print" not in bound


def test_a_text_with_other_letters_gets_every_builtin():
    text = "def f(xs):\n    return ｌｅｎ(xs)\n"
    bound = _bound_builtins(flakes.check(ast.parse(text), "m.py", text))
    assert {"len", "sorted", "print"} <= bound


def test_a_tree_whose_text_is_not_known_gets_every_builtin():
    text = "def f(xs):\n    return len(xs)\n"
    found = flakes.check(ast.parse(text), "m.py", None)
    assert {"len", "sorted", "print"} <= _bound_builtins(found)
    assert not found.messages
