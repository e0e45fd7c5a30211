"""A red baseline is refused, in one line a reader can use: a count, the files with theirs, a
few ids, the way out, and the file that lists every id (issue 36, item 3). It once held 244 ids."""

from __future__ import annotations

import re
from pathlib import Path

from gatekit import one_mutation_project, run_gate, write_project


def test_a_baseline_with_30_red_tests_in_two_files_is_said_by_count_and_file_with_the_full_list_in_a_file(tmp_path):
    reds_a = "".join(f"\n\ndef test_red_a{i}():\n    assert one() == 2\n" for i in range(20))
    reds_b = "".join(f"\n\ndef test_red_b{i}():\n    assert one() == 3\n" for i in range(10))
    project = one_mutation_project(
        tmp_path / "proj",
        "def one():\n    return 1\n",
        "from pkg import one\n\n\ndef test_one():\n    assert one() == 1\n",
        value="2",
    )
    write_project(
        project,
        {"tests/test_alpha.py": "from pkg import one" + reds_a, "tests/test_beta.py": "from pkg import one" + reds_b},
    )
    run = run_gate(project, "run", "--no-cache")
    assert run.code == 2, run.stdout + run.stderr
    lines = [line for line in run.stderr.splitlines() if line.startswith("killmap:")]
    assert len(lines) == 1, run.stderr
    said = lines[0]
    assert "30 failing tests" in said
    assert "tests/test_alpha.py: 20" in said and "tests/test_beta.py: 10" in said
    assert len(re.findall(r"::test_red_", said)) <= 3
    assert '[gate] exclude = ["tests/test_alpha.py", "tests/test_beta.py"]' in said  # each whole file
    listed = Path(re.search(r"all 30 listed in (\S+?);", said).group(1))
    assert listed.is_file()
    lines = listed.read_text().splitlines()
    ids = [line.split("  # ", 1)[0] for line in lines]
    assert len(ids) == 30
    # Each with why it failed (glom: the ids alone sent the user back to pytest).
    assert all(" # call: AssertionError: " in line and "(at tests/test_" in line for line in lines), lines[:2]
    assert {i.split("::")[0] for i in ids} == {"tests/test_alpha.py", "tests/test_beta.py"}
    assert not listed.is_relative_to(project)  # the user's working tree is never written


def _red_baseline_line(project) -> str:
    run = run_gate(project, "run", "--no-cache")
    assert run.code == 2, run.stdout + run.stderr
    [line] = [line for line in run.stderr.splitlines() if line.startswith("killmap:")]
    return line


def test_a_red_test_in_a_file_that_holds_green_ones_is_excluded_by_its_id(tmp_path):
    project = one_mutation_project(
        tmp_path / "proj",
        "def one():\n    return 1\n",
        "from pkg import one\n\n\ndef test_one():\n    assert one() == 1\n\n\ndef test_red():\n    assert one() == 2\n",
        value="2",
    )
    said = _red_baseline_line(project)
    assert '[gate] exclude = ["tests/test_pkg.py::test_red"]' in said, said
    assert '[gate] exclude = ["tests/test_pkg.py"]' not in said


def test_a_file_that_holds_every_test_is_never_the_exclusion_offered(tmp_path):
    # Excluding the whole file would leave nothing to gate: the failing test's id would do.
    project = one_mutation_project(
        tmp_path / "proj",
        "def one():\n    return 1\n",
        "from pkg import one\n\n\ndef test_red():\n    assert one() == 2\n",
        value="2",
        kills=("tests/test_pkg.py::test_red",),
    )
    said = _red_baseline_line(project)
    assert '[gate] exclude = ["tests/test_pkg.py::test_red"]' in said, said


def test_a_few_red_tests_are_every_one_in_the_exclusion_offered(tmp_path):
    # python-dotenv: two red tests, and the exclude offered named the first; the next run
    # refused the second.
    project = one_mutation_project(
        tmp_path / "proj",
        "def one():\n    return 1\n",
        "from pkg import one\n\n\ndef test_one():\n    assert one() == 1\n\n\n"
        "def test_red():\n    assert one() == 2\n\n\ndef test_red_too():\n    assert one() == 3\n",
        value="2",
    )
    said = _red_baseline_line(project)
    assert '[gate] exclude = ["tests/test_pkg.py::test_red", "tests/test_pkg.py::test_red_too"]' in said, said
