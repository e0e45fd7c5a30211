"""The judge's ordered checks, each on evidence built by hand.

The end-to-end fixtures reach most branches; these pin the ones a real run reaches only
through failures that are hard to stage (a module whose bytes are not the mutant's, a test
process that died without its report).
"""

from __future__ import annotations

import hashlib
import sys

from killmap.catalog.reader import load_catalog
from killmap.engine.inrun.plugin import origin_proof
from killmap.engine.outcome import RunOutcome, TestResult
from killmap.verdict.judge import Evidence, judge_run

KILL = "tests/test_mod.py::test_mod"


def _mutation(km_project):
    km_project.module("def value():\n    return 1\n")
    return load_catalog(
        km_project.root,
        km_project.write(
            "mutations/c.toml",
            (
                '[[mutation]]\nname = "value-changed"\ntarget = "src/pkg/mod.py::value"\nop = "replace"\n'
                f'old = "1"\nnew = "2"\nkills = ["{KILL}"]\n'
            ),
        ),
    ).mutations[0]


def _evidence(run):
    return Evidence(
        run=run,
        confirm=None,
        reached_by=(KILL,),
        region_executed=True,
        import_time=False,
        timeout=10.0,
        selected_baseline_seconds=0.1,
    )


def _red_run(**proof):
    red = TestResult(id=KILL, outcome="failed", phase="call", exc_type="AssertionError", assertion=True)
    return RunOutcome(
        status="done",
        wall=0.1,
        collected=(KILL,),
        tests={KILL: red},
        finished=True,
        exit_code=1,
        proof={"module": "pkg.mod", "file_matches": True, "text_matches": True, **proof},
    )


def test_a_red_kill_with_a_clean_proof_is_held(km_project):
    assert judge_run(_mutation(km_project), _evidence(_red_run()), {}).verdict == "held"


def test_a_module_whose_bytes_are_not_the_mutant_is_broken_even_when_the_kill_went_red(km_project):
    verdict = judge_run(_mutation(km_project), _evidence(_red_run(text_matches=False)), {})
    assert verdict.verdict == "broken"
    assert verdict.extras["broken_cause"] == "origin"


def test_a_test_process_that_died_without_its_report_is_inconclusive(km_project):
    run = RunOutcome(status="done", wall=0.1, collected=(KILL,), finished=False, log_tail="Segmentation fault")
    verdict = judge_run(_mutation(km_project), _evidence(run), {})
    assert verdict.verdict == "inconclusive"
    assert "Segmentation fault" in verdict.detail


def test_a_confirmation_that_disagrees_makes_the_verdict_flaky(km_project):
    green = RunOutcome(
        status="done", wall=0.1, collected=(KILL,), finished=True, tests={KILL: TestResult(id=KILL, outcome="passed")}
    )
    evidence = _evidence(_red_run())
    evidence = Evidence(**{**evidence.__dict__, "confirm": green})
    assert judge_run(_mutation(km_project), evidence, {}).verdict == "flaky"


def test_a_confirmation_that_disagrees_on_a_hypothesis_test_is_randomized_not_flaky(km_project):
    # The property test's search found the defect in one run and not in the other: its draws'
    # luck, whose way out is a fixed seed or more examples, not a fix of a flaky test.
    red = TestResult(
        id=KILL, outcome="failed", phase="call", exc_type="AssertionError", assertion=True, randomized=True
    )
    green = TestResult(id=KILL, outcome="passed", randomized=True)
    run = RunOutcome(**{**_red_run().__dict__, "tests": {KILL: red}})
    confirm = RunOutcome(status="done", wall=0.1, collected=(KILL,), finished=True, tests={KILL: green})
    evidence = Evidence(**{**_evidence(run).__dict__, "confirm": confirm})
    verdict = judge_run(_mutation(km_project), evidence, {})
    assert verdict.verdict == "randomized"
    assert "fixed seed" in verdict.detail and "more examples" in verdict.detail


