"""The baseline's probes (Python before 3.12) credit each test with what coverage credits it.

Selection is only sound if every test that runs a changed statement is credited with it. The
probes record a statement's first line where the C tracer records every line an instruction
of it starts on, so they are held to the tracer at the grain reach reads (a region is whole
statements, reach.py): each records over its own copy of the same code and the same calls, one
context per "test", and for every statement the tests credited with running it must be the same. Where the
probes cannot vouch for a function, they must say so rather than record short.

Python 3.12+ has the line monitor instead: there these skip.
"""

from __future__ import annotations

import ast
import gc
import importlib
import os
import sys
import textwrap
import traceback
import types

import pytest
from gatekit import copy_fixture, gate_env, run_gate
from tracekit import LATE, TARGET, recorded_by

from killmap.engine.reach import probes

if not probes.AVAILABLE:
    pytest.skip("probes are for Python before 3.12 (3.12+ has sys.monitoring)", allow_module_level=True)

# What only probes can get wrong: a lambda made at import and run by a test, a generator
# expression made by one test and run by another (no statement of theirs starts then),
# statements over several lines, a class made in a function, declarations that compile to
# nothing (`global`, a local's annotation alone, but not `self.x: int`), a function's docstring, a function of a
# docstring alone, an expression with a `body` that is not a block.
MORE = textwrap.dedent('''

    KEY = lambda item: (
        item * 2)
    counted = 0


    def evens(count):
        return (n * 2
                for n in range(count))


    def spread(values):
        """Only a docstring here: no probe may take its place."""
        global counted
        total = sum(
            v for v in values
        )
        while total > 10:
            total -= 10
        class Local:
            size = total if total > 5 else -total
            named: str
        counted += 1
        kept: int
        return [KEY(v) for v in values], Local.size


    def documented(
        flag,
    ):
        """A docstring alone: calling it runs a line all the same."""


    class Holder:
        def __init__(self):
            self.size: int
            self.size = 1


    def failing(flag):
        if flag:
            raise ValueError("on purpose")
        return flag
''')


def _statement_lines(source: str) -> list[int]:
    return sorted({node.lineno for node in ast.walk(ast.parse(source)) if isinstance(node, ast.stmt)})


def _credited(found: dict, path: str, source: str) -> dict[int, set[str]]:
    """For each statement, the tests credited with running it, as reach reads them."""
    from killmap.verdict.reach import region_of

    contexts = found.get(path, {})
    return {line: set(region_of(source, (line,)).reached_by(contexts)) for line in _statement_lines(source)}


def _probed_beside_coverage(tmp_path, name):
    """coverage's C tracer started and the target imported (a session's collection), then
    the probes put in, as a traced fork of that session does."""
    from killmap.engine.reach.tracing import per_test_coverage

    target, late = tmp_path / f"{name}.py", tmp_path / f"{name}_late.py"
    target.write_text(TARGET + MORE)
    late.write_text(LATE)
    cov = per_test_coverage([str(target), str(late)])
    cov.start()
    sys.path.insert(0, str(tmp_path))
    module = importlib.import_module(name)
    reach = probes.probe_reach([str(target), str(late)], None)
    assert reach is not None
    reach.start()
    return module, reach, cov


def _tests(module, late: str):
    import asyncio

    made: list = []
    return [
        ("negative", lambda: module.classify(-1)),
        ("branches", lambda: [module.classify(n) for n in (0, 2, 3)]),
        ("again", lambda: module.classify(3)),
        ("guarded", lambda: (module.guarded("7"), module.guarded(None), module.guarded("x"))),
        ("fresh-generator", lambda: list(module.counter(2))),
        ("closure", lambda: module.closure(2)),
        ("comprehension", lambda: module.comprehension([1, 2, 3, 4])),
        ("decorated", lambda: module.decorated(1)),
        ("property", lambda: module.Shape(4).name),
        ("coroutine", lambda: asyncio.run(module.awaited(2))),
        ("match", lambda: (module.matcher("go north"), module.matcher("stop"))),
        ("lambda-made-at-import", lambda: module.KEY(3)),
        ("generator-made", lambda: made.append(module.evens(3))),
        ("generator-run-later", lambda: list(made[0])),
        ("spread", lambda: module.spread([7, 8])),
        ("documented", lambda: module.documented(1)),
        ("holder", lambda: module.Holder()),
        ("imported-late", lambda: importlib.import_module(late).late(1)),
        ("reloaded", lambda: importlib.reload(module).classify(-5)),
        ("nothing", lambda: None),
    ]


