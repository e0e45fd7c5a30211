"""What the gate records inside a test process is invisible to the tests: no filesystem call
on a test's own stack, where a blocking-call guard (blockbuster) fails the test. Where a
recorder does turn tests red, the gate finds it out by running them again without it: it
records with coverage's tracer instead, or refuses naming the recorder, and never blames
the tests for what it did."""

from __future__ import annotations

import subprocess
import sys

import pytest
from gatekit import copy_fixture, run_gate, write_project

from killmap.engine.reach import line_monitor, probes

ON_PROBES = probes.AVAILABLE  # before 3.12: the probes; after, the line monitor


def plain_pytest(project) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_blocking_call_guard_in_conftest_stays_green_under_the_gate(tmp_path):
    project = copy_fixture("fsguard", tmp_path)
    assert plain_pytest(project).returncode == 0
    run = run_gate(project, "run", "--no-cache", "--jobs", "1")
    assert run.code == 0, run.stdout + run.stderr
    assert run.verdicts() == {"manhattan-constant": "held"}
    assert run.report["baselines"][0]["reach_recorded_by"] == ("probes" if ON_PROBES else "sys.monitoring")
    assert "plain pytest" not in run.stdout + run.stderr


BLOCKBUSTER_PROJECT = {
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
    "pkg/__init__.py": (
        "import asyncio\nfrom collections import namedtuple\n\n\n"
        "async def fetch_point(x, y):\n    await asyncio.sleep(0)\n"
        '    Point = namedtuple("Point", "x y")\n    return Point(x, y)\n'
    ),
    "tests/conftest.py": (
        "import pytest\nfrom blockbuster import blockbuster_ctx\n\n\n"
        "@pytest.fixture(autouse=True)\ndef blockbuster():\n"
        '    with blockbuster_ctx("pkg") as guard:\n        yield guard\n'
    ),
    "tests/test_pkg.py": (
        "import asyncio\n\nfrom pkg import fetch_point\n\n\n"
        "def test_a_point_is_fetched():\n    assert asyncio.run(fetch_point(1, 2)) == (1, 2)\n"
    ),
    "mutations/pkg.toml": (
        '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "point-swapped"\n'
        'target = "pkg/__init__.py::fetch_point"\nop = "replace"\nold = "Point(x, y)"\nnew = "Point(y, x)"\n'
        'kills = ["tests/test_pkg.py::test_a_point_is_fetched"]\n'
    ),
}


def test_blockbuster_in_an_async_test_stays_green_under_the_gate(tmp_path):
    pytest.importorskip("blockbuster")
    project = write_project(tmp_path / "proj", BLOCKBUSTER_PROJECT)
    assert plain_pytest(project).returncode == 0
    run = run_gate(project, "run", "--no-cache", "--jobs", "1")
    assert run.code == 0, run.stdout + run.stderr
    assert run.verdicts() == {"point-swapped": "held"}
    # by the recorder of this Python, not by the fallback that a red under it would bring
    assert run.report["baselines"][0]["reach_recorded_by"] == ("probes" if ON_PROBES else "sys.monitoring")
    assert "reach_note" not in run.report["baselines"][0]


def _project(tmp_path, test_body: str) -> object:
    return write_project(
        tmp_path / "proj",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": "def double(x):\n    return x * 2\n",
            "tests/test_pkg.py": f"import marshal\nimport sys\n\nfrom pkg import double\n\n\n{test_body}",
            "mutations/pkg.toml": (
                '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "double-constant"\n'
                'target = "pkg/__init__.py::double"\nop = "constant-return"\nvalue = "0"\n'
                'kills = ["tests/test_pkg.py::test_double"]\n'
            ),
        },
    )


