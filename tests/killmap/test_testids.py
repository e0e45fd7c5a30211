"""The sorted index answers exactly what asking `matches` of every collected id answers."""

import sys

import pytest

from killmap.catalog.testids import TestIndex, compacted, matches

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

IDS = [
    "tests/test_a.py::test_a",
    "tests/test_a.py::test_ab",
    "tests/test_a.py::test_a[1]",
    "tests/test_a.py::TestBox::test_open[small]",
    "tests/test_a.py::TestBox::test_open[large]",
    "tests/test_a.py::TestBoxes::test_x",
    "tests/test_ab.py::test_x",
    "tests/unit/test_u.py::test_u",
    "tests/unit_slow/test_x.py::test_y",
    "tests/unit/deeper/test_d.py::test_d",
    "tests/test_a.py-extra::test_z",  # sorts inside the "tests/test_a.py" run, names nothing
    "other/test_o.py::test_o",
]

ENTRIES = [
    "tests",
    "tests/",
    "tests/unit",
    "tests/unit/",
    "tests/test_a.py",
    "tests/test_a.py::test_a",
    "tests/test_a.py::TestBox",
    "tests/test_a.py::TestBox::test_open",
    "tests/test_a",
    "tests/test_a.py::TestB",
    "other",
    "nothing/here.py",
    "tests/test_a.py::test_a[1]",
]


@pytest.mark.parametrize("entry", ENTRIES)
def test_the_index_names_the_same_ids_as_matching_each_one(entry):
    expected = sorted(t for t in IDS if matches(entry, t))
    assert TestIndex(IDS).named_by(entry) == expected
    assert TestIndex(IDS).names_any(entry) == bool(expected)


def test_the_index_unions_what_several_entries_name():
    index = TestIndex(IDS)
    assert index.named_by_any(["tests/unit", "other"]) == {
        "tests/unit/test_u.py::test_u",
        "tests/unit/deeper/test_d.py::test_d",
        "other/test_o.py::test_o",
    }
    assert index.named_by_any([]) == set()


def test_an_expected_count_is_in_tests_as_the_red_count_is():
    from killmap.catalog.testids import named_count

    selected = ["t.py::test_p[1]", "t.py::test_p[2]", "t.py::test_p[3]", "t.py::test_p[4]", "t.py::test_q"]
    assert named_count(["t.py::test_p"], selected) == 4  # a prefix of four parametrizations
    assert named_count(["t.py::test_p", "t.py::test_gone"], selected) == 5  # one naming nothing counts one
    assert named_count(["t.py"], selected) == 5
    assert named_count([], selected) == 0


def test_the_nearest_id_is_quoted_so_that_it_pastes_into_a_catalog_as_it_is():
    # pytest escapes a non-ASCII parameter (humanize's `millón`): repr doubled the backslash,
    # which only a double-quoted TOML string reads back; a literal string takes it as shown.
    index = TestIndex(["tests/test_number.py::test_intword[mill\\xf3n]"])
    note = index.unmatched_note("tests/test_number.py::test_intword[millon]", "tests")
    assert note.endswith("did you mean 'tests/test_number.py::test_intword[mill\\xf3n]'?"), note
    assert tomllib.loads("kills = 'tests/test_number.py::test_intword[mill\\xf3n]'")["kills"] == index.closest(
        "tests/test_number.py::test_intword[millon]"
    )


def test_an_entry_holding_the_character_an_id_spells_as_an_escape_says_to_use_single_quotes():
    # python-slugify: `kills = ["...[\u2028]"]` is the line separator itself to TOML, and the
    # message printed it back looking just like pytest's id, with a "did you mean" off by one test.
    index = TestIndex(["tests/t.py::test_lines[\\u2028]", "tests/t.py::test_lines[\\u2029]"])
    entry = tomllib.loads('kills = "tests/t.py::test_lines[\\u2028]"')["kills"]
    assert "\u2028" in entry  # the character, not its escape
    note = index.unmatched_note(entry, "tests")
    assert note.endswith("write the id in single quotes, as TOML reads it literally: 'tests/t.py::test_lines[\\u2028]'")
    assert tomllib.loads("kills = 'tests/t.py::test_lines[\\u2028]'")["kills"] in index.named_by("tests/t.py")


def test_a_file_outside_the_gates_tests_is_said_to_be_outside_not_corrected_to_another():
    index = TestIndex(["tests/test_strutils.py::test_a", "tests/test_iterutils.py::test_b"])
    under = "tests/test_strutils.py, tests/test_iterutils.py"
    note = index.unmatched_note("tests/test_mathutils.py", under)
    assert note == (
        f"'tests/test_mathutils.py' matches no collected test (under {under}): tests/test_mathutils.py "
        "is not under the gate's tests; add it to [gate] tests to run it"
    )
    # Inside the gate's tests, a typo is still corrected: under a folder, the project's root, or an id.
    for gate in ("tests", ".", "tests/test_strutils.py::test_a, tests/test_iterutils.py"):
        note = index.unmatched_note("tests/test_strutil.py", gate)
        if gate.startswith("tests/test_strutils.py::"):
            assert "is not under the gate's tests" in note, note  # its file is not test_strutil.py
        else:
            assert note.endswith("did you mean 'tests/test_strutils.py'?"), (gate, note)


