"""The project under test: its root, its files, and how a file maps to a module name."""

from __future__ import annotations

import os
from pathlib import Path

from killmap.errors import GateError
from killmap.git import git_or_none

# Never copied into a sandbox when the project is not a git checkout.
_SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    "node_modules",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "build",
    "dist",
    ".killmap-cache",
    ".hypothesis",  # Hypothesis's saved examples: a run's private state, never the project's (foreign_plugins.py)
}


# What marks a Python project's root, as pytest reads its configuration from it. toolz 1.0.0
# has setup.py and setup.cfg, and no pyproject.toml: it was refused.
ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini")


def find_root(start: Path) -> Path:
    """The nearest folder at or above `start` that holds one of ROOT_MARKERS."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if any((folder / marker).is_file() for marker in ROOT_MARKERS):
            return folder
    raise GateError(
        f"no {', '.join(ROOT_MARKERS[:-1])} or {ROOT_MARKERS[-1]} at or above {start}: run killmap inside a project"
    )


def project_files(root: Path) -> list[str]:
    """Tracked plus untracked-but-not-ignored files (what a clean checkout would hold,
    plus the user's new files), relative to root. Falls back to a filtered walk."""
    listed = git_or_none(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    if listed is not None:
        files = [f for f in listed.decode("utf-8", "surrogateescape").split("\0") if f]
        found = sorted(f for f in files if (root / f).is_file() and "__pycache__" not in f)
        if found:
            return without_venvs(found)
        # Nothing listed: a project inside a folder its enclosing checkout ignores. It is
        # not that checkout's to describe; walk it like a project without git.
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.endswith(".egg-info")]
        for name in names:
            # A dangling symlink (or a socket) has no bytes to copy: left out, as git's
            # listing above leaves it out, instead of a FileNotFoundError from the copy.
            if name.endswith((".pyc", ".pyo")) or not (Path(folder) / name).is_file():
                continue
            found.append((Path(folder) / name).relative_to(root).as_posix())
    return sorted(found)


def ignored_package_files(root: Path, files: list[str]) -> list[str]:
    """Files git ignores inside the project's packages (a folder whose `__init__.py` is among
    `files`): what a build writes there for the code to run. hatch-vcs and setuptools-scm
    write `_version.py`, gettext's `.mo` catalogs and built extension modules sit beside the
    code. Without them the sandbox imports what no test run of the project ever sees
    (humanize: "No module named 'humanize._version'"). Copied to run, never targets."""
    packages = {f[: -len("__init__.py")] for f in files if f.endswith("/__init__.py")}
    if not packages:
        return []
    listed = git_or_none(
        root, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", "--", *sorted(packages)
    )
    if listed is None:
        return []
    found: list[str] = []
    for entry in listed.decode("utf-8", "surrogateescape").split("\0"):
        if not entry or "__pycache__" in entry or ".egg-info" in entry:
            continue
        path = root / entry
        inner = (
            [path]
            if path.is_file()
            else sorted(p for p in path.rglob("*") if p.is_file())
            if entry.endswith("/") and path.is_dir()
            else []
        )
        for item in inner[:1000]:  # a package's generated files, not a build tree
            rel = item.relative_to(root).as_posix()
            if "__pycache__" not in rel and not rel.endswith((".pyc", ".pyo")) and not item.is_symlink():
                found.append(rel)
    return sorted(set(found) - set(files))


def without_venvs(files: list[str]) -> list[str]:
    """Leave out every virtual environment (a folder holding `pyvenv.cfg`) that git does not
    ignore: on Python < 3.13 `python3 -m venv .venv` writes no .gitignore, and each sandbox
    would copy thousands of installed files the gate imports from the venv itself."""
    venvs = tuple(f[: -len("pyvenv.cfg")] for f in files if f == "pyvenv.cfg" or f.endswith("/pyvenv.cfg"))
    if "" in venvs:  # the project root is itself a venv: nothing to leave out
        return files
    return [f for f in files if not f.startswith(venvs)] if venvs else files


def module_name(rel_file: str, paths: tuple[str, ...]) -> str | None:
    """The dotted name a file is imported as, given the sys.path entries (relative)."""
    for entry in paths:
        prefix = "" if entry in (".", "") else entry.rstrip("/") + "/"
        if rel_file.startswith(prefix) and rel_file.endswith(".py"):
            dotted = rel_file[len(prefix) : -3].replace("/", ".")
            if dotted.endswith(".__init__"):
                dotted = dotted[: -len(".__init__")]
            if all(part.isidentifier() for part in dotted.split(".")):
                return dotted
    return None
