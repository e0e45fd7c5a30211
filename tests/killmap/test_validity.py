"""Static validity: a mutant must parse and add no pyflakes finding that means it cannot
run; dead code it leaves behind is a warning, broken only under werror."""

from __future__ import annotations

import sys
import textwrap

import pytest

from killmap.mutate.validity.check import check_mutant

FILE = "src/pkg/mod.py"


def check(original: str, mutated: str, *, werror: bool = False):
    return check_mutant(textwrap.dedent(original), textwrap.dedent(mutated), FILE, werror=werror)


def test_a_mutant_that_does_not_parse_is_invalid_with_cause_syntax():
    validity = check(
        """\
        def f(x):
            return x + 1
        """,
        """\
        def f(x):
            return x +
        """,
    )
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
    validity = check(
        """\
        def total(items):
            return sum(items)
        """,
        """\
        def total(items):
            return sum(itemz)
        """,
    )
    assert not validity.ok
    assert validity.cause == "pyflakes"
    assert "undefined name 'itemz'" in validity.problem
    assert "line 2" in validity.problem


def test_a_name_undefined_twice_on_one_line_is_said_once():
    # bracex: `return c + escaped if self.keep_escapes else escaped` was said twice.
    validity = check(
        """\
        def pick(c, keep):
            escaped = c * 2
            return c + escaped if keep else escaped
        """,
        """\
        def pick(c, keep):
            return c + escaped if keep else escaped
        """,
    )
    assert not validity.ok
    assert validity.problem.count("undefined name 'escaped'") == 1, validity.problem


IMPORT_USED = """\
    import json


    def dump(data):
        return json.dumps(data)
    """
IMPORT_LEFT_UNUSED = """\
    import json


    def dump(data):
        return str(data)
    """


def test_a_mutant_that_leaves_an_import_unused_runs_and_carries_a_warning():
    validity = check(IMPORT_USED, IMPORT_LEFT_UNUSED)
    assert validity.ok, validity.problem
    assert validity.cause == ""
    assert len(validity.warnings) == 1 and "'json' imported but unused" in validity.warnings[0]


def test_under_werror_a_mutant_that_leaves_an_import_unused_is_broken():
    validity = check_mutant(textwrap.dedent(IMPORT_USED), textwrap.dedent(IMPORT_LEFT_UNUSED), FILE, werror=True)
    assert not validity.ok
    assert validity.cause == "pyflakes"
    assert "werror" in validity.problem and "'json' imported but unused" in validity.problem


def test_a_mutant_that_makes_a_local_variable_unused_runs_and_carries_a_warning():
    validity = check(
        """\
        def price(order):
            rate = lookup(order)
            return order.total * rate
        """,
        """\
        def price(order):
            rate = lookup(order)
            return order.total
        """,
    )
    assert validity.ok, validity.problem
    assert "local variable 'rate' is assigned to but never used" in validity.warnings[0]


def test_an_undefined_name_beside_dead_code_is_broken_and_keeps_the_warning():
    validity = check(IMPORT_USED, IMPORT_LEFT_UNUSED.replace("str(data)", "str(dta)"))
    assert not validity.ok
    assert "undefined name 'dta'" in validity.problem
    assert "'json' imported but unused" in validity.warnings[0]


def test_a_format_string_that_cannot_format_runs_up_to_it_and_carries_a_warning():
    # It raises where it runs, and only there, which the tests judge like any other behaviour:
    # jmespath's lexer catches the ValueError of mutmut's "%S" in its own `except` (three tests
    # red), boltons' refusal test expects any ValueError (a survivor). Broken hid both.
    validity = check('def f(a):\n    return "{a}".format(a=a)\n', 'def f(a):\n    return "{b}".format(a=a)\n')
    assert validity.ok, validity.problem
    assert any("'...'.format(...) is missing argument(s) for placeholder(s): b" in w for w in validity.warnings)
    upper = check('def f(a):\n    return "x %s" % a\n', 'def f(a):\n    return "X %S" % a\n')
    assert upper.ok and "unsupported format character 'S'" in upper.warnings[0]


def test_under_werror_a_format_string_that_cannot_format_is_broken():
    validity = check('def f(a):\n    return "x %s" % a\n', 'def f(a):\n    return "X %S" % a\n', werror=True)
    assert not validity.ok and validity.cause == "pyflakes"


def test_every_dead_code_kind_names_a_real_pyflakes_message_class():
    # A typo in the warning list would silently turn a warning into broken.
    import pyflakes.messages

    from killmap.mutate.validity.check import DEAD_CODE_FINDINGS

    known = {name for name in dir(pyflakes.messages)}
    assert {"UnusedImport", "UnusedVariable", "RedefinedWhileUnused"} <= DEAD_CODE_FINDINGS
    missing = {kind for kind in DEAD_CODE_FINDINGS if kind not in known}
    # Kinds added by newer pyflakes releases may be absent from older ones; the core are not.
    assert not missing & {"UnusedImport", "UnusedVariable", "RedefinedWhileUnused", "UnusedAnnotation"}


