"""A kills test that stays green where the selection left out a test its file runs before it
may owe its red, under plain pytest, to the state that test leaves: the mutant is judged
again with the tests before it, and its confirmation re-runs them too. structlog: a test
binds a context variable and never runs the mutated line of `clear_contextvars`; without
it two kills tests stayed green, `vacuous` where plain pytest shows the contract holding."""

from __future__ import annotations

from pathlib import Path

import pytest
from gatekit import run_gate, write_project

REGISTRY = """\
_REG = {}


def register(key, value):
    _REG[key] = value


def clear():
    for key in list(_REG):
        _REG.pop(key)


def snapshot():
    return dict(_REG)
"""

TESTS = """\
import pytest

from pkg import clear, register, snapshot


@pytest.fixture(autouse=True)
def clean():
    clear()


def test_fill():
    register("a", 1)
    assert snapshot() == {"a": 1}


def test_empty_at_start():
    assert snapshot() == {}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(
        tmp_path / "p",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": REGISTRY,
            "tests/test_reg.py": TESTS,
            "mutations/pkg.toml": (
                '[gate]\ntests = ["tests"]\npaths = ["."]\n\n'
                '[[mutation]]\nname = "clear-keeps-all"\ntarget = "pkg/__init__.py::clear"\nop = "delete-call"\n'
                'call = "pop"\nrequire = "assertion"\nkills = ["tests/test_reg.py::test_empty_at_start"]\n'
            ),
        },
    )


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_kills_test_green_without_the_test_before_it_is_judged_with_it(project, jobs):
    # In the baseline's runs, each of every test in pytest's order, test_empty_at_start's
    # fixture clears what test_fill left: it alone reaches the change. Run alone under the
    # mutant it starts empty and passes.
    done = run_gate(project, "run", "--no-cache", "--jobs", jobs)
    entry = done.mutation("clear-keeps-all")
    assert entry["verdict"] == "held", entry["detail"]
    (red,) = entry["red"]
    assert red["id"] == "tests/test_reg.py::test_empty_at_start" and red["cause"] == "assertion", red
    assert "with the tests before tests/test_reg.py::test_empty_at_start in its file" in entry["selection"]
