"""benchmarks/run.py's killmap driver splits a real gate run into its phases: startup, setup,
baseline, mutants and tail, each measured, none missing."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from benchkit import bench_module

BASIC = Path(__file__).resolve().parents[1] / "fixtures" / "projects" / "basic"


def test_a_gate_run_through_the_driver_reports_every_phase(tmp_path):
    run = bench_module("run")
    root = shutil.copytree(BASIC, tmp_path / "basic")
    work = tmp_path / "work"
    work.mkdir()

    result = run.run_killmap(
        root, work, "basic", catalogs=[root / "mutations" / "basic.toml"], python=Path(sys.executable)
    )

    assert result["exit"] == 0, result.get("error")
    assert result["held"] == result["total"] == 2
    phases = result["phases"]
    for phase in ("startup", "setup", "baseline", "mutants", "tail"):
        assert phases.get(phase, -1.0) >= 0.0, (phase, phases)
    # The baseline and the mutants run pytest: neither can take no time at all.
    assert phases["baseline"] > 0.0 and phases["mutants"] > 0.0, phases
    assert phases["killmap_file"].endswith("killmap/verdict/lab.py")
