"""Every operator, through the public path: catalog TOML -> Mutation -> build_mutant.

Each test pins the exact mutant text (or the exact changed lines), because an operator
that quietly changes a different site, or one more site, is the failure a named
mutation exists to rule out.
"""

from __future__ import annotations

import ast
import difflib
import textwrap

import pytest

from killmap.errors import GateError
from killmap.mutate.mutants import build_mutant

MOD = "src/pkg/mod.py"


def dedent(text: str) -> str:
    return textwrap.dedent(text)


def build(project, target: str, op: str, **fields):
    return project.mutant(project.entry(target, op, **fields))


def assert_applied(mutant, expected: str) -> None:
    assert mutant.reason == ""
    assert mutant.applied, mutant.reason
    assert mutant.mutated == dedent(expected)
    ast.parse(mutant.mutated)  # every applied mutant must still be Python


def assert_not_applied(mutant, *fragments: str) -> None:
    assert not mutant.applied
    assert mutant.mutated is None
    assert mutant.diff == ""
    for fragment in fragments:
        assert fragment in mutant.reason


# --- replace -------------------------------------------------------------------------------

SIBLINGS = """\
def positive(x):
    return x > 0


def also_positive(y):
    return y > 0
"""


def test_replace_changes_the_text_inside_the_target_function_only(km_project):
    km_project.module(SIBLINGS)
    mutant = build(km_project, f"{MOD}::positive", "replace", old=">", new=">=")
    assert_applied(
        mutant,
        """\
        def positive(x):
            return x >= 0


        def also_positive(y):
            return y > 0
        """,
    )
    assert mutant.sites == 1
    assert mutant.changed_lines == (2,)
    assert mutant.mutant_changed_lines == (2,)


def test_replace_with_no_match_is_not_applied_and_names_the_count(km_project):
    km_project.module(SIBLINGS)
    mutant = build(km_project, f"{MOD}::positive", "replace", old="<", new="<=")
    assert_not_applied(mutant, "matched 0 sites", "expected 1")
    assert mutant.sites == 0


def test_replace_matching_two_sites_with_count_one_is_not_applied(km_project):
    km_project.module(SIBLINGS)
    mutant = build(km_project, MOD, "replace", old="> 0", new="> 1")
    assert_not_applied(mutant, "matched 2 sites", "expected 1 (line 2 `return x > 0`, line 6 `return y > 0`)")
    assert mutant.sites == 2


def test_replace_matching_two_sites_with_count_two_is_applied(km_project):
    km_project.module(SIBLINGS)
    mutant = build(km_project, MOD, "replace", old="> 0", new="> 1", count=2)
    assert_applied(mutant, SIBLINGS.replace("> 0", "> 1"))
    assert mutant.sites == 2
    assert mutant.changed_lines == (2, 6)


def test_replace_targets_a_method_by_class_dot_name_and_leaves_its_sibling_method(km_project):
    km_project.module("""\
        class Box:
            def open(self):
                return self.state == "open"

            def close(self):
                return self.state == "open"
        """)
    mutant = build(km_project, f"{MOD}::Box.close", "replace", old='"open"', new='"closed"')
    assert_applied(
        mutant,
        """\
        class Box:
            def open(self):
                return self.state == "open"

            def close(self):
                return self.state == "closed"
        """,
    )


def test_replace_finds_its_target_after_a_form_feed_in_the_file(km_project):
    # A form feed is not a line break for Python or libcst; counting it as one shifted
    # the target region by a line, so the operator looked in the wrong place.
    source = "def first(x):\n    return x > 0\n\x0c\ndef second(y):\n    return y > 0\n"
    km_project.write(MOD, source, dedent=False)
    mutant = build(km_project, f"{MOD}::second", "replace", old=">", new=">=")
    assert mutant.applied, mutant.reason
    assert mutant.mutated == source.replace("y > 0", "y >= 0")
    assert mutant.changed_lines == (5,)


def test_a_missing_target_symbol_is_a_gate_error_naming_the_target_field(km_project):
    km_project.module(SIBLINGS)
    with pytest.raises(GateError) as caught:
        build(km_project, f"{MOD}::negative", "replace", old=">", new="<")
    assert caught.value.field == "target"
    assert caught.value.mutation == "under-test"
    assert "'negative'" in str(caught.value)
    assert "field 'target'" in str(caught.value)


def test_a_missing_method_of_an_existing_class_is_a_gate_error_naming_the_target_field(km_project):
    km_project.module("class Box:\n    def open(self):\n        return 1\n")
    with pytest.raises(GateError) as caught:
        build(km_project, f"{MOD}::Box.shut", "replace", old="1", new="2")
    assert caught.value.field == "target"
    assert "Box.shut" in str(caught.value)


# --- delete-call ---------------------------------------------------------------------------


