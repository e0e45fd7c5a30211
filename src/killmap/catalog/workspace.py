"""A workspace: a project whose folder holds other projects, its members, each with its own
pyproject.toml (or setup.py, setup.cfg) and source folder, as uv workspaces and monorepos have.

The gate imports a project's packages from its sandbox copy, through `[gate] paths`, never
from an editable install (those point back at the working tree): in a workspace, `paths`
must name every member's source folder its tests import. One catalog at the workspace root
can target and import every member; a catalog inside one member sees that member alone.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MEMBER_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg")
# Folders a scan for members never enters: not projects, or too many files to walk.
_NOT_MEMBERS = {"tests", "test", "docs", "doc", "examples", "build", "dist", "node_modules", "site-packages"}
SCAN_DEPTH = 2  # packages/<member> or <member>: how deep undeclared members are looked for
ENCLOSING_DEPTH = 3  # how far above a member its workspace root is looked for


@dataclass(frozen=True)
class Member:
    """One member: its folder and the folder its packages are imported from, both posix
    paths relative to the workspace root."""

    folder: str
    source: str


def declared_members(root: Path) -> list[str] | None:
    """uv's `[tool.uv.workspace] members` (globs, less `exclude`), as folders relative to
    root that hold a project; None when the root declares no workspace."""
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    table = data.get("tool", {}).get("uv", {}).get("workspace")
    if not isinstance(table, dict):
        return None

    def globbed(key: str) -> set[str]:
        patterns = table.get(key, [])
        found: set[str] = set()
        for pattern in patterns if isinstance(patterns, list) else []:
            if isinstance(pattern, str) and not Path(pattern).is_absolute() and ".." not in Path(pattern).parts:
                found.update(p.relative_to(root).as_posix() for p in root.glob(pattern) if _is_project(p))
        return found

    return sorted(globbed("members") - globbed("exclude"))


def members(root: Path) -> list[Member]:
    """The members the root declares (uv), else every project folder found up to
    SCAN_DEPTH below it (not hidden, not a test, docs or build folder, not a venv)."""
    folders = declared_members(root)
    if folders is None:
        folders = sorted(_scan(root, root, SCAN_DEPTH))
    return [Member(folder, _source(root, folder)) for folder in folders if folder not in ("", ".")]


def _scan(root: Path, folder: Path, depth: int) -> list[str]:
    found: list[str] = []
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return found
    for entry in entries:
        name = entry.name
        if not entry.is_dir() or name.startswith((".", "_")) or name in _NOT_MEMBERS or name.endswith(".egg-info"):
            continue
        if (entry / "pyvenv.cfg").is_file():
            continue
        if _is_project(entry):
            found.append(entry.relative_to(root).as_posix())
        elif depth > 1:
            found.extend(_scan(root, entry, depth - 1))
    return found


def _is_project(folder: Path) -> bool:
    return folder.is_dir() and any((folder / marker).is_file() for marker in MEMBER_MARKERS)


def _source(root: Path, folder: str) -> str:
    """A member's `src/` when it has one, else the member's own folder (a flat layout)."""
    return f"{folder}/src" if (root / folder / "src").is_dir() else folder


def enclosing_workspace(root: Path) -> tuple[Path, Member] | None:
    """The workspace whose member `root` is (its root, and `root` as its member), looked for
    up to ENCLOSING_DEPTH folders above: None when root is no workspace's member."""
    root = root.resolve()
    for above in list(root.parents)[:ENCLOSING_DEPTH]:
        if not _is_project(above):
            continue
        for member in members(above):
            if (above / member.folder).resolve() == root:
                return above, member
    return None


def locate_module(root: Path, dotted: str, within: list[Member]) -> tuple[str, Member] | None:
    """The module `dotted` (or the nearest package above it) as a member's source folder
    holds it: (the dotted name found, the member); None when no member holds it."""
    names = dotted.split(".")
    for end in range(len(names), 0, -1):
        for member in within:
            where = root.joinpath(member.source, *names[:end])
            if where.with_name(where.name + ".py").is_file() or (where.is_dir() and any(where.rglob("*.py"))):
                return ".".join(names[:end]), member
    return None


def missing_module_hint(root: Path, paths: tuple[str, ...], message: str) -> str:
    """For a test's `No module named 'x'`: when x is a workspace member's package, the way
    out, as a clause to append ("" when x is none of the workspace's). A member of this
    workspace whose source folder `[gate] paths` leaves out is added there; a member of the
    workspace this project belongs to is reached from a catalog at that workspace's root."""
    match = re.search(r"No module named '([\w.]+)'", message)
    if not match:
        return ""
    dotted = match.group(1)
    listed = {p.rstrip("/") or "." for p in paths}
    found = locate_module(root, dotted, [m for m in members(root) if m.source not in listed])
    if found:
        name, member = found
        return (
            f" ({name} is workspace member {member.folder}'s: add {member.source!r} to [gate] paths; "
            "the gate imports the project's packages from its sandbox copy, never from an editable install)"
        )
    enclosing = enclosing_workspace(root)
    if enclosing:
        workspace, this = enclosing
        found = locate_module(workspace, dotted, [m for m in members(workspace) if m != this])
        if found:
            name, member = found
            return (
                f" ({name} is workspace member {member.folder}'s, outside this project: put the catalog at the "
                f"workspace root {workspace}, with [gate] paths naming every member's source folder; "
                "`killmap init` there writes one)"
            )
    return ""


def foreign_target_note(root: Path, target: str) -> str | None:
    """For a target outside the project that lies in the workspace the project is a member
    of (a catalog in one member aimed at another): what to do instead; None otherwise."""
    enclosing = enclosing_workspace(root)
    if enclosing is None:
        return None
    workspace, this = enclosing
    path = (root / target).resolve()
    if not path.is_relative_to(workspace.resolve()):
        return None
    inside = path.relative_to(workspace.resolve()).as_posix()
    owner = next((m.folder for m in members(workspace) if inside.startswith(m.folder + "/")), None)
    where = f"workspace member {owner}" if owner else "the workspace"
    return (
        f"target {target} is in {where}, outside this project ({this.folder}): a catalog targets its own "
        f"project's files only; move the catalog to the workspace root {workspace}, where the target is "
        f"{inside} and [gate] paths name every member's source folder"
    )