def test_a_mutant_whose_findings_equal_the_originals_on_shifted_lines_is_valid():
    # The unused `os` was there before: only findings the mutant adds count.
    validity = check(
        """\
        import os


        def check(x):
            validate(x)
            return x


        def validate(x):
            assert x
        """,
        """\
        import os


        def check(x):
            return x


        def validate(x):
            assert x
        """,
    )
    assert validity.ok
    assert validity.problem == ""
    assert validity.cause == ""


def test_a_pre_existing_redefinition_on_shifted_lines_is_not_a_new_finding():
    # pyflakes puts the first definition's line number in the message's arguments
    # ("redefinition of unused 'os' from line 5"): a mutant that deletes a line above it
    # must not read as adding a finding.
    validity = check(
        """\
        def check(x):
            validate(x)
            return x

        import os
        import os


        def validate(x):
            return os.sep + x
        """,
        """\
        def check(x):
            return x

        import os
        import os


        def validate(x):
            return os.sep + x
        """,
    )
    assert validity.ok, validity.problem


def test_a_second_copy_of_a_pre_existing_finding_is_a_new_finding():
    validity = check(
        """\
        import os
        """,
        """\
        import os
        import sys
        """,
    )
    assert validity.ok
    assert len(validity.warnings) == 1
    assert "'sys' imported but unused" in validity.warnings[0]


def test_an_original_that_does_not_parse_does_not_hide_the_mutants_findings():
    validity = check("def f(:\n", "def f():\n    return missing\n")
    assert not validity.ok
    assert validity.cause == "pyflakes"


def test_one_more_use_of_a_name_the_original_gets_from_a_star_import_is_not_broken():
    # pyparsing's core.py uses `line` from `from .exceptions import *`; a mutant that merged
    # two messages used it once more and was read as broken.
    original = """\
        from .exceptions import *


        def where(s, loc):
            return line(loc, s)


        def trace(s, loc):
            return "entering " + str(loc)
        """
    validity = check(original, original.replace('"entering " + str(loc)', "line(loc, s)"))
    assert validity.ok, validity.problem


def test_a_name_the_original_never_used_is_still_broken_even_beside_a_star_import():
    original = "from .exceptions import *\n\n\ndef where(s, loc):\n    return line(loc, s)\n"
    validity = check(original, original.replace("line(loc, s)", "column(loc, s)"))
    assert not validity.ok and "'column' may be undefined" in validity.problem


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12 lets an f-string's braces hold its own quotes")
def test_a_value_whose_quotes_clash_with_the_f_string_around_it_says_which_quotes_to_use():
    original = 'def f(x):\n    return f"{x}{sig(x)}"\n'
    mutated = 'def f(x):\n    return f"{x}{"()"}"\n'
    validity = check_mutant(original, mutated, "mod.py")
    assert not validity.ok and validity.cause == "syntax"
    assert "write the value with the other quotes" in validity.problem


FORWARD = """\
    import typing


    class Token:
        pass


    def canonical(value):
        return typing.cast("Token", value)


    def same(value: "Token") -> "Token":
        return value
    """


@pytest.mark.parametrize("old, new", [('cast("Token"', 'cast("XXTokenXX"'), ('value: "Token"', 'value: "Tokn"')])
def test_a_name_only_a_string_holds_runs_as_written_and_carries_a_warning(old, new):
    # cssselect: typing.cast("XXTokenXX", v) read as broken, though nothing looks the name up
    # and plain pytest passed it; pyflakes reads the string as a forward reference.
    validity = check(FORWARD, FORWARD.replace(old, new))
    assert validity.ok, validity.problem
    assert any("undefined name" in w for w in validity.warnings), validity.warnings


def test_a_name_a_statement_reads_is_still_broken_beside_a_string_that_holds_it():
    validity = check(FORWARD, FORWARD.replace('return typing.cast("Token", value)', "return Tokn"))
    assert not validity.ok and "undefined name 'Tokn'" in validity.problem


def test_a_name_the_mutation_unbound_is_said_to_have_lost_its_binding_and_how_to_keep_it():
    # decorator: `f = typemap[types]` replaced by a raise left `f` read only in the try's
    # `else`; the mutant is broken by pyflakes' rule, and says why and what to do.
    original = (
        "def dispatch(typemap, types):\n    try:\n        f = typemap[types]\n    except KeyError:\n"
        "        pass\n    else:\n        return f()\n"
    )
    unbound = check_mutant(original, original.replace("f = typemap[types]", "raise KeyError(types)"), "m.py")
    assert not unbound.ok and "the mutation removed what bound 'f'" in unbound.problem, unbound.problem
    misspelt = check_mutant(original, original.replace("return f()", "return g()"), "m.py")
    assert not misspelt.ok and "removed what bound" not in misspelt.problem
