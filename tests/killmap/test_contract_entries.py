"""Contract entries: a folder with or without its slash, and no test said twice.

`kills` and `may_kill` name node ids or prefixes ending at a boundary. A folder may be
written `tests` or `tests/`; a loose word is still refused. A contract that names one
test twice, or both requires and allows it, says two things: a catalog error, exit 2.
"""

from __future__ import annotations

import pytest
from gatekit import run_gate

from killmap.errors import GateError

MOD = "src/pkg/mod.py"
SOURCE = "def double(x):\n    return x * 2\n"
TEST_A = "from pkg.mod import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
TEST_B = "from pkg.mod import double\n\n\ndef test_double_zero():\n    assert double(3) == 6\n"
# Cannot import the target: the import filter would leave this file out of every run.
TEST_UNRELATED = "def test_arithmetic():\n    assert 1 + 1 == 2\n"


def entry(kills: str, may_kill: str = "[]") -> str:
    return (
        f'[gate]\ntests = ["tests"]\npaths = ["src"]\n\n[[mutation]]\nname = "double-is-triple"\n'
        f'target = "{MOD}::double"\nop = "replace"\nold = "x * 2"\nnew = "x * 3"\n'
        f"kills = {kills}\nmay_kill = {may_kill}\n"
    )


@pytest.fixture
def project(km_project):
    km_project.module(SOURCE)
    (km_project.root / "tests" / "test_mod.py").unlink()
    km_project.write("tests/test_a.py", TEST_A)
    km_project.write("tests/test_b.py", TEST_B)
    return km_project


def load(project, kills: str, may_kill: str = "[]"):
    return project.mutation(entry(kills, may_kill))


def error_of(project, kills: str, may_kill: str = "[]") -> GateError:
    with pytest.raises(GateError) as caught:
        load(project, kills, may_kill)
    return caught.value


# --- a folder, with or without its slash --------------------------------------------------


@pytest.mark.parametrize("folder", ['"tests"', '"tests/"'])
def test_a_folder_given_with_or_without_its_slash_is_a_kills_prefix(project, folder):
    assert load(project, f"[{folder}]").kills == (folder.strip('"'),)


@pytest.mark.parametrize("loose", ['"test_a"', '"double"', '"test"'])
def test_a_loose_word_is_still_refused(project, loose):
    error = error_of(project, f"[{loose}]")
    assert error.field == "kills" and loose.strip('"') in str(error)


def test_a_file_of_the_project_is_named_by_its_name(project):
    # tabulate's README.md, which pytest collects by --doctest-glob: README.md::README.md.
    project.write("README.md", ">>> 1 + 1\n2\n")
    assert load(project, '["README.md"]').kills == ("README.md",)


def test_a_folder_without_its_slash_runs_and_holds(project):
    project.write("mutations/catalog.toml", entry('["tests"]'), dedent=False)
    run = run_gate(project.root, "run", "--no-cache", "--jobs", "1")
    assert run.code == 0, run.stderr
    assert run.verdicts() == {"double-is-triple": "held"}
    assert sorted(r["id"] for r in run.mutation("double-is-triple")["red"]) == [
        "tests/test_a.py::test_double",
        "tests/test_b.py::test_double_zero",
    ]


def test_a_kills_folder_keeps_its_files_that_cannot_import_the_target(project):
    # Every test in a kills folder must go red. One that cannot even import the target
    # stays green: the verdict is vacuous, not a held bought by leaving the file out.
    project.write("tests/test_unrelated.py", TEST_UNRELATED)
    project.write("mutations/catalog.toml", entry('["tests"]'), dedent=False)
    run = run_gate(project.root, "run", "--no-cache", "--jobs", "1")
    assert run.code == 1, run.stderr
    entry_ = run.mutation("double-is-triple")
    assert entry_["verdict"] == "vacuous"
    assert "tests/test_unrelated.py::test_arithmetic" in entry_["missing"]


# --- contradictions -----------------------------------------------------------------------


