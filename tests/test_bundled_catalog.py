"""The Quick start's first command: the gate over the bundled catalog, at the repository root."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_killmap_run_with_no_argument_holds_every_bundled_contract(tmp_path):
    env_cache = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-m", "killmap", "run", "--no-cache", "--report-dir", str(tmp_path / "reports")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **env_cache},
        timeout=600,
    )
    report = json.loads((tmp_path / "reports" / "killmap.json").read_text())
    verdicts = {m["name"]: m["verdict"] for m in report["mutations"]}
    assert done.returncode == 0, (verdicts, done.stdout[-3000:], done.stderr[-2000:])
    assert len(verdicts) == 16
    assert set(verdicts.values()) == {"held"}
    # every non-invariant lists the tests it turned red, each with a cause
    for entry in report["mutations"]:
        if not entry["invariant"]:
            assert entry["red"] and all(r["cause"] for r in entry["red"])
