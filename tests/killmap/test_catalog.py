"""Catalog validation: every bad input is a GateError that says where to look.

A typo must fail loudly as bad input, never read as a verdict; and the one line the
user sees must name the file, the mutation and the field so it can be fixed without a
traceback.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from killmap.catalog.reader import load_catalog, load_catalogs
from killmap.catalog.testids import matches
from killmap.errors import GateError

CATALOG = "mutations/catalog.toml"
MOD = "src/pkg/mod.py"

SOURCE = """\
def check(x):
    return validate(x) > 0
"""


def good(**overrides) -> dict:
    """A valid replace entry as a dict of TOML value texts; None drops a field."""
    fields = {
        "name": '"check-flipped"',
        "target": f'"{MOD}::check"',
        "op": '"replace"',
        "old": '">"',
        "new": '"<"',
        "kills": '["tests/test_mod.py::test_mod"]',
    }
    fields.update(overrides)
    return {k: v for k, v in fields.items() if v is not None}


def table(fields: dict) -> str:
    return "[[mutation]]\n" + "".join(f"{k} = {v}\n" for k, v in fields.items())


def rejected(project, toml: str, name: str = "catalog.toml") -> GateError:
    project.module(SOURCE)
    with pytest.raises(GateError) as caught:
        project.catalog(toml, name)
    return caught.value


def assert_names(error: GateError, *, file: str = CATALOG, mutation: str | None, field: str | None):
    """The error carries file, mutation and field, and its one line shows each of them."""
    text = str(error)
    assert "\n" not in text
    assert error.file == file
    assert text.startswith(file)
    assert error.mutation == mutation
    assert error.field == field
    if mutation is not None:
        assert f"mutation {mutation!r}" in text
    if field is not None:
        assert f"field {field!r}" in text


def test_a_valid_entry_loads_into_a_mutation(km_project):
    km_project.module(SOURCE)
    catalog = km_project.catalog(table(good()))
    [mutation] = catalog.mutations
    assert catalog.path == CATALOG
    assert (mutation.name, mutation.op, str(mutation.target)) == ("check-flipped", "replace", f"{MOD}::check")
    assert mutation.params == (("new", "<"), ("old", ">"))
    assert mutation.kills == ("tests/test_mod.py::test_mod",)
    assert mutation.catalog == CATALOG
    assert mutation.count == 1


def test_malformed_toml_names_the_file_the_mutation_and_the_line_not_a_field(km_project):
    error = rejected(km_project, '[[mutation]]\nname = "check-flipped"\nop = replace\n')
    assert_names(error, mutation="check-flipped", field=None)
    assert str(error).endswith("not valid TOML at line 3, column 6: Invalid value"), str(error)


def test_an_unclosed_string_in_a_name_is_blamed_on_no_field(km_project):
    # The user's catalog: "field 'name': not valid TOML: Illegal character '\n' (at line 2, ...)".
    error = rejected(km_project, '[[mutation]]\nname = "check-flipped\nop = "replace"\n')
    assert_names(error, mutation=None, field=None)
    assert str(error) == f"{CATALOG}: not valid TOML at line 2, column 22: Illegal character '\\n'"


def test_an_unclosed_array_is_blamed_on_no_key(km_project):
    error = rejected(km_project, '[[mutation]]\nname = "check-flipped"\nkills = ["a.py::t"\nop = "replace"\n')
    assert_names(error, mutation="check-flipped", field=None)
    assert "not valid TOML at line 4, column 1: Unclosed array" in str(error)


def test_malformed_toml_outside_any_mutation_names_the_file_and_line(km_project):
    error = rejected(km_project, '[gate]\ntests = "tests\n')
    assert_names(error, mutation=None, field=None)
    assert "line 2" in str(error)


def test_an_unknown_top_level_table_names_the_file_and_the_table(km_project):
    error = rejected(km_project, table(good()) + "[mutations]\nx = 1\n")
    assert_names(error, mutation=None, field="mutations")
    assert "unknown top-level table(s) ['mutations']; did you mean 'mutation'?" in str(error)


def test_a_typo_in_a_field_name_is_an_unknown_field(km_project):
    fields = good(kill='["tests/test_mod.py::test_mod"]', kills=None)
    error = rejected(km_project, table(fields))
    assert_names(error, mutation="check-flipped", field="kill")
    assert "unknown field for op 'replace'; did you mean 'kills'?" in str(error)


def test_a_short_field_with_two_letters_swapped_gets_the_field_and_its_absence_said(km_project):
    # A user's `nwe` for `new`: no "did you mean", and the missing `new` was said only once fixed.
    error = rejected(km_project, table(good(nwe='"<"', new=None)))
    assert_names(error, mutation="check-flipped", field="nwe")
    assert "unknown field for op 'replace'; did you mean 'new'?" in str(error)
    assert [(also.field, also.message) for also in error.also] == [("new", "required by op 'replace'")]
    assert str(error).endswith("(and field 'new': killmap check says each)")


def test_a_missing_operator_is_required_not_unknown_and_the_other_missing_fields_are_said(km_project):
    # funcy's trial: an entry of `name` alone read "unknown operator None".
    error = rejected(km_project, '[[mutation]]\nname = "check-flipped"\n')
    assert_names(error, mutation="check-flipped", field="op")
    assert "required: the operator, one of " in str(error) and "(so are target and kills)" in str(error)
    assert "None" not in str(error)


def test_an_operator_a_letter_off_gets_the_nearest(km_project):
    error = rejected(km_project, table(good(op='"delete-cal"')))
    assert "unknown operator 'delete-cal'; did you mean 'delete-call'?" in str(error)


def test_an_unknown_operator_names_the_op_field(km_project):
    error = rejected(km_project, table(good(op='"swap"')))
    assert_names(error, mutation="check-flipped", field="op")
    assert "'swap'" in str(error)


def test_a_missing_required_operator_field_names_that_field(km_project):
    error = rejected(km_project, table(good(new=None)))
    assert_names(error, mutation="check-flipped", field="new")
    assert "required by op 'replace'" in str(error)


def test_a_field_of_another_operator_is_an_unknown_field(km_project):
    error = rejected(km_project, table(good(call='"validate"')))
    assert_names(error, mutation="check-flipped", field="call")


def test_a_non_string_operator_field_names_that_field(km_project):
    fields = good(op='"delete-call"', old=None, new=None, call="3")
    error = rejected(km_project, table(fields))
    assert_names(error, mutation="check-flipped", field="call")
    assert "must be a string" in str(error)


def test_an_empty_operator_field_other_than_replace_new_is_refused(km_project):
    fields = good(op='"delete-call"', old=None, new=None, call='""')
    error = rejected(km_project, table(fields))
    assert_names(error, mutation="check-flipped", field="call")
    assert "non-empty string" in str(error)


def test_a_value_that_is_not_a_python_expression_names_the_value_field(km_project):
    fields = good(op='"stub-call"', old=None, new=None, call='"validate"', value='"return 1"')
    error = rejected(km_project, table(fields))
    assert_names(error, mutation="check-flipped", field="value")
    assert "not a Python expression" in str(error)


def test_a_walrus_condition_as_an_if_writes_it_is_a_python_expression(km_project):
    # webcolors: `if hex_value := color_map.get(...)` was "not a Python expression".
    km_project.module(SOURCE)
    fields = good(op='"negate"', old=None, new=None, condition='"found := x > 0"')
    (mutation,) = km_project.catalog(table(fields)).mutations
    assert mutation.param("condition") == "found := x > 0"


def test_replace_with_new_equal_to_old_names_the_new_field(km_project):
    error = rejected(km_project, table(good(new='">"')))
    assert_names(error, mutation="check-flipped", field="new")


@pytest.mark.parametrize("name", ['"Check_Flipped"', '"check flipped"', '"-check"', '""', "3"])
def test_a_name_that_is_not_kebab_case_names_the_name_field(km_project, name):
    error = rejected(km_project, table(good(name=name)))
    expected = name.strip('"') if name.startswith('"') and name != '""' else "#1"
    assert_names(error, mutation=expected, field="name")


def test_a_duplicate_name_across_two_catalogs_names_the_second_file_and_the_first(km_project):
    km_project.module(SOURCE)
    first = km_project.write("mutations/a.toml", table(good()))
    second = km_project.write("mutations/b.toml", table(good(new='">="')))
    with pytest.raises(GateError) as caught:
        load_catalogs(km_project.root, [first, second])
    assert_names(caught.value, file="mutations/b.toml", mutation="check-flipped", field="name")
    assert "mutations/a.toml" in str(caught.value)


def test_a_duplicate_name_within_one_catalog_is_an_error(km_project):
    km_project.module(SOURCE)
    path = km_project.write("mutations/a.toml", table(good()) + table(good(new='">="')))
    with pytest.raises(GateError) as caught:
        load_catalogs(km_project.root, [path])
    assert_names(caught.value, file="mutations/a.toml", mutation="check-flipped", field="name")


def test_a_missing_target_file_names_the_target_field(km_project):
    error = rejected(km_project, table(good(target='"src/pkg/gone.py::check"')))
    assert_names(error, mutation="check-flipped", field="target")
    assert "src/pkg/gone.py" in str(error)


def test_a_target_that_is_not_python_names_the_target_field(km_project):
    km_project.write("src/pkg/data.txt", "x > 0\n")
    error = rejected(km_project, table(good(target='"src/pkg/data.txt"')))
    assert_names(error, mutation="check-flipped", field="target")


@pytest.mark.parametrize("target", ["../outside.py", "src/../../outside.py", "{absolute}"])
def test_a_target_outside_the_project_names_the_target_field(km_project, target):
    # The mutant is written to sandbox/<target>: outside the project it would land in a real file.
    outside = km_project.root.parent / "outside.py"
    outside.write_text("x = 1\n")
    target = target.format(absolute=outside.as_posix())
    error = rejected(km_project, table(good(target=f'"{target}"')))
    assert_names(error, mutation="check-flipped", field="target")
    assert "inside the project" in str(error)


def test_a_target_path_is_normalized(km_project):
    km_project.module(SOURCE)
    [mutation] = km_project.catalog(table(good(target='"./src/pkg/../pkg/mod.py::check"'))).mutations
    assert mutation.target.path == MOD
    assert mutation.target.symbol == "check"


def test_an_invariant_that_lists_kills_names_the_kills_field(km_project):
    toml = table(good()) + table(good(name='"check-same"', new='">="', invariant="true", control='"check-flipped"'))
    error = rejected(km_project, toml)
    assert_names(error, mutation="check-same", field="kills")


def test_an_invariant_without_a_control_names_the_control_field(km_project):
    error = rejected(km_project, table(good(invariant="true", kills=None)))
    assert_names(error, mutation="check-flipped", field="control")
    assert "positive control" in str(error)


def test_a_control_naming_an_unknown_mutation_names_the_control_field(km_project):
    toml = table(good()) + table(
        good(name='"check-same"', new='">="', invariant="true", kills=None, control='"no-such-mutation"')
    )
    error = rejected(km_project, toml)
    assert_names(error, mutation="check-same", field="control")
    assert "'no-such-mutation'" in str(error)


def test_a_control_naming_another_invariant_names_the_control_field(km_project):
    toml = (
        table(good())
        + table(good(name='"same-a"', new='">="', invariant="true", kills=None, control='"check-flipped"'))
        + table(good(name='"same-b"', new='"!="', invariant="true", kills=None, control='"same-a"'))
    )
    error = rejected(km_project, toml)
    assert_names(error, mutation="same-b", field="control")
    assert "itself an invariant" in str(error)


def test_a_control_on_a_mutation_that_is_not_an_invariant_names_the_control_field(km_project):
    toml = table(good()) + table(good(name='"check-other"', new='">="', control='"check-flipped"'))
    error = rejected(km_project, toml)
    assert_names(error, mutation="check-other", field="control")


@pytest.mark.parametrize("pin", ['"sha256:abc"', '"md5:' + "0" * 64 + '"', '"sha256:' + "G" * 64 + '"', "1"])
def test_a_badly_formed_pin_names_the_pin_field(km_project, pin):
    error = rejected(km_project, table(good(pin=pin)))
    assert_names(error, mutation="check-flipped", field="pin")


@pytest.mark.parametrize("count", ["0", "-1", "true", '"2"', "1.5"])
def test_a_count_that_is_not_a_positive_integer_names_the_count_field(km_project, count):
    error = rejected(km_project, table(good(count=count)))
    assert_names(error, mutation="check-flipped", field="count")


def test_an_unknown_require_value_names_the_require_field(km_project):
    error = rejected(km_project, table(good(require='"assert"')))
    assert_names(error, mutation="check-flipped", field="require")
    assert "did you mean 'assertion'?" in str(error), str(error)  # glom


def test_a_kills_entry_that_is_not_a_node_id_names_the_kills_field(km_project):
    error = rejected(km_project, table(good(kills='["test_mod"]')))
    assert_names(error, mutation="check-flipped", field="kills")


def test_a_mutation_without_kills_names_the_kills_field(km_project):
    error = rejected(km_project, table(good(kills=None)))
    assert_names(error, mutation="check-flipped", field="kills")


def test_an_unknown_gate_key_names_the_file_and_the_key(km_project):
    error = rejected(km_project, '[gate]\ntest = ["tests"]\n\n' + table(good()))
    assert_names(error, mutation=None, field="test")
    assert "unknown [gate] field; did you mean 'tests'?" in str(error)


def test_an_unknown_sweep_key_gets_the_nearest_known_one(km_project):
    error = rejected(km_project, "[sweep]\narid_loging = false\n\n" + table(good()))
    assert_names(error, mutation=None, field="arid_loging")
    assert "unknown [sweep] field; did you mean 'arid_logging'?" in str(error)


def test_a_gate_timeout_that_is_not_positive_names_the_timeout_field(km_project):
    error = rejected(km_project, "[gate]\ntimeout = 0\n\n" + table(good()))
    assert_names(error, mutation=None, field="timeout")


def test_a_catalog_with_neither_gate_nor_mutations_names_the_file(km_project):
    error = rejected(km_project, "")
    assert_names(error, mutation=None, field="mutation")


def test_a_catalog_of_gate_alone_is_read_with_its_settings_and_no_mutation(km_project):
    catalog = km_project.catalog('[gate]\ntests = ["tests"]\npaths = ["lib"]\n')
    assert catalog.mutations == ()
    assert catalog.settings.tests == ("tests",) and catalog.settings.paths == ("lib",)


def test_a_revert_patch_whose_patch_file_is_missing_names_the_patch_field(km_project):
    fields = good(op='"revert-patch"', old=None, new=None, patch='"fix.diff"', target=f'"{MOD}"')
    error = rejected(km_project, table(fields))
    assert_names(error, mutation="check-flipped", field="patch")
    assert "mutations/fix.diff" in str(error)


def test_the_gate_table_is_shared_by_every_mutation_of_the_catalog(km_project):
    km_project.module(SOURCE)
    toml = '[gate]\ntests = ["tests/unit"]\ntimeout = 30\n\n' + table(good())
    [mutation] = km_project.catalog(toml).mutations
    assert mutation.settings.tests == ("tests/unit",)
    assert mutation.settings.timeout == 30.0


def test_a_catalog_file_that_does_not_exist_is_a_gate_error(km_project):
    with pytest.raises(GateError) as caught:
        load_catalog(km_project.root, km_project.root / "mutations" / "none.toml")
    assert caught.value.file == "mutations/none.toml"


# --- matches -------------------------------------------------------------------------------

NODE = "tests/test_a.py::TestBox::test_open[small]"


@pytest.mark.parametrize(
    "entry",
    [
        NODE,  # the exact id
        "tests/test_a.py",  # the file
        "tests/test_a.py::TestBox",  # a class, up to a '::' boundary
        "tests/test_a.py::TestBox::test_open",  # every parameter, up to a '[' boundary
        "tests",  # a directory
        "tests/",  # a directory spelled with its slash
    ],
)
def test_a_contract_entry_matches_an_id_or_a_prefix_at_a_boundary(entry):
    assert matches(entry, NODE)


@pytest.mark.parametrize(
    "entry, node_id",
    [
        ("tests/test_a.py::test_a", "tests/test_a.py::test_ab"),  # not a loose substring
        ("tests/test_a", "tests/test_ab.py::test_x"),  # nor a partial file name
        ("tests/test_a.py::TestBox::test_open[s", NODE),  # nor a partial parameter
        ("tests/test_a.py::TestB", NODE),  # nor a partial class name
        ("tests/unit", "tests/unit_slow/test_x.py::test_y"),  # nor a partial directory
        ("test_a.py::test_a", "tests/test_a.py::test_a"),  # nor a suffix
        ("tests/test_a.py/x", "tests/test_a.py"),  # nor a longer entry
    ],
)
def test_a_contract_entry_does_not_match_a_loose_substring(entry, node_id):
    assert not matches(entry, node_id)


# --- the command line ----------------------------------------------------------------------


def test_list_with_a_malformed_catalog_exits_2_with_one_line_and_no_traceback(km_project):
    km_project.module(SOURCE)
    km_project.write(CATALOG, '[[mutation]]\nname = "check-flipped"\nop = replace\n')
    done = subprocess.run(
        [sys.executable, "-m", "killmap", "list"], cwd=km_project.root, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    where = "killmap: mutations/catalog.toml: mutation 'check-flipped'"
    assert lines[0] == f"{where}: not valid TOML at line 3, column 6: Invalid value"
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_list_with_a_valid_catalog_prints_each_mutation(km_project):
    km_project.module(SOURCE)
    km_project.write(CATALOG, table(good()))
    done = subprocess.run(
        [sys.executable, "-m", "killmap", "list"], cwd=km_project.root, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["check-flipped", "replace", f"{MOD}::check", "kills", "1"]


@pytest.mark.parametrize(
    "command",
    [
        ["list", "check-flippd"],
        ["list", "check-flipped", "check-flippd"],
        ["show", "check-flippd"],
        ["pin", "check-flippd"],
        ["run", "--only", "check-flippd"],
    ],
)
def test_a_name_no_catalog_holds_is_an_error_naming_the_nearest(km_project, command):
    # blinker: `list nosuch` printed nothing and exited 0, as an empty catalog does.
    km_project.module(SOURCE)
    km_project.write(CATALOG, table(good()))
    done = subprocess.run(
        [sys.executable, "-m", "killmap", *command], cwd=km_project.root, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "'check-flippd'" in done.stderr and "did you mean 'check-flipped'?" in done.stderr, done.stderr
    assert done.stdout == ""
    if command[0] != "run":  # tinydb: "no mutation named 'bad-name'" named no catalog
        assert f"in {CATALOG}" in done.stderr, done.stderr


def test_a_reader_that_leaves_early_gets_no_traceback(km_project):
    # blinker: `killmap list | head -1` printed a BrokenPipeError traceback and exited 1.
    km_project.module(SOURCE)
    km_project.write(CATALOG, "\n".join(table(good(name=f'"check-flipped-{n}"')) for n in range(400)))
    listing = subprocess.Popen(
        [sys.executable, "-m", "killmap", "list"], cwd=km_project.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert listing.stdout is not None and listing.stderr is not None
    listing.stdout.close()  # the reader gone before the first line
    stderr = listing.stderr.read().decode()
    assert listing.wait(timeout=120) == 141, stderr
    assert stderr == ""


def test_a_gate_error_with_a_multi_line_message_still_prints_as_one_line():
    # Some messages carry a log tail; the promise to the user is one line on stderr.
    error = GateError(
        "pytest ended without a report; log tail: E   boom\n\n  at line 3\n", file="mutations/x.toml", field="tests"
    )
    assert (
        str(error) == "mutations/x.toml: field 'tests': pytest ended without a report; log tail: E   boom | at line 3"
    )


def test_replace_may_delete_its_text_with_an_empty_new(km_project):
    km_project.module(SOURCE)
    catalog = km_project.catalog(table(good(old='" > 0"', new='""')))
    assert dict(catalog.mutations[0].params)["new"] == ""


def test_werror_is_read_from_the_gate_and_overridden_per_mutation(km_project):
    km_project.module(SOURCE)
    catalog = km_project.catalog(
        "[gate]\nwerror = true\n" + table(good()) + table(good(name='"check-lint-ok"', werror="false"))
    )
    strict, lenient = catalog.mutations
    assert strict.lint_is_error is True
    assert lenient.lint_is_error is False


def test_werror_that_is_not_a_boolean_names_the_field(km_project):
    error = rejected(km_project, table(good(werror='"yes"')))
    assert_names(error, mutation="check-flipped", field="werror")
    error = rejected(km_project, "[gate]\nwerror = 1\n" + table(good()))
    assert_names(error, mutation=None, field="werror")


def test_confine_is_on_by_default_and_must_be_a_boolean(km_project):
    km_project.module(SOURCE)
    assert km_project.catalog(table(good())).settings.confine is True
    assert km_project.catalog("[gate]\nconfine = false\n" + table(good())).settings.confine is False
    error = rejected(km_project, "[gate]\nconfine = 0\n" + table(good()))
    assert_names(error, mutation=None, field="confine")


def test_a_project_inside_a_folder_its_enclosing_checkout_ignores_is_walked(tmp_path):
    from killmap.catalog.project import project_files

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("inner/\n")
    inner = tmp_path / "inner"
    (inner / "src").mkdir(parents=True)
    (inner / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (inner / "src" / "x.py").write_text("X = 1\n")
    assert project_files(inner) == ["pyproject.toml", "src/x.py"]


def test_an_option_error_names_the_option_once_and_a_catalog_field_keeps_its_place():
    assert str(GateError("--jobs must be at least 1", field="--jobs")) == "--jobs must be at least 1"
    assert str(GateError("'x' is already a mutation", field="--save")) == "option '--save': 'x' is already a mutation"
    assert (
        str(GateError("--jobs is not a field", file="mutations/a.toml", mutation="m", field="--jobs"))
        == "mutations/a.toml: mutation 'm': option '--jobs': --jobs is not a field"
    )
