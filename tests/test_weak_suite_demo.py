"""The gate tells a suite that runs a refusal from one that pins it (seed-004, trap 1).

tests/fixtures/weak_suite holds a copy of draftroute's refusal tests that assert only the
words every routing refusal shares, and a catalog naming them as the killers of the
seed-004 trio (M01-M03). Run as a real `python -m killmap` subprocess on a scratch project,
the gate must fail (exit 1) and judge each of the three "vacuous": a kills test stayed
green. The strong suite's catalog (mutations/draftroute.toml) holds the same three.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WEAK_SUITE = REPO / "tests" / "fixtures" / "weak_suite"
SEED_004_TRIO = ("identity-call-deleted", "predicate-constant-true", "refusals-merged")

PYPROJECT = """\
[project]
name = "weak-suite-demo"
version = "0"

[tool.pytest.ini_options]
addopts = "-p no:cacheprovider"
"""


def build_project(root: Path) -> Path:
    """A scratch project: draftroute's source, the weak tests, the weak catalog."""
    shutil.copytree(
        REPO / "src" / "draftroute", root / "src" / "draftroute", ignore=shutil.ignore_patterns("__pycache__")
    )
    # The repository's layout: weak.toml names its tests by their path from the root.
    (root / "tests" / "fixtures" / "weak_suite").mkdir(parents=True)
    shutil.copyfile(
        WEAK_SUITE / "test_weak_refusals.py", root / "tests" / "fixtures" / "weak_suite" / "test_weak_refusals.py"
    )
    (root / "mutations").mkdir()
    shutil.copyfile(WEAK_SUITE / "weak.toml", root / "mutations" / "weak.toml")
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    return root


def test_gate_judges_weak_refusal_tests_vacuous(tmp_path):
    project = build_project(tmp_path / "project")
    reports = tmp_path / "reports"
    gate = subprocess.run(
        [sys.executable, "-m", "killmap", "run", "--no-cache", "--report-dir", str(reports)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = f"stdout:\n{gate.stdout[-4000:]}\nstderr:\n{gate.stderr[-4000:]}"
    assert gate.returncode == 1, output
    report = json.loads((reports / "killmap.json").read_text(encoding="utf-8"))
    verdicts = {entry["name"]: entry["verdict"] for entry in report["mutations"]}
    assert verdicts == {name: "vacuous" for name in SEED_004_TRIO}, output
