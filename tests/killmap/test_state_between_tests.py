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
    assert "not even when run by itself" in entry["detail"]
    assert "tests/test_pkg.py::test_needs_setup" in entry["detail"]