def test_the_origin_proof_compares_the_bytes_on_disk_with_the_mutant(tmp_path, monkeypatch):
    module = tmp_path / "proofmod_km.py"
    module.write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "proofmod_km", raising=False)
    right = hashlib.sha256(b"X = 1\n").hexdigest()
    wrong = hashlib.sha256(b"X = 2\n").hexdigest()
    assert origin_proof("proofmod_km", str(module), right, None)["text_matches"] is True
    assert origin_proof("proofmod_km", str(module), wrong, None)["text_matches"] is False
    assert origin_proof("proofmod_km", str(tmp_path / "elsewhere.py"), right, None)["file_matches"] is False


def test_a_green_kill_with_reds_elsewhere_is_vacuous_and_says_the_defect_is_caught_by_others(km_project):
    # tomlkit: a kills prefix stayed green while 57 other tests went red; the detail ended in
    # "also red outside the contract", and the verdict read as though nothing noticed.
    others = tuple(f"tests/test_other.py::test_{i}" for i in range(7))
    tests = {KILL: TestResult(id=KILL, outcome="passed")}
    tests.update(
        {t: TestResult(id=t, outcome="failed", phase="call", exc_type="AssertionError", assertion=True) for t in others}
    )
    run = RunOutcome(
        status="done",
        wall=0.1,
        collected=(KILL, *others),
        tests=tests,
        finished=True,
        exit_code=1,
        proof={"module": "pkg.mod", "file_matches": True, "text_matches": True},
    )
    verdict = judge_run(_mutation(km_project), _evidence(run), {})
    assert verdict.verdict == "vacuous"
    assert verdict.detail.startswith(
        f"stayed green: {KILL}; the defect is caught, but by 7 tests outside the contract: tests/test_other.py::test_0"
    )
    assert verdict.detail.endswith("and 2 more")
    assert verdict.unexpected == tuple(sorted(others))


def _unbound_run():
    red = TestResult(
        id=KILL,
        outcome="failed",
        phase="call",
        exc_type="UnboundLocalError",
        message="UnboundLocalError: cannot access local variable 'value' where it is not associated with a value",
        in_mutated_file=True,
        mutated_file_innermost=True,
    )
    return RunOutcome(
        status="done",
        wall=0.1,
        collected=(KILL,),
        tests={KILL: red},
        finished=True,
        exit_code=1,
        proof={"module": "pkg.mod", "file_matches": True, "text_matches": True},
    )


def test_an_unbound_name_the_mutant_did_not_touch_is_a_crash_it_reached_not_a_broken_mutant(km_project):
    # humanfriendly: a negated branch reached the original's own `type(value)` on a path
    # that never binds `value`; plain pytest shows the same UnboundLocalError.
    from dataclasses import replace

    evidence = replace(_evidence(_unbound_run()), rebound=frozenset())
    verdict = judge_run(_mutation(km_project), evidence, {})
    assert verdict.verdict == "held" and verdict.red[0].cause == "crash"


def test_an_unbound_name_the_mutant_rebinds_is_still_broken(km_project):
    from dataclasses import replace

    for rebound in (frozenset({"value"}), None):  # None: the bindings could not be compared
        verdict = judge_run(_mutation(km_project), replace(_evidence(_unbound_run()), rebound=rebound), {})
        assert verdict.verdict == "broken"


def test_the_names_a_mutant_may_have_unbound_are_those_bound_on_its_changed_lines():
    from killmap.verdict.reach import rebound_names

    original = "def f(other):\n    if other:\n        value = 1\n    return value\n"
    negated = original.replace("if other:", "if not other:")
    assert rebound_names(original, negated, (2,), (2,)) == frozenset()  # the guard, not the binding
    deleted = original.replace("        value = 1\n", "        pass\n")
    assert rebound_names(original, deleted, (3,), (3,)) == {"value"}
    moved = "def f(other):\n    if other:\n        if other > 1:\n            value = 1\n    return value\n"
    assert rebound_names(original, moved, (3,), (3, 4)) == {"value"}  # moved under a condition
    assert rebound_names(original, "def f(:\n", (1,), (1,)) is None