def test_an_id_numbered_by_its_place_in_a_set_says_why_it_changed():
    # isodate parametrizes over a set of tuples: `expected18` in one collection is
    # `expected21` in the next, and "did you mean" alone sent the user round in circles.
    index = TestIndex(["tests/test_date.py::test_parse[4-1985-102-expected21-%Y-%j]", "tests/test_date.py::test_x"])
    note = index.unmatched_note("tests/test_date.py::test_parse[4-1985-102-expected18-%Y-%j]", "tests")
    assert "did you mean 'tests/test_date.py::test_parse[4-1985-102-expected21-%Y-%j]'?" in note
    assert "pytest names the parameter 'expected18' by its place among the parameters" in note
    assert "give them ids (pytest.param(..., id=...)) or sort them" in note
    # A typo in a named parameter is a typo, and nothing more.
    index = TestIndex(["tests/test_a.py::test_b[alpha-1]"])
    note = index.unmatched_note("tests/test_a.py::test_b[alpah-1]", "tests")
    assert note.endswith("did you mean 'tests/test_a.py::test_b[alpha-1]'?")


def test_a_name_in_a_file_the_tests_have_is_compared_with_that_files_names_only():
    # toolz, as a new user: `prove` with the unknown `test_nope` suggested `test_merge`, since
    # the whole ids share the file's path; a name a letter off is still found.
    index = TestIndex(("tests/test_dicttoolz.py::test_merge", "tests/test_dicttoolz.py::test_merge_with"))
    assert index.closest("tests/test_dicttoolz.py::test_nope") is None
    assert index.closest("tests/test_dicttoolz.py::test_merg") == "tests/test_dicttoolz.py::test_merge"
    assert index.closest("tests/test_dictoolz.py::test_merge") == "tests/test_dicttoolz.py::test_merge"


def test_a_test_named_in_the_wrong_file_is_found_in_the_file_that_has_it():
    # tomli: a kills entry put the test in the file beside its own, and no hint was given,
    # since only the named file's names were compared.
    index = TestIndex(
        (
            "tests/test_data.py::test_valid",
            "tests/test_misc.py::test_parse_float",
            "tests/test_misc.py::test_load",
            "tests/sub/test_misc.py::test_parse_float",
        )
    )
    assert index.closest("tests/test_data.py::test_parse_float") == "tests/test_misc.py::test_parse_float"
    assert index.closest("tests/sub/test_data.py::test_parse_float") == "tests/sub/test_misc.py::test_parse_float"
    assert index.closest("tests/test_data.py::test_parse_floats") is None


def test_an_entry_that_stops_inside_a_name_is_told_it_is_no_whole_name():
    # blinker: `::test_mute` for `::test_mute_signal` matched nothing, with no hint why.
    index = TestIndex(["tests/test_signals.py::test_mute_signal", "tests/test_signals.py::test_other"])
    note = index.unmatched_note("tests/test_signals.py::test_mute", "tests")
    assert "it is the start of the test id tests/test_signals.py::test_mute_signal, not a whole name" in note, note
    assert note.endswith("did you mean 'tests/test_signals.py::test_mute_signal'?"), note
    index = TestIndex(["tests/t.py::test_mute_a", "tests/t.py::test_mute_b"])
    assert "the start of 2 test ids, the first tests/t.py::test_mute_a" in index.unmatched_note(
        "tests/t.py::test_mu", "."
    )


@pytest.mark.parametrize("test", ["t.py::T::test_match", "t.py::test_param[1-2]"])
def test_an_entry_naming_a_subtest_is_told_to_name_its_test(test):
    # semantic_version: a unittest subTest's label, pasted from pytest's SUBFAIL line, got only
    # "matches no collected test".
    index = TestIndex((test, "t.py::T::test_other"))
    said = index.unmatched_note(f"{test} [spec='<=0.1.2', version='0.1.2']", "t.py")
    assert f"it names a subtest of {test}" in said and f"name '{test}'" in said, said


def test_an_unmatched_entry_is_quoted_as_its_nearest_id_is():
    # pycodestyle: the entry read '..[\\t-8]' (repr doubled the backslash pytest's id holds)
    # beside the nearest id's '..[\t-8]'.
    index = TestIndex(("t.py::test_expand_indent[\\t-8]",))
    said = index.unmatched_note("t.py::test_expand_indnt[\\t-8]", "t.py")
    assert said.startswith("'t.py::test_expand_indnt[\\t-8]' matches no collected test"), said
    assert "did you mean 't.py::test_expand_indent[\\t-8]'?" in said, said


def test_an_entry_in_a_class_pytest_never_collected_is_told_which_classes_pytest_collects():
    # six: `test_six.py::EnsureTests::test_ensure_binary_raise` named a plain class whose name
    # does not start with Test, and was told only that it matched no collected test.
    index = TestIndex(("test_six.py::test_lazy", "test_six.py::TestCustomizedMoves::test_moved"))
    note = index.unmatched_note("test_six.py::EnsureTests::test_ensure_binary_raise", "test_six.py")
    assert "pytest collected no test in a class EnsureTests of test_six.py" in note, note
    assert "starts with Test" in note
    # A class it collected, or a file it never did, is not told so.
    assert "collected no test in a class" not in index.unmatched_note("test_six.py::TestCustomizedMoves::nope", ".")
    assert "collected no test in a class" not in index.unmatched_note("other.py::Ensure::x", ".")


def test_a_parametrized_test_whose_every_case_is_red_is_named_by_its_name_alone():
    # hpack, rsa: `try --save` wrote 17 ids of one parametrized test into kills.
    collected = ["t.py::test_a[1]", "t.py::test_a[2]", "t.py::test_b[1]", "t.py::test_b[2]", "t.py::test_c"]
    red = ["t.py::test_a[1]", "t.py::test_a[2]", "t.py::test_b[2]", "t.py::test_c"]
    assert compacted(red, collected) == ["t.py::test_a", "t.py::test_b[2]", "t.py::test_c"]
    assert compacted(red, ()) == ["t.py::test_a[1]", "t.py::test_a[2]", "t.py::test_b[2]", "t.py::test_c"]