def _recorded(tmp_path, name: str, probed: bool) -> tuple[dict, dict]:
    """Each statement's tests, {target, late}, as one recorder credits them. Each recorder
    gets its own copy of the files: run at once, the tracer would see the probes' own
    instructions and credit what they credit."""
    from killmap.engine.reach.tracing import coverage_contexts

    module, reach, cov = _probed_beside_coverage(tmp_path, name) if probed else _traced(tmp_path, name)
    recorder = reach if probed else cov
    for context, body in _tests(module, f"{name}_late"):
        recorder.switch_context(context)
        body()
        recorder.switch_context("")
    cov.stop()
    found = reach.contexts() if probed else coverage_contexts(cov)
    target, late = (os.path.realpath(tmp_path / f"{name}{end}.py") for end in ("", "_late"))
    return _credited(found, target, TARGET + MORE), _credited(found, late, LATE)


def _traced(tmp_path, name):
    from killmap.engine.reach.tracing import per_test_coverage

    (tmp_path / f"{name}.py").write_text(TARGET + MORE)
    (tmp_path / f"{name}_late.py").write_text(LATE)
    cov = per_test_coverage([str(tmp_path / f"{name}.py"), str(tmp_path / f"{name}_late.py")])
    cov.start()
    sys.path.insert(0, str(tmp_path))
    return importlib.import_module(name), None, cov


def test_the_probes_credit_every_test_with_each_statement_coverage_credits_it_with(tmp_path):
    probed_target, probed_late = _recorded(tmp_path, "km_probed_a", probed=True)
    traced_target, traced_late = _recorded(tmp_path, "km_traced_a", probed=False)
    assert probed_target == traced_target
    assert probed_late == traced_late
    # Not vacuous: every test that ran something is credited, twice-run lines twice.
    everyone = set().union(*probed_target.values())
    assert everyone == {name for name, _ in _tests(None, "")} - {"nothing", "imported-late"}
    assert probed_late[2] == {"imported-late"}
    first = (TARGET + MORE).splitlines().index("def classify(n):") + 1
    assert probed_target[first + 1] >= {"negative", "branches", "again", "reloaded"}


def test_a_probed_function_keeps_its_docstring_names_and_line_numbers(tmp_path):
    module, reach, cov = _probed_beside_coverage(tmp_path, "km_probed_b")
    cov.stop()
    assert module.spread.__doc__ == "Only a docstring here: no probe may take its place."
    assert module.spread.__code__.co_firstlineno == (TARGET + MORE).splitlines().index("def spread(values):") + 1
    with pytest.raises(ValueError) as raised:
        module.failing(True)
    line = traceback.extract_tb(raised.tb)[-1]
    assert (line.name, line.line) == ("failing", 'raise ValueError("on purpose")')
    hash(module.failing.__code__)  # its constants hold the hits: hashable, as any code's
    reach.switch_context("t")
    module.failing(False)
    assert any("t" in contexts for contexts in reach.contexts().values())


def test_lines_run_while_the_probes_are_stopped_are_not_credited(tmp_path):
    module, reach, cov = _probed_beside_coverage(tmp_path, "km_probed_c")
    cov.stop()
    reach.switch_context("before")
    reach.stop()
    module.classify(-1)  # untraced: another run's share
    reach.start()
    reach.switch_context("after")
    module.classify(-1)
    reach.switch_context("")
    found = reach.contexts()[os.path.realpath(tmp_path / "km_probed_c.py")]
    first = TARGET.splitlines().index("def classify(n):") + 1
    assert "before" not in found and found["after"] == [first + 1, first + 2]


