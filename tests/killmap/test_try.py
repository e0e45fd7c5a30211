"""killmap try: one ad-hoc mutation from the command line; --save makes it a named one."""

from __future__ import annotations

import json
import sys

import pytest
from gatekit import run_gate
from reviewkit import fixture_repo, review, untouched

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CLASSIFY = "src/basicpkg/core.py::classify"
CATALOG = "mutations/basic.toml"


@pytest.fixture
def basic(tmp_path):
    return fixture_repo("basic", tmp_path)


def test_try_shows_the_diff_validity_and_every_red_with_its_cause_and_reach(basic):
    before = untouched(basic)
    run = review(basic, "try", CLASSIFY, "--op", "negate", "--condition", "not is_even(n)")
    assert run.code == 0, run.stdout + run.stderr
    assert "-    if not is_even(n):\n+    if is_even(n):" in run.stdout
    assert "valid: it parses, imports" in run.stdout
    assert "2 red (each confirmed by a re-run):" in run.stdout
    assert "tests/test_core.py::test_odd_is_refused  [assertion]" in run.stdout
    assert "tests/test_core.py::test_even_is_accepted  [crash] ValueError" in run.stdout
    assert "; reached the change" in run.stdout
    assert "verdict" not in run.stdout.lower()  # no contract, so no verdict
    assert untouched(basic) == before


def test_save_appends_an_entry_that_then_comes_out_held_with_the_catalogs_comments_intact(basic):
    catalog = basic / CATALOG
    original = catalog.read_text()
    first = review(
        basic,
        "try",
        CLASSIFY,
        "--op",
        "delete-call",
        "--call",
        "is_even",
        "--save",
        "odd-check-deleted",
        "--note",
        "the odd refusal, gone",
    )
    assert first.code == 0, first.stdout + first.stderr
    second = review(
        basic,
        "try",
        "src/basicpkg/core.py",
        "--op",
        "revert-patch",
        "--patch",
        "mutations/odd-refusal-fix.patch",
        "--save",
        "odd-fix-reverted-again",
    )
    assert second.code == 0, second.stdout + second.stderr
    text = catalog.read_text()
    assert text.startswith(original)  # appended: every comment and line before it stays
    assert '# the reviewer\'s "I reverted the fix and the test went red"' in text
    entries = {e["name"]: e for e in tomllib.loads(text)["mutation"]}
    deleted = entries["odd-check-deleted"]
    assert deleted["kills"] == ["tests/test_core.py::test_odd_is_refused"]
    assert deleted["require"] == "assertion"  # every red was an assertion
    assert deleted["pin"].startswith("ast1:sha256:")
    assert (deleted["op"], deleted["call"], deleted["note"]) == ("delete-call", "is_even", "the odd refusal, gone")
    reverted = entries["odd-fix-reverted-again"]
    assert reverted["patch"] == "odd-refusal-fix.patch"  # relative to the catalog, as the gate reads it
    assert reverted["patch_pin"].startswith("sha256:") and reverted["preimage_pin"].startswith("sha256:")
    gate = run_gate(basic, "run", "--no-cache", "--only", "odd-check-deleted", "--only", "odd-fix-reverted-again")
    assert gate.verdicts() == {"odd-check-deleted": "held", "odd-fix-reverted-again": "held"}, gate.stdout


def test_save_refuses_a_mutation_that_turned_nothing_red(basic):
    before = untouched(basic)
    run = review(
        basic, "try", CLASSIFY, "--op", "replace", "--old", '"even"', "--new", "'even'", "--save", "quotes-changed"
    )
    assert run.code == 1
    assert "nothing went red" in run.stdout and "not saved" in run.stdout
    assert untouched(basic) == before


def test_save_refuses_a_name_the_catalog_already_has(basic):
    run = review(basic, "try", CLASSIFY, "--op", "delete-call", "--call", "is_even", "--save", "classify-call-deleted")
    assert run.code == 2 and "option '--save'" in run.stderr and "already a mutation" in run.stderr


@pytest.mark.parametrize(
    "args,field",
    [
        (("--op", "delete-call"), "--call"),
        (("--op", "no-such-op"), "--op"),
        (("--op", "constant-return", "--value", "1 +"), "--value"),
        (("--op", "delete-call", "--call", "is_even", "--save", "Not Kebab"), "--save"),
        (("--op", "delete-call", "--call", "is_even", "--old", "x"), "--old"),
    ],
    ids=["missing-field", "unknown-op", "not-an-expression", "bad-name", "field-of-another-op"],
)
def test_bad_input_is_one_line_naming_the_option(basic, args, field):
    run = review(basic, "try", CLASSIFY, *args)
    assert run.code == 2, run.stdout + run.stderr
    assert f"option {field!r}" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr


def test_an_option_of_another_op_lists_the_options_this_op_takes(basic):
    # Not the catalog's "allowed: kills, may_kill, pin, ...": fields try has no option for.
    run = review(basic, "try", CLASSIFY, "--op", "delete-call", "--call", "is_even", "--old", "x")
    assert run.stderr.strip() == "killmap: option '--old': not an option of op 'delete-call' (its options: --call)"