def test_delete_call_removes_the_statement_holding_the_call(km_project):
    km_project.module("""\
        def save(record):
            validate(record)
            store(record)


        def load(record):
            validate(record)
            return record
        """)
    mutant = build(km_project, f"{MOD}::save", "delete-call", call="validate")
    assert_applied(
        mutant,
        """\
        def save(record):
            store(record)


        def load(record):
            validate(record)
            return record
        """,
    )
    assert mutant.sites == 1
    assert mutant.changed_lines == (2,)


def test_delete_call_does_not_count_the_same_call_in_a_sibling_function(km_project):
    km_project.module("""\
        def save(record):
            validate(record)
            validate(record)


        def load(record):
            validate(record)
        """)
    mutant = build(km_project, f"{MOD}::load", "delete-call", call="validate")
    assert mutant.sites == 1
    assert_applied(
        mutant,
        """\
        def save(record):
            validate(record)
            validate(record)


        def load(record):
            pass
        """,
    )


def test_delete_call_with_no_matching_call_is_not_applied_and_names_the_count(km_project):
    km_project.module("def save(record):\n    store(record)\n")
    mutant = build(km_project, f"{MOD}::save", "delete-call", call="validate")
    assert_not_applied(mutant, "matched 0 sites")


def test_a_call_name_one_letter_off_is_not_applied_with_the_nearest_call_there(km_project):
    # marshmallow: call = "ValidatonError" said only "matched 0 sites".
    km_project.module("def save(record):\n    if not record:\n        raise errors.ValidationError('empty')\n")
    for op, more in (("delete-call", {}), ("stub-call", {"value": "None"})):
        mutant = build(km_project, f"{MOD}::save", op, call="ValidatonError", **more)
        assert_not_applied(mutant, "matched 0 sites")
        assert mutant.reason.endswith("did you mean call = 'ValidationError'?"), mutant.reason


def test_delete_call_of_two_calls_with_count_one_is_not_applied(km_project):
    km_project.module("def save(record):\n    validate(record)\n    store(record)\n    validate(record)\n")
    mutant = build(km_project, f"{MOD}::save", "delete-call", call="validate")
    assert_not_applied(mutant, "matched 2 sites", "expected 1 (line 2 `validate(record)`, line 4 `validate(record)`)")


def test_delete_call_of_two_calls_with_count_two_removes_both(km_project):
    km_project.module("def save(record):\n    validate(record)\n    store(record)\n    validate(record)\n")
    mutant = build(km_project, f"{MOD}::save", "delete-call", call="validate", count=2)
    assert_applied(mutant, "def save(record):\n    store(record)\n")
    assert mutant.sites == 2


def test_delete_call_matches_a_method_call_by_its_last_name(km_project):
    km_project.module("def save(self, record):\n    self.audit.log(record)\n    return record\n")
    mutant = build(km_project, f"{MOD}::save", "delete-call", call="log")
    assert_applied(mutant, "def save(self, record):\n    return record\n")


def test_delete_call_inside_if_test_removes_the_whole_if(km_project):
    km_project.module("""\
        def check(x):
            if validate(x):
                log(x)
                return 1
            return 0
        """)
    mutant = build(km_project, f"{MOD}::check", "delete-call", call="validate")
    assert_applied(
        mutant,
        """\
        def check(x):
            return 0
        """,
    )
    assert mutant.changed_lines == (2, 3, 4)


def test_delete_call_inside_elif_test_keeps_the_later_branches(km_project):
    km_project.module("""\
        def grade(x):
            if x > 90:
                return "a"
            elif passes(x):
                return "b"
            elif x > 10:
                return "c"
            else:
                return "f"
        """)
    mutant = build(km_project, f"{MOD}::grade", "delete-call", call="passes")
    assert_applied(
        mutant,
        """\
        def grade(x):
            if x > 90:
                return "a"
            elif x > 10:
                return "c"
            else:
                return "f"
        """,
    )


def test_delete_call_inside_the_last_elif_without_else_drops_just_that_branch(km_project):
    km_project.module("""\
        def grade(x):
            if x > 90:
                return "a"
            elif passes(x):
                return "b"
            return "f"
        """)
    mutant = build(km_project, f"{MOD}::grade", "delete-call", call="passes")
    assert_applied(
        mutant,
        """\
        def grade(x):
            if x > 90:
                return "a"
            return "f"
        """,
    )


def test_delete_call_inside_elif_before_else_keeps_the_else(km_project):
    km_project.module("""\
        def grade(x):
            if x > 90:
                return "a"
            elif passes(x):
                return "b"
            else:
                return "f"
        """)
    mutant = build(km_project, f"{MOD}::grade", "delete-call", call="passes")
    assert_applied(
        mutant,
        """\
        def grade(x):
            if x > 90:
                return "a"
            else:
                return "f"
        """,
    )


def test_delete_call_that_empties_a_block_fills_it_with_pass(km_project):
    km_project.module("""\
        def notify(users):
            for user in users:
                send(user)
            return len(users)
        """)
    mutant = build(km_project, f"{MOD}::notify", "delete-call", call="send")
    assert_applied(
        mutant,
        """\
        def notify(users):
            for user in users:
                pass
            return len(users)
        """,
    )
    compile(mutant.mutated, MOD, "exec")


