"""For the sweep's tests: mutmut is an extra (killmap[sweep]), and CI must not skip them.

`.ci/run` installs the extra and sets KILLMAP_REQUIRE_SWEEP=1, so a CI where mutmut went
missing fails these tests instead of skipping them; a developer without the extra sees
them skipped, with the command that installs it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest
from gatekit import copy_fixture, gate_env, run_gate


def require_mutmut() -> None:
    if importlib.util.find_spec("mutmut") is not None:
        return
    if os.environ.get("KILLMAP_REQUIRE_SWEEP"):
        pytest.fail("KILLMAP_REQUIRE_SWEEP is set but mutmut is not installed: install killmap[sweep]")
    pytest.skip("mutmut is not installed: pip install -e '.[sweep]'")


def sweep(project: Path, *args: str, report_dir: Path | None = None):
    """`killmap sweep` in a subprocess; returns the run and the sweep document (or None)."""
    report_dir = report_dir or project.parent / f"sweep-reports-{project.name}"
    done = run_gate(project, "sweep", *args, "--report-dir", str(report_dir), env=gate_env(project))
    path = report_dir / "killmap-sweep.json"
    return done, (json.loads(path.read_text()) if path.exists() else None), report_dir


def fresh_fixture(tmp: Path, name: str = "sweep") -> Path:
    project = tmp / name
    shutil.rmtree(project, ignore_errors=True)
    return copy_fixture(name, tmp)


def by_status(doc: dict, status: str) -> list[dict]:
    return [m for m in doc["sweep"]["mutants"] if m["status"] == status]