@pytest.mark.skipif(not ON_PROBES, reason="the line monitor changes no code object: nothing to marshal differs")
def test_tests_the_probes_turn_red_are_recorded_by_coverage_instead(tmp_path):
    # A bytecode-level test (an optimizer's, a code cache's) sees the probes: the function's
    # constants gain their hit counter.
    project = _project(
        tmp_path,
        "def test_double():\n    assert double(2) == 4\n\n\n"
        "def test_code_marshals():\n    assert marshal.dumps(double.__code__.co_consts) == marshal.dumps((None, 2))\n",
    )
    assert plain_pytest(project).returncode == 0
    run = run_gate(project, "run", "--no-cache", "--jobs", "1")
    assert run.code == 0, run.stdout + run.stderr
    assert run.verdicts() == {"double-constant": "held"}
    assert run.report["baselines"][0]["reach_recorded_by"] == "coverage"
    assert "reach: the reach probes made 1 test, first tests/test_pkg.py::test_code_marshals" in run.stdout
    assert "recorded by coverage's tracer instead" in run.stdout
    assert "test_code_marshals" in run.report["baselines"][0]["reach_note"]


def test_a_recorder_that_turns_tests_red_is_named_and_the_tests_are_not_blamed(tmp_path):
    project = _project(
        tmp_path,
        "def test_double():\n    assert double(2) == 4\n\n\n"
        "def test_nothing_traces():\n    assert sys.gettrace() is None\n",
    )
    assert plain_pytest(project).returncode == 0
    run = run_gate(project, "run", "--no-cache", "--jobs", "1", "--reach-tracer", "coverage")
    assert run.code == 2, run.stdout + run.stderr
    assert "the gate's reach recorder (coverage's tracer) makes tests red that pass without it" in run.stderr
    assert "tests/test_pkg.py::test_nothing_traces" in run.stderr
    assert "Traceback" not in run.stderr
    assert "they fail" not in run.stderr and "plain pytest" not in run.stderr


def test_a_baseline_red_without_recording_too_is_refused_for_what_it_is(tmp_path):
    project = _project(
        tmp_path, "def test_double():\n    assert double(2) == 4\n\n\ndef test_wrong():\n    assert double(2) == 5\n"
    )
    assert plain_pytest(project).returncode == 1  # the claim the refusal makes is true
    run = run_gate(project, "run", "--no-cache", "--jobs", "1")
    assert run.code == 2, run.stdout + run.stderr
    assert "1 failing test" in run.stderr and "tests/test_pkg.py::test_wrong" in run.stderr
    assert "they fail without the gate's reach recording too" in run.stderr
    assert "plain pytest" not in run.stderr


def test_the_recorders_resolve_no_path_for_a_name_that_is_not_a_target(tmp_path, monkeypatch):
    # The rule itself, below the gate: code compiled and run on a test's stack under another
    # file name asks nothing of os.path, whichever recorder is in force.
    target = tmp_path / "pkg.py"
    target.write_text("def one():\n    return 1\n")
    calls: list[str] = []
    real = probes.os.path.realpath
    if ON_PROBES:
        recorder = probes.ProbeReach(
            {str(target): probes.ProbedFile(str(target), target.read_bytes())},
            None,
            probes.Spellings([str(target)], {str(target): str(target)}),
        )
    else:
        recorder = line_monitor.LineMonitor([str(target)], line_monitor.free_tool_id())
    monkeypatch.setattr(probes.os.path, "realpath", lambda p, *a, **k: calls.append(p) or real(p, *a, **k))
    if ON_PROBES:
        recorder.audited("compile", (b"", "<string>"))
        recorder.audited("exec", (compile("x = 1", "namedtuple_Point", "exec"),))
        recorder.audited("compile", (b"", "elsewhere/pkg.py"))  # a namesake: settled after the run
    else:
        assert recorder._target("<string>") is False and recorder._target("elsewhere/pkg.py") is True
    assert calls == []
    monkeypatch.undo()
    if ON_PROBES:
        assert recorder.contexts() == {}  # the namesake resolved, after the run, to no target
        recorder.close()
    else:
        recorder.close()