def test_delete_call_that_empties_a_function_body_fills_it_with_pass(km_project):
    km_project.module("def notify(user):\n    send(user)\n")
    mutant = build(km_project, f"{MOD}::notify", "delete-call", call="send")
    assert_applied(mutant, "def notify(user):\n    pass\n")


def test_delete_call_in_a_decorator_removes_the_decorator_not_the_function(km_project):
    km_project.module("""\
        @app.route("/home")
        def home():
            return "hi"
        """)
    mutant = build(km_project, f"{MOD}::home", "delete-call", call="app.route")
    assert_applied(
        mutant,
        """\
        def home():
            return "hi"
        """,
    )


def test_delete_call_in_a_default_argument_is_not_applied(km_project):
    # Deleting the whole definition is not "the call deleted": refuse instead.
    km_project.module("def home(when=now()):\n    return when\n")
    mutant = build(km_project, f"{MOD}::home", "delete-call", call="now")
    assert_not_applied(mutant, "not inside a statement that can be deleted")


# --- stub-call -----------------------------------------------------------------------------


def test_stub_call_replaces_the_call_with_the_value(km_project):
    km_project.module("""\
        def allowed(user):
            return check_permission(user)


        def audit(user):
            return check_permission(user)
        """)
    mutant = build(km_project, f"{MOD}::allowed", "stub-call", call="check_permission", value="True")
    assert_applied(
        mutant,
        """\
        def allowed(user):
            return True


        def audit(user):
            return check_permission(user)
        """,
    )
    assert mutant.sites == 1


def test_stub_call_parenthesizes_a_value_that_binds_looser_than_the_call(km_project):
    km_project.module("def total(x):\n    return price(x) * 2\n")
    mutant = build(km_project, f"{MOD}::total", "stub-call", call="price", value="x + 1")
    assert_applied(mutant, "def total(x):\n    return (x + 1) * 2\n")


def test_stub_call_with_two_calls_and_count_one_is_not_applied(km_project):
    km_project.module("def total(x):\n    return price(x) + price(x)\n")
    mutant = build(km_project, f"{MOD}::total", "stub-call", call="price", value="0")
    assert_not_applied(mutant, "matched 2 sites", "(line 2, columns 12 and 23 `return price(x) + price(x)`)")
    applied = build(km_project, f"{MOD}::total", "stub-call", call="price", value="0", count=2)
    assert_applied(applied, "def total(x):\n    return 0 + 0\n")


def test_stub_call_giving_back_the_same_text_is_not_applied(km_project):
    km_project.module("def total(x):\n    return price(x)\n")
    mutant = build(km_project, f"{MOD}::total", "stub-call", call="price", value="price(x)")
    assert_not_applied(mutant, "byte-identical")
    assert mutant.sites == 1


# --- constant-return -----------------------------------------------------------------------


def test_constant_return_replaces_the_body_and_keeps_the_docstring(km_project):
    km_project.module('''\
        def discount(order):
            """The discount, in cents."""
            rate = lookup(order)
            return order.total * rate


        def other(order):
            return order.total
        ''')
    mutant = build(km_project, f"{MOD}::discount", "constant-return", value="0")
    assert_applied(
        mutant,
        '''\
        def discount(order):
            """The discount, in cents."""
            return 0


        def other(order):
            return order.total
        ''',
    )
    assert mutant.sites == 1


def test_constant_return_keeps_the_comment_after_the_defs_colon_so_the_def_line_is_unchanged(km_project):
    # marshmallow's `def merge_errors(errors1, errors2):  # noqa: PLR0911`: the comment dropped
    # changed the def line, which runs at import, and every test read as reaching the mutant.
    km_project.module("def merge(a, b):  # noqa: PLR0911\n    if a:\n        return a\n    return b\n")
    mutant = build(km_project, f"{MOD}::merge", "constant-return", value="None")
    assert_applied(mutant, "def merge(a, b):  # noqa: PLR0911\n    return None\n")
    assert mutant.changed_lines and 1 not in mutant.changed_lines


def test_constant_return_on_a_method(km_project):
    km_project.module("class Cart:\n    def size(self):\n        return len(self.items)\n")
    mutant = build(km_project, f"{MOD}::Cart.size", "constant-return", value="0")
    assert_applied(mutant, "class Cart:\n    def size(self):\n        return 0\n")


def test_constant_return_on_a_function_already_returning_that_constant_is_not_applied(km_project):
    km_project.module("def size():\n    return 0\n")
    mutant = build(km_project, f"{MOD}::size", "constant-return", value="0")
    assert_not_applied(mutant, "byte-identical")


