"""action.yml, run here as GitHub's runner would run its shell steps.

The composite action's `run` steps are executed with bash -eo pipefail (GitHub's bash),
their `env` expressions evaluated from the inputs (with the action's defaults), in a
workspace holding a fixture project, with GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files.
The `uses` steps (setup-python, upload-artifact) are GitHub's own and are only checked
for their wiring; the install step is not run (it would pip-install this checkout).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml
from gatekit import copy_fixture, gate_env
from test_annotations import OVERREACH, UNEVIDENCED

ROOT = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
STEPS = {step.get("id", step["name"]): step for step in ACTION["runs"]["steps"]}
EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")


def _evaluate(text: str, context: dict[str, str]) -> str:
    def value(match: re.Match) -> str:
        assert match.group(1) in context, f"expression the test does not know: {match.group(1)}"
        return context[match.group(1)]

    return EXPRESSION.sub(value, str(text))


def _context(inputs: dict[str, str], base_ref: str = "") -> dict[str, str]:
    context = {f"inputs.{name}": spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    context.update({f"inputs.{k}": v for k, v in inputs.items()})
    context.update({"github.action_path": str(ROOT), "github.base_ref": base_ref})
    return context


def _run_step(step: dict, workspace: Path, context: dict[str, str], extra_env: dict[str, str]):
    script = step["run"]
    assert "${{" not in script, "inputs must reach a script through env, never pasted into it"
    env = {**extra_env, **{k: _evaluate(v, context) for k, v in step.get("env", {}).items()}}
    cwd = workspace / _evaluate(step.get("working-directory", "."), context)
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _github(workspace: Path, project: Path) -> dict[str, str]:
    return gate_env(
        project,
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_OUTPUT": str(workspace / "github-output"),
            "GITHUB_STEP_SUMMARY": str(workspace / "summary.md"),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        },
    )


def _outputs(workspace: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in (workspace / "github-output").read_text().splitlines())


def test_the_action_declares_its_inputs_and_wires_its_steps():
    assert {"catalogs", "args", "python-version", "report-dir", "changed-only"} <= set(ACTION["inputs"])
    assert ACTION["runs"]["using"] == "composite"
    assert ACTION["outputs"]["exit-code"]["value"] == "${{ steps.gate.outputs.exit-code }}"
    names = [step["name"] for step in ACTION["runs"]["steps"]]
    assert names == [
        "Set up Python",
        "Install killmap",
        "Run the gate",
        "Upload the reports",
        "Exit with killmap's code",
    ]
    setup, upload = ACTION["runs"]["steps"][0], STEPS["Upload the reports"]
    assert setup["uses"].startswith("actions/setup-python@") and setup["if"] == "inputs.python-version != ''"
    assert upload["uses"].startswith("actions/upload-artifact@") and upload["if"] == "always()"
    assert upload["with"]["path"] == "${{ inputs.working-directory }}/${{ inputs.report-dir }}"
    assert '-m pip install --quiet "$KILLMAP_SOURCE"' in STEPS["Install killmap"]["run"]


def test_the_gate_step_annotates_and_the_last_step_exits_with_killmaps_code(tmp_path):
    project = copy_fixture("selection", tmp_path)
    env = _github(tmp_path, project)
    context = _context({"working-directory": "selection"})
    gate = _run_step(STEPS["gate"], tmp_path, context, env)
    assert gate.returncode == 0, gate.stderr  # the step itself succeeds so the upload runs
    assert [line for line in gate.stdout.splitlines() if line.startswith("::")] == [OVERREACH, UNEVIDENCED]
    assert _outputs(tmp_path) == {"exit-code": "1"}
    assert (project / "reports" / "killmap.json").is_file()  # the folder the upload step names
    assert (tmp_path / "summary.md").read_text() == (project / "reports" / "killmap.md").read_text()
    context["steps.gate.outputs.exit-code"] = _outputs(tmp_path)["exit-code"]
    assert _run_step(STEPS["Exit with killmap's code"], tmp_path, context, env).returncode == 1


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=cwd,
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


def test_changed_only_runs_what_the_pull_request_changed_against_its_base(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    project = copy_fixture("basic", workspace)
    origin = tmp_path / "origin.git"
    _git(tmp_path, "init", "-q", "--bare", str(origin))
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "base")
    _git(project, "remote", "add", "origin", str(origin))
    _git(project, "push", "-q", "origin", "main")
    _git(project, "checkout", "-q", "-b", "feature")
    (project / "src" / "basicpkg" / "__init__.py").write_text("# nothing a mutation targets\n")
    _git(project, "commit", "-qam", "unrelated")
    env = _github(workspace, project)
    context = _context(
        {"working-directory": "basic", "changed-only": "true", "args": "--jobs 1 --no-cache"}, base_ref="main"
    )
    gate = _run_step(STEPS["gate"], workspace, context, env)
    assert gate.returncode == 0, gate.stderr
    assert "--changed: 0 mutation(s) see a change: none" in gate.stdout
    assert _outputs(workspace) == {"exit-code": "0"}
    # A change the catalog's tests see: both mutations run, both hold.
    tests = project / "tests" / "test_core.py"
    tests.write_text(tests.read_text() + '\n\ndef test_two_is_even():\n    assert classify(2) == "even"\n')
    _git(project, "commit", "-qam", "a new test")
    (workspace / "github-output").unlink()
    gate = _run_step(STEPS["gate"], workspace, context, env)
    assert "--changed: 2 mutation(s) see a change" in gate.stdout, gate.stdout + gate.stderr
    assert "2/2 contracts held" in gate.stdout and "(1 job(s))" in gate.stdout
    context["steps.gate.outputs.exit-code"] = _outputs(workspace)["exit-code"]
    assert _run_step(STEPS["Exit with killmap's code"], workspace, context, env).returncode == 0


def test_the_action_sweeps_a_shard_balanced_by_the_durations_it_is_given(tmp_path):
    import json
    import shutil

    from sweepkit import require_mutmut

    require_mutmut()
    project = copy_fixture("sweep", tmp_path)
    env = _github(tmp_path, project)
    inputs = {"working-directory": "sweep", "command": "sweep", "durations": "kept/killmap-sweep.json"}
    context = _context({**inputs, "args": "src/sweeppkg/limits.py --ops killmap --jobs 2 --shard 1/2"})
    # No report kept yet (the base branch's first run): a warning, and round-robin.
    sweep = _run_step(STEPS["gate"], tmp_path, context, env)
    assert sweep.returncode == 0, sweep.stderr
    assert "::warning title=killmap::no durations report at kept/killmap-sweep.json" in sweep.stdout
    report = project / "reports" / "killmap-sweep.json"
    assert json.loads(report.read_text())["split"]["method"] == "round-robin"
    assert _outputs(tmp_path) == {"exit-code": "0"}
    (project / "kept").mkdir()
    shutil.copy(report, project / "kept" / "killmap-sweep.json")
    sweep = _run_step(STEPS["gate"], tmp_path, context, env)
    assert sweep.returncode == 0 and "::warning" not in sweep.stdout, sweep.stdout + sweep.stderr
    shard = json.loads(report.read_text())
    assert shard["split"]["method"] == "time" and shard["shard"] == "1/2"