def test_a_missing_target_names_the_target(basic):
    run = review(basic, "try", "src/basicpkg/nope.py::f", "--op", "delete-call", "--call", "x")
    assert run.code == 2 and "field 'TARGET'" in run.stderr and "not found" in run.stderr


def test_options_that_apply_nowhere_are_bad_input_naming_the_option(basic):
    # As the same entry in a catalog is to `check`: exit 2, one line, nothing run.
    run = review(basic, "try", CLASSIFY, "--op", "delete-call", "--call", "no_such_call")
    assert run.code == 2, run.stdout + run.stderr
    assert "option '--call': not applied: op 'delete-call' matched 0 sites" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "baseline" not in run.stdout


def test_a_mutant_whose_reds_cannot_be_read_says_why_and_exits_1(basic):
    run = review(basic, "try", CLASSIFY, "--op", "constant-return", "--value", "undefined_name")
    assert run.code == 1, run.stdout + run.stderr
    assert "broken: the mutant cannot run as written (pyflakes)" in run.stdout


def test_a_symbol_the_file_lacks_is_said_of_the_command_line_not_of_a_catalog(basic):
    # The ad-hoc mutation is in no catalog: "mutations/basic.toml: mutation 'try'" sent the
    # user to a file and an entry that do not exist.
    run = review(basic, "try", "src/basicpkg/core.py::no_such_function", "--op", "constant-return", "--value", "1")
    assert run.code == 2, run.stdout + run.stderr
    assert "field 'TARGET'" in run.stderr and "no symbol 'no_such_function' in src/basicpkg/core.py\n" in run.stderr
    assert "mutation 'try'" not in run.stderr and ".toml" not in run.stderr


def test_try_with_report_dir_writes_the_mutants_reds_there_as_run_writes_its_reports(basic, tmp_path):
    folder = tmp_path / "try-reports"
    run = review(basic, "try", CLASSIFY, "--op", "negate", "--condition", "not is_even(n)", "--report-dir", str(folder))
    assert run.code == 0, run.stdout + run.stderr
    [entry] = json.loads((folder / "killmap.json").read_text())["mutations"]
    assert entry["name"] == "try" and entry["op"] == "negate"
    assert {r["id"] for r in entry["red"]} == {
        "tests/test_core.py::test_odd_is_refused",
        "tests/test_core.py::test_even_is_accepted",
    }
    assert (folder / "killmap.md").exists() and f"reports: {folder / 'killmap.json'}" in run.stdout


def test_a_target_pytest_itself_imports_is_refused_of_the_command_line_with_nothing_said_before(tmp_path):
    # pluggy: try printed its header and the mutant's diff, then refused it as
    # "mutations/pluggy.toml: mutation 'try': field 'target'", a catalog entry that is not there.
    from gatekit import pluggy_shaped_project

    project = pluggy_shaped_project(tmp_path / "plugin")
    run = run_gate(project, "try", "src/pluggy/mod.py::f", "--op", "constant-return", "--value", "0")
    assert run.code == 2 and run.stdout == "", run.stdout
    assert run.stderr.startswith("killmap: field 'TARGET': pluggy.mod cannot be mutated here"), run.stderr


def test_try_with_several_catalogs_and_none_named_says_whose_gate_it_runs_under(basic):
    # sortedcontainers: two catalogs, and try ran killmap's defaults without a word.
    (basic / "mutations" / "other.toml").write_text('[gate]\ntests = ["tests/test_core.py"]\n', encoding="utf-8")
    run = review(basic, "try", CLASSIFY, "--op", "negate", "--condition", "not is_even(n)")
    assert "gate: killmap's defaults (tests: tests), not the [gate] of any of the 2 catalogs" in run.stdout, run.stdout
    named = review(basic, "try", CLASSIFY, "--op", "negate", "--condition", "not is_even(n)", "--catalog", CATALOG)
    assert "gate: " not in named.stdout, named.stdout


def test_save_names_a_parametrized_test_whose_every_case_went_red_by_its_name(tmp_path):
    from gatekit import write_project

    project = write_project(
        tmp_path / "p",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": "def double(x):\n    return x * 2\n",
            "tests/test_pkg.py": (
                "import pytest\n\nfrom pkg import double\n\n\n@pytest.mark.parametrize('x', [1, 2, 3])\n"
                "def test_double(x):\n    assert double(x) == x + x\n"
            ),
            "mutations/pkg.toml": '[gate]\ntests = ["tests"]\npaths = ["."]\n',
        },
    )
    done = run_gate(
        project,
        "try",
        "pkg/__init__.py::double",
        "--op",
        "replace",
        "--old",
        "x * 2",
        "--new",
        "x * 3",
        "--save",
        "triples",
        "--catalog",
        "mutations/pkg.toml",
    )
    assert done.code == 0, done.stdout + done.stderr
    (entry,) = tomllib.loads((project / "mutations/pkg.toml").read_text())["mutation"]
    assert entry["kills"] == ["tests/test_pkg.py::test_double"]
