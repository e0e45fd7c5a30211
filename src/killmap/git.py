"""Git, read and never written: every git command killmap runs on a project is run here.

Only read-only commands run (ls-files, rev-parse, merge-base, diff, show, ls-tree,
cat-file), with GIT_OPTIONAL_LOCKS=0 so that none of them refreshes the index behind the
user's back: the working tree and the index stay byte-identical. `git` is for what a
command cannot do without (its failure is the user's one-line error); `git_or_none` for
what has a way round (no git, no repository: the caller walks the folder instead).

red-first builds its sandboxes from two versions of the project (HEAD, and HEAD with the
fix put back as it was at BASE). Both come from here, as {path relative to the project
root: bytes}. Only read-only git commands run (rev-parse, merge-base, ls-tree,
cat-file), with GIT_OPTIONAL_LOCKS=0 so that none of them refreshes the index behind the
user's back: the working tree and the index stay byte-identical.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from killmap.errors import GateError

_SYMLINK, _SUBMODULE = "120000", "160000"


def git_env() -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_OPTIONAL_LOCKS"] = "0"  # no opportunistic index refresh
    env["LC_ALL"] = "C"
    return env


def git(root: Path, *args: str, field: str = "BASE", input_bytes: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, timeout=120, env=git_env(), input=input_bytes
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise GateError(f"git {args[0]} could not run: {exc}", field=field) from None
    if done.returncode != 0:
        last = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise GateError(f"git {' '.join(args[:3])} failed: {last[0]}", field=field)
    return done.stdout


def git_or_none(root: Path, *args: str, index: str | None = None, timeout: float = 60) -> bytes | None:
    """What git printed, or None where it could not run or failed. `index`: the index file
    to read instead of the repository's own (GIT_INDEX_FILE)."""
    env = git_env() if index is None else {**git_env(), "GIT_INDEX_FILE": index}
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, timeout=timeout, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def commit_of(root: Path, rev: str, field: str = "BASE") -> str:
    if rev.startswith("-"):
        raise GateError(f"{rev!r} is not a revision", field=field)
    return git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", field=field).decode().strip()


def default_base(root: Path) -> str:
    """The merge base with main (or master), as `killmap run --changed` takes it."""
    base = main_merge_base(root)
    if base is None:
        raise GateError("no main or master branch to take the merge base with; name a BASE", field="BASE")
    return base


def main_merge_base(root: Path) -> str | None:
    """The merge base of HEAD with main, else master (the origin's first), or None."""
    for branch in ("origin/main", "main", "origin/master", "master"):
        found = (git_or_none(root, "merge-base", "HEAD", branch) or b"").decode().strip()
        if found:
            return found
    return None


def file_at(root: Path, commit: str, rel: str, field: str = "BASE") -> str | None:
    """The text of `rel` (relative to the folder `root`) as committed at `commit`, or None
    where it did not exist then."""
    prefix = git(root, "rev-parse", "--show-prefix", field=field).decode().strip()
    shown = git_or_none(root, "show", f"{commit}:{prefix}{rel}")
    return shown.decode("utf-8", "replace") if shown is not None else None


def tree_at(root: Path, commit: str) -> dict[str, bytes]:
    """Every file of the project (the folder `root`) as committed at `commit`.

    Symlinks and submodules are left out: a sandbox holds files, never links.
    """
    prefix = git(root, "rev-parse", "--show-prefix").decode().strip()
    listing = git(root, "ls-tree", "-r", "-z", "--full-tree", commit, "--", *([prefix] if prefix else []))
    wanted: list[tuple[str, str]] = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, path = entry.partition(b"\t")
        mode, kind, sha = meta.decode().split(" ")
        if kind != "blob" or mode in (_SYMLINK, _SUBMODULE):
            continue
        rel = path.decode("utf-8", "surrogateescape")[len(prefix) :]
        if "__pycache__" not in rel.split("/"):
            wanted.append((rel, sha))
    return dict(zip([rel for rel, _ in wanted], _blobs(root, [sha for _, sha in wanted]), strict=True))


def _blobs(root: Path, shas: list[str]) -> list[bytes]:
    if not shas:
        return []
    out = git(root, "cat-file", "--batch", input_bytes=("\n".join(shas) + "\n").encode())
    blobs, at = [], 0
    for _ in shas:
        header_end = out.index(b"\n", at)
        size = int(out[at:header_end].split(b" ")[2])
        start = header_end + 1
        blobs.append(out[start : start + size])
        at = start + size + 1  # the blob, then a newline
    return blobs


def lines_added(root: Path, base: str, rel: str, field: str = "--changed") -> tuple[frozenset[int], frozenset[int]]:
    """Where the working tree's `rel` differs from `base`, in its own line numbers: the lines
    added or changed, and the points where lines were only removed (n: after line n, 0 at
    the top). Read from `git diff -U0`, whose hunk headers say exactly that."""
    out = git(root, "diff", "-U0", "--no-color", "--no-ext-diff", "--relative", base, "--", rel, field=field)
    added: set[int] = set()
    removed: set[int] = set()
    for line in out.decode("utf-8", "replace").splitlines():
        if not line.startswith("@@ "):
            continue
        new = line.split(" ")[2]  # "+start[,count]"
        start, _, count = new[1:].partition(",")
        first, size = int(start), int(count) if count else 1
        if size:
            added.update(range(first, first + size))
        else:
            removed.add(first)
    return frozenset(added), frozenset(removed)
