"""The baseline's line monitor (sys.monitoring, Python 3.12+) records what coverage records.

Selection is only sound if every test that runs a changed line is credited with it. So the
monitor is held to coverage's C tracer, the recorder it replaces: both run at once over the
same calls, one context per "test", and must agree on every line of every context. The
module under test is written to touch what a line tracer can get wrong (except headers,
elif tests, lambdas, generators resumed later, closures, comprehensions, decorators,
coroutines, a module imported or reloaded after the monitor started).

Python 3.11 has no sys.monitoring: there these skip, and `.ci/run` runs them under 3.12
with KILLMAP_REQUIRE_MONITORING=1, which makes them fail instead of skip.
"""

from __future__ import annotations

import importlib
import os
import sys

import pytest
from gatekit import copy_fixture, run_gate
from tracekit import LATE, TARGET, recorded_by

if sys.version_info < (3, 12) and os.environ.get("KILLMAP_REQUIRE_MONITORING") != "1":
    pytest.skip("sys.monitoring is Python 3.12+ (.ci/run runs these under 3.12)", allow_module_level=True)


def _monitor_beside_coverage(tmp_path, name):
    """A LineMonitor and coverage's C tracer, both started, then the target imported: the
    order of a collected session, whose collection is the "" context."""
    from killmap.engine.reach.line_monitor import line_monitor
    from killmap.engine.reach.tracing import per_test_coverage

    target = tmp_path / f"{name}.py"
    target.write_text(TARGET)
    late = tmp_path / f"{name}_late.py"
    late.write_text(LATE)
    monitor = line_monitor([str(target), str(late)])
    assert monitor is not None
    cov = per_test_coverage([str(target), str(late)])
    cov.start()
    monitor.start()
    sys.path.insert(0, str(tmp_path))
    module = importlib.import_module(name)
    paused = module.counter(3)
    next(paused)  # suspended while tests are collected
    orphan = module.orphan()
    next(orphan)
    del module.orphan  # gone from the module: only the generator's frame holds it
    return module, (paused, orphan), monitor, cov


def _run_tests(module, paused, monitor, cov, tests):
    try:
        for context, body in tests:
            cov.switch_context(context)
            monitor.switch_context(context)
            body()
            cov.switch_context("")
            monitor.switch_context("")
    finally:
        monitor.stop()
        cov.stop()
        monitor.close()


def _lines(found):
    return {
        (path, context): tuple(lines) for path, by_context in found.items() for context, lines in by_context.items()
    }


def test_the_monitor_credits_every_test_with_the_lines_coverage_credits_it_with(tmp_path):
    from killmap.engine.reach.tracing import coverage_contexts

    module, paused, monitor, cov = _monitor_beside_coverage(tmp_path, "km_target_a")
    import asyncio

    tests = [
        ("negative", lambda: module.classify(-1)),
        ("branches", lambda: [module.classify(n) for n in (0, 2, 3)]),
        ("again", lambda: module.classify(3)),  # the same lines as before: credited again
        ("guarded", lambda: (module.guarded("7"), module.guarded(None), module.guarded("x"))),
        ("resumed", lambda: list(paused[0])),  # a generator suspended before the start
        ("orphan", lambda: list(paused[1])),  # and one whose function is gone
        ("fresh-generator", lambda: list(module.counter(2))),
        ("closure", lambda: module.closure(2)),
        ("comprehension", lambda: module.comprehension([1, 2, 3, 4])),
        ("decorated", lambda: module.decorated(1)),
        ("property", lambda: module.Shape(4).name),
        ("coroutine", lambda: asyncio.run(module.awaited(2))),
        ("match", lambda: (module.matcher("go north"), module.matcher("stop"))),
        ("imported-late", lambda: importlib.import_module("km_target_a_late").late(1)),
        ("reloaded", lambda: importlib.reload(module).classify(-5)),
        ("nothing", lambda: None),
    ]
    _run_tests(module, paused, monitor, cov, tests)
    expected, found = _lines(coverage_contexts(cov)), _lines(monitor.contexts())
    assert found == expected  # collection's lines ("") included
    # Not vacuous: each kind of code above was seen, and twice where two tests ran it.
    target = os.path.realpath(tmp_path / "km_target_a.py")
    late = os.path.realpath(tmp_path / "km_target_a_late.py")
    assert (target, "") in found and (late, "imported-late") in found
    assert found[(target, "again")] and set(found[(target, "again")]) <= set(found[(target, "branches")])
    for context in (
        "resumed",
        "orphan",
        "closure",
        "comprehension",
        "decorated",
        "property",
        "coroutine",
        "match",
        "guarded",
        "reloaded",
    ):
        assert (target, context) in found, context
    assert not any(context == "nothing" for _, context in found)


