"""Sandboxes: private copies of the project that mutants are written into.

The user's working tree is only ever read. Each sandbox lives under one temporary folder
that is removed when the gate ends, however it ends; a killed gate leaves at most a
stray temp folder, never a changed source file.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path


class Scratch:
    """One temporary folder holding every sandbox and run artifact of one gate run."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="killmap-"))
        self._runs = 0
        self.pristine: Path | None = None

    def pristine_copy(self, root: Path, files: list[str]) -> Path:
        """The project as the gate found it: every sandbox is copied from here, and every
        file a run wrote where it must not is restored from here, byte for byte."""
        if self.pristine is None:
            self.pristine = _copy(root, files, self.path / "pristine")
        return self.pristine

    def new_sandbox(self, root: Path, files: list[str], index: int) -> Path:
        return _copy(self.pristine_copy(root, files), files, self.path / f"sandbox-{index}")

    def run_dir(self, label: str) -> Path:
        self._runs += 1
        folder = self.path / "runs" / f"{self._runs:05d}-{label}"
        folder.mkdir(parents=True)
        return folder

    def temp_dir(self) -> Path:
        """A run's pytest basetemp, named by number only: a mutation's name in the path
        would leak into every tmp_path, and tests may (rightly) read their paths."""
        self._runs += 1
        parent = self.path / "tmp"
        parent.mkdir(exist_ok=True)  # pytest creates the basetemp itself, not its parents
        return parent / f"{self._runs:05d}"

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def _copy(source_root: Path, files: list[str], dest_root: Path) -> Path:
    for rel in files:
        dest = dest_root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        # copyfile, never a link: a mutant written here must not reach the user's tree.
        shutil.copyfile(source_root / rel, dest)
    dest_root.mkdir(parents=True, exist_ok=True)
    return dest_root
