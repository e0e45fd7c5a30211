"""--changed: only the mutations that can see what changed since a base revision.

A mutation sees a change when its target's text differs from BASE, a test file named by
its kills differs, or its own catalog entry differs. This is the local pre-push mode.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from killmap.errors import GateError
from killmap.git import file_at, git, lines_added, main_merge_base
from killmap.mutate.mutant import sha256_text
from killmap.mutate.mutants import target_scope  # the same symbol resolution as the gate's


def default_base(root: Path) -> str:
    base = main_merge_base(root)
    if base is None:
        raise GateError(
            "--changed: no main or master branch to take the merge base with; name a BASE", field="--changed"
        )
    return base


def _target_text(source: str, mutation) -> str | None:
    import libcst as cst

    try:
        module = cst.parse_module(source)
        node = target_scope(module, mutation)
    except Exception:  # noqa: BLE001 - a target that did not exist or parse at BASE has changed
        return None
    return module.code_for_node(node) if node is not None else source


def changed_mutations(root: Path, options, base: str | None) -> list[str]:
    from killmap.catalog.plan import load

    base = base or default_base(root)
    git(root, "rev-parse", "--verify", f"{base}^{{commit}}", field="--changed")
    _, mutations = load(root, options)
    changed_files = set(git(root, "diff", "--name-only", "--relative", base, field="--changed").decode().split())
    changed_files |= set(git(root, "ls-files", "--others", "--exclude-standard", field="--changed").decode().split())
    # Entries are compared as the TOML wrote them (with their [gate] table; a note is not
    # part of the contract). Loading the old text as a catalog would resolve a revert-patch's
    # patch beside a temporary copy, fail, and mark every entry of that catalog changed.
    old_entries: dict[str, object] = {}
    new_entries: dict[str, object] = {}
    for catalog in {m.catalog for m in mutations}:
        text = file_at(root, base, catalog, field="--changed")
        if text is None:
            continue
        try:
            old = tomllib.loads(text)
        except tomllib.TOMLDecodeError:  # an old catalog that did not parse: all changed
            continue
        old_entries.update(_raw_entries(old))
        new_entries.update(_raw_entries(tomllib.loads((root / catalog).read_text(encoding="utf-8"))))
    names = []
    for mutation in mutations:
        now = (root / mutation.target.path).read_text(encoding="utf-8")
        then = file_at(root, base, mutation.target.path, field="--changed")
        target_changed = then is None or (
            sha256_text(_target_text(then, mutation) or "") != sha256_text(_target_text(now, mutation) or "")
        )
        kill_files = {entry.split("::")[0] for entry in mutation.kills + mutation.may_kill}
        tests_changed = any(
            f in changed_files or any(c.startswith(f.rstrip("/") + "/") for c in changed_files) for f in kill_files
        )
        entry_changed = mutation.name not in old_entries or old_entries[mutation.name] != new_entries.get(mutation.name)
        if target_changed or tests_changed or entry_changed:
            names.append(mutation.name)
    return names


def _raw_entries(data: dict) -> dict[str, object]:
    gate = data.get("gate", {})
    return {
        entry["name"]: ({k: v for k, v in entry.items() if k != "note"}, gate)
        for entry in data.get("mutation", [])
        if isinstance(entry, dict) and isinstance(entry.get("name"), str)
    }


@dataclass(frozen=True)
class FileChange:
    """One file's change since BASE, in the line numbers of its text now."""

    path: str
    added: frozenset[int]  # lines added or changed
    removed_after: frozenset[int]  # lines only removed, after this line (0: at the top)

    def touches(self, first: int, last: int) -> bool:
        """Whether the change meets the lines first..last: one of them added or changed, or a
        line removed after one of them (after the last: a definition's last statement removed)."""
        return any(first <= n <= last for n in self.added) or any(first <= n <= last for n in self.removed_after)

    def on(self, lines: tuple[int, ...]) -> bool:
        return not self.added.isdisjoint(lines)