def test_constant_return_needs_a_function_target(km_project):
    km_project.module("LIMIT = 3\n")
    with pytest.raises(GateError) as caught:
        build(km_project, f"{MOD}::LIMIT", "constant-return", value="0")
    assert caught.value.field == "target"


# --- merge-strings -------------------------------------------------------------------------

TEMPLATES = """\
TEMPLATES = {
    "welcome": "Hello {name}",
    "farewell": "Goodbye {name}",
}


def farewell(name):
    return "Goodbye {name}".format(name=name)
"""


def test_merge_strings_on_a_module_variable_replaces_the_dropped_literal_with_the_kept_one(km_project):
    km_project.module(TEMPLATES)
    mutant = build(km_project, f"{MOD}::TEMPLATES", "merge-strings", drop="Goodbye", keep="Hello")
    assert_applied(
        mutant,
        """\
        TEMPLATES = {
            "welcome": "Hello {name}",
            "farewell": "Hello {name}",
        }


        def farewell(name):
            return "Goodbye {name}".format(name=name)
        """,
    )
    assert mutant.sites == 1
    assert mutant.changed_lines == (3,)


def test_merge_strings_keep_matching_two_literals_is_not_applied(km_project):
    km_project.module(TEMPLATES)
    mutant = build(km_project, f"{MOD}::TEMPLATES", "merge-strings", drop="Goodbye", keep="{name}")
    assert_not_applied(mutant, "matched 2 string literals")


def test_merge_strings_with_nothing_to_drop_is_not_applied_and_names_the_count(km_project):
    km_project.module(TEMPLATES)
    mutant = build(km_project, f"{MOD}::TEMPLATES", "merge-strings", drop="Farewell", keep="Hello")
    assert_not_applied(mutant, "matched 0 sites")


def test_merge_strings_merges_two_f_string_messages(km_project):
    # attrs' validators: both refusals are f-strings, which the operator used to skip.
    km_project.module("""\
        def check(value, bound):
            if value > bound:
                raise ValueError(f"'value' must be <= {bound}: {value}")
            if value < -bound:
                raise ValueError(f"'value' must be >= {-bound}: {value}")
        """)
    mutant = build(km_project, f"{MOD}::check", "merge-strings", drop="must be <= ", keep="must be >= ")
    assert_applied(
        mutant,
        """\
        def check(value, bound):
            if value > bound:
                raise ValueError(f"'value' must be >= {-bound}: {value}")
            if value < -bound:
                raise ValueError(f"'value' must be >= {-bound}: {value}")
        """,
    )
    assert mutant.sites == 1


def test_merge_strings_keeps_the_literal_that_is_exactly_keep_when_it_sits_inside_another(km_project):
    # pyparsing: "quote_char cannot be the empty string" is inside "end_quote_char cannot be
    # the empty string"; no text could name the shorter one alone.
    km_project.module("""\
        def check(quote_char, end_quote_char):
            if not quote_char:
                raise ValueError("quote_char cannot be the empty string")
            if not end_quote_char:
                raise ValueError("end_quote_char cannot be the empty string")
        """)
    mutant = build(
        km_project,
        f"{MOD}::check",
        "merge-strings",
        drop="end_quote_char cannot",
        keep="quote_char cannot be the empty string",
    )
    assert_applied(
        mutant,
        """\
        def check(quote_char, end_quote_char):
            if not quote_char:
                raise ValueError("quote_char cannot be the empty string")
            if not end_quote_char:
                raise ValueError("quote_char cannot be the empty string")
        """,
    )


# --- drop-operand --------------------------------------------------------------------------

CHAIN = """\
def ready(a, b, c):
    return a and b and c


def other(a, b, c):
    return a and b and c
"""


@pytest.mark.parametrize("operand, kept", [("a", "b and c"), ("b", "a and c"), ("c", "a and b")])
def test_drop_operand_removes_one_operand_of_an_and_chain(km_project, operand, kept):
    km_project.module(CHAIN)
    mutant = build(km_project, f"{MOD}::ready", "drop-operand", operand=operand)
    assert_applied(mutant, CHAIN.replace("return a and b and c", f"return {kept}", 1))
    assert mutant.sites == 1


def test_drop_operand_matches_the_operand_by_its_syntax_not_its_spelling(km_project):
    km_project.module("def ok(user):\n    return user.active and (user.age>=18)\n")
    mutant = build(km_project, f"{MOD}::ok", "drop-operand", operand="user.age >= 18")
    assert_applied(mutant, "def ok(user):\n    return user.active\n")


def test_drop_operand_moves_the_parentheses_of_the_dropped_expression_to_the_kept_one(km_project):
    # Without them `(a or b or c) and d` minus `c` would read `a or b and d`.
    km_project.module("def ok(a, b, c, d):\n    return (a or b or c) and d\n")
    mutant = build(km_project, f"{MOD}::ok", "drop-operand", operand="c")
    assert_applied(mutant, "def ok(a, b, c, d):\n    return (a or b) and d\n")