@pytest.mark.parametrize("made", ["started", "not-started", "at-import"])
def test_a_generator_of_a_target_made_before_the_probes_leaves_the_run_to_coverage(tmp_path, made):
    name = f"km_probed_d_{made.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(TARGET + "\nMADE = (n for n in range(3))\n")
    sys.path.insert(0, str(tmp_path))
    module = importlib.import_module(name)
    if made == "at-import":
        # Its code is no function's: on 3.10 only the generator shows it (3.11's frame holds
        # the generator's function, whose code the count of references then finds held).
        pending = module.MADE
    else:
        list(module.MADE)
        pending = module.counter(3)
        if made == "started":
            next(pending)
    # Its frame runs the code it was made with, started or not: no probe can be put in it.
    assert probes.probe_reach([str(tmp_path / f"{name}.py")], None) is None
    list(pending)
    del pending  # finished, but it would still hold its code: counted as code kept aside
    assert probes.probe_reach([str(tmp_path / f"{name}.py")], None) is not None


def test_a_function_whose_code_is_not_its_files_leaves_the_run_to_coverage(tmp_path):
    target = tmp_path / "km_probed_e.py"
    target.write_text(TARGET)
    sys.path.insert(0, str(tmp_path))
    module = importlib.import_module("km_probed_e")
    target.write_text(TARGET.replace('return "odd"', 'return "uneven"'))  # changed since import
    assert probes.probe_reach([str(target)], None) is None
    assert module.classify(3) == "odd"  # nothing was swapped


def _imported(tmp_path, name):
    target = tmp_path / f"{name}.py"
    target.write_text(TARGET)
    sys.path.insert(0, str(tmp_path))
    return target, importlib.import_module(name)


def _unproven(reach, target) -> bool:
    reach.switch_context("")
    return reach.contexts().get(os.path.realpath(target)) == {probes.UNPROVEN: []}


def test_code_of_a_target_kept_aside_before_the_probes_leaves_the_run_to_coverage(tmp_path):
    target, module = _imported(tmp_path, "km_probed_f")
    kept = module.classify.__code__  # a function made from it during a test would run unprobed
    assert probes.probe_reach([str(target)], None) is None
    del kept
    assert probes.probe_reach([str(target)], None) is not None


def test_a_live_function_running_code_no_probe_saw_makes_its_files_reach_unproven(tmp_path):
    target, module = _imported(tmp_path, "km_probed_g")
    spare = compile(TARGET, str(target), "exec")  # not a function's: no reference counts it
    reach = probes.probe_reach([str(target)], None)
    assert reach is not None
    reach.start()
    reach.switch_context("t")
    module.made_late = types.FunctionType(
        next(c for c in spare.co_consts if getattr(c, "co_name", "") == "classify"), module.__dict__
    )
    module.made_late(-1)
    assert _unproven(reach, target)


@pytest.mark.parametrize(
    "behind_the_probes",
    [
        lambda module, target: module.classify.__code__.replace(),  # built field by field (cloudpickle)
        lambda module, target: compile(TARGET, str(target), "exec"),  # the target's source compiled
        lambda module, target: exec(_SPARE[0], {}),  # unprobed code of the target run
    ],
    ids=["code-built", "source-compiled", "unprobed-code-run"],
)
def test_code_of_a_target_made_or_run_behind_the_probes_makes_its_files_reach_unproven(tmp_path, behind_the_probes):
    target, module = _imported(tmp_path, f"km_probed_h{len(_SPARE)}")
    _SPARE[:] = [compile("x = 1", str(target), "exec")]
    reach = probes.probe_reach([str(target)], None)
    assert reach is not None
    reach.start()
    reach.switch_context("t")
    module.classify(-1)
    behind_the_probes(module, target)
    assert _unproven(reach, target)


_SPARE: list = []


