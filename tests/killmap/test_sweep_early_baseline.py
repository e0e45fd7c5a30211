"""A sweep begins its baseline before it enumerates its mutants, and uses that baseline.

Enumerating a large file's mutants (libcst, mutmut's operators) took over a second on
draftroute while the workers waited. The baseline depends only on the settings, the files
traced and the tests contracts name (early_baseline.py), all known before a single mutant is: so
the sweep starts it first. These run the sweep in this process, on the fixture project, and
watch for the early baseline's thread when enumeration begins.
"""

from __future__ import annotations

import threading

import pytest
from sweepkit import fresh_fixture, require_mutmut

from killmap.catalog.reader import GateSettings, Mutation, Target
from killmap.verdict import baseline as baseline_module
from killmap.verdict import sweep as sweep_module
from killmap.verdict.early_baseline import EarlyBaseline
from killmap.verdict.lab import LabOptions

MODULE = "src/sweeppkg/limits.py"


@pytest.fixture(autouse=True)
def _mutmut():
    require_mutmut()


def _sweep(project, monkeypatch, *, use_cache: bool, cache_dir):
    """The sweep of MODULE in this process: what it found, whether an early baseline was running
    when enumeration began, and how many baselines were run."""
    seen: dict[str, object] = {"baselines": 0}
    enumerate_mutants, run_baseline = sweep_module.enumerate_mutants, baseline_module.run_baseline

    def watched_enumeration(*args, **kwargs):
        seen["early baseline running"] = any(t.name == "killmap-early-baseline" for t in threading.enumerate())
        return enumerate_mutants(*args, **kwargs)

    def counted_baseline(*args, **kwargs):
        seen["baselines"] = int(seen["baselines"]) + 1  # type: ignore[call-overload]
        return run_baseline(*args, **kwargs)

    monkeypatch.setattr(sweep_module, "enumerate_mutants", watched_enumeration)
    monkeypatch.setattr("killmap.verdict.early_baseline.run_baseline", counted_baseline)
    monkeypatch.setattr("killmap.verdict.lab.run_baseline", counted_baseline)
    targets = sweep_module.resolve_targets(project, [MODULE], [])
    options = LabOptions(jobs=2, use_cache=use_cache, cache_dir=cache_dir)
    result = sweep_module.run_sweep(project, targets, ("mutmut",), options, [])
    return result, seen


def test_a_first_sweep_runs_its_baseline_while_it_enumerates_and_keeps_it(tmp_path, monkeypatch):
    project = fresh_fixture(tmp_path)
    result, seen = _sweep(project, monkeypatch, use_cache=False, cache_dir=tmp_path / "cache")
    assert seen["early baseline running"] is True
    assert seen["baselines"] == 1  # the early one covered every mutant: none was run again
    statuses = {e.status for e in result.entries}
    assert "killed" in statuses and "survived" in statuses  # judged against that baseline
    assert not any(t.name == "killmap-early-baseline" for t in threading.enumerate())


def test_a_sweeps_baseline_runs_both_its_runs_while_it_still_enumerates(tmp_path, monkeypatch):
    # The baseline's runs must not wait for the mutants: here enumeration lasts until both
    # whole runs have ended, which never happens if they wait for the gate to be ready.
    project = fresh_fixture(tmp_path)
    ran = threading.Semaphore(0)
    whole_passes, enumerate_mutants = baseline_module._whole_passes, sweep_module.enumerate_mutants
    seen: dict[str, bool] = {}

    def counted_passes(*args, **kwargs):
        done = whole_passes(*args, **kwargs)
        ran.release()
        return done

    def slow_enumeration(*args, **kwargs):
        seen["both runs ended while enumerating"] = ran.acquire(timeout=30)
        return enumerate_mutants(*args, **kwargs)

    monkeypatch.setattr(baseline_module, "_whole_passes", counted_passes)
    monkeypatch.setattr(sweep_module, "enumerate_mutants", slow_enumeration)
    targets = sweep_module.resolve_targets(project, [MODULE], [])
    result = sweep_module.run_sweep(project, targets, ("mutmut",), LabOptions(jobs=2, use_cache=False), [])
    assert seen == {"both runs ended while enumerating": True}
    assert "killed" in {e.status for e in result.entries}


def test_a_sweep_whose_verdicts_are_cached_starts_no_baseline_before_it_enumerates(tmp_path, monkeypatch):
    project = fresh_fixture(tmp_path)
    first, _ = _sweep(project, monkeypatch, use_cache=True, cache_dir=tmp_path / "cache")
    again, seen = _sweep(project, monkeypatch, use_cache=True, cache_dir=tmp_path / "cache")
    # Swept before: it may have nothing left to run, and a baseline would only slow enumeration.
    assert seen["early baseline running"] is False
    assert [(e.mutant.id, e.status) for e in again.entries] == [(e.mutant.id, e.status) for e in first.entries]


def _early_baseline(settings: GateSettings, *paths: str, contract: tuple[str, ...] = ()) -> EarlyBaseline:
    early = EarlyBaseline.__new__(EarlyBaseline)  # its thread and engine play no part in what it covers
    early.settings = settings
    early.targets = frozenset(paths)
    early.contract = frozenset(contract)
    return early


def _mutation(path: str, settings: GateSettings, kills: tuple[str, ...] = ()) -> Mutation:
    return Mutation(name=f"m-{path}", target=Target(path), op="sweep", params=(), kills=kills, settings=settings)


def test_an_early_baseline_covers_what_its_baseline_traced_and_named_and_nothing_else():
    settings, other = GateSettings(), GateSettings(tests=("tests/other",))
    early = _early_baseline(settings, "src/a.py", "src/b.py", contract=("tests/test_a.py::test_x",))
    assert early.covers([_mutation("src/a.py", settings), _mutation("src/b.py", settings)])
    assert early.covers([_mutation("src/a.py", settings, kills=("tests/test_a.py::test_x",))])
    assert not early.covers([])
    assert not early.covers([_mutation("src/c.py", settings)])  # a file it did not trace
    assert not early.covers([_mutation("src/a.py", other)])  # other settings
    assert not early.covers([_mutation("src/a.py", settings, kills=("tests/test_a.py::test_y",))])
