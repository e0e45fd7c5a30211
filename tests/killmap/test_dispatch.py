"""A mutant runs from the moment it and the baseline are both there, not once every mutant is
built: a worker whose baseline run is done would otherwise wait for the gate to build and
check the last mutant (dispatch.py). What runs, and how it is judged, must not change.
"""

from __future__ import annotations

import threading
import time

import pytest
from gatekit import copy_fixture, gate_env, one_mutation_project, run_gate

import killmap.verdict.lab as lab
from killmap.catalog.plan import LabOptions, load


def test_the_first_mutant_runs_while_the_last_is_still_being_built(tmp_path, monkeypatch):
    project = copy_fixture("basic", tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    first_run_began = threading.Event()
    seen_while_building: list[bool] = []
    run_mutant, prepare = lab.run_mutant, lab.prepared_mutant

    def running(*args, **kwargs):
        first_run_began.set()
        return run_mutant(*args, **kwargs)

    def building(root, mutation, known, sources, memo):
        if mutation.name == "odd-refusal-fix-reverted":  # the catalog's last mutation
            # Held until a mutant has begun to run: the gate waiting for every mutant to be
            # built before it runs any would never get there.
            seen_while_building.append(first_run_began.wait(timeout=60))
        return prepare(root, mutation, known, sources, memo)

    monkeypatch.setattr(lab, "run_mutant", running)
    monkeypatch.setattr(lab, "prepared_mutant", building)
    result = lab.run_lab(project, LabOptions(jobs=2, use_cache=False))
    assert seen_while_building == [True]
    assert {v.name: v.verdict for v in result.verdicts} == {
        "classify-call-deleted": "held",
        "odd-refusal-fix-reverted": "held",
    }


def test_a_cached_verdict_built_after_a_mutant_ran_is_still_said_before_the_baseline(tmp_path, monkeypatch):
    # The console's order is the same on every run: what the gate decides without a run comes
    # first, then the baseline, then what ran. Here the cached mutant is built only once the
    # other has run (as on a loaded machine); its line came after the baseline's.
    project = copy_fixture("basic", tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    lab.run_lab(project, LabOptions(jobs=1, baseline_runs=1))  # both verdicts cached
    catalog = project / "mutations" / "basic.toml"
    catalog.write_text(catalog.read_text().replace('call = "is_even"', 'call = "is_even"\ntimeout = 30', 1))
    ran = threading.Event()
    run_mutant, prepare = lab.run_mutant, lab.prepared_mutant

    def running(*args, **kwargs):
        try:
            return run_mutant(*args, **kwargs)
        finally:
            ran.set()

    def building(root, mutation, known, sources, memo):
        if mutation.name == "odd-refusal-fix-reverted":  # cached, and last in the catalog
            assert ran.wait(timeout=60)
            time.sleep(0.3)  # the first verdict has landed by now
        return prepare(root, mutation, known, sources, memo)

    said: list[tuple[str, str]] = []
    monkeypatch.setattr(lab, "run_mutant", running)
    monkeypatch.setattr(lab, "prepared_mutant", building)
    lab.run_lab(
        project,
        LabOptions(jobs=1, baseline_runs=1),
        lambda kind, data: said.append((kind, getattr(data, "name", "") if kind == "done" else "")),
    )
    assert [entry for entry in said if entry[0] != "planned"] == [
        ("done", "odd-refusal-fix-reverted"),
        ("baseline", ""),
        ("baseline-done", ""),
        ("done", "classify-call-deleted"),
    ]


def test_a_failure_in_the_dispatch_reaches_the_gate_as_itself(tmp_path, monkeypatch):
    # Whatever fails on the dispatch's threads (here the progress display, as the baseline
    # lands) is the gate's error, not a verdict missing from the results.
    project = copy_fixture("basic", tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))

    def progress(kind, data):
        if kind == "baseline-done":
            raise RuntimeError("the display broke")

    with pytest.raises(RuntimeError, match="the display broke"):
        lab.run_lab(project, LabOptions(jobs=2, use_cache=False), progress)


def test_a_second_settings_group_gets_its_own_baseline_and_its_verdicts(tmp_path, monkeypatch):
    # Two catalogs whose [gate] differ: the early baseline covers the first, and the second runs
    # after it, on its own baseline, through the same dispatch.
    project = copy_fixture("basic", tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    (project / "mutations" / "slow.toml").write_text(
        '[gate]\npaths = ["src"]\ntimeout = 30\n\n[[mutation]]\nname = "classify-call-deleted-again"\n'
        'target = "src/basicpkg/core.py::classify"\nop = "delete-call"\ncall = "is_even"\n'
        'kills = ["tests/test_core.py::test_odd_is_refused"]\n'
    )
    result = lab.run_lab(project, LabOptions(jobs=2, use_cache=False))
    assert {v.name: v.verdict for v in result.verdicts} == {
        "classify-call-deleted": "held",
        "odd-refusal-fix-reverted": "held",
        "classify-call-deleted-again": "held",
    }
    assert len(result.baselines) == 2
    assert {b.settings.timeout for b in result.baselines} == {None, 30}


def test_an_early_baseline_whose_mutants_all_turn_out_static_is_stopped_and_cleaned_up(tmp_path):
    # The early baseline begins before the mutants are built; when every one of them then gets a
    # verdict without a run (here: broken, a name nothing defines), its workers are stopped
    # and its scratch folder removed, not left to the gate's exit.
    project = one_mutation_project(
        tmp_path / "project",
        "def one():\n    return 1\n",
        # Collected slowly: the baseline is still out when the mutant is found broken.
        "import time\n\nfrom pkg import one\n\ntime.sleep(2)\n\n\ndef test_one():\n    assert one() == 1\n",
        value="undefined_name",
    )
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    run = run_gate(project, "run", "--no-cache", env=gate_env(project, {"TMPDIR": str(scratch)}))
    assert run.verdicts() == {"one-mutated": "broken"}, run.stdout + run.stderr
    assert not list(scratch.glob("killmap-*")), "the early baseline's scratch folder was left behind"
    # Its line said as it was decided, by the gate itself: the dispatch that would say it with
    # the baseline is stopped first (the line after the table is the verdict's detail).
    assert run.stdout.splitlines()[0].split() == ["broken", "one-mutated"], run.stdout


def _dispatch_with_a_baseline_at_once(events: list[str]):
    from killmap.verdict.dispatch import Dispatch

    baseline = object()  # stands for the Baseline: nothing is offered, so nothing reads it
    dispatch = Dispatch(
        None,
        lambda: baseline,
        [object(), object()],
        lambda *a: None,
        lambda kind, data: events.append(kind),
        lambda *a: None,
    )
    deadline = time.monotonic() + 30
    while dispatch.baseline is not baseline and time.monotonic() < deadline:
        time.sleep(0.01)
    assert dispatch.baseline is baseline
    time.sleep(0.1)  # the workers' threads are waiting for a mutant by now
    return dispatch


def test_a_baseline_in_before_any_mutant_is_built_is_not_announced_if_the_gate_then_cancels():
    # The workers start first, so on a small project the baseline is often in before the
    # first mutant is built; a catalog error found then must be all the user sees.
    events: list[str] = []
    dispatch = _dispatch_with_a_baseline_at_once(events)
    assert events == []
    dispatch.cancel()
    dispatch.join()
    assert events == []


def test_a_baseline_is_announced_once_the_last_mutant_is_offered():
    events: list[str] = []
    dispatch = _dispatch_with_a_baseline_at_once(events)
    dispatch.close()
    dispatch.join()
    assert events == ["baseline", "baseline-done"]


def test_a_baseline_that_arrives_after_the_last_mutant_is_offered_is_announced_on_arrival():
    # A sweep offers every mutant it enumerated before its baseline is in: close() finds no
    # baseline to say, and its arrival must say it, or the run shows neither it nor a verdict.
    from killmap.verdict.dispatch import Dispatch

    events: list[str] = []
    arrived = threading.Event()
    baseline = object()  # stands for the Baseline: nothing is offered, so nothing reads it

    def late_baseline():
        assert arrived.wait(timeout=30)
        return baseline

    dispatch = Dispatch(
        None, late_baseline, [object()], lambda *a: None, lambda kind, data: events.append(kind), lambda *a: None
    )
    dispatch.close()
    assert events == []  # not yet in: nothing to say
    arrived.set()
    dispatch.join()
    assert events == ["baseline", "baseline-done"]


@pytest.mark.parametrize("dearest", ["classify-call-deleted", "odd-refusal-fix-reverted"])
def test_what_a_mutant_took_in_an_earlier_run_decides_which_starts_first(tmp_path, monkeypatch, dearest):
    # A sweep's --durations: a mutant that looped last time costs its limits, though its
    # tests took milliseconds green; it starts first, whichever the baseline would pick.
    project = copy_fixture("basic", tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    options = LabOptions(jobs=1, use_cache=False)
    _, mutations = load(project, options)
    recorded = {m.name: 100.0 if m.name == dearest else 0.001 for m in mutations}
    order: list[str] = []

    def progress(kind, data):
        if kind == "done":
            order.append(data.name)

    result = lab.run_mutations(project, mutations, options, progress, recorded=recorded)
    assert order[0] == dearest and sorted(order) == sorted(m.name for m in mutations)
    assert {v.verdict for v in result.verdicts} == {"held"}


def test_a_gate_shard_balanced_by_durations_starts_the_dearest_mutation_by_that_report_first(tmp_path, monkeypatch):
    import json

    project = copy_fixture("basic", tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    report = tmp_path / "killmap.json"
    order: list[str] = []
    for dearest in ("classify-call-deleted", "odd-refusal-fix-reverted"):
        entries = [
            {"name": name, "duration_seconds": 100.0 if name == dearest else 0.001}
            for name in ("classify-call-deleted", "odd-refusal-fix-reverted")
        ]
        report.write_text(json.dumps({"schema": "killmap-report/1", "mutations": entries}))
        options = LabOptions(jobs=1, use_cache=False, shard=(1, 1), durations=report)
        lab.run_lab(project, options, lambda kind, data: order.append(data.name) if kind == "done" else None)
    # Each run's first verdict is the mutation that report called dearest.
    assert order[0] == "classify-call-deleted" and order[2] == "odd-refusal-fix-reverted", order
