"""--changed: only the mutations that can see what changed since a base revision.

A mutation sees a change when its target's text differs from BASE, a test file named by
its kills differs, or its own catalog entry differs. This is the local pre-push mode.
"""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from killmap.errors import GateError
from killmap.git import file_at, git, main_merge_base
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


class TouchedFunctions:
    """`sweep --changed`: whether the change since BASE touched a function, by the text of
    its definition then and now (the same reading as a named target's, above). A file new
    since BASE is touched everywhere; one git does not list as changed is not read at all."""

    def __init__(self, root: Path, base: str | None):
        self.root = root
        self.base = base or default_base(root)
        git(root, "rev-parse", "--verify", f"{self.base}^{{commit}}", field="--changed")
        self.changed = set(
            git(root, "diff", "--name-only", "--relative", self.base, field="--changed").decode().split()
        )
        self.changed |= set(git(root, "ls-files", "--others", "--exclude-standard", field="--changed").decode().split())
        self._modules: dict[str, tuple[object, object]] = {}

    def __call__(self, path: str, function: str) -> bool:
        if path not in self.changed:
            return False
        if path not in self._modules:
            then = file_at(self.root, self.base, path, field="--changed")
            now = (self.root / path).read_text(encoding="utf-8")
            self._modules[path] = (_parsed(then), _parsed(now))
        then_module, now_module = self._modules[path]
        return then_module is None or _definition_text(then_module, path, function) != _definition_text(
            now_module, path, function
        )


def _parsed(source: str | None):
    import libcst as cst

    if source is None:
        return None
    try:
        return cst.parse_module(source)
    except Exception:  # noqa: BLE001 - a file that did not parse at BASE has changed throughout
        return None


def _definition_text(module, path: str, function: str) -> str:
    from killmap.mutate.symbols import SymbolError, resolve_symbol

    try:
        return module.code_for_node(resolve_symbol(module, function, path))
    except SymbolError:
        return module.code  # absent or ambiguous: the whole file stands for it, which changed
