"""action.yml, run here as GitHub's runner would run its shell steps.

The composite action's `run` steps are executed with bash -eo pipefail (GitHub's bash),
their `env` expressions evaluated from the inputs (with the action's defaults), in a
workspace holding a fixture project, with GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files.
The `uses` steps (setup-python, upload-artifact) are GitHub's own and are only checked
for their wiring; the install step is not run (it would pip-install this checkout).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from gatekit import copy_fixture, gate_env
from test_annotations import OVERREACH, UNEVIDENCED
from test_ci_cache import two_function_project
from test_comment import fake_github

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
    # The verdict cache's folder and the diff's base, before any step set them (issue 29).
    context.update(
        {"steps.cache-key.outputs.dir": "", "steps.diff.outputs.base": "", "steps.diff.outputs.exit-code": ""}
    )
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
        "Key the verdict cache",
        "Restore the verdict cache",
        "Run the gate",
        "Compare with the base",
        "Comment on the pull request",
        "Keep the report for the next comparison",
        "Save the verdict cache",
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
    assert "--changed: 0 mutations see a change: none" in gate.stdout
    assert _outputs(workspace) == {"exit-code": "0"}
    # A change the catalog's tests see: both mutations run, both hold.
    tests = project / "tests" / "test_core.py"
    tests.write_text(tests.read_text() + '\n\ndef test_two_is_even():\n    assert classify(2) == "even"\n')
    _git(project, "commit", "-qam", "a new test")
    (workspace / "github-output").unlink()
    gate = _run_step(STEPS["gate"], workspace, context, env)
    assert "--changed: 2 mutations see a change" in gate.stdout, gate.stdout + gate.stderr
    assert "2/2 contracts held" in gate.stdout and "(1 job, seed " in gate.stdout
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


def test_the_cache_steps_are_keyed_by_what_verdicts_depend_on_and_a_pull_request_restores_its_bases():
    restore, save = STEPS["Restore the verdict cache"], STEPS["Save the verdict cache"]
    assert restore["uses"].startswith("actions/cache/restore@") and restore["if"] == "inputs.cache == 'true'"
    assert save["uses"].startswith("actions/cache/save@") and save["if"] == "always() && inputs.cache == 'true'"
    prefix = "${{ steps.cache-key.outputs.key }}-"
    assert restore["with"]["restore-keys"] == prefix and restore["with"]["key"].startswith(prefix)
    assert save["with"]["path"] == restore["with"]["path"] == "${{ steps.cache-key.outputs.dir }}"
    locks = STEPS["cache-key"]["env"]["KILLMAP_LOCKS"]
    assert locks.startswith("${{ hashFiles(") and "requirements*.txt" in locks and "*.lock" in locks
    assert ACTION["inputs"]["cache"]["default"] == "true" and ACTION["inputs"]["comment"]["default"] == "false"


@pytest.fixture
def github():
    """GitHub's API, as a local server on 127.0.0.1 that records every request."""
    with fake_github() as server:
        yield server


def _pull_request_push(workspace: Path, project: Path, context: dict[str, str], env: dict[str, str]):
    """One push of a pull request, as its job runs: the gate, the diff against the base, the comment."""
    (workspace / "github-output").unlink(missing_ok=True)
    (workspace / "summary.md").unlink(missing_ok=True)
    gate = _run_step(STEPS["gate"], workspace, context, env)
    assert gate.returncode == 0 and not [line for line in gate.stdout.splitlines() if line.startswith("::")], (
        gate.stdout
    )
    diff = _run_step(STEPS["diff"], workspace, context, env)
    assert diff.returncode == 0, diff.stderr
    context["steps.diff.outputs.base"] = _outputs(workspace).get("base", "")
    comment = _run_step(STEPS["Comment on the pull request"], workspace, context, env)
    assert comment.returncode == 0 and "::warning" not in comment.stdout, comment.stdout + comment.stderr
    return gate, diff


