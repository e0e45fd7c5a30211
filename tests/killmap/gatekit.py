"""Running the real gate, as a user would, on copies of the fixture projects.

Every end-to-end test goes through here: copy a fixture project from tests/fixtures/
into a temporary folder, run `python -m killmap` in a real subprocess, read the JSON
report. The verdict cache lives in the test's own folder so runs never share state.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "projects"


@dataclass
class GateRun:
    code: int
    stdout: str
    stderr: str
    report: dict | None
    report_dir: Path | None = None

    def mutation(self, name: str) -> dict:
        assert self.report is not None, f"no report; stderr: {self.stderr}"
        for entry in self.report["mutations"]:
            if entry["name"] == name:
                return entry
        raise AssertionError(f"{name} not in report: {[m['name'] for m in self.report['mutations']]}")

    def verdicts(self) -> dict[str, str]:
        assert self.report is not None, f"no report; stderr: {self.stderr}"
        return {m["name"]: m["verdict"] for m in self.report["mutations"]}


def copy_fixture(name: str, dest: Path) -> Path:
    target = dest / name
    shutil.copytree(FIXTURES / name, target, ignore=shutil.ignore_patterns("__pycache__", "reports"))
    return target


def write_project(root: Path, files: dict[str, str]) -> Path:
    """A small project written from {relative path: text}, for a test's own shape."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def pkg_project(root: Path, source: str, tests: dict[str, str], catalog: str) -> Path:
    """A flat project `pkg` (its `__init__.py` is `source`), its test files by path, and
    `mutations/pkg.toml`."""
    return write_project(
        root,
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": source,
            **tests,
            "mutations/pkg.toml": catalog,
        },
    )


def replace_catalog(name: str, function: str, old: str, new: str, kills: str) -> str:
    """`mutations/pkg.toml` for `pkg_project`: one `replace` in `pkg/__init__.py::function`
    and its one kills test, under a [gate] of tests/ with the project's root on the path."""
    return (
        '[gate]\ntests = ["tests"]\npaths = ["."]\n\n'
        f'[[mutation]]\nname = "{name}"\ntarget = "pkg/__init__.py::{function}"\nop = "replace"\n'
        f"old = {json.dumps(old)}\nnew = {json.dumps(new)}\nkills = [{json.dumps(kills)}]\n"
    )


def pluggy_shaped_project(root: Path, mutations: str = "") -> Path:
    """A project whose package is named as one pytest itself imports before any test (pluggy):
    no test can import the sandbox's copy of `src/pluggy/mod.py::f`. `mutations`: the catalog's
    entries after its [gate]."""
    return write_project(
        root,
        {
            "pyproject.toml": '[project]\nname = "pluggy"\nversion = "0"\n',
            "src/pluggy/__init__.py": "",
            "src/pluggy/mod.py": "def f():\n    return 1\n",
            "tests/test_mod.py": "def test_mod():\n    assert True\n",
            "mutations/pluggy.toml": '[gate]\ntests = ["tests"]\npaths = ["src"]\n' + mutations,
        },
    )


def one_mutation_project(
    root: Path,
    source: str,
    tests: str,
    *,
    value: str = "0",
    kills: tuple[str, ...] = ("tests/test_pkg.py::test_one",),
    extra: str = "",
) -> Path:
    """A flat project `pkg` (its `__init__.py` is `source`), one test file `tests/test_pkg.py`
    and one catalog entry `one-mutated`: `pkg/__init__.py::one` returns `value`, and `kills`
    are its contract (`extra`: more TOML lines for the entry)."""
    return write_project(
        root,
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": source,
            "tests/test_pkg.py": tests,
            "mutations/pkg.toml": (
                '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "one-mutated"\n'
                f'target = "pkg/__init__.py::one"\nop = "constant-return"\nvalue = "{value}"\n'
                f"kills = {json.dumps(list(kills))}\n{extra}"
            ),
        },
    )


def gate_env(project: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = str(project.parent / "xdg-cache")
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("KILLMAP_CACHE_DIR", None)  # it would name one cache for every test's runs
    env.update(extra or {})
    return env


def killmap_command(project: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """`python -m killmap ARGS` in the project, exactly as given, as a user runs it (run_gate
    adds its own --report-dir and reads the report)."""
    return subprocess.run(
        [sys.executable, "-m", "killmap", *args],
        cwd=project,
        env=gate_env(project),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_gate(project: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 300) -> GateRun:
    report_dir = project.parent / f"reports-{project.name}"
    shutil.rmtree(report_dir, ignore_errors=True)
    command = [sys.executable, "-m", "killmap", *args]
    if args and args[0] == "run":
        command += ["--report-dir", str(report_dir)]
    done = subprocess.run(
        command, cwd=project, env=env or gate_env(project), capture_output=True, text=True, timeout=timeout
    )
    report_path = report_dir / "killmap.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else None
    return GateRun(done.returncode, done.stdout, done.stderr, report, report_dir)


def tree_digest(folder: Path) -> dict[str, str]:
    """Every file's bytes, by relative path: proof a tree was not written."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def process_ended(pid: int, within: float = 10.0) -> bool:
    """Whether the process is gone (or a zombie: it ended, and waits only to be reaped)
    within `within` seconds."""
    from killmap.engine.workers.reaper import is_zombie

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if is_zombie(pid):
            return True
        time.sleep(0.02)
    return False


def pinned_plugins(pins: tuple[str, ...]) -> Path:
    """pytest plugins at pinned versions, pip-installed once into a folder of the user's cache,
    to be put on a gate's PYTHONPATH: beside the suite's own packages, never into them (a
    plugin installed there would act on this suite too)."""
    import pytest

    key = hashlib.sha256(repr((pins, sys.version_info[:2])).encode()).hexdigest()[:12]
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = home / "killmap-tests" / f"plugins-{key}"
    if not folder.is_dir():
        staging = folder.with_name(f"{folder.name}.{os.getpid()}")
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-deps",
                "--disable-pip-version-check",
                "--target",
                str(staging),
                *pins,
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0:
            pytest.fail(f"could not install the plugins these tests need: {done.stderr[-600:]}")
        try:
            staging.rename(folder)
        except OSError:  # another run got there first
            shutil.rmtree(staging, ignore_errors=True)
    return folder
