"""A doctest that goes red is judged like any test: an example whose output differs is an
assertion about behaviour, at the example's line; one that raises is the exception it raised.

semver keeps examples in .rst files: a merged refusal message turned them red, and the gate
recorded pytest's own DocTestFailure, raised inside _pytest/doctest.py, as a crash.
"""

from __future__ import annotations

from gatekit import run_gate, write_project

PROJECT = {
    "pyproject.toml": (
        '[project]\nname = "pkg"\nversion = "0"\n\n[tool.pytest.ini_options]\n'
        'addopts = "--doctest-modules --doctest-glob=*.rst"\n'
    ),
    "pkg/__init__.py": (
        'def double(n):\n    """Twice n.\n\n    >>> double(2)\n    4\n    """\n    return n * 2\n\n\n'
        "def half(n):\n    return n // 2\n"
    ),
    "docs/usage.rst": "Halving\n=======\n\n>>> from pkg import half\n>>> half(4)\n2\n",
    "mutations/pkg.toml": """[gate]
tests = ["docs", "pkg"]
paths = ["."]

[[mutation]]
name = "half-is-a-third"
target = "pkg/__init__.py::half"
op = "replace"
old = "n // 2"
new = "n // 3"
kills = ["docs/usage.rst"]
require = "assertion"

[[mutation]]
name = "double-raises"
target = "pkg/__init__.py::double"
op = "replace"
old = "return n * 2"
new = "return n.bit_length(None)"
kills = ["pkg/__init__.py::pkg.double"]
""",
}


def test_a_doctest_whose_output_differs_is_an_assertion_at_the_examples_line(tmp_path):
    done = run_gate(write_project(tmp_path / "docs", PROJECT), "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("half-is-a-third")
    assert entry["verdict"] == "held", (entry["detail"], done.stderr)  # require = "assertion" holds
    [red] = entry["red"]
    assert red["cause"] == "assertion" and red["exception"] == "DocTestFailure"
    assert red["raised_at"] == "docs/usage.rst:5"
    assert "expected '2', got '1'" in red["message"]


def test_a_doctest_whose_example_raises_is_the_exception_it_raised(tmp_path):
    done = run_gate(
        write_project(tmp_path / "docs", PROJECT), "run", "--no-cache", "--jobs", "1", "--only", "double-raises"
    )
    entry = done.mutation("double-raises")
    assert entry["verdict"] == "held", (entry["detail"], done.stderr)
    [red] = entry["red"]
    assert red["cause"] == "crash" and red["exception"] == "TypeError"
    assert red["raised_at"] == "pkg/__init__.py:7"  # the mutant's line, not pytest's doctest.py


def test_with_continue_on_failure_the_first_failing_example_is_the_cause(tmp_path):
    # --doctest-continue-on-failure wraps the failures in pytest's MultipleDoctestFailures.
    project = dict(PROJECT)
    project["pyproject.toml"] = project["pyproject.toml"].replace(
        '--doctest-glob=*.rst"', '--doctest-glob=*.rst --doctest-continue-on-failure"'
    )
    project["docs/usage.rst"] = PROJECT["docs/usage.rst"] + ">>> half(8)\n4\n"
    done = run_gate(
        write_project(tmp_path / "docs", project), "run", "--no-cache", "--jobs", "1", "--only", "half-is-a-third"
    )
    [red] = done.mutation("half-is-a-third")["red"]
    assert red["cause"] == "assertion" and red["exception"] == "DocTestFailure"
    assert red["raised_at"] == "docs/usage.rst:5"
