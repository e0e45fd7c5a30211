"""Validity walks the changed definition and only the names the rest of the module reads
(mutate/validity/skeleton.py): the same verdict as pyflakes over the whole module, at a fraction of its
cost on a long one."""

from __future__ import annotations

import ast

from killmap.mutate.validity import skeleton
from killmap.mutate.validity.check import check_mutant

MODULE = """\
import os
import re

COUNT = 3


def elsewhere(path):
    scratch = path + "x"
    return os.path.join(re.escape(scratch), "y")


def changed(text):
    return re.sub("a", "b", text)


class Holder:
    def method(self):
        return COUNT

    def other(self):
        global COUNT
        COUNT = 4
"""


def _mutant(old: str, new: str) -> str:
    assert MODULE.count(old) == 1
    return MODULE.replace(old, new)


def test_the_functions_the_change_does_not_meet_are_reduced_and_it_is_kept_whole():
    mutated = _mutant('re.sub("a", "b", text)', 're.sub("a", "c", text)')
    _, span = skeleton.changed_span(MODULE, mutated)
    tree = ast.parse(mutated)
    # `other` binds a module name (global): kept whole, as is `changed`, which holds the change.
    assert skeleton.reduce_outside(tree, span) == ["0:elsewhere", "2:method"]
    reduced = ast.unparse(tree)
    assert "(os, re)" in reduced and "scratch" not in reduced  # its local is not read outside it
    assert 're.sub("a", "c", text)' in reduced.replace("'", '"')


def test_an_import_another_function_still_uses_is_no_dead_code_when_the_change_drops_its_use():
    mutated = _mutant('return re.sub("a", "b", text)', "return text")
    assert check_mutant(MODULE, mutated, "m.py").warnings == ()


def test_a_local_of_another_function_is_still_an_undefined_name_here():
    mutated = _mutant('return re.sub("a", "b", text)', "return scratch")
    validity = check_mutant(MODULE, mutated, "m.py")
    assert not validity.ok and "undefined name 'scratch'" in validity.problem
    assert "line 13 `return scratch`" in validity.problem  # the mutant's own line, not the reduced tree's


def test_a_name_only_a_global_statement_binds_is_still_defined():
    mutated = _mutant("        return COUNT\n", "        return COUNT + 1\n")
    assert check_mutant(MODULE, mutated, "m.py").ok


def test_a_change_at_module_level_is_judged_with_every_function_reduced():
    mutated = _mutant("COUNT = 3", "COUNT = undefined_thing")
    validity = check_mutant(MODULE, mutated, "m.py")
    assert not validity.ok and "undefined name 'undefined_thing'" in validity.problem


def test_check_mutant_runs_pyflakes_on_the_reduced_module(monkeypatch):
    reduced: list[list[str]] = []
    real = skeleton.reduce_outside

    def recording(tree, span, stubs=None):
        reduced.append(real(tree, span, stubs))
        return reduced[-1]

    monkeypatch.setattr(skeleton, "reduce_outside", recording)
    mutated = _mutant('re.sub("a", "b", text)', 're.sub("a", "d", text)')
    # quick=False: the changed function alone would answer first (fragment.py)
    assert check_mutant(MODULE, mutated, "reduced.py", quick=False).ok
    assert reduced and all(names == ["0:elsewhere", "2:method"] for names in reduced)


TWIN_METHODS = """\
class One:
    def process(self, value):
        return value


class Two:
    def process(self, value):
        unused = value
        return value
"""


def test_two_methods_of_one_name_are_told_apart_when_the_originals_findings_are_reused():
    # A mutant of One.process, then one of Two.process: each reduces the other `process`, and
    # the second must not be judged against the first's original findings.
    first = TWIN_METHODS.replace("        return value\n\n\nclass Two", "        return None\n\n\nclass Two")
    assert check_mutant(TWIN_METHODS, first, "twins.py").warnings == ()
    second = TWIN_METHODS.replace(
        "        unused = value\n        return value", "        unused = value\n        return 0"
    )
    assert check_mutant(TWIN_METHODS, second, "twins.py").warnings == ()


def test_a_function_whose_last_statement_is_deleted_is_kept_whole():
    # click's OptionParser._match_long_opt, its last call deleted: the function now ends above
    # the blank line where the change is, and its newly unused local is the mutant's warning.
    original = "def f(x):\n    value = x\n\n    print(value)\n\n\ndef g():\n    return 1\n"
    mutated = "def f(x):\n    value = x\n\n\ndef g():\n    return 1\n"
    assert check_mutant(original, mutated, "last.py").warnings == (
        "line 2: local variable 'value' is assigned to but never used",
    )


def test_the_originals_reduction_read_from_its_stubs_is_the_one_its_tree_gives():
    # Every mutant's reduction is checked against the original's, read from the stubs alone:
    # they must agree with a walk of the tree at any span, or a mismatch would go unseen.
    stubs = skeleton.stubs_of(ast.parse(MODULE))
    for line in range(1, MODULE.count("\n") + 2):
        span = (line, line)
        assert skeleton.reduced_by_stubs(stubs, span) == skeleton.reduce_outside(ast.parse(MODULE), span), line
