"""A run whose every selected test had its outcome before the limit came ran past it in what
follows the tests (the reds' confirmation, the session's end): no loop kept a test from
ending, and it is tried again with four times the limit, whose verdict stands. idna: nine
red Hypothesis tests shrink, and shrink again in their confirmation, far past ten times their
green time; 3 s under plain pytest read as "still running" at 5 s."""

from __future__ import annotations

from gatekit import run_gate, write_project

FILES = {
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
    "pkg/__init__.py": "def one():\n    return 1\n",
    # Red, the test takes 0.7 s (as a Hypothesis test shrinks), and its confirmation as long
    # again: past the 1 s limit after the test has ended, inside 4 x it.
    "tests/test_pkg.py": (
        "import time\n\nfrom pkg import one\n\n\ndef test_one():\n    if one() != 1:\n"
        "        time.sleep(0.7)\n    assert one() == 1\n"
    ),
    "mutations/pkg.toml": (
        '[gate]\ntests = ["tests"]\npaths = ["."]\ntimeout = 1\n\n[[mutation]]\nname = "two"\n'
        'target = "pkg/__init__.py::one"\nop = "replace"\nold = "return 1"\nnew = "return 2"\n'
        'kills = ["tests/test_pkg.py::test_one"]\n'
    ),
}


def test_a_timeout_after_every_test_ended_is_tried_again_with_four_times_the_limit(tmp_path):
    done = run_gate(write_project(tmp_path / "p", FILES), "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("two")
    assert entry["verdict"] == "held", entry["detail"]
    assert "confirmed with 4 x the first limit" in entry["detail"], entry["detail"]
