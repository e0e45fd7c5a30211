"""killmap.installed_version: a distribution's version read from its dist-info beside its package,
which every report records for pytest, without importing importlib.metadata; and
importlib.metadata's own answer wherever the dist-info there does not say it alone. Each case in
a child interpreter, whose sys.modules and importlib.metadata are its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ASK = """
import sys
sys.path.insert(0, sys.argv[1])
import importlib.metadata
importlib.metadata.version = lambda name: "importlib.metadata's answer"
import killmap
print(killmap.installed_version(sys.argv[2]))
"""


def ask(site: Path, name: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", ASK, str(site), name], capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.strip()


def site_with(tmp_path: Path, *versions: str) -> Path:
    site = tmp_path / "site-packages"
    (site / "fakepkg").mkdir(parents=True)
    (site / "fakepkg" / "__init__.py").write_text("", encoding="utf-8")
    for version in versions:
        info = site / f"fakepkg-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fakepkg\nVersion: {version}\n\n", "utf-8")
    return site


def test_pytests_version_is_read_without_importlib_metadata():
    code = "import sys, killmap; print(killmap.pytest_version(), 'importlib.metadata' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    from importlib.metadata import version

    assert done.stdout.split() == [version("pytest"), "False"]


def test_the_one_dist_info_beside_the_package_gives_the_version(tmp_path):
    assert ask(site_with(tmp_path, "1.4.2"), "fakepkg") == "1.4.2"


@pytest.mark.parametrize("versions", [("1.0", "2.0"), ()], ids=["two dist-infos", "none"])
def test_otherwise_importlib_metadata_answers(tmp_path, versions):
    assert ask(site_with(tmp_path, *versions), "fakepkg") == "importlib.metadata's answer"
