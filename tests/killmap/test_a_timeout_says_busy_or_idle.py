"""A timeout says what the run was doing when its limit came: the test that was running, and
whether it was busy (a loop) or idle (a wait that never ends). "An infinite loop is a
finding" was once said of an idle `await` and of a thread stuck in `sleep()` alike (issue 36,
item 6)."""

from __future__ import annotations

import sys

import pytest
from gatekit import run_gate, write_project

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="CPU time is read from /proc")

ENTRY = (
    '[[mutation]]\nname = "{name}"\ntarget = "pkg/__init__.py::{function}"\nop = "replace"\n'
    'old = "return 1"\nnew = "{new}"\nkills = ["tests/test_pkg.py::test_{function}"]\n\n'
)
PROJECT = {
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
    "pkg/__init__.py": (
        "import threading\nimport time\n\n\ndef spin():\n    return 1\n\n\ndef wait():\n    return 1\n"
    ),
    "tests/test_pkg.py": (
        "from pkg import spin, wait\n\n\ndef test_spin():\n    assert spin() == 1\n\n\n"
        "def test_wait():\n    assert wait() == 1\n"
    ),
    "mutations/pkg.toml": '[gate]\ntests = ["tests"]\npaths = ["."]\ntimeout = 3\n\n'
    + ENTRY.format(name="spin-loops", function="spin", new="while True:\\n        pass")
    # A thread stuck in sleep(), joined: the run waits, and uses no CPU.
    + ENTRY.format(
        name="wait-never-ends",
        function="wait",
        new="t = threading.Thread(target=time.sleep, args=(3600,), daemon=True)\\n    t.start()\\n    t.join()",
    ),
}


@pytest.mark.parametrize("path", ["swap", "fresh"])
def test_a_timeout_names_the_running_test_and_whether_it_was_busy_or_idle(tmp_path, path):
    project = write_project(tmp_path / "proj", PROJECT)
    run = run_gate(project, "run", "--no-cache", "--jobs", "1", *(["--no-swap"] if path == "fresh" else []))
    busy, idle = run.mutation("spin-loops"), run.mutation("wait-never-ends")
    assert (busy["verdict"], idle["verdict"]) == ("timeout", "timeout"), run.stdout + run.stderr
    assert busy["path"] == idle["path"] == path
    assert "in tests/test_pkg.py::test_spin, busy:" in busy["detail"]
    # Not "an infinite loop" alone: pathspec's scandir(None) recursed for 76 s, then failed.
    assert "or work far past the tests' own" in busy["detail"]
    assert "in tests/test_pkg.py::test_wait, idle:" in idle["detail"]
    assert "idle" not in busy["detail"] and "busy" not in idle["detail"]