def test_drop_operand_that_is_no_operand_is_not_applied(km_project):
    km_project.module(CHAIN)
    mutant = build(km_project, f"{MOD}::ready", "drop-operand", operand="d")
    assert_not_applied(mutant, "matched 0 sites")


# --- negate --------------------------------------------------------------------------------


def test_negate_wraps_a_comparison_in_not_with_parentheses(km_project):
    km_project.module("""\
        def sign(x):
            if x > 0:
                return 1
            return -1


        def positive(x):
            return x > 0
        """)
    mutant = build(km_project, f"{MOD}::sign", "negate", condition="x > 0")
    assert_applied(
        mutant,
        """\
        def sign(x):
            if not (x > 0):
                return 1
            return -1


        def positive(x):
            return x > 0
        """,
    )
    assert mutant.sites == 1


def test_negate_of_not_ok_removes_the_not(km_project):
    km_project.module("def guard(ok):\n    if not ok:\n        raise ValueError\n")
    mutant = build(km_project, f"{MOD}::guard", "negate", condition="not ok")
    assert_applied(mutant, "def guard(ok):\n    if ok:\n        raise ValueError\n")


@pytest.mark.parametrize("condition", ["value := table.get(key)", "(value := table.get(key))"])
def test_negate_of_a_walrus_condition_negates_the_test_and_keeps_the_binding(km_project, condition):
    # webcolors' name_to_hex: `if hex_value := color_map.get(...)` could not be named: as
    # written it was "not a Python expression", parenthesized it matched 0 sites.
    km_project.module("def find(table, key):\n    if value := table.get(key):\n        return value\n    return None\n")
    mutant = build(km_project, f"{MOD}::find", "negate", condition=condition)
    assert_applied(
        mutant, "def find(table, key):\n    if not (value := table.get(key)):\n        return value\n    return None\n"
    )


def test_negate_of_a_name_counts_its_reads_not_its_bindings(km_project):
    # `ready = ...` and `for ready in ...` bind the name; negating them is not a site.
    km_project.module("""\
        def go(check, items):
            ready = check()
            if ready:
                return 1
            for ready in items:
                pass
            return 0
        """)
    mutant = build(km_project, f"{MOD}::go", "negate", condition="ready")
    assert_applied(
        mutant,
        """\
        def go(check, items):
            ready = check()
            if not ready:
                return 1
            for ready in items:
                pass
            return 0
        """,
    )


def test_sites_sharing_a_line_are_each_listed_by_column_so_the_list_adds_up_to_the_count(km_project):
    # A user's `--condition "self.timestamp"`: "matched 3 sites" listed two lines, one of them
    # holding two of the sites.
    km_project.module("""\
        class Entry:
            def stamp(self):
                if self.timestamp:
                    return self.timestamp if self.timestamp > 0 else None
        """)
    mutant = build(km_project, f"{MOD}::Entry.stamp", "negate", condition="self.timestamp")
    assert_not_applied(
        mutant, "matched 3 sites", "expected 1 (line 3 `if self.timestamp:`, line 4, columns 20 and 38 `return "
    )
    text = build(km_project, f"{MOD}::Entry.stamp", "replace", old="self.timestamp", new="0")
    assert_not_applied(text, "matched 3 sites", "(line 3 `if self.timestamp:`, line 4, columns 20 and 38 `return ")


def test_negate_counts_a_name_used_as_an_object_as_no_site(km_project):
    # cachetools' hashkey: `condition = "kwargs"` also matched `kwargs.items()`, and with
    # count = 2 the mutant read `(not kwargs).items()`: no negated condition, only a crash.
    km_project.module("""\
        def key(args, kwargs, table):
            if kwargs:
                return tuple(sorted(kwargs.items())) + kwargs[0] + kwargs(1)
            return args
        """)
    mutant = build(km_project, f"{MOD}::key", "negate", condition="kwargs")
    assert_applied(
        mutant,
        """\
        def key(args, kwargs, table):
            if not kwargs:
                return tuple(sorted(kwargs.items())) + kwargs[0] + kwargs(1)
            return args
        """,
    )


def test_negate_inside_a_comparison_parenthesizes_the_not(km_project):
    # `not flag in items` would negate the membership test, not the flag.
    km_project.module("def find(flag, items):\n    return flag in items\n")
    mutant = build(km_project, f"{MOD}::find", "negate", condition="flag")
    assert_applied(mutant, "def find(flag, items):\n    return (not flag) in items\n")


def test_negate_with_no_such_condition_is_not_applied(km_project):
    km_project.module("def sign(x):\n    return x > 0\n")
    mutant = build(km_project, f"{MOD}::sign", "negate", condition="x < 0")
    assert_not_applied(mutant, "matched 0 sites")


# --- revert-patch --------------------------------------------------------------------------

PREIMAGE = """\
def parse(text):
    return text.split(",")


def count(text):
    return len(parse(text))
"""
POSTIMAGE = """\
def parse(text):
    return [part.strip() for part in text.split(",")]


def count(text):
    return len(parse(text))
"""


