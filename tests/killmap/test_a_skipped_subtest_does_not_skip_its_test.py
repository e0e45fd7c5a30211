"""A subtest that skips leaves its test as it was: pytest 9 says "1 passed, 1 skipped" of a
unittest test whose subTest calls skipTest, and a subtest that fails makes its test red
whatever the others did. The recorder read every subtest's report as the test's own:
python-slugify's release test was "skipped" in the baseline, so its real red under a mutant
was never seen and a contract naming it was refused."""

from __future__ import annotations

import pytest
from gatekit import run_gate, write_project

SUBTESTS = (
    "import unittest\n\nfrom pkg import ascii_only\n\n\n"
    "class T(unittest.TestCase):\n"
    "    def test_cases(self):\n"
    "        for text in ('abc', 'é', 'xyz'):\n"
    "            with self.subTest(text=text):\n"
    "                if not text.isascii():\n"
    "                    self.skipTest('no backend here')\n"
    "                self.assertEqual(ascii_only(text), text)\n"
)
CATALOG = (
    '[gate]\ntests = ["tests"]\npaths = ["."]\n\n'
    '[[mutation]]\nname = "drops-the-last"\ntarget = "pkg/__init__.py::ascii_only"\nop = "replace"\n'
    "old = \"return text\"\nnew = \"return text if text < 'x' else ''\"\n"
    'kills = ["tests/test_sub.py::T::test_cases"]\n'
)


@pytest.mark.skipif(int(pytest.__version__.split(".")[0]) < 9, reason="pytest 9 reports subtests itself")
def test_a_test_whose_subtest_skips_is_green_and_goes_red_by_a_later_subtest(tmp_path):
    project = write_project(
        tmp_path / "p",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": "def ascii_only(text):\n    return text\n",
            "tests/test_sub.py": SUBTESTS,
            "mutations/pkg.toml": CATALOG,
        },
    )
    done = run_gate(project, "run", "--no-cache", "--jobs", "1")
    assert done.code == 0, done.stdout + done.stderr
    entry = done.mutation("drops-the-last")
    assert entry["verdict"] == "held", entry["detail"]
    assert [r["id"] for r in entry["red"]] == ["tests/test_sub.py::T::test_cases"]


SKIPS_AFTER = (
    "import unittest\n\nfrom pkg import ascii_only\n\n\n"
    "class T(unittest.TestCase):\n"
    "    def test_cases(self):\n"
    "        for text in ('abc', 'xyz'):\n"
    "            with self.subTest(text=text):\n"
    "                self.assertEqual(ascii_only(text), text)\n"
    "        self.skipTest('the rest needs a backend')\n"
)


@pytest.mark.skipif(int(pytest.__version__.split(".")[0]) < 9, reason="pytest 9 reports subtests itself")
def test_a_test_that_skips_after_a_failed_subtest_stays_red(tmp_path):
    # The test's own report says skipped; its subtest failed first, and that red stands.
    project = write_project(
        tmp_path / "p",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": "def ascii_only(text):\n    return text\n",
            "tests/test_sub.py": SKIPS_AFTER,
            "tests/test_other.py": "from pkg import ascii_only\n\n\ndef test_abc():\n    assert ascii_only('abc')\n",
            "mutations/pkg.toml": CATALOG.replace("tests/test_sub.py::T::test_cases", "tests/test_other.py::test_abc"),
        },
    )
    done = run_gate(project, "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("drops-the-last")
    assert "tests/test_sub.py::T::test_cases" in [r["id"] for r in entry["red"]], entry["detail"]