def test_lines_run_while_the_monitor_is_stopped_are_not_credited_and_are_rearmed_after(tmp_path):
    module, _, monitor, cov = _monitor_beside_coverage(tmp_path, "km_target_b")
    cov.stop()
    monitor.switch_context("before")
    monitor.stop()
    module.classify(-1)  # untraced: another run's share
    monitor.start()
    monitor.switch_context("after")
    module.classify(-1)
    monitor.switch_context("")
    monitor.stop()
    monitor.close()
    found = monitor.contexts()[os.path.realpath(tmp_path / "km_target_b.py")]
    assert "before" not in found
    first = TARGET.splitlines().index("def classify(n):") + 1
    assert found["after"] == [first + 1, first + 2]


def test_tool_ids_the_tests_hold_are_left_to_them(tmp_path):
    from killmap.engine.reach.line_monitor import free_tool_id, line_monitor

    taken = []
    try:
        for tool in range(6):
            if sys.monitoring.get_tool(tool) is None:
                sys.monitoring.use_tool_id(tool, "a test's own tool")
                taken.append(tool)
            if tool == 3:
                assert free_tool_id() not in (None, 3)
        # With every id held the baseline falls back to coverage, which the fork then uses.
        assert free_tool_id() is None and line_monitor([str(tmp_path / "x.py")]) is None
    finally:
        for tool in taken:
            sys.monitoring.free_tool_id(tool)


