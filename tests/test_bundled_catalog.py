"""The Quick start's first command: the gate over the bundled catalog, at the repository root."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LOADER = "src/draftroute/loader.py"
PATCH = "mutations/patches/seed-000-draft-load-config.patch"
FIX_REVERTED = "draft-load-config-fix-reverted"


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
    assert len(verdicts) == 17
    assert set(verdicts.values()) == {"held"}
    # every non-invariant lists the tests it turned red, each with a cause
    for entry in report["mutations"]:
        if not entry["invariant"]:
            assert entry["red"] and all(r["cause"] for r in entry["red"])
    # the fix shipped as a patch, reverted: exactly the test that proves it, by an assertion
    fix = next(entry for entry in report["mutations"] if entry["name"] == FIX_REVERTED)
    assert [(r["id"], r["cause"]) for r in fix["red"]] == [
        ("tests/draftroute/test_loader.py::test_draft_load_config_honoured[dflash]", "assertion")
    ]


def draftroute_project(root: Path) -> Path:
    """The bundled subject alone, with its catalog and patch: a scratch project to change."""
    ignore = shutil.ignore_patterns("__pycache__")
    for folder in ("src/draftroute", "tests/draftroute", "mutations"):
        shutil.copytree(ROOT / folder, root / folder, ignore=ignore)
    shutil.copyfile(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


@pytest.mark.parametrize(
    ("changed", "old", "new", "pin"),
    [
        (LOADER, "# The draft's own load config", "# The draft`s own load config", "postimage_pin"),
        (PATCH, "+    # The draft's own load config", "+    # The draft`s own load config", "patch_pin"),
    ],
    ids=["loader", "patch"],
)
@pytest.mark.parametrize("command", ["run", "check"])
def test_a_changed_byte_of_the_fix_or_its_patch_is_refused_in_one_line_naming_the_pin(
    tmp_path, command, changed, old, new, pin
):
    project = draftroute_project(tmp_path / "project")
    text = (project / changed).read_text(encoding="utf-8")
    assert text.count(old) == 1
    (project / changed).write_text(text.replace(old, new), encoding="utf-8")
    reports = tmp_path / "reports"
    args = ["--no-cache", "--report-dir", str(reports)] if command == "run" else []
    done = subprocess.run(
        [sys.executable, "-m", "killmap", command, *args],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
        timeout=300,
    )
    assert done.returncode == 2, (done.stdout[-3000:], done.stderr[-3000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    prefix = "killmap: " if command == "run" else "killmap check: "
    assert lines[0].startswith(f"{prefix}mutations/draftroute.toml: mutation '{FIX_REVERTED}': field '{pin}': ")
    assert "(a changed byte; it is sha256:" in lines[0]
    assert "Traceback" not in done.stdout + done.stderr
    assert not reports.exists()  # never a verdict: no report at all


# The entry points of the test extra's pytest plugins, blocked as if it were not installed.
TEST_EXTRA_PLUGINS = ("xdist", "xdist.looponfail", "timeout", "django", "randomly", "hypothesispytest")


def test_the_bundled_subjects_pytest_configuration_needs_no_plugin_of_the_test_extra():
    # The Quick start's gate runs after `pip install -e .` alone, on the configuration this
    # suite shares (pyproject.toml): an addopts naming `-n 2`, for the suite's xdist, made
    # pytest refuse every run of that gate ("unrecognized arguments: -n").
    blocked = [arg for name in TEST_EXTRA_PLUGINS for arg in ("-p", f"no:{name}")]
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *blocked, "tests/draftroute"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-1500:]
