"""A mutant that changes the ids of tests the baseline collected (a parametrize value taken
from the mutated code) leaves those tests unjudgeable by id: pytest refuses the whole run. A
gate's mutation whose contract names none of them is judged by the other tests, run again
without their file, where the verdict cannot depend on them (overreach, vacuous, wrong-cause);
`held` cannot be said, and stays `inconclusive`, whose explanation no longer says to re-run
(natsort: a regex's pattern is a parametrize id of test_utils.py)."""

from __future__ import annotations

import pytest
from gatekit import run_gate, write_project

FILES = {
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
    "pkg/__init__.py": (
        "import re\n\nSIGNED = re.compile(r'[-+]?[0-9]+')\n\n\ndef numbers(text):\n    return SIGNED.findall(text)\n"
    ),
    "tests/test_ids.py": (
        "import pytest\n\nfrom pkg import SIGNED\n\n\n"
        "@pytest.mark.parametrize('pattern', [SIGNED])\ndef test_compiles(pattern):\n    assert pattern.pattern\n"
    ),
    "tests/test_numbers.py": (
        "from pkg import numbers\n\n\ndef test_signed():\n    assert numbers('-5') == ['-5']\n\n\n"
        "def test_plus():\n    assert numbers('+7') == ['+7']\n"
    ),
}


def _catalog(kills: str) -> str:
    return (
        '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "sign-ignored"\n'
        "target = \"pkg/__init__.py\"\nop = \"replace\"\nold = '[-+]?'\nnew = ''\n"
        f"kills = {kills}\n"
    )


def test_an_overreach_among_the_tests_that_ran_stands(tmp_path):
    files = {**FILES, "mutations/pkg.toml": _catalog('["tests/test_numbers.py::test_signed"]')}
    done = run_gate(write_project(tmp_path / "p", files), "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("sign-ignored")
    assert entry["verdict"] == "overreach", entry["detail"]
    red = sorted(r["id"] for r in entry["red"])
    assert red == ["tests/test_numbers.py::test_plus", "tests/test_numbers.py::test_signed"]
    assert "did not run in the mutant" in entry["detail"] and "tests/test_ids.py" in entry["detail"]


def test_held_among_the_tests_that_ran_stays_inconclusive_and_says_a_rerun_gives_the_same(tmp_path):
    files = {**FILES, "mutations/pkg.toml": _catalog('["tests/test_numbers.py"]')}
    done = run_gate(write_project(tmp_path / "p", files), "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("sign-ignored")
    assert entry["verdict"] == "inconclusive", entry["detail"]
    assert entry["explanation"].startswith("the mutant changed the ids of tests the baseline collected")
    assert "re-run it" not in done.stdout


@pytest.mark.parametrize(
    "kills",
    [
        '["tests/test_numbers.py::test_signed", "tests/test_ids.py"]',
        '["tests/test_numbers.py::test_signed"]\nmay_kill = ["tests/test_ids.py::test_compiles"]',
    ],
)
def test_a_contract_naming_a_renamed_test_stays_inconclusive(tmp_path, kills):
    # Its own test did not run: nothing the other tests say can stand for it.
    files = {**FILES, "mutations/pkg.toml": _catalog(kills)}
    done = run_gate(write_project(tmp_path / "p", files), "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("sign-ignored")
    assert entry["verdict"] == "inconclusive", entry["detail"]


def test_every_file_whose_ids_changed_is_left_out_not_only_the_first_pytest_names(tmp_path):
    # pytest refused a run at the first id it no longer had, naming that one file: the run
    # without it then met the second file's and was refused again (inconclusive).
    second = FILES["tests/test_ids.py"].replace("test_compiles", "test_compiles_too")
    files = {
        **FILES,
        "tests/test_more_ids.py": second,
        "mutations/pkg.toml": _catalog('["tests/test_numbers.py::test_signed"]'),
    }
    done = run_gate(write_project(tmp_path / "p", files), "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("sign-ignored")
    assert entry["verdict"] == "overreach", entry["detail"]
    assert "tests/test_ids.py" in entry["detail"] and "tests/test_more_ids.py" in entry["detail"]


def test_held_stands_where_may_kill_names_the_files_whose_ids_changed(tmp_path):
    # python-json-logger: a module flag read by a parametrize list renamed tests all over the
    # suite, and may_kill = ["tests"] asked nothing of them: plain pytest shows the contract held.
    kills = '["tests/test_numbers.py"]\nmay_kill = ["tests"]'
    files = {**FILES, "mutations/pkg.toml": _catalog(kills)}
    done = run_gate(write_project(tmp_path / "p", files), "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("sign-ignored")
    assert entry["verdict"] == "held", entry["detail"]
    assert "tests/test_ids.py" in entry["detail"]
