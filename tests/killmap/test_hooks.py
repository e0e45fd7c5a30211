"""The pre-commit manifest: its entries run, as pre-commit would run them, in a project.

pre-commit runs a `language: system` hook as the entry split into words, in the
repository root, with the filenames appended unless `pass_filenames: false`. The test does
the same in a git copy of the basic fixture with a change on a branch.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml
from gatekit import copy_fixture, gate_env

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / ".pre-commit-hooks.yaml"


def _hooks() -> dict[str, dict]:
    return {hook["id"]: hook for hook in yaml.safe_load(MANIFEST.read_text())}


def test_the_manifest_declares_its_hooks_as_documented():
    hooks = _hooks()
    assert set(hooks) == {"killmap", "killmap-catalog", "killmap-sweep"}
    gate, catalog, sweep = hooks["killmap"], hooks["killmap-catalog"], hooks["killmap-sweep"]
    assert gate["entry"] == "killmap run --changed" and gate["stages"] == ["pre-push"]
    assert sweep["entry"] == "killmap sweep --changed" and sweep["stages"] == ["pre-push"]
    assert catalog["entry"] == "killmap check"
    for hook in hooks.values():
        assert hook["pass_filenames"] is False and hook["language"] == "system"
    pattern = re.compile(catalog["files"])
    assert all(pattern.search(p) for p in ("mutations/app.toml", "src/app/core.py", "mutations/fix.patch"))
    assert not pattern.search("README.md")


def _git(project: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=project,
        check=True,
        capture_output=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.invalid",
        },
    )


def _as_pre_commit_would(project: Path, hook: dict) -> subprocess.CompletedProcess:
    command = shlex.split(hook["entry"])  # no filenames: pass_filenames is false
    env = gate_env(project, {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"})
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=300)


def test_both_entries_run_in_a_project_as_pre_commit_runs_them(tmp_path):
    project = copy_fixture("basic", tmp_path)
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "base")
    _git(project, "checkout", "-q", "-b", "feature")
    tests = project / "tests" / "test_core.py"
    tests.write_text(tests.read_text() + '\n\ndef test_two_is_even():\n    assert classify(2) == "even"\n')
    _git(project, "commit", "-qam", "a new test")
    hooks = _hooks()

    catalog = _as_pre_commit_would(project, hooks["killmap-catalog"])
    assert catalog.returncode == 0, catalog.stderr
    assert "2 mutations, 4 tests collected" in catalog.stdout

    gate = _as_pre_commit_would(project, hooks["killmap"])
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "--changed: 2 mutations see a change: classify-call-deleted, odd-refusal-fix-reverted" in gate.stdout
    assert "2/2 contracts held" in gate.stdout

    # A broken catalog stops the commit: pre-commit fails a hook on any non-zero exit.
    path = project / "mutations" / "basic.toml"
    path.write_text(path.read_text().replace("test_odd_is_refused", "test_odd_is_refusd", 1))
    assert _as_pre_commit_would(project, hooks["killmap-catalog"]).returncode == 2
