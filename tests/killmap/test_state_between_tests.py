"""A kills test that goes red without running the changed code itself.

wcwidth memoises with lru_cache: an earlier test fills the cache with the mutant's result,
and a later test, which never calls the mutated function, fails on it. Plain pytest turns
both red. The gate called the second "red for another reason". Now each such kills test runs
unmutated and traced, by itself: one that then runs the changed code went red
through state an earlier test left; one that still does not (it reads line numbers, or needs
a test the selection left out) is red for another reason.
"""

from __future__ import annotations

from gatekit import run_gate, write_project


def _project(root, tests: str, kills: list[str]):
    return write_project(
        root,
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": (
                "from functools import lru_cache\n\n\ndef inner(x):\n    return x * 2\n\n\n"
                "@lru_cache(maxsize=None)\ndef outer(x):\n    return inner(x)\n"
            ),
            "tests/test_pkg.py": tests,
            "mutations/pkg.toml": (
                '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "inner-constant"\n'
                'target = "pkg/__init__.py::inner"\nop = "constant-return"\nvalue = "0"\n'
                f"kills = {kills!r}\n".replace("'", '"')
            ),
        },
    )


CACHED = (
    "from pkg import outer\n\n\ndef test_a():\n    assert outer(3) == 6\n\n\ndef test_b():\n    assert outer(3) == 6\n"
)


def test_a_kill_red_through_a_cache_an_earlier_test_filled_is_held(tmp_path):
    project = _project(tmp_path / "cached", CACHED, ["tests/test_pkg.py::test_a", "tests/test_pkg.py::test_b"])
    done = run_gate(project, "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("inner-constant")
    assert entry["verdict"] == "held", entry["detail"]
    assert entry["reached_by"] == ["tests/test_pkg.py::test_a"]  # test_b never ran inner, unmutated
    assert "1 of them through state an earlier test left" in entry["detail"]


NEEDS_AN_UNSELECTED_TEST = (
    "import pkg\nfrom pkg import outer\n\nREADY = []\n\n\n"
    "def test_setup():\n    READY.append(True)\n\n\n"
    "def test_a():\n    assert outer(3) == 6\n\n\n"
    "def test_needs_setup():\n    assert READY\n"
)


def test_a_kill_red_because_the_selection_left_out_a_test_it_needs_is_still_unevidenced(tmp_path):
    project = _project(
        tmp_path / "needs",
        NEEDS_AN_UNSELECTED_TEST,
        ["tests/test_pkg.py::test_a", "tests/test_pkg.py::test_needs_setup"],
    )
    done = run_gate(project, "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("inner-constant")
    assert entry["verdict"] == "unevidenced", entry["detail"]
    assert "nor run by itself, unmutated" in entry["detail"]
    assert "tests/test_pkg.py::test_needs_setup" in entry["detail"]


LEAK = {
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
    "pkg/__init__.py": "SEEN = []\n\n\ndef record(x):\n    SEEN.append(x * 2)\n    return x * 2\n",
    "tests/test_pkg.py": (
        "from pkg import SEEN, record\n\n\ndef test_a():\n    assert record(3) == 6\n\n\n"
        "def test_b():\n    assert SEEN == [6]\n"
    ),
    "mutations/pkg.toml": (
        '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "record-constant"\n'
        'target = "pkg/__init__.py::record"\nop = "constant-return"\nvalue = "0"\n'
        'kills = ["tests/test_pkg.py::test_a", "tests/test_pkg.py::test_b"]\n'
    ),
}


def test_a_kill_red_from_the_test_order_says_so_and_points_at_may_kill(tmp_path):
    # test_b reads what test_a left, and never runs record(), not even by itself: its red
    # came from the order of the tests. "no test reached the mutated code, or its control
    # did not hold" was false twice: test_a reached it, and there is no control.
    done = run_gate(write_project(tmp_path / "leak", LEAK), "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("record-constant")
    assert entry["verdict"] == "unevidenced", entry["detail"]
    assert "a test that did execute it ran before it" in entry["detail"]
    assert entry["explanation"].startswith("the red may have come from the test order, not from the defect")
    assert "may_kill" in entry["explanation"]
    assert "control" not in entry["explanation"] and "no test reached" not in entry["explanation"]
