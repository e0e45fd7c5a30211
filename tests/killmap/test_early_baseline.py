"""The early baseline: the baseline begins while the mutants are built, and never costs a verdict.

The gate starts its workers and the baseline before it builds the mutants (early_baseline.py).
These tests hold it to the promises that make that safe: a catalog error found meanwhile is
the error reported, at once, with the baseline stopped rather than waited for; a run with
nothing to run starts no worker at all.
"""

from __future__ import annotations

import time
from pathlib import Path

from gatekit import copy_fixture, gate_env, run_gate

import killmap.verdict.lab as lab
from killmap.catalog.plan import LabOptions

SLOW_TEST = """

def test_takes_its_time():
    # A long baseline: the catalog error below is found while this test still runs.
    import os, time
    time.sleep(float(os.environ.get("KILLMAP_SLOW_SECONDS", "0")))
    done = os.environ.get("KILLMAP_SLOW_DONE")
    if done:
        open(done, "w").write("the baseline ran to its end")
"""

CONTROL_ELSEWHERE = (
    '\n[[mutation]]\nname = "even-check-equivalent"\ntarget = "src/basicpkg/core.py::is_even"\n'
    'op = "replace"\nold = "n % 2 == 0"\nnew = "not n % 2"\ninvariant = true\n'
    'control = "classify-call-deleted"\n'
)


def test_a_catalog_error_found_during_the_baseline_is_reported_without_waiting_for_it(tmp_path):
    project = copy_fixture("basic", tmp_path)
    tests = project / "tests" / "test_core.py"
    tests.write_text(tests.read_text() + SLOW_TEST)
    catalog = project / "mutations" / "basic.toml"
    catalog.write_text(catalog.read_text() + CONTROL_ELSEWHERE)
    done = tmp_path / "baseline-finished"
    env = gate_env(project, {"KILLMAP_SLOW_SECONDS": "60", "KILLMAP_SLOW_DONE": str(done)})
    began = time.monotonic()
    run = run_gate(project, "run", "--no-cache", env=env, timeout=120)
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.code == 2 and len(lines) == 1, run.stderr
    assert "'even-check-equivalent'" in lines[0] and "'control'" in lines[0]
    # Stopped, not waited for: the sixty-second test never reached its end.
    assert not done.exists()
    assert time.monotonic() - began < 60


def test_a_run_whose_verdicts_are_all_cached_starts_no_worker(tmp_path, monkeypatch):
    project = copy_fixture("basic", tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    options = LabOptions(jobs=2)
    first = lab.run_lab(project, options)
    assert first.all_held, [(v.name, v.verdict, v.detail) for v in first.verdicts]
    started: list[Path] = []
    real_engine = lab.Engine

    class CountingEngine(real_engine):
        def __init__(self, root, *args, **kwargs):
            started.append(root)
            super().__init__(root, *args, **kwargs)

    monkeypatch.setattr(lab, "Engine", CountingEngine)
    again = lab.run_lab(project, options)
    assert [v.verdict for v in again.verdicts] == [v.verdict for v in first.verdicts]
    assert all(v.cached for v in again.verdicts)
    assert started == []
    # And the counting is real: a run that must run something does start the engine.
    lab.run_lab(project, LabOptions(jobs=2, use_cache=False))
    assert started == [project]


BROKEN_ONLY = """[gate]
tests = ["tests/test_core.py"]
paths = ["src"]

[[mutation]]
name = "classify-returns-an-undefined-name"
target = "src/basicpkg/core.py::classify"
op = "replace"
old = 'return "even"'
new = "return undefined_name"
kills = ["tests/test_core.py::test_even_is_accepted"]
"""


def test_an_early_baseline_is_used_only_for_its_own_settings(tmp_path, monkeypatch):
    # The early baseline runs the baseline of the first catalog's settings. Here every mutation
    # of that catalog turns out broken (no run), so its baseline must not stand in for the
    # other catalog's, whose tests and selection differ: that one gets its own.
    project = copy_fixture("basic", tmp_path)
    (project / "mutations" / "a-broken.toml").write_text(BROKEN_ONLY)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    result = lab.run_lab(project, LabOptions(jobs=2, use_cache=False))
    verdicts = {v.name: v.verdict for v in result.verdicts}
    assert verdicts["classify-returns-an-undefined-name"] == "broken"
    assert verdicts["classify-call-deleted"] == "held"
    assert [b.settings.tests for b in result.baselines] == [("tests",)]