class ChangeSince:
    """`sweep --changed`: what changed since BASE, file by file, read from git once per file.
    A file git does not list as changed or untracked has no change; an untracked one is
    added throughout."""

    def __init__(self, root: Path, base: str | None):
        self.root = root
        self.base = base or default_base(root)
        git(root, "rev-parse", "--verify", f"{self.base}^{{commit}}", field="--changed")
        self.changed = set(
            git(root, "diff", "--name-only", "--relative", self.base, field="--changed").decode().split()
        )
        self.untracked = set(
            git(root, "ls-files", "--others", "--exclude-standard", field="--changed").decode().split()
        )
        self._files: dict[str, FileChange | None] = {}

    def file(self, path: str) -> FileChange | None:
        if path not in self._files:
            self._files[path] = self._read(path)
        return self._files[path]

    def _read(self, path: str) -> FileChange | None:
        if path in self.untracked or (path in self.changed and file_at(self.root, self.base, path) is None):
            count = len((self.root / path).read_text(encoding="utf-8").splitlines())
            return FileChange(path, frozenset(range(1, count + 1)), frozenset())
        if path not in self.changed:
            return None
        added, removed = lines_added(self.root, self.base, path)
        return FileChange(path, added, removed) if added or removed else None


@dataclass(frozen=True)
class NotSwept:
    """Lines the change added or changed that no sweep mutant can meet, and why: code
    outside the definitions the sweep mutates (module level, a class body, a decorator, a
    definition it could not locate). Said, never dropped in silence."""

    file: str
    first: int
    last: int
    why: str
    statement: str  # the first line of the statement that holds them


def not_swept(
    change: FileChange, code: str, spans: list[tuple[int, int]], ranges: list[tuple[int, int]] | None
) -> list[NotSwept]:
    """The changed code lines of one file outside every definition the sweep mutates (`spans`,
    from each `def` line to its last) and inside the targets (`ranges`; None: the whole file),
    one entry per statement that holds them. Blank lines and comments are no code."""
    import ast

    lines = code.splitlines()
    wanted = [
        n
        for n in sorted(change.added)
        if 0 < n <= len(lines)
        and lines[n - 1].strip()
        and not lines[n - 1].lstrip().startswith("#")
        and not any(a <= n <= b for a, b in spans)
        and (ranges is None or any(a <= n <= b for a, b in ranges))
    ]
    try:
        tree = ast.parse(code)
    except SyntaxError:
        tree = ast.Module(body=[], type_ignores=[])
    found: list[NotSwept] = []
    for n in wanted:
        statement, why = _holder(tree.body, n)
        # A decorator is shown as itself, not as the definition it decorates.
        shown = statement.lineno if statement is not None and why != "a decorator" else n
        text = lines[shown - 1].strip()[:72]
        last = found[-1] if found else None
        if last is not None and last.why == why and last.statement == text and last.last < n:
            found[-1] = NotSwept(change.path, last.first, n, why, text)
        else:
            found.append(NotSwept(change.path, n, n, why, text))
    return found


def _holder(body: list, line: int, in_class: bool = False) -> tuple[Any, str]:
    """The innermost module- or class-level statement holding `line`, and why the sweep
    makes no mutant there."""
    import ast

    for statement in body:
        decorators = [d.lineno for d in getattr(statement, "decorator_list", ())]
        if not min([statement.lineno, *decorators]) <= line <= (statement.end_lineno or statement.lineno):
            continue
        if line < statement.lineno:
            return statement, "a decorator"
        if isinstance(statement, ast.ClassDef):
            inner, why = _holder(statement.body, line, in_class=True)
            return (inner or statement), why
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return statement, "a definition the sweep does not locate"
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            return statement, "an import"
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            return statement, "a docstring" if isinstance(statement.value.value, str) else "module-level code"
        nested = [s for s in ast.walk(statement) if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if any(s.lineno <= line <= (s.end_lineno or s.lineno) for s in nested):
            return statement, "a definition the sweep does not locate"
        return statement, "a class body" if in_class else "module-level code"
    return None, "a class body" if in_class else "module-level code"
