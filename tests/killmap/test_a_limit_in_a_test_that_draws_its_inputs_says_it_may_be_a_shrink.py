"""A limit that comes in a test that draws its inputs (Hypothesis) may have come while the
test shrank a failure it found, which plain pytest reports red once the shrink ends (bidict:
110 s, where the gate said `timeout` at 27 s, "as a loop that never ends does"). Such a
timeout is said so, never called a loop. It is not tried again longer: bidict's shrink
outlasted four times the limit too, and its confirmation shrank again (38 s became 270 s)."""

from __future__ import annotations

from gatekit import run_gate, write_project

TESTS = """\
from hypothesis import given, strategies as st

from pkg import half


@given(st.integers(0, 100))
def test_half(n):
    assert half(2 * n) == n
"""


def test_a_loop_in_a_hypothesis_test_is_said_to_maybe_be_a_shrink(tmp_path):
    project = write_project(
        tmp_path / "proj",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": "def half(x):\n    return x // 2\n",
            "tests/test_pkg.py": TESTS,
            "mutations/pkg.toml": (
                '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "half-loops"\n'
                'target = "pkg/__init__.py::half"\nop = "replace"\nold = "return x // 2"\n'
                'new = "while x > 10:\\n        pass\\n    return x // 2"\ntimeout = 1\n'
                'kills = ["tests/test_pkg.py::test_half"]\n'
            ),
        },
    )
    run = run_gate(project, "run", "--no-cache", "--jobs", "1")
    loop = run.mutation("half-loops")
    assert loop["verdict"] == "timeout", run.stdout + run.stderr
    assert "a test that draws its inputs (Hypothesis): it may be shrinking a failure it found" in loop["detail"]
    assert "busy: it kept the CPU running" not in loop["detail"]
    assert "confirmed with" not in loop["detail"], loop["detail"]