def unified(before: str, after: str, path: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=f"a/{path}", tofile=f"b/{path}"
        )
    )


def test_revert_patch_gives_back_the_preimage(km_project):
    km_project.module(POSTIMAGE)
    km_project.write("mutations/fix.diff", unified(PREIMAGE, POSTIMAGE, MOD), dedent=False)
    mutant = build(km_project, MOD, "revert-patch", patch="fix.diff")
    assert mutant.applied, mutant.reason
    assert mutant.mutated == PREIMAGE
    assert mutant.changed_lines == (2,)
    assert mutant.mutation.param("patch") == "mutations/fix.diff"


def test_revert_patch_refuses_a_file_that_is_not_the_postimage(km_project):
    km_project.module(POSTIMAGE.replace("part.strip()", "part.lower()"))
    km_project.write("mutations/fix.diff", unified(PREIMAGE, POSTIMAGE, MOD), dedent=False)
    mutant = build(km_project, MOD, "revert-patch", patch="fix.diff")
    assert_not_applied(mutant, "revert-patch refused", "postimage")


def test_revert_patch_of_a_patch_for_another_file_is_a_gate_error_naming_the_patch_field(km_project):
    km_project.module(POSTIMAGE)
    km_project.write("mutations/fix.diff", unified(PREIMAGE, POSTIMAGE, "src/pkg/other.py"), dedent=False)
    with pytest.raises(GateError) as caught:
        build(km_project, MOD, "revert-patch", patch="fix.diff")
    assert caught.value.field == "patch"
    assert "src/pkg/other.py" in str(caught.value)


def test_revert_patch_of_a_file_that_is_not_a_diff_is_a_gate_error_naming_the_patch_field(km_project):
    km_project.module(POSTIMAGE)
    km_project.write("mutations/fix.diff", "this is not a diff\n")
    with pytest.raises(GateError) as caught:
        build(km_project, MOD, "revert-patch", patch="fix.diff")
    assert caught.value.field == "patch"


# --- the sha of the target ----------------------------------------------------------------


def test_the_target_hash_covers_the_symbol_not_the_rest_of_the_file(km_project):
    km_project.module(SIBLINGS)
    toml = km_project.entry(f"{MOD}::positive", "replace", old=">", new=">=")
    before = km_project.mutant(toml).target_sha256
    km_project.module(SIBLINGS.replace("y > 0", "y > 1"))
    assert build_mutant(km_project.root, km_project.mutation(toml)).target_sha256 == before
    km_project.module(SIBLINGS.replace("x > 0", "x > 1"))
    assert build_mutant(km_project.root, km_project.mutation(toml)).target_sha256 != before


def test_an_annotated_module_variable_is_a_target(km_project):
    km_project.module('LIMITS: dict[str, int] = {"low": 1, "high": 9}\nOTHER = {"low": 1}\n')
    mutant = build(km_project, f"{MOD}::LIMITS", "replace", old='"low": 1', new='"low": 0')
    assert_applied(mutant, 'LIMITS: dict[str, int] = {"low": 0, "high": 9}\nOTHER = {"low": 1}\n')


def test_a_symbol_defined_twice_is_an_ambiguous_target(km_project):
    km_project.module("def f():\n    return 1\n\n\ndef f():\n    return 2\n")
    with pytest.raises(GateError) as caught:
        build(km_project, f"{MOD}::f", "replace", old="1", new="0")
    assert caught.value.field == "target"
    assert "ambiguous" in str(caught.value)


def test_replace_sees_the_decorators_of_its_target_like_every_other_operator(km_project):
    # The pin and the tree operators include decorators; replace must not miss them.
    km_project.module("""\
        @cache(size=1)
        def view(x):
            return x


        @cache(size=1)
        def other(x):
            return x
        """)
    mutant = build(km_project, f"{MOD}::view", "replace", old="size=1", new="size=2")
    assert_applied(
        mutant,
        """\
        @cache(size=2)
        def view(x):
            return x


        @cache(size=1)
        def other(x):
            return x
        """,
    )


def test_constant_return_on_a_one_line_function_gives_an_indented_body(km_project):
    km_project.module("def view(x): return x\n")
    mutant = build(km_project, f"{MOD}::view", "constant-return", value="None")
    assert_applied(mutant, "def view(x):\n    return None\n")