def test_a_kills_test_green_without_executing_the_change_is_told_so(km_project):
    # wcwidth: every case of test_clip_basic stays on clip()'s fast path, above the change;
    # "does not guard" sent the user to its assertions, where an input was missing.
    green = RunOutcome(
        status="done",
        wall=0.1,
        collected=(KILL,),
        tests={KILL: TestResult(id=KILL, outcome="passed")},
        finished=True,
        exit_code=0,
        proof={"module": "pkg.mod", "file_matches": True, "text_matches": True},
    )
    unreached = Evidence(**{**_evidence(green).__dict__, "reached_by": ()})
    verdict = judge_run(_mutation(km_project), unreached, {})
    assert verdict.verdict == "vacuous"
    assert verdict.detail.startswith(
        f"stayed green, never executing the mutated code (no input of theirs reaches it): {KILL}"
    )
    # One that ran the change and stayed green is told so, as before.
    assert judge_run(_mutation(km_project), _evidence(green), {}).detail.startswith(f"stayed green: {KILL}")


def _timed_out_in(test_id: str, *, tests=None, **more) -> RunOutcome:
    return RunOutcome(
        status="timeout", wall=10.0, collected=(KILL,), tests=tests or {}, in_progress=test_id, stuck="busy", **more
    )


def test_a_limit_that_comes_in_a_test_that_draws_its_inputs_says_it_may_be_shrinking(km_project):
    # bidict: Hypothesis shrank a failure for 110 s under plain pytest, then reported the test
    # red; the gate said `timeout` at 27 s, "as a loop that never ends does".
    mutation = _mutation(km_project)
    evidence = _evidence(_timed_out_in(KILL))
    drawing = Evidence(**{**evidence.__dict__, "draws": frozenset({KILL})})
    verdict = judge_run(mutation, drawing, {"selected": (KILL,)})
    assert verdict.verdict == "timeout"
    assert "a test that draws its inputs (Hypothesis): it may be shrinking a failure it found" in verdict.detail
    assert "busy: it kept the CPU running" not in verdict.detail
    plain = judge_run(mutation, evidence, {"selected": (KILL,)})
    assert "busy: it kept the CPU running to the end (a loop" in plain.detail


def test_a_catalog_timeout_below_what_the_tests_take_says_to_raise_it_not_to_re_run(km_project):
    # dpath: `timeout = 20` against a selection of 83 s unmutated; "re-run it" gave the same.
    from killmap.report.cells import cause_of, explanation

    tight = Evidence(**{**_evidence(_timed_out_in(KILL)).__dict__, "timeout": 0.5, "selected_baseline_seconds": 1.3})
    verdict = judge_run(_mutation(km_project), tight, {"selected": (KILL,)})
    assert verdict.verdict == "inconclusive"
    assert "the limit is too tight for them" in verdict.detail
    said = explanation(verdict.verdict, False, cause_of(verdict.extras))
    assert "raise its `timeout`" in said and "re-run it" not in said


def test_a_wrong_cause_names_ten_crashed_kills_tests_and_counts_the_rest(km_project):
    # iso8601: 45 kills tests crashed under `require = "assertion"`, all on one console line.
    import dataclasses

    ids = [f"tests/test_mod.py::test_{n}" for n in range(12)]
    crashed = {i: TestResult(id=i, outcome="failed", phase="call", exc_type="ValueError") for i in ids}
    mutation = dataclasses.replace(_mutation(km_project), kills=tuple(ids), require="assertion")
    run = RunOutcome(
        status="done",
        wall=0.1,
        collected=tuple(ids),
        tests=crashed,
        finished=True,
        exit_code=1,
        proof={"module": "pkg.mod", "file_matches": True, "text_matches": True},
    )
    evidence = Evidence(**{**_evidence(run).__dict__, "reached_by": tuple(ids)})
    verdict = judge_run(mutation, evidence, {"selected": tuple(ids)})
    assert verdict.verdict == "wrong-cause", verdict.detail
    assert verdict.detail.endswith("; and 2 more") and verdict.detail.count("ValueError") == 10
