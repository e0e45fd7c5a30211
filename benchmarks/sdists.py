"""The real projects the benchmarks measure on, from their sdists: downloaded once with pip and
unpacked as a git checkout of their own.

Why a checkout: the copies live inside this repository's ignored work folders, and killmap lists
a project's files with `git ls-files --others --exclude-standard`, which, run in an ignored
folder of an enclosing repository, lists nothing. A user runs killmap in a clone of the project;
`git init` plus one commit makes the unpacked sdist exactly that. Stdlib only: every benchmark
imports it before its own venv exists.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path


def download(requirement: str, folder: Path, python: str | Path = sys.executable) -> Path:
    """The pinned sdist (never a wheel: wheels hold no tests), downloaded once into `folder`."""
    name, version = requirement.split("==")
    tarball = folder / f"{name}-{version}.tar.gz"
    if not tarball.is_file():
        print(f"downloading {requirement} (sdist) ...", flush=True)
        folder.mkdir(parents=True, exist_ok=True)
        pip = [str(python), "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
        subprocess.run([*pip, requirement, "-d", str(folder)], check=True)
    return tarball


def unpack(tarball: Path, dest: Path) -> Path:
    """A fresh copy of the sdist's tree at `dest` (replacing what was there), not yet under git."""
    top = tarball.name.removesuffix(".tar.gz")
    scratch = dest.parent / f".unpacking-{dest.name}"
    for path in (dest, scratch):
        shutil.rmtree(path, ignore_errors=True)
    with tarfile.open(tarball) as archive:
        if hasattr(tarfile, "data_filter"):
            archive.extractall(scratch, filter="data")
        else:
            archive.extractall(scratch)
    (scratch / top).rename(dest)
    shutil.rmtree(scratch)
    return dest


def snapshot(root: Path, message: str = "snapshot") -> Path:
    """`root` as a git checkout of one commit holding all of it."""
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", message]):
        subprocess.run([*git, *args], cwd=root, check=True)
    return root
