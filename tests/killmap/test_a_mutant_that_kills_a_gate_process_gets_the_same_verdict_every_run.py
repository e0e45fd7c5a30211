"""A mutant that kills the process its tests run under gets one verdict, on every run.

`os.kill(os.getppid(), 9) or a - b` kills the gate's process (the collected session's, or the
worker's in a fresh session) and then computes the defect its contract names. Which of its
tests reported before the kill reached them differs from one run to the next; the verdict is
decided from which run the gate's process died in, so it does not.
"""

from __future__ import annotations

import sys

import pytest
from gatekit import run_gate, tree_digest, write_project

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process containment is proven with /proc")

RUNS = 3  # each a whole gate run; 10 of 10 were seen by hand


def parent_killer(root):
    return write_project(
        root,
        {
            "pyproject.toml": '[project]\nname = "calc"\nversion = "0"\n',
            "calc/__init__.py": (
                "import os\n\n\ndef add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
            ),
            "tests/test_calc.py": (
                "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
                "def test_add_zero():\n    assert add(0, 0) == 0\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
            ),
            "mutations/calc.toml": (
                '[gate]\ntests = ["tests"]\npaths = ["."]\n\n'
                '[[mutation]]\nname = "kills-parent"\ntarget = "calc/__init__.py::add"\nop = "replace"\n'
                'old = "a + b"\nnew = "os.kill(os.getppid(), 9) or a - b"\nkills = ["tests/test_calc.py::test_add"]\n\n'
                '[[mutation]]\nname = "mul-plus"\ntarget = "calc/__init__.py::mul"\nop = "replace"\n'
                'old = "a * b"\nnew = "a + b"\nkills = ["tests/test_calc.py::test_mul"]\n'
            ),
        },
    )


@pytest.mark.parametrize("flags", [(), ("--no-swap", "--jobs", "2")], ids=["session", "fresh"])
def test_a_mutant_that_kills_its_parent_is_escaped_with_the_same_words_on_every_run(tmp_path, flags):
    project = parent_killer(tmp_path / "proj")
    before = tree_digest(project)
    seen = set()
    for _ in range(RUNS):
        run = run_gate(project, "run", "--no-cache", *flags)
        assert run.code == 1, run.stderr
        entry = run.mutation("kills-parent")
        seen.add((entry["verdict"], entry["detail"], len(entry["red"])))
        assert run.mutation("mul-plus")["verdict"] == "held", run.mutation("mul-plus")["detail"]
    assert len(seen) == 1, seen
    verdict, detail, _ = seen.pop()
    assert verdict == "escaped"
    assert detail.startswith("the mutant killed the gate's worker")
    assert "re-run it" not in detail and "a re-run does the same" in detail
    assert tree_digest(project) == before