def _whole_file_diff(original: str, mutated: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The changed lines as a diff of the whole files gives them (what mutants.py did)."""
    a, b = original.splitlines(), mutated.splitlines()
    old, new = set(), set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            old.update(range(i1 + 1, i2 + 1) if i2 > i1 else [min(i1 + 1, len(a))])
            new.update(range(j1 + 1, j2 + 1) if j2 > j1 else [max(min(j1 + 1, len(b)), 1)])
    return tuple(sorted(old)), tuple(sorted(new))


@pytest.mark.parametrize(
    "original, mutated",
    [
        ("a\nx\nx\nb\n", "a\nx\nb\n"),  # one of two equal lines deleted
        ("a\nb\n", "b\n"),  # the first line deleted
        ("a\nb\n", "a\n"),  # the last line deleted
        ("a\nb\n", "a\nb\nc\n"),  # a line added at the end
        ("a\nb\nc\nd\ne\n", "a\nB\nc\nD\ne\n"),  # two sites, an equal line between
        ("x\nx\nx\n", "x\nx\n"),  # nothing but equal lines
        ("one\n", "two\n"),
    ],
)
def test_changed_lines_are_those_a_whole_file_diff_finds(original, mutated):
    from killmap.mutate.mutants import changed_lines

    assert changed_lines(original, mutated) == _whole_file_diff(original, mutated)


def test_a_function_defined_under_a_module_level_if_or_try_is_a_target(km_project):
    # dateutil defines `enfold` under `if hasattr(datetime, "fold"):`.
    km_project.module("""\
        import sys

        if sys.version_info >= (3,):
            def enfold(dt):
                return dt
        try:
            from json import loads
        except ImportError:
            pass
        else:
            def parse(text):
                return loads(text)
        """)
    mutant = build(km_project, f"{MOD}::enfold", "constant-return", value="None")
    assert "def enfold(dt):\n        return None\n" in mutant.mutated
    mutant = build(km_project, f"{MOD}::parse", "stub-call", call="loads", value="{}")
    assert "return {}" in mutant.mutated and "from json import loads" in mutant.mutated


PROPERTY = """\
    class Delta:
        @property
        def weeks(self):
            return self.days // 7

        @weeks.setter
        def weeks(self, value):
            self.days = value * 7
    """


def test_a_property_is_its_getter_and_its_setter_is_named_as_such(km_project):
    km_project.module(PROPERTY)
    getter = build(km_project, f"{MOD}::Delta.weeks", "constant-return", value="0")
    assert "def weeks(self):\n        return 0\n" in getter.mutated
    assert "self.days = value * 7" in getter.mutated
    setter = build(km_project, f"{MOD}::Delta.weeks.setter", "replace", old="value * 7", new="value")
    assert "self.days = value\n" in setter.mutated and "return self.days // 7" in setter.mutated


def test_overload_stubs_leave_the_name_to_the_implementation(km_project):
    km_project.module("""\
        from typing import overload


        @overload
        def scale(x: int) -> int: ...
        @overload
        def scale(x: float) -> float: ...
        def scale(x):
            return x * 2
        """)
    mutant = build(km_project, f"{MOD}::scale", "replace", old="x * 2", new="x * 3")
    assert mutant.applied and "return x * 3" in mutant.mutated


def test_two_alternative_definitions_stay_ambiguous_and_the_error_says_what_to_do(km_project):
    km_project.module(
        "import os\n\nif os.name == 'nt':\n    def sep():\n        return '\\\\'\n"
        "else:\n    def sep():\n        return '/'\n"
    )
    with pytest.raises(GateError) as caught:
        build(km_project, f"{MOD}::sep", "constant-return", value="''")
    assert caught.value.field == "target"
    assert "defined 2 times" in str(caught.value) and "narrow with op 'replace'" in str(caught.value)


def test_an_operator_matching_too_many_sites_names_their_lines_in_the_file(km_project):
    # A method below other code: the lines are the file's, not the target's own.
    km_project.module(
        dedent("""\
        def helper():
            return 1


        class Gate:
            def open(self, ready, late):
                if ready:
                    return 1
                return 2 if ready and late else 3
        """)
    )
    mutant = build(km_project, f"{MOD}::Gate.open", "negate", condition="ready")
    assert_not_applied(
        mutant, "matched 2 sites", "expected 1 (line 7 `if ready:`, line 9 `return 2 if ready and late else 3`)"
    )
    merged = build(km_project, f"{MOD}::Gate.open", "drop-operand", operand="late", count=2)
    assert_not_applied(merged, "matched 1 site", "expected 2 (line 9 `")


def test_merge_strings_with_drop_and_keep_in_one_joined_literal_says_so(km_project):
    km_project.module('def msg(t):\n    return ("not allowed in "\n            f"{t}, use X instead")\n')
    mutant = build(km_project, f"{MOD}::msg", "merge-strings", drop="use X", keep="not allowed in ")
    assert_not_applied(mutant, "'drop' and 'keep' are in the same string literal", "use replace")
    same = build(km_project, f"{MOD}::msg", "merge-strings", drop="use X", keep="use X")
    assert_not_applied(same, "same string literal")


def test_replace_whose_statement_text_appears_twice_in_the_file_still_finds_its_own_region(km_project):
    # The target's top-level statement is found by its text, blank lines above it included;
    # where that text is in the file twice (here inside a string), positions come from the
    # whole module instead.
    source = "def f(x):\n    return x > 0\n"
    text = 'DOC = """\n\n\n' + source + '"""\n\n\n' + source + "\n\ndef g(x):\n    return x > 0\n"
    km_project.module(text)
    mutant = build(km_project, f"{MOD}::f", "replace", old="> 0", new=">= 0")
    assert mutant.sites == 1
    head, tail = text.rsplit(source, 1)
    assert mutant.mutated == head + source.replace("> 0", ">= 0") + tail


def test_a_method_name_one_letter_off_gets_the_nearest_in_its_class(km_project):
    source = "class Cache:\n    def get(self):\n        return 1\n\n    def getitem(self):\n        return 2\n"
    km_project.module(source)
    with pytest.raises(GateError) as caught:
        build(km_project, f"{MOD}::Cache.getitm", "replace", old="2", new="0")
    assert caught.value.field == "target"
    assert str(caught.value).endswith(f"no symbol 'Cache.getitm' in {MOD}; did you mean 'Cache.getitem'?")


def test_merge_strings_keeps_a_message_written_twice_and_drops_the_other(km_project):
    # itsdangerous: "Malformed timestamp" is raised in two places; either copy kept is the same mutant.
    source = """\
        def parse(raw):
            if not raw:
                raise ValueError("Malformed timestamp")
            if raw.startswith("-"):
                raise ValueError("Malformed timestamp")
            if len(raw) > 9:
                raise ValueError("Timestamp too far ahead")
            return int(raw)
        """
    km_project.module(source)
    mutant = build(km_project, f"{MOD}::parse", "merge-strings", drop="too far ahead", keep="Malformed timestamp")
    assert_applied(mutant, source.replace("Timestamp too far ahead", "Malformed timestamp"))
    assert mutant.sites == 1


def test_merge_strings_never_takes_a_docstring_for_a_message(km_project):
    # inflection's ordinal: its docstring holds "nd" as its suffix literal does; a string that
    # is a statement of its own says nothing at run time.
    source = '''\
        def ordinal(number):
            """1st, 2nd, 3rd: the suffix ("st", "nd", "rd" or "th") of a number."""
            if number % 10 == 2:
                return "nd"
            return "st"
        '''
    km_project.module(source)
    mutant = build(km_project, f"{MOD}::ordinal", "merge-strings", drop="nd", keep="st")
    assert_applied(mutant, source.replace('return "nd"', 'return "st"'))
    assert mutant.sites == 1


REFUSALS = """\
def compile_pattern(expression, fields):
    if fields > 100:
        raise OverflowError("sorry, you are attempting to parse too many complex fields")
    if "(?P<" in expression:
        raise NotImplementedError(
            "Group names (e.g. (?P<name>) can "
            "cause failure, as they are not escaped properly: '%s'" % expression
        )
    if not expression:
        raise ValueError("{} is empty".format("the pattern"))
    if expression.isspace():
        raise ValueError("%s is blank: %s" % ("the pattern", expression))
    return expression
"""


def test_merge_strings_puts_a_kept_message_without_placeholders_where_the_dropped_one_was_formatted(km_project):
    # parse: the dropped refusal is formatted with `% expression`; the kept one has no `%s`.
    # Put in the literal's place alone, the mutant raised TypeError ("not all arguments
    # converted") instead of the other message, and a test expecting NotImplementedError read
    # the crash as the merged message caught.
    km_project.module(REFUSALS)
    mutant = build(km_project, f"{MOD}::compile_pattern", "merge-strings", drop="Group names", keep="sorry, you")
    assert_applied(
        mutant,
        REFUSALS.replace(
            """(
            "Group names (e.g. (?P<name>) can "
            "cause failure, as they are not escaped properly: '%s'" % expression
        )""",
            """(
            "sorry, you are attempting to parse too many complex fields"
        )""",
        ),
    )
    with_format = build(km_project, f"{MOD}::compile_pattern", "merge-strings", drop="is empty", keep="sorry, you")
    assert_applied(
        with_format,
        REFUSALS.replace(
            '"{} is empty".format("the pattern")', '"sorry, you are attempting to parse too many complex fields"'
        ),
    )


def test_merge_strings_keeps_the_formatting_where_the_kept_message_takes_the_same_arguments(km_project):
    source = REFUSALS.replace('"sorry, you are attempting to parse too many complex fields"', '"too many fields: %s"')
    km_project.module(source)
    mutant = build(km_project, f"{MOD}::compile_pattern", "merge-strings", drop="Group names", keep="too many fields")
    assert '"too many fields: %s" % expression' in mutant.mutated
    assert mutant.sites == 1


def test_merge_strings_formatted_with_other_placeholders_is_not_applied_and_says_why(km_project):
    km_project.module(REFUSALS)
    mutant = build(km_project, f"{MOD}::compile_pattern", "merge-strings", drop="is blank", keep="Group names")
    assert_not_applied(
        mutant, 'formatted where it stands (`"%s is blank: %s" % ("the pattern", expression)`)', "use replace"
    )
