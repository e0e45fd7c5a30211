"""A mutant's dependencies (the hash of every function its tests ran, in every file they
imported) key its cache entry and nothing else: a gate that writes a cache works them out for
every run mutant, `--no-cache` included (it reads nothing, but stores fresh verdicts); a gate
that writes none (`--no-cache-write`) reads no file for them. That the entries' keys are right
is held by test_selection_and_cache.py (a touched function reruns what can see it)."""

from __future__ import annotations

from gatekit import copy_fixture

import killmap.verdict.lab as lab
import killmap.verdict.trial as trial
from killmap.catalog.plan import LabOptions


def run_counting_dependencies(tmp_path, monkeypatch, **cache) -> tuple[list, dict]:
    project = copy_fixture("basic", tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    calls: list = []
    real = trial.dependencies

    def counting(root, executed, shapes=None):
        calls.append(sorted(executed))
        return real(root, executed, shapes)

    monkeypatch.setattr(trial, "dependencies", counting)
    result = lab.run_lab(project, LabOptions(jobs=2, **cache))
    return calls, {v.name: v.verdict for v in result.verdicts}


def test_a_gate_that_writes_no_cache_works_out_no_dependencies(tmp_path, monkeypatch):
    calls, verdicts = run_counting_dependencies(tmp_path, monkeypatch, use_cache=False, write_cache=False)
    assert calls == []
    assert verdicts == {"classify-call-deleted": "held", "odd-refusal-fix-reverted": "held"}


def test_a_gate_with_a_cache_works_them_out_for_every_run_mutant(tmp_path, monkeypatch):
    calls, verdicts = run_counting_dependencies(tmp_path, monkeypatch)
    assert len(calls) == 2 and all(calls)
    assert verdicts == {"classify-call-deleted": "held", "odd-refusal-fix-reverted": "held"}


def test_a_gate_that_reads_no_cache_still_works_them_out_to_store_its_verdicts(tmp_path, monkeypatch):
    calls, verdicts = run_counting_dependencies(tmp_path, monkeypatch, use_cache=False)
    assert len(calls) == 2 and all(calls)
    assert verdicts == {"classify-call-deleted": "held", "odd-refusal-fix-reverted": "held"}
