"""Validity asks the one function a change lies in first (mutate/validity/fragment.py): most sweep
mutants are answered from it alone, and whatever it cannot vouch for goes to the whole-module
check, which alone writes the messages. benchmarks/validity_equality.py holds the two equal on
every sweep mutant of packaging and click."""

from __future__ import annotations

from killmap.mutate.validity.check import Validity, check_mutant
from killmap.mutate.validity.fragment import is_valid_quickly

MODULE = """\
import os
import re

for LIMIT in range(3):
    pass


def changed(text):
    scratch = os.sep + text
    return re.sub("a", "b", scratch)


class Holder:
    @property
    def method(self):
        first = LIMIT
        return first + COUNTED

    def other(self):
        global COUNTED
        COUNTED = 4
"""


def _mutant(old: str, new: str, module: str = MODULE) -> str:
    assert module.count(old) == 1
    return module.replace(old, new)


def _both(module: str, mutated: str) -> tuple[Validity, Validity]:
    return check_mutant(module, mutated, "m.py"), check_mutant(module, mutated, "m.py", quick=False)


def test_a_change_inside_one_function_body_is_answered_by_that_function_alone():
    mutated = _mutant('re.sub("a", "b", scratch)', 're.sub("a", "XXbXX", scratch)')
    assert is_valid_quickly(MODULE, mutated, "m.py")
    assert _both(MODULE, mutated) == (Validity(True), Validity(True))


def test_names_bound_by_a_module_loop_or_by_a_global_statement_are_known_to_a_method():
    mutated = _mutant("return first + COUNTED", "return first - COUNTED")
    assert is_valid_quickly(MODULE, mutated, "m.py")
    assert _both(MODULE, mutated) == (Validity(True), Validity(True))


def test_a_name_the_module_does_not_bind_is_left_to_the_whole_module_check():
    mutated = _mutant("return first + COUNTED", "return first + COUNTS")
    assert not is_valid_quickly(MODULE, mutated, "m.py")
    quick, whole = _both(MODULE, mutated)
    assert quick == whole and not quick.ok and "undefined name 'COUNTS'" in quick.problem


def test_the_last_use_of_an_import_dropped_is_left_to_the_whole_module_check_which_warns():
    mutated = _mutant('return re.sub("a", "b", scratch)', "return scratch")
    assert not is_valid_quickly(MODULE, mutated, "m.py")
    quick, whole = _both(MODULE, mutated)
    assert quick == whole and quick.ok and any("'re' imported but unused" in w for w in quick.warnings)


def test_a_use_dropped_while_another_function_still_reads_the_import_gives_no_warning():
    module = MODULE + "\n\ndef also(text):\n    return re.escape(text)\n"
    mutated = _mutant('return re.sub("a", "b", scratch)', "return scratch", module)
    assert is_valid_quickly(module, mutated, "m.py")  # `also` still reads it
    assert _both(module, mutated) == (Validity(True), Validity(True))


def test_a_use_dropped_while_only_a_decorator_or_all_still_names_the_import_gives_no_warning():
    for user in ("\n\n@re.compile\ndef also(text):\n    pass\n", '\n__all__ = ["re"]\n'):
        module = MODULE + user
        mutated = _mutant('return re.sub("a", "b", scratch)', "return scratch", module)
        assert is_valid_quickly(module, mutated, "m.py"), user
        assert _both(module, mutated) == (Validity(True), Validity(True))


def test_a_statement_moved_out_of_its_function_is_not_vouched_for():
    # The module still parses (a class attribute now), but the function no longer ends where
    # it did: only the whole module can say what the change is.
    mutated = _mutant("        return first + COUNTED\n", "    returned = LIMIT\n")
    assert not is_valid_quickly(MODULE, mutated, "m.py")
    quick, whole = _both(MODULE, mutated)
    assert quick == whole


def test_a_change_outside_every_function_body_is_not_vouched_for():
    mutated = _mutant("range(3)", "range(4)")
    assert not is_valid_quickly(MODULE, mutated, "m.py")


def test_a_module_with_future_imports_keeps_them_in_front_of_the_function():
    module = "from __future__ import annotations\n\n" + MODULE
    mutated = _mutant('re.sub("a", "b", scratch)', 're.sub("a", "c", scratch)', module)
    assert is_valid_quickly(module, mutated, "m.py")


def test_a_module_with_a_star_import_is_not_vouched_for():
    module = "from os.path import *\n" + MODULE
    mutated = _mutant('re.sub("a", "b", scratch)', 're.sub("a", "c", scratch)', module)
    assert not is_valid_quickly(module, mutated, "m.py")
    assert _both(module, mutated) == (Validity(True), Validity(True))


def test_a_new_unused_local_is_left_to_the_whole_module_check_which_warns_or_breaks_under_werror():
    mutated = _mutant("        first = LIMIT\n", "        first = LIMIT\n        spare = 1\n")
    assert not is_valid_quickly(MODULE, mutated, "m.py")
    assert check_mutant(MODULE, mutated, "m.py").warnings
    assert not check_mutant(MODULE, mutated, "m.py", werror=True).ok


def test_an_import_stands_in_as_itself_so_typing_cast_reads_its_first_argument_as_an_annotation():
    # packaging's licenses/__init__.py: mutmut removed cast's first argument, and pyflakes read
    # the string now first as a forward annotation; a plain stand-in for `cast` hid that.
    module = "from typing import cast\n\n\ndef tidy(text):\n    return cast(str, text.replace('( ', '('))\n"
    mutated = module.replace("cast(str, ", "cast(")
    assert not is_valid_quickly(module, mutated, "m.py")
    quick, whole = _both(module, mutated)
    assert quick == whole and not quick.ok and "forward annotation" in quick.problem


def test_a_return_added_after_a_body_that_is_only_a_docstring_is_answered_alone():
    module = 'def abstract(other):\n    """Subclasses say."""\n\n\nVALUE = 1\n'
    mutated = module.replace('"""Subclasses say."""\n', '"""Subclasses say."""\n    return True\n')
    assert is_valid_quickly(module, mutated, "m.py")
    assert _both(module, mutated) == (Validity(True), Validity(True))
    # Inserted below the function at module level, it is no longer the function's.
    outside = module.replace('"""Subclasses say."""\n', '"""Subclasses say."""\nreturned = True\n')
    assert not is_valid_quickly(module, outside, "m.py")


def test_a_mutant_that_parses_but_does_not_compile_is_not_vouched_for():
    # `nonlocal` with nothing to bind parses and pyflakes is silent: only the compile sees it.
    mutated = _mutant("        first = LIMIT\n", "        nonlocal first\n        first = LIMIT\n")
    assert not is_valid_quickly(MODULE, mutated, "m.py")
    quick, whole = _both(MODULE, mutated)
    assert quick == whole and not quick.ok and quick.cause == "syntax"
