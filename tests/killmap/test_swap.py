"""The swap: a mutant's code put into a fork of the collected session is the code that ran,
and gives exactly the verdicts a fresh session importing the mutant gives.

One gate run with the swap and one with --no-swap over tests/fixtures/projects/swapshape,
whose mutations each land on a shape the swap must get right; plus unit tests of swap_in.
"""

from __future__ import annotations

import types

import pytest
from gatekit import copy_fixture, run_gate

from killmap.engine.swap.code_swap import swap_in


@pytest.fixture(scope="module")
def both_runs(tmp_path_factory):
    swapped = run_gate(copy_fixture("swapshape", tmp_path_factory.mktemp("swap")), "run", "--no-cache")
    fresh = run_gate(copy_fixture("swapshape", tmp_path_factory.mktemp("fresh")), "run", "--no-cache", "--no-swap")
    return swapped, fresh


def reds(entry) -> list[tuple[str, str]]:
    return sorted((r["id"], r["cause"]) for r in entry["red"])


def test_verdicts_and_red_sets_are_identical_with_and_without_the_swap(both_runs):
    swapped, fresh = both_runs
    assert swapped.code == fresh.code == 0, swapped.stderr + fresh.stderr
    for a, b in zip(swapped.report["mutations"], fresh.report["mutations"], strict=True):
        assert (a["name"], a["verdict"], reds(a), a["reached_by"]) == (
            b["name"],
            b["verdict"],
            reds(b),
            b["reached_by"],
        )
    assert {m["path"] for m in fresh.report["mutations"]} == {"fresh"}


def test_every_swapped_mutant_ran_the_code_its_worker_compiled(both_runs):
    swapped, _ = both_runs
    swaps = [m["swap"] for m in swapped.report["mutations"] if m.get("path") == "swap"]
    assert swaps and {s["compiled_by"] for s in swaps} == {"worker"}


def test_a_function_called_at_import_time_falls_back_to_a_fresh_session(both_runs):
    entry = both_runs[0].mutation("table-changed")
    assert entry["path"] == "fresh" and "import" in entry["path_reason"]
    assert entry["verdict"] == "held"


def test_a_closure_whose_free_variables_change_falls_back(both_runs):
    entry = both_runs[0].mutation("adder-forgets-n")
    assert entry["path"] == "fallback"
    assert "closes over other variables" in entry["path_reason"]
    assert entry["verdict"] == "held"


@pytest.mark.parametrize(
    "name, reached_only_through",
    [
        ("decorated-off-by-one", "a decorator's wrapper"),
        ("plain-times-four", "a functools.partial and a dispatch table"),
        ("child-suffix-changed", "super() and a method bound at import"),
    ],
)
def test_a_mutant_reached_only_indirectly_is_swapped_and_is_the_code_that_ran(both_runs, name, reached_only_through):
    entry = both_runs[0].mutation(name)
    assert entry["path"] == "swap", entry["path_reason"]
    assert entry["swap"]["swapped"] > 0
    assert entry["verdict"] == "held", f"{reached_only_through}: {entry['detail']}"
    assert set(entry["expected"]) == {r["id"] for r in entry["red"]}


def test_module_state_one_mutants_tests_change_is_pristine_for_the_next(both_runs):
    # counter() appends to a module-level list; the invariant holds only if every fork
    # starts from the collected session's empty list.
    assert both_runs[0].mutation("counter-off-by-one")["path"] == "swap"
    assert both_runs[0].mutation("counter-reordered")["verdict"] == "held"


def test_reach_comes_from_the_baseline_and_names_exactly_the_reaching_tests(both_runs):
    entry = both_runs[0].mutation("plain-times-four")
    assert entry["reached_by"] == [
        "tests/test_core.py::test_dispatch",
        "tests/test_core.py::test_partial",
        "tests/test_core.py::test_plain",
    ]


def _module(tmp_path, text: str):
    path = tmp_path / "subject.py"
    path.write_text(text)
    module = types.ModuleType("subject")
    exec(compile(text, str(path), "exec"), module.__dict__)
    return str(path), module


def test_swap_in_replaces_the_code_behind_every_alias(tmp_path):
    text = "import functools\ndef f():\n    return 1\nP = functools.partial(f)\nT = {'f': f}\n"
    path, module = _module(tmp_path, text)
    result = swap_in(path, text, text.replace("return 1", "return 2"))
    assert result.ok and result.places == ("f",)
    assert (module.f(), module.P(), module.T["f"]()) == (2, 2, 2)


@pytest.mark.parametrize(
    ("unit_of", "compiled_by", "runs"),
    [
        # The worker compiled the mutant's text (worker._unit_for_fork) and the fork trusts it:
        # a unit of another text (returning 3) shows which of the two ran.
        ("def f():\n    return 1\n", "worker", 3),
        # No function of this file starts where g does: the unit does not fit, and the fork
        # compiles the mutant's own text (returning 2).
        ("def g():\n    return 1\n", "fork", 2),
    ],
)
def test_swap_in_swaps_in_the_unit_it_is_handed_only_where_it_fits(tmp_path, unit_of, compiled_by, runs):
    from killmap.engine.swap.unit_compile import compiled_unit, units_of

    text = "def f():\n    return 1\n"
    path, module = _module(tmp_path, text)
    handed = compiled_unit(path, unit_of, unit_of.replace("return 1", "return 3"), units_of(unit_of))
    result = swap_in(path, text, text.replace("return 1", "return 2"), unit=handed)
    assert result.ok and result.compiled_by == compiled_by
    assert module.f() == runs


