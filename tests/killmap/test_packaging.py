"""The wheel a user installs: killmap alone at top level, built without a deprecation warning.

draftroute, the bundled subject, lives beside killmap in src/ for the Quick start; a wheel that
carried it would put a second top-level package into every user's site-packages.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, str]:
    """The wheel pip builds from a copy of what the sdist would hold, and the build's output."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--verbose", "--wheel-dir", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (wheel,) = out.glob("killmap-*.whl")
    return wheel, done.stdout + done.stderr


def test_the_wheel_holds_only_killmap_at_top_level(built):
    wheel, _ = built
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/", 1)[0] for name in archive.namelist()}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"killmap"}
    assert any(name.startswith("killmap/engine/") for name in zipfile.ZipFile(wheel).namelist())


def test_the_build_gives_no_deprecation_warning(built):
    _, output = built
    assert "DeprecationWarning" not in output, [line for line in output.splitlines() if "Deprecat" in line]
