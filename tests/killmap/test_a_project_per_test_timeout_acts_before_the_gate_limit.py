"""A project's own per-test timeout (pytest-timeout) acts before the gate's limit when it is
short: the hanging test is red by it, with the cause `timeout`, and the rest of the selection
still runs (the gate's limit alone, MIN_TIMEOUT for this fast suite, ended the whole session
first). A long one is not waited for: a hang costs the gate's own limit."""

from __future__ import annotations

from gatekit import run_gate, write_project

from killmap.verdict.trial import MIN_TIMEOUT

PER_TEST = MIN_TIMEOUT + 1  # above the gate's own limit for a fast suite: without the wait, it ended first

TESTS = """from pkg import double


def test_a_hangs():
    assert double(3) == 6


def test_b_fails():
    assert double(2) == 4


def test_c_passes():
    assert double(0) == 0
"""


KILLS = '["tests/test_pkg.py::test_a_hangs", "tests/test_pkg.py::test_b_fails"]'


def hanging_project(root, per_test: float, extra: str = ""):
    """`double` loops forever on 3 under the mutant, and answers x * 3 otherwise."""
    return write_project(
        root,
        {
            "pyproject.toml": (
                f'[project]\nname = "pkg"\nversion = "0"\n\n[tool.pytest.ini_options]\ntimeout = {per_test:g}\n'
            ),
            "pkg/__init__.py": "def double(x):\n    return x * 2\n",
            "tests/test_pkg.py": TESTS,
            "mutations/pkg.toml": (
                '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "hangs-on-three"\n'
                'target = "pkg/__init__.py::double"\nop = "replace"\nold = "return x * 2"\n'
                f'new = "while x == 3:\\n        pass\\n    return x * 3"\nkills = {KILLS}\n{extra}'
            ),
        },
    )


def test_a_hanging_test_is_red_by_the_project_per_test_timeout_as_a_timeout_and_the_rest_still_runs(tmp_path):
    # Two copies of the mutant, on two jobs: the second requires an assertion.
    as_assertion = (
        '\n[[mutation]]\nname = "hangs-on-three-as-assertion"\ntarget = "pkg/__init__.py::double"\nop = "replace"\n'
        'old = "return x * 2"\nnew = "while x == 3:\\n        pass\\n    return x * 3"\n'
        f'kills = {KILLS}\nrequire = "assertion"\n'
    )
    run = run_gate(hanging_project(tmp_path / "proj", PER_TEST, as_assertion), "run", "--no-cache", "--jobs", "2")
    entry = run.mutation("hangs-on-three")
    assert entry["verdict"] != "timeout", run.stdout + run.stderr + entry["detail"]
    red = {r["id"]: r for r in entry["red"]}
    assert set(red) == {"tests/test_pkg.py::test_a_hangs", "tests/test_pkg.py::test_b_fails"}, entry
    assert "Timeout" in red["tests/test_pkg.py::test_a_hangs"]["message"]
    assert "the project's per-test timeout" in red["tests/test_pkg.py::test_a_hangs"]["message"]
    assert entry["selected_tests"] == 3 and "never ran" not in entry["detail"], entry
    assert entry["verdict"] == "held", entry
    # Its cause is a timeout, never an assertion: a hang does not meet `require = "assertion"`.
    required = run.mutation("hangs-on-three-as-assertion")
    red = {r["id"]: r for r in required["red"]}
    assert red["tests/test_pkg.py::test_a_hangs"]["cause"] == "timeout", required
    assert required["verdict"] == "wrong-cause", required


def test_a_long_project_per_test_timeout_is_not_waited_for_a_hang_costs_the_gate_limit(tmp_path):
    run = run_gate(hanging_project(tmp_path / "proj", 120), "run", "--no-cache", "--jobs", "1")
    entry = run.mutation("hangs-on-three")
    assert entry["verdict"] == "timeout", run.stdout + run.stderr
    # The gate's own limit for this fast suite, not one that waits for 120 s twice.
    assert entry["timeout_seconds"] < 120, entry["timeout_seconds"]