def test_a_swap_reads_no_code_object_the_session_placed_before_it(tmp_path, monkeypatch):
    # The session server places every live function of a file it prepares, once; a fork then
    # reads the original's code objects only where the mutant changed them (each read copies
    # a page in a fork), and still reports the changed place and runs the mutant.
    from killmap.engine.swap import code_swap
    from killmap.engine.swap.code_swap import LiveFunctions

    text = "def f():\n    return 1\ndef g():\n    return 2\ndef h():\n    return 3\n"
    path, module = _module(tmp_path, text)
    functions = LiveFunctions()
    functions.placed(path, text)  # as the server does for the files it prepares
    identities = []
    monkeypatch.setattr(code_swap, "_identity", lambda code: identities.append(code) or ())
    result = swap_in(path, text, text.replace("return 2", "return 20"), functions)
    assert result.ok and result.places == ("g",) and result.swapped == 3
    assert identities == []
    assert (module.f(), module.g(), module.h()) == (1, 20, 3)


def test_swap_in_swaps_a_file_whose_generator_expressions_are_alike(tmp_path):
    # Two generator expressions on one line share name, line and bytecode; no live function
    # holds either (each is reached through its enclosing function's code).
    text = "def both(xs):\n    return sum(x for x in xs), sum(x for x in xs)\ndef f():\n    return 1\n"
    path, module = _module(tmp_path, text)
    result = swap_in(path, text, text.replace("return 1", "return 2"))
    assert result.ok, result.reason
    assert (module.f(), module.both([1, 2])) == (2, (3, 3))


def test_swap_in_refuses_two_live_functions_it_cannot_tell_apart(tmp_path):
    # Alike in name, line and bytecode, told apart only by their argument's name. Two
    # identical lambdas would not do: CPython 3.10 and 3.12+ compile them to one shared code
    # object, which the swap then replaces for both, rightly.
    text = "A, B = (lambda x: 1), (lambda y: 1)\ndef f():\n    return 1\n"
    path, _ = _module(tmp_path, text)
    result = swap_in(path, text, text.replace("return 1", "return 2"))
    assert not result.ok and "indistinguishable (<lambda>)" in result.reason


def test_swap_in_refuses_a_mutant_that_removes_a_function(tmp_path):
    text = "def f():\n    def g():\n        return 1\n    return g\nG = f()\n"
    path, _ = _module(tmp_path, text)
    result = swap_in(path, text, "def f():\n    return None\nG = f()\n")
    assert not result.ok and "no counterpart" in result.reason


def test_swap_in_refuses_when_no_function_of_the_file_is_alive(tmp_path):
    text = "X = 1\n"
    path = tmp_path / "empty.py"
    path.write_text(text)
    assert not swap_in(str(path), text, "X = 2\n").ok


def test_every_verdict_of_the_verdicts_fixture_is_the_same_with_and_without_the_swap(tmp_path, verdicts_run):
    # One mutation per verdict and per broken cause: timeouts, flakes, broken imports and
    # controls must all read the same whichever path their mutants took.
    swapped = verdicts_run
    fresh = run_gate(copy_fixture("verdicts", tmp_path / "fresh"), "run", "--no-cache", "--no-swap")
    pairs = list(zip(swapped.report["mutations"], fresh.report["mutations"], strict=True))
    assert any(a.get("path") == "swap" for a, _ in pairs)
    for a, b in pairs:
        assert (a["name"], a["verdict"], reds(a), a["reached_by"]) == (
            b["name"],
            b["verdict"],
            reds(b),
            b["reached_by"],
        )


def test_swap_in_finds_the_functions_of_a_heap_frozen_at_import(tmp_path):
    # gc.freeze() (a conftest or a server that forks) sets the heap aside from what
    # gc.get_objects() lists: a function missed there would keep running the original.
    import gc

    text = "def f():\n    return 1\n"
    path, module = _module(tmp_path, text)
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    try:
        result = swap_in(path, text, text.replace("return 1", "return 2"))
    finally:
        if not frozen_before:
            gc.unfreeze()
    assert result.ok, result.reason
    assert module.f() == 2


# The worker freezes its own heap before any session (before_fork.py); a project may freeze its own
# after. Each case in a child interpreter: gc.freeze is replaced there for good.
_FREEZES = """
import gc, json, sys, types
from killmap.engine.swap import code_swap
harness = types.SimpleNamespace(name="made by the harness")
code_swap.harness_frozen()  # as before_fork.py does, before any session
def project_function():
    return 1
if sys.argv[1] == "project-froze":
    gc.freeze()  # a conftest, after importing the project
listed = code_swap.every_object()
print(json.dumps({"function": any(o is project_function for o in listed),
                  "harness": any(o is harness for o in listed)}))
"""


def _listed(case: str) -> dict:
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _FREEZES, case], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_the_harness_heap_is_left_out_of_the_scan_while_the_project_froze_nothing():
    assert _listed("nothing") == {"function": True, "harness": False}


def test_a_heap_the_project_froze_is_scanned_whole():
    assert _listed("project-froze")["function"] is True
