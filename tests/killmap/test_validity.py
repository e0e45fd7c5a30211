"""Static validity: a mutant must parse and add no pyflakes finding to its original."""

from __future__ import annotations

import textwrap

from killmap.validity import check_mutant

FILE = "src/pkg/mod.py"


def check(original: str, mutated: str):
    return check_mutant(textwrap.dedent(original), textwrap.dedent(mutated), FILE)


def test_a_mutant_that_does_not_parse_is_invalid_with_cause_syntax():
    validity = check("""\
        def f(x):
            return x + 1
        """, """\
        def f(x):
            return x +
        """)
    assert not validity.ok
    assert validity.cause == "syntax"
    assert "does not parse" in validity.problem
    assert "line 2" in validity.problem


def test_a_mutant_that_compiles_to_a_syntax_error_only_at_compile_time_is_invalid():
    # `return` outside a function parses as a tree but does not compile.
    validity = check("def f():\n    return 1\n", "return 1\n")
    assert not validity.ok
    assert validity.cause == "syntax"


def test_a_mutant_introducing_an_undefined_name_is_invalid_with_cause_pyflakes():
    validity = check("""\
        def total(items):
            return sum(items)
        """, """\
        def total(items):
            return sum(itemz)
        """)
    assert not validity.ok
    assert validity.cause == "pyflakes"
    assert "undefined name 'itemz'" in validity.problem
    assert "line 2" in validity.problem


def test_a_mutant_that_makes_an_import_unused_is_invalid():
    validity = check("""\
        import json


        def dump(data):
            return json.dumps(data)
        """, """\
        import json


        def dump(data):
            return str(data)
        """)
    assert not validity.ok
    assert validity.cause == "pyflakes"
    assert "'json' imported but unused" in validity.problem


def test_a_mutant_that_makes_a_local_variable_unused_is_invalid():
    validity = check("""\
        def price(order):
            rate = lookup(order)
            return order.total * rate
        """, """\
        def price(order):
            rate = lookup(order)
            return order.total
        """)
    assert not validity.ok
    assert validity.cause == "pyflakes"
    assert "local variable 'rate' is assigned to but never used" in validity.problem


def test_a_mutant_whose_findings_equal_the_originals_on_shifted_lines_is_valid():
    # The unused `os` was there before: only findings the mutant adds count.
    validity = check("""\
        import os


        def check(x):
            validate(x)
            return x


        def validate(x):
            assert x
        """, """\
        import os


        def check(x):
            return x


        def validate(x):
            assert x
        """)
    assert validity.ok
    assert validity.problem == ""
    assert validity.cause == ""


def test_a_pre_existing_redefinition_on_shifted_lines_is_not_a_new_finding():
    # pyflakes puts the first definition's line number in the message's arguments
    # ("redefinition of unused 'os' from line 5"): a mutant that deletes a line above it
    # must not read as adding a finding.
    validity = check("""\
        def check(x):
            validate(x)
            return x

        import os
        import os


        def validate(x):
            return os.sep + x
        """, """\
        def check(x):
            return x

        import os
        import os


        def validate(x):
            return os.sep + x
        """)
    assert validity.ok, validity.problem


def test_a_second_copy_of_a_pre_existing_finding_is_a_new_finding():
    validity = check("""\
        import os
        """, """\
        import os
        import sys
        """)
    assert not validity.ok
    assert "'sys' imported but unused" in validity.problem
    assert "'os'" not in validity.problem


def test_an_original_that_does_not_parse_does_not_hide_the_mutants_findings():
    validity = check("def f(:\n", "def f():\n    return missing\n")
    assert not validity.ok
    assert validity.cause == "pyflakes"
