"""Real git repositories for the reviewer's commands (red-first, try, prove).

A change fixture is a folder under tests/fixtures/projects/ holding `base/` (the whole
project before the change) and `head/` (the files the change adds or rewrites). It
becomes a repository with `main` at BASE and a branch `feature` at HEAD, as a pull
request would be, and killmap runs in it as a real subprocess (gatekit.run_gate).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from gatekit import FIXTURES, copy_fixture, gate_env, tree_digest

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_SYSTEM": "/dev/null",
}


def git(project: Path, *args: str) -> str:
    env = {**gate_env(project), **GIT_ENV}
    return subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True, text=True).stdout


def commit_all(project: Path, message: str) -> None:
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", message)


def change_repo(name: str, dest: Path) -> Path:
    """main at the fixture's base/, branch feature at base/ + head/."""
    project = dest / name
    shutil.copytree(FIXTURES / name / "base", project, ignore=shutil.ignore_patterns("__pycache__"))
    (project / ".gitignore").write_text("__pycache__/\nreports/\n")
    git(project, "init", "-q", "-b", "main")
    commit_all(project, "base")
    git(project, "checkout", "-q", "-b", "feature")
    shutil.copytree(FIXTURES / name / "head", project, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    commit_all(project, "the change")
    return project


def fixture_repo(name: str, dest: Path) -> Path:
    """A plain fixture project (gatekit's) as a one-commit repository."""
    project = copy_fixture(name, dest)
    (project / ".gitignore").write_text("__pycache__/\nreports/\n")
    git(project, "init", "-q", "-b", "main")
    commit_all(project, "fixture")
    return project


@dataclass
class Review:
    code: int
    stdout: str
    stderr: str
    report: dict | None = None
    report_dir: Path | None = None

    def markdown(self) -> str:
        assert self.report_dir is not None
        return (self.report_dir / "red-first.md").read_text()

    def tests(self) -> dict[str, dict]:
        assert self.report is not None, f"no report; stdout: {self.stdout}\nstderr: {self.stderr}"
        return {t["id"]: t for t in self.report["tests"]}

    def classes(self) -> dict[str, str]:
        return {t: entry["class"] for t, entry in self.tests().items()}


def review(project: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 300) -> Review:
    """`python -m killmap ARGS` in `project`; red-first writes its reports beside it."""
    report_dir = project.parent / f"reports-{project.name}"
    shutil.rmtree(report_dir, ignore_errors=True)
    command = [sys.executable, "-m", "killmap", *args]
    if args and args[0] == "red-first":
        command += ["--report-dir", str(report_dir)]
    done = subprocess.run(
        command, cwd=project, env=env or gate_env(project), capture_output=True, text=True, timeout=timeout
    )
    path = report_dir / "red-first.json"
    report = json.loads(path.read_text()) if path.exists() else None
    return Review(done.returncode, done.stdout, done.stderr, report, report_dir)


def untouched(project: Path) -> dict[str, str]:
    """The working tree and everything in .git (the index included), by content."""
    return tree_digest(project)
