"""A test that reads state an earlier test of its file writes (a class attribute one unittest
method sets for the others) is red whenever the selection leaves that writer out, mutant or
not. Such a red is no evidence: the mutant is judged again with the tests before it.
pathspec: `test_02_link_1` sets `no_symlink` on its class; the gate read the others'
AttributeError as the mutant's (wrong-cause, overreach), and a sweep as eight false kills."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from gatekit import run_gate, write_project

from killmap.verdict.reach import writes_shared_state

TESTS = """\
    import unittest

    from pkg import double

    COUNTS = {}


    class T(unittest.TestCase):
        def test_1_sets_the_factor(self):
            self.__class__.factor = 2

        def test_2_doubles(self):
            self.assertEqual(double(3), 3 * self.factor)

        def test_3_own_attribute(self):
            self.scratch = 1

        @classmethod
        def make(cls):
            cls.made = True


    def test_4_counts():
        COUNTS["n"] = 1


    def test_5_declares():
        global LATER
        LATER = 1


    def test_6_local():
        COUNTS_COPY = {}
        COUNTS_COPY["n"] = 1


    def test_7_by_type():
        class Local:
            pass
        type(Local()).x = 1
    """


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(
        tmp_path / "p",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": "def double(x):\n    return x * 2\n",
            "tests/test_t.py": textwrap.dedent(TESTS),
            "mutations/pkg.toml": (
                '[gate]\ntests = ["tests"]\npaths = ["."]\n\n'
                '[[mutation]]\nname = "triples"\ntarget = "pkg/__init__.py::double"\nop = "replace"\n'
                'old = "x * 2"\nnew = "x * 3"\nrequire = "assertion"\n'
                'kills = ["tests/test_t.py::T::test_2_doubles"]\n'
            ),
        },
    )


@pytest.mark.parametrize(
    "test, writes",
    [
        ("T::test_1_sets_the_factor", True),
        ("T::test_2_doubles", False),
        ("T::test_3_own_attribute", False),  # unittest makes a new instance per test
        ("T::make", True),
        ("test_4_counts", True),
        ("test_5_declares", True),
        ("test_6_local", False),
        ("test_7_by_type", True),
        ("test_4_counts[1-2]", True),  # a parametrized id names its function
        ("test_nowhere", False),
    ],
)
def test_what_counts_as_writing_state_a_later_test_may_read(project, test, writes):
    assert writes_shared_state(project, f"tests/test_t.py::{test}") is writes


def test_a_red_that_needs_a_left_out_writer_is_judged_again_with_it(project):
    done = run_gate(project, "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("triples")
    # Alone, test_2 crashes by AttributeError, mutant or not; after test_1, it fails its assertion.
    assert entry["verdict"] == "held", entry["detail"]
    (red,) = entry["red"]
    assert red["id"] == "tests/test_t.py::T::test_2_doubles" and red["cause"] == "assertion", red
    assert "with the tests before tests/test_t.py::T::test_2_doubles in its file" in entry["selection"]
