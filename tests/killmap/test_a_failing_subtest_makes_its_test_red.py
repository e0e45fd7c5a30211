"""A unittest test that loops over its cases in `subTest` blocks is red when one case fails,
though the cases after it pass and pytest 9 reports the test itself as passed beside the
failing case (more-itertools' suite is written so: 2,332 cases in 663 tests).

pytest 9 hands each failing case to `pytest_runtest_makereport` as a report of the test's own
id; before 9, the first failing case fails the whole test. The gate must read either as the
test red, as plain pytest's exit status does: it is compared here with plain pytest run on the
same mutant."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

from gatekit import run_gate, write_project

SOURCE = "def last(items):\n    return items[-1]\n"
MUTANT = SOURCE.replace("items[-1]", "items[0] if len(items) > 2 else items[-1]")
# The failing case is the first of three: the two after it pass.
TESTS = (
    "import unittest\n\nfrom pkg import last\n\n\n"
    "class LastTests(unittest.TestCase):\n"
    "    def test_cases(self):\n"
    "        for items, expected in [([1, 2, 3], 3), ([4, 5], 5), ([6], 6)]:\n"
    "            with self.subTest(items=items):\n"
    "                self.assertEqual(last(items), expected)\n\n"
    "    def test_other(self):\n"
    "        self.assertEqual(last('ab'), 'b')\n"
)
CATALOG = (
    '[gate]\ntests = ["tests"]\npaths = ["."]\n\n'
    '[[mutation]]\nname = "last-takes-the-first-of-three"\ntarget = "pkg/__init__.py::last"\n'
    'op = "replace"\nold = "return items[-1]"\nnew = "return items[0] if len(items) > 2 else items[-1]"\n'
    'kills = ["tests/test_last.py::LastTests::test_cases"]\n'
)
TEST_ID = "tests/test_last.py::LastTests::test_cases"


def _plain_pytest_red(project) -> tuple[int, set[str]]:
    """Plain pytest on the mutant, in a copy: its exit status and the ids of its failing reports."""
    copy = project.parent / "plain"
    shutil.copytree(project, copy)
    (copy / "pkg" / "__init__.py").write_text(MUTANT, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-p", "no:randomly", "tests"],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=120,
    )
    red = set(re.findall(r"^(?:SUB)?FAILED(?:\(.*?\))? (\S+)", done.stdout, re.M))
    return done.returncode, red


def test_a_mutant_failing_one_subtest_case_holds_a_contract_on_its_test_as_plain_pytest_says(tmp_path):
    project = write_project(
        tmp_path / "proj",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": SOURCE,
            "tests/test_last.py": TESTS,
            "mutations/pkg.toml": CATALOG,
        },
    )
    code, plain_red = _plain_pytest_red(project)
    assert (code, plain_red) == (1, {TEST_ID})
    ran = run_gate(project, "run", "--no-cache")
    assert ran.code == 0, ran.stdout + ran.stderr
    entry = ran.mutation("last-takes-the-first-of-three")
    assert entry["verdict"] == "held", entry["detail"]
    assert [(red["id"], red["cause"]) for red in entry["red"]] == [(TEST_ID, "assertion")]
