"""The hooks of .pre-commit-hooks.yaml, run by pre-commit itself.

`pre-commit try-repo <this repository> <hook id> --all-files` clones this repository (with
its uncommitted changes, as pre-commit does), reads the manifest and runs the hook, as a
user's .pre-commit-config.yaml naming this repository would, in a git copy of the basic
fixture. The hooks are `language: system`: the `killmap` they run is the one on PATH, this
environment's. pre-commit is in the `test` extra; CI sets KILLMAP_REQUIRE_SWEEP=1, and
then a missing pre-commit fails these tests instead of skipping them.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gatekit import copy_fixture, gate_env

ROOT = Path(__file__).resolve().parents[2]
COMMIT_HOOK = "killmap check (catalogs, pins and test ids)"
PUSH_HOOK = "killmap (mutations a change can affect)"
NEW_TEST = '\n\ndef test_two_is_even():\n    assert classify(2) == "even"\n'


def require_pre_commit() -> None:
    if importlib.util.find_spec("pre_commit") is not None:
        return
    if os.environ.get("KILLMAP_REQUIRE_SWEEP"):
        pytest.fail("KILLMAP_REQUIRE_SWEEP is set but pre-commit is not installed: install killmap[test]")
    pytest.skip("pre-commit is not installed: pip install -e '.[test]'")


def _env(tmp_path: Path, project: Path) -> dict[str, str]:
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = gate_env(
        project,
        {
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
            "TMPDIR": str(tmp_path / "tmp"),  # try-repo's clone of this repository
        },
    )
    # Outside git's own variables (set when this suite itself runs inside a git hook), git
    # would act on another repository than the fixture's.
    return {k: v for k, v in env.items() if not k.startswith("GIT_")}


def _git(project: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=killmap tests", "-c", "user.email=tests@killmap.invalid", *args],
        cwd=project,
        check=True,
        capture_output=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The basic fixture as its own git repository: one commit on `main`, checked out."""
    require_pre_commit()
    project = copy_fixture("basic", tmp_path)
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "base")
    return project


def _on_a_branch_with_a_new_test(project: Path) -> None:
    """A branch off main whose commit adds a test to the file both mutations' kills name:
    both mutations see the change."""
    _git(project, "checkout", "-q", "-b", "feature")
    tests = project / "tests" / "test_core.py"
    tests.write_text(tests.read_text() + NEW_TEST)
    _git(project, "commit", "-q", "-am", "a new test")


def _break_a_kills_id(project: Path) -> None:
    path = project / "mutations" / "basic.toml"
    path.write_text(
        path.read_text().replace(
            '"tests/test_core.py::test_odd_is_refused"', '"tests/test_core.py::test_odd_is_refusd"', 1
        )
    )


def try_repo(project: Path, hook: str, *args: str, repo: Path = ROOT) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "pre_commit", "try-repo", str(repo), hook, "--all-files", "--verbose"]
    command += ["--color", "never", *args]
    return subprocess.run(
        command, cwd=project, env=_env(project.parent, project), capture_output=True, text=True, timeout=300
    )


def _passed(done: subprocess.CompletedProcess, name: str) -> bool:
    return any(line.startswith(name) and line.endswith("Passed") for line in done.stdout.splitlines())


def _failed(done: subprocess.CompletedProcess, name: str, hook_id: str, code: int) -> bool:
    lines = done.stdout.splitlines()
    return (
        any(line.startswith(name) and line.endswith("Failed") for line in lines)
        and f"- hook id: {hook_id}" in lines
        and f"- exit code: {code}" in lines
    )


def test_pre_commit_accepts_the_manifest():
    require_pre_commit()
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_commit_hook_passes_on_a_good_catalog(project):
    done = try_repo(project, "killmap-catalog")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _passed(done, COMMIT_HOOK), done.stdout  # ran, and was not skipped for want of files
    assert (
        "killmap check: 1 catalog, 2 mutations, 3 tests collected: "
        "every mutation applies, every test id resolves, no stale pin" in done.stdout
    )


