"""A red test is read from pytest's exception info, never from its rendered traceback, so the
gate does not ask pytest to render one. Under --tb=no pytest still renders every red test's
traceback for its report (it cuts and filters the frames, statting each frame's file, and
compares the locals of every frame of a RecursionError), which cost more than many a test
itself. The verdict must not lose anything by it.
"""

from __future__ import annotations

import json

from gatekit import one_mutation_project, run_gate


def test_a_red_tests_traceback_is_never_rendered_and_its_verdict_keeps_its_cause(tmp_path):
    rendered = tmp_path / "rendered.txt"
    # pytest asks a frame's __tracebackhide__, when it is callable, whether to hide the frame
    # as it renders the traceback: so this one is called exactly when a traceback is rendered.
    tests = (
        "from pkg import one\n\n\n"
        "def __tracebackhide__(excinfo):\n"
        f"    with open({json.dumps(str(rendered))}, 'a') as out:\n"
        "        out.write('rendered\\n')\n"
        "    return False\n\n\n"
        "def test_one():\n"
        "    assert one() == 1\n"
    )
    project = one_mutation_project(
        tmp_path / "proj", "def one():\n    return 1\n", tests, extra='require = "assertion"\n'
    )
    done = run_gate(project, "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("one-mutated")
    assert entry["verdict"] == "held", (entry["detail"], done.stderr)
    [red] = entry["red"]
    assert (red["cause"], red["exception"], red["raised_at"]) == ("assertion", "AssertionError", "tests/test_pkg.py:11")
    assert "assert 0 == 1" in red["message"]
    assert not rendered.exists(), "pytest rendered a red test's traceback in the gate's run"