@pytest.mark.parametrize("fixture", ["basic", "realshape", "selection", "swapshape", "verdicts"])
def test_the_gate_selects_the_same_tests_and_gives_the_same_verdicts_under_either_tracer(
    tmp_path, fixture, monkeypatch
):
    import killmap.verdict.lab as lab
    from killmap.catalog.plan import LabOptions

    project = copy_fixture(fixture, tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    results = {
        tracer: lab.run_lab(project, LabOptions(jobs=2, use_cache=False, tracer=tracer))
        for tracer in ("auto", "coverage")
    }
    auto, traced = results["auto"], results["coverage"]
    assert [b.tracer for b in auto.baselines] == ["sys.monitoring"] * len(auto.baselines)
    assert [b.tracer for b in traced.baselines] == ["coverage"] * len(traced.baselines)
    assert [b.coverage for b in auto.baselines] == [b.coverage for b in traced.baselines]
    assert any(contexts for b in auto.baselines for contexts in b.coverage.values())

    def shown(result):
        return [(v.name, v.verdict, v.selected, tuple(r.id for r in v.red)) for v in result.verdicts]

    assert shown(auto) == shown(traced)


def test_the_report_says_what_recorded_the_baseline_and_the_command_line_can_force_coverage(tmp_path):
    assert recorded_by(tmp_path) == {(): ["sys.monitoring"], ("--reach-tracer", "coverage"): ["coverage"]}


def test_a_fresh_session_records_the_same_lines_with_the_monitor_as_with_coverage(tmp_path):
    # Red-first's traced run, and a baseline whose collected session is unavailable, run in
    # a fresh pytest session: the monitor records there too, from before collection.
    from killmap.catalog.project import project_files
    from killmap.engine.core import Engine
    from killmap.engine.runner import Scenario

    project = copy_fixture("basic", tmp_path)
    files = project_files(project)
    outcomes = {}
    for tracer in ("auto", "coverage"):
        with Engine(project, files, 1, tracer=tracer) as engine:
            scenario = Scenario(
                label=f"fresh-{tracer}",
                tests=("tests",),
                timeout=120,
                sys_path=("src",),
                coverage_files=("src/basicpkg/core.py",),
                tracer=tracer,
            )
            outcomes[tracer] = engine.run(engine.workers[0], scenario)
    auto, traced = outcomes["auto"], outcomes["coverage"]
    assert (auto.path, auto.tracer, traced.tracer) == ("fresh", "sys.monitoring", "coverage")
    assert auto.coverage == traced.coverage
    assert any(context for contexts in auto.coverage.values() for context in contexts)


def test_a_session_the_monitor_collected_is_not_handed_a_run_that_asks_for_coverage(tmp_path):
    # One engine asks for one recorder; should two ever meet on a worker, the lines of a
    # collection recorded by the other must not be mixed in: the run falls back to a fresh session.
    from killmap.catalog.project import project_files
    from killmap.engine.core import Engine
    from killmap.engine.runner import Scenario

    project = copy_fixture("basic", tmp_path)
    with Engine(project, project_files(project), 1) as engine:
        worker = engine.workers[0]
        runs = {}
        for tracer in ("auto", "coverage"):
            scenario = Scenario(
                label=f"session-{tracer}",
                tests=("tests",),
                timeout=120,
                sys_path=("src",),
                coverage_files=("src/basicpkg/core.py",),
                tracer=tracer,
                session_tests=("tests",),
            )
            runs[tracer] = engine.run(worker, scenario)
    assert (runs["auto"].path, runs["auto"].tracer) == ("swap", "sys.monitoring")
    assert (runs["coverage"].path, runs["coverage"].tracer) == ("fallback", "coverage")
    assert "did not trace its collection" in runs["coverage"].fallback
    assert runs["auto"].coverage == runs["coverage"].coverage


def test_the_monitor_leaves_hypothesis_its_tool_id_when_another_is_free():
    # Hypothesis takes id 3 to explain a failing example; held by the gate, it warned instead,
    # and under `filterwarnings = error` the warning became the failure (dateutil).
    from killmap.engine.reach.line_monitor import free_tool_id

    if any(sys.monitoring.get_tool(tool) is not None for tool in (3, 4)):
        pytest.skip("a tool of this interpreter holds id 3 or 4")
    assert free_tool_id() == 4


def test_a_mutants_tests_find_every_tool_id_free_as_under_plain_pytest(tmp_path):
    # A test tool that wants a sys.monitoring id when a test fails (as Hypothesis does) must
    # find it free in a mutant's run: the untraced fork gives the monitor's id back.
    from gatekit import one_mutation_project

    project = one_mutation_project(
        tmp_path / "proj",
        "def one(x):\n    return x * 2\n",
        (
            "import sys\nfrom pkg import one\n\n\ndef test_double():\n    if one(2) != 4:\n"
            "        held = [t for t in range(6) if sys.monitoring.get_tool(t) is not None]\n"
            "        if held:\n            raise RuntimeError(f'tool ids held: {held}')\n"
            "    assert one(2) == 4\n"
        ),
        kills=("tests/test_pkg.py::test_double",),
        extra='require = "assertion"\n',
    )
    run = run_gate(project, "run", "--no-cache")
    assert run.code == 0, run.stdout + run.stderr
    entry = run.mutation("one-mutated")
    assert entry["verdict"] == "held", entry["detail"]
    assert entry["path"] == "swap"
    assert entry["red"][0]["cause"] == "assertion"


def test_a_closed_monitor_leaves_its_tool_id_as_if_never_used(tmp_path):
    # The next holder of the id must not inherit the LINE events armed on target code.
    from killmap.engine.reach.line_monitor import line_monitor

    target = tmp_path / "closing_target.py"
    target.write_text("def f(x):\n    y = x + 1\n    return y\n")
    namespace: dict = {}
    monitor = line_monitor([str(target)])
    monitor.start()
    exec(compile(target.read_text(), str(target), "exec"), namespace)
    namespace["f"](1)
    assert monitor.contexts()[str(target.resolve())][""]
    monitor.close()
    assert sys.monitoring.get_tool(monitor.tool) is None
    heard = []
    sys.monitoring.use_tool_id(monitor.tool, "the next holder")
    try:
        sys.monitoring.register_callback(
            monitor.tool, sys.monitoring.events.LINE, lambda code, line: heard.append(line)
        )
        sys.monitoring.restart_events()  # what a tool that traces does as it starts
        namespace["f"](2)
    finally:
        sys.monitoring.register_callback(monitor.tool, sys.monitoring.events.LINE, None)
        sys.monitoring.free_tool_id(monitor.tool)
    assert heard == []