def test_the_commit_hook_fails_on_a_catalog_that_names_a_missing_test(project):
    _break_a_kills_id(project)
    done = try_repo(project, "killmap-catalog")
    assert done.returncode != 0
    assert _failed(done, COMMIT_HOOK, "killmap-catalog", 2), done.stdout + done.stderr
    assert (
        "mutations/basic.toml: mutation 'classify-call-deleted': field 'kills': "
        "'tests/test_core.py::test_odd_is_refusd' matches no collected test"
    ) in done.stdout


def test_the_commit_hook_fails_on_a_catalog_with_an_unknown_field(project):
    path = project / "mutations" / "basic.toml"
    path.write_text(path.read_text() + 'colour = "red"\n')  # lands in the last mutation's table
    done = try_repo(project, "killmap-catalog")
    assert done.returncode != 0
    assert _failed(done, COMMIT_HOOK, "killmap-catalog", 2), done.stdout + done.stderr
    assert "mutation 'odd-refusal-fix-reverted': field 'colour': unknown field" in done.stdout


def test_the_push_hook_passes_when_the_branchs_change_keeps_every_contract(project):
    _on_a_branch_with_a_new_test(project)
    done = try_repo(project, "killmap", "--hook-stage", "pre-push")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _passed(done, PUSH_HOOK), done.stdout
    assert "--changed: 2 mutations see a change: classify-call-deleted, odd-refusal-fix-reverted" in done.stdout
    assert "2/2 contracts held" in done.stdout


def test_the_push_hook_judges_nothing_and_passes_when_nothing_changed_since_main(project):
    done = try_repo(project, "killmap", "--hook-stage", "pre-push")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _passed(done, PUSH_HOOK), done.stdout
    assert "--changed: 0 mutations see a change: none" in done.stdout


def test_the_push_hook_fails_on_a_catalog_that_names_a_missing_test(project):
    _on_a_branch_with_a_new_test(project)
    _break_a_kills_id(project)
    done = try_repo(project, "killmap", "--hook-stage", "pre-push")
    assert done.returncode != 0
    assert _failed(done, PUSH_HOOK, "killmap", 2), done.stdout + done.stderr
    assert "'tests/test_core.py::test_odd_is_refusd' matches no collected test" in done.stdout


def test_the_push_hook_fails_when_the_branch_weakens_a_test_a_mutation_must_turn_red(project):
    _git(project, "checkout", "-q", "-b", "feature")
    tests = project / "tests" / "test_core.py"
    tests.write_text(tests.read_text().replace("        classify(3)\n", "        raise ValueError('odd numbers')\n"))
    _git(project, "commit", "-q", "-am", "a test that no longer calls classify")
    done = try_repo(project, "killmap", "--hook-stage", "pre-push")
    assert done.returncode != 0
    assert _failed(done, PUSH_HOOK, "killmap", 1), done.stdout + done.stderr
    # The weakened test no longer calls classify: it never executes the change.
    assert (
        "vacuous classify-call-deleted: stayed green, never executing the mutated code (no input of theirs "
        "reaches it): tests/test_core.py::test_odd_is_refused" in done.stdout
    ), done.stdout
    assert "0/2 contracts held" in done.stdout


def test_the_commit_hook_is_not_run_on_push_nor_the_push_hook_on_commit(project):
    # Each hook is declared for its own stage: asking for it at the other stage runs nothing.
    _break_a_kills_id(project)  # either hook would fail if it ran
    for hook, stage in (("killmap-catalog", "pre-push"), ("killmap", "pre-commit")):
        done = try_repo(project, hook, "--hook-stage", stage)
        assert done.returncode == 1 and "No hook with id" in done.stdout + done.stderr, (hook, done.stdout)


def test_the_sweep_push_hook_sweeps_only_the_function_the_branch_changed(project):
    from sweepkit import require_mutmut

    require_mutmut()
    _git(project, "checkout", "-q", "-b", "feature")
    source = project / "src" / "basicpkg" / "core.py"
    source.write_text(source.read_text().replace("return n % 2 == 0", "return not n % 2"))
    _git(project, "commit", "-q", "-am", "is_even, written otherwise")
    done = try_repo(project, "killmap-sweep", "--hook-stage", "pre-push")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _passed(done, "killmap sweep (functions a change touched)"), done.stdout
    assert "in the function(s) the change touched: src/basicpkg/core.py::is_even" in done.stdout
    assert "core.py::classify" not in done.stdout