def test_a_pull_request_on_a_fresh_runner_reuses_the_bases_verdicts_diffs_against_its_report_and_keeps_one_comment(
    tmp_path, github
):
    # The base branch's run, on a first runner: the gate, then the report kept in the cache folder.
    first = tmp_path / "runner-1"
    project = two_function_project(first / "ws" / "pkgproject")
    env = {**_github(first / "ws", project), "RUNNER_OS": "Linux"}
    context = _context({"working-directory": "pkgproject", "args": "--jobs 1"})
    context["runner.temp"] = str(first / "temp")
    context[EXPRESSION.search(STEPS["cache-key"]["env"]["KILLMAP_LOCKS"]).group(1)] = "lockhash"
    assert _run_step(STEPS["cache-key"], first / "ws", context, env).returncode == 0
    keyed = _outputs(first / "ws")
    assert keyed["dir"] == str(first / "temp" / "killmap-cache")
    assert re.fullmatch(r"killmap-Linux-py3\.\d+\.\d+-km[\w.+-]+-lockhash", keyed["key"]), keyed["key"]
    context["steps.cache-key.outputs.dir"] = keyed["dir"]
    assert _run_step(STEPS["gate"], first / "ws", context, env).returncode == 0
    context["github.head_ref || github.ref_name"] = "main"
    assert _run_step(STEPS["Keep the report for the next comparison"], first / "ws", context, env).returncode == 0
    assert (first / "temp" / "killmap-cache" / "reports" / "main" / "killmap.json").is_file()

    # A pull request on a fresh runner: the checkout at another path, the cache restored into
    # another temporary folder (what actions/cache does), one function changed.
    second = tmp_path / "runner-2"
    moved = second / "workspace" / "pkgproject"
    shutil.copytree(project, moved, ignore=shutil.ignore_patterns("reports"))
    shutil.copytree(first / "temp" / "killmap-cache", second / "tmp" / "killmap-cache")
    core = moved / "pkg" / "core.py"
    core.write_text(core.read_text().replace("return x * 2", "return x + x"))  # double-adds no longer applies
    event = second / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    env = {
        **_github(second / "workspace", moved),
        "GITHUB_API_URL": github.url,
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_EVENT_PATH": str(event),
    }
    context.update(
        {
            "inputs.compare": "base",
            "inputs.comment": "true",
            "inputs.github-token": "pr-token",
            "github.base_ref": "main",
            "github.head_ref || github.ref_name": "feature",
            "steps.cache-key.outputs.dir": str(second / "tmp" / "killmap-cache"),
        }
    )
    gate, diff = _pull_request_push(second / "workspace", moved, context, env)
    assert "2/3 contracts held" in gate.stdout and "1 of 3 verdicts reused from the cache" in gate.stdout
    annotations = [line for line in diff.stdout.splitlines() if line.startswith("::")]
    assert len(annotations) == 1 and annotations[0].startswith(
        "::error file=pkgproject/pkg/core.py,line=2,title=killmap regression%3A double-adds::"
        "held on the base, not-applied here"
    )
    assert _outputs(second / "workspace")["exit-code"] == "1"
    summary = (second / "workspace" / "summary.md").read_text()
    assert summary.startswith("### killmap diff: 1 regression; 1 change; held 3/3 -> 2/3")
    assert summary.index("| ❌ regressed | `double-adds` | held | not-applied |") < summary.index("## killmap: 2/3")
    assert [(method, path) for method, path, _, _ in github.requests][-1] == ("POST", "/repos/o/r/issues/7/comments")
    assert github.requests[-1][3] == "Bearer pr-token"

    # The second push fixes the regression: the same comment is edited, not a second one added.
    core.write_text(core.read_text().replace("return x + x", "return x * 2"))
    github.requests.clear()
    gate, diff = _pull_request_push(second / "workspace", moved, context, env)
    # The cache keeps one verdict per mutation: double-returns-zero's is the first push's, and runs again.
    assert "3/3 contracts held" in gate.stdout and "2 of 3 verdicts reused from the cache" in gate.stdout
    assert not [line for line in diff.stdout.splitlines() if line.startswith("::")]
    assert [method for method, *_ in github.requests] == ["GET", "PATCH"]
    assert len(github.comments) == 2 and "no regression; 0 changes" in github.comments[-1]["body"]


def test_fail_on_regressions_fails_the_job_only_for_a_regression_and_never_hides_bad_input(tmp_path):
    context = _context({"fail-on": "regressions"})
    env = {"PATH": os.environ["PATH"]}
    step = STEPS["Exit with killmap's code"]

    def exit_code(gate: str, diff: str) -> int:
        context.update({"steps.gate.outputs.exit-code": gate, "steps.diff.outputs.exit-code": diff})
        return _run_step(step, tmp_path, context, env).returncode

    assert exit_code("1", "0") == 0  # old failures only: tolerated
    assert exit_code("1", "1") == 1  # a contract that held on the base does not hold
    assert exit_code("1", "") == 1  # no base report to compare with: the gate's own code
    assert exit_code("2", "0") == 2 and exit_code("0", "0") == 0
    context["inputs.fail-on"] = "failures"
    assert exit_code("1", "0") == 1  # the default: any failed contract