def test_a_target_imported_during_a_test_is_probed_not_made_unproven(tmp_path):
    target, module = _imported(tmp_path, "km_probed_i")
    reach = probes.probe_reach([str(target)], None)
    assert reach is not None
    reach.start()
    reach.switch_context("t")
    importlib.reload(module).classify(-1)  # the loader compiles it: its own compile, let pass
    reach.switch_context("")
    found = reach.contexts()[os.path.realpath(target)]
    assert probes.UNPROVEN not in found and found["t"]


def test_a_baseline_whose_probes_are_unproven_is_traced_again_by_coverage(tmp_path):
    # A test rebuilds a target function from its code, field by field (as cloudpickle does),
    # and runs it: the probed pass cannot vouch for the file, so the baseline runs the pass
    # again under the C tracer, which credits that test too.
    project = copy_fixture("basic", tmp_path)
    (project / "tests" / "test_rebuilt.py").write_text(
        textwrap.dedent("""
            import types

            import basicpkg.core as core


            def test_a_rebuilt_classify_refuses_odd_numbers():
                rebuilt = types.FunctionType(core.classify.__code__.replace(), core.__dict__)
                assert rebuilt(4) == "even"
        """),
        encoding="utf-8",
    )
    run = run_gate(project, "run", "--no-cache", env=gate_env(project))
    assert run.code == 0, run.stderr
    assert [b["reach_recorded_by"] for b in run.report["baselines"]] == ["coverage"]
    reached = {m["name"]: m["reached_by"] for m in run.report["mutations"]}
    assert "tests/test_rebuilt.py::test_a_rebuilt_classify_refuses_odd_numbers" in reached["classify-call-deleted"]


def test_a_baseline_records_its_reach_with_probes_unless_coverage_is_asked_for(tmp_path):
    assert recorded_by(tmp_path) == {(): ["probes"], ("--reach-tracer", "coverage"): ["coverage"]}


def test_functions_of_a_target_that_froze_the_heap_at_import_are_probed_all_the_same(tmp_path):
    # gc.get_objects leaves out what gc.freeze() set aside: the probes must still find them.
    target = tmp_path / "km_probed_frozen.py"
    target.write_text(TARGET + "\nimport gc\ngc.freeze()\n")
    sys.path.insert(0, str(tmp_path))
    module = importlib.import_module("km_probed_frozen")
    try:
        reach = probes.probe_reach([str(target)], None)
        assert reach is not None
        reach.start()
        reach.switch_context("t")
        module.classify(-1)
        reach.switch_context("")
        first = TARGET.splitlines().index("def classify(n):") + 1
        assert reach.contexts()[os.path.realpath(target)]["t"] == [first + 1, first + 2]
    finally:
        gc.unfreeze()


def test_a_file_whose_reach_is_unproven_selects_every_test_for_its_mutants():
    from killmap.verdict.trial import tests_reaching

    source = "def f(x):\n    return x + 1\n"
    collected = ("t::a", "t::b", "t::c")
    reaching, why, _ = tests_reaching(source, (2,), {"t::a": [2], probes.UNPROVEN: []}, collected)
    assert reaching == collected and why is not None and "all tests" in why
    proven, why, _ = tests_reaching(source, (2,), {"t::a": [2]}, collected)
    assert proven == ("t::a",) and why is None


def test_a_test_run_alone_whose_probes_are_unproven_is_traced_again_by_coverage():
    from killmap.engine.outcome import RunOutcome
    from killmap.engine.runner import Scenario
    from killmap.verdict.trial import _traced_alone

    class Engine:
        tracer = "auto"

        def __init__(self):
            self.asked: list[str] = []

        def run(self, worker, scenario):
            self.asked.append(scenario.tracer)
            lines = {probes.UNPROVEN: []} if scenario.tracer == "auto" else {"t::a": [2]}
            return RunOutcome(status="done", wall=0.0, finished=True, coverage={"src/m.py": lines})

    engine = Engine()
    scenario = Scenario(label="alone", tests=("t::a",), timeout=60.0, sys_path=(), tracer="auto")
    assert _traced_alone(engine, None, scenario, "src/m.py") == {"t::a": [2]}  # type: ignore[arg-type]
    assert engine.asked == ["auto", "coverage"]