def test_an_id_in_both_kills_and_may_kill_is_a_catalog_error(project):
    error = error_of(project, '["tests/test_a.py::test_double"]', '["tests/test_a.py::test_double"]')
    assert (error.file, error.mutation, error.field) == ("mutations/catalog.toml", "double-is-triple", "may_kill")
    assert "'tests/test_a.py::test_double'" in str(error) and "both kills and may_kill" in str(error)


def test_an_id_repeated_within_kills_is_a_catalog_error(project):
    error = error_of(
        project, '["tests/test_a.py::test_double", "tests/test_b.py::test_double_zero", "tests/test_a.py::test_double"]'
    )
    assert error.field == "kills" and "'tests/test_a.py::test_double' is listed twice in kills" in str(error)


def test_an_id_repeated_within_may_kill_is_a_catalog_error(project):
    error = error_of(project, '["tests/test_a.py::test_double"]', '["tests/test_b.py", "tests/test_b.py"]')
    assert error.field == "may_kill" and "listed twice in may_kill" in str(error)


def test_a_folder_with_and_without_its_slash_is_the_same_entry(project):
    error = error_of(project, '["tests", "tests/"]')
    assert error.field == "kills" and "listed twice" in str(error)


def test_a_may_kill_test_that_a_kills_prefix_already_requires_is_a_contradiction(project):
    error = error_of(project, '["tests/test_a.py"]', '["tests/test_a.py::test_double"]')
    assert error.field == "may_kill" and "kills 'tests/test_a.py' covers it" in str(error)


def test_a_kills_entry_inside_another_kills_prefix_is_listed_twice(project):
    error = error_of(project, '["tests/test_a.py", "tests/test_a.py::test_double"]')
    assert error.field == "kills" and "'tests/test_a.py' already covers it" in str(error)


def test_a_may_kill_folder_around_a_kills_test_is_no_contradiction(project):
    # "this one must go red, the others in the folder may": two different statements.
    mutation = load(project, '["tests/test_a.py::test_double"]', '["tests"]')
    assert mutation.may_kill == ("tests",)


def test_a_contradiction_is_one_line_and_exit_2_from_the_command(project):
    project.write(
        "mutations/catalog.toml",
        entry('["tests/test_a.py::test_double"]', '["tests/test_a.py::test_double"]'),
        dedent=False,
    )
    run = run_gate(project.root, "run", "--no-cache")
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.code == 2 and len(lines) == 1 and "Traceback" not in run.stderr
    assert "mutations/catalog.toml" in lines[0] and "'double-is-triple'" in lines[0]
    assert "'may_kill'" in lines[0] and "tests/test_a.py::test_double" in lines[0]


def test_a_kills_entry_that_names_only_skipped_tests_is_a_contract_error(project):
    # A contract that can never hold: a skipped test never goes red, under any mutant.
    skipped = TEST_B.replace("\n\n\ndef ", "\n\n\n@pytest.mark.skip(reason='later')\ndef ")
    project.write("tests/test_b.py", "import pytest\n" + skipped, dedent=False)
    project.write("mutations/catalog.toml", entry('["tests/test_b.py"]'), dedent=False)
    run = run_gate(project.root, "run", "--no-cache", "--jobs", "1")
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.code == 2 and len(lines) == 1, run.stdout + run.stderr
    assert lines[0] == (
        "killmap: mutations/catalog.toml: mutation 'double-is-triple': field 'kills': 'tests/test_b.py' names "
        "1 test, tests/test_b.py::test_double_zero, which the baseline skipped: a skipped test never goes "
        "red, so this contract could never hold; name a test that runs"
    )
    # A prefix over two tests, one of them skipped, could never hold either: said with the count.
    project.write("mutations/catalog.toml", entry('["tests"]'), dedent=False)
    run = run_gate(project.root, "run", "--no-cache", "--jobs", "1")
    assert run.code == 2 and "'tests' names 1 test the baseline skipped, of 2 (first: " in run.stderr
    assert "(a skipped one may go in may_kill)" in run.stderr
    # The test that runs, with the skipped one allowed: a contract, and it holds.
    project.write("mutations/catalog.toml", entry('["tests/test_a.py"]', '["tests/test_b.py"]'), dedent=False)
    assert run_gate(project.root, "run", "--no-cache", "--jobs", "1").verdicts() == {"double-is-triple": "held"}
