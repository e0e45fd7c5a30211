"""red-first's change: BASE to HEAD, split into the tests and the fix, and the fix reverted.

- The **test side**: changed files under the gate's `tests` targets, files matching
  pytest's test-file patterns (`python_files`, default `test_*.py *_test.py`) and every
  `conftest.py`. They are kept as they are at HEAD.
- The **fix**: every other changed Python file, and every changed file inside a Python
  package (data the code reads). These are put back as they were at BASE: a file the
  change added is removed, a file it deleted is restored. `--revert PATH` narrows this
  to the named files or folders (`--revert utils.py`: that file alone is the fix).
- **Kept**: the rest (documentation, packaging and pytest configuration, catalogs) stays
  at HEAD and is listed, since reverting it would change how tests run, not the fix.

Which tests the change added or modified is decided per test function (or method), by
comparing its syntax tree, decorators included, at BASE and at HEAD: one test added to
a file of twenty makes one added test, not twenty.
"""

from __future__ import annotations

import ast
import configparser
import difflib
import fnmatch
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from killmap.wording import counted

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from killmap.catalog.project import module_name, project_files
from killmap.catalog.reader import GateSettings
from killmap.errors import GateError
from killmap.git import commit_of, default_base, tree_at

DEFAULT_TEST_PATTERNS = ("test_*.py", "*_test.py")
ADDED, MODIFIED, DELETED = "added", "modified", "deleted"


@dataclass(frozen=True)
class FileChange:
    path: str
    status: str  # added, modified or deleted, from BASE to HEAD


@dataclass
class Change:
    base: str  # the BASE commit
    base_label: str  # as the user named it, or how it was found
    head: str  # the HEAD commit, or "working tree"
    base_tree: dict[str, bytes]
    head_tree: dict[str, bytes]
    tests: tuple[FileChange, ...]
    sources: tuple[FileChange, ...]  # the fix: what may be reverted
    kept: tuple[FileChange, ...]
    reverted: tuple[FileChange, ...]  # what the fix-reverted tree puts back
    reverted_tree: dict[str, bytes] = field(default_factory=dict)

    def text(self, tree: dict[str, bytes], rel: str) -> str | None:
        data = tree.get(rel)
        return None if data is None else data.decode("utf-8", "replace")

    def reverted_diff(self) -> str:
        """HEAD to the fix-reverted tree: exactly what the sandbox put back."""
        parts = []
        for item in self.reverted:
            old, new = self.head_tree.get(item.path), self.reverted_tree.get(item.path)
            if b"\0" in (old or b"") + (new or b""):
                parts.append(f"Binary file {item.path} differs\n")
                continue
            parts.append(
                "".join(
                    difflib.unified_diff(
                        _lines(old),
                        _lines(new),
                        fromfile=f"a/{item.path}" if old is not None else "/dev/null",
                        tofile=f"b/{item.path}" if new is not None else "/dev/null",
                    )
                )
            )
        return "".join(p if p.endswith("\n") else p + "\n" for p in parts if p)


def _lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    lines = data.decode("utf-8", "replace").splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def compute_change(
    root: Path, settings: GateSettings, base: str | None, *, worktree: bool, revert: tuple[str, ...], cwd: Path
) -> Change:
    base_label = base or "the merge base with main"
    base_commit = commit_of(root, base) if base else default_base(root)
    base_tree = tree_at(root, base_commit)
    if worktree:
        head, head_tree = "working tree", working_tree(root)
    else:
        head = commit_of(root, "HEAD", field="HEAD")
        head_tree = tree_at(root, head)
    changed = [
        FileChange(rel, ADDED if rel not in base_tree else DELETED if rel not in head_tree else MODIFIED)
        for rel in sorted(set(base_tree) | set(head_tree))
        if base_tree.get(rel) != head_tree.get(rel)
    ]
    if not changed:
        raise GateError(
            f"nothing changed between {base_label} ({base_commit[:10]}) and {head}: there is no change to prove",
            field="BASE",
        )
    patterns = test_patterns(head_tree)
    tests = tuple(c for c in changed if is_test_file(c.path, settings, patterns))
    rest = [c for c in changed if c not in tests]
    sources = tuple(c for c in rest if _is_code(c.path, head_tree, base_tree))
    kept = tuple(c for c in rest if c not in sources)
    if revert:
        reverted = _chosen(root, cwd, revert, changed, tests)
        kept = tuple(c for c in kept if c not in reverted)
    else:
        reverted = sources
    if not reverted:
        raise GateError(
            f"the change from {base_label} to {head} touches no source file ("
            f"{counted(len(tests), 'test file')}, {counted(len(kept), 'other file')} kept): there is no fix "
            "to revert; name one with --revert",
            field="--revert",
        )
    tree = dict(head_tree)
    for item in reverted:
        if item.status == ADDED:
            del tree[item.path]
        else:
            tree[item.path] = base_tree[item.path]
    return Change(base_commit, base_label, head, base_tree, head_tree, tests, sources, kept, reverted, tree)


def _chosen(
    root: Path, cwd: Path, revert: tuple[str, ...], changed: list[FileChange], tests: tuple[FileChange, ...]
) -> tuple[FileChange, ...]:
    chosen: list[FileChange] = []
    for given in revert:
        rel = _project_relative(root, cwd, given)
        hits = [c for c in changed if not rel or c.path == rel or c.path.startswith(rel.rstrip("/") + "/")]
        if not hits:
            raise GateError(
                f"{given} did not change between BASE and HEAD, so there is nothing to revert", field="--revert"
            )
        if all(c in tests for c in hits):
            raise GateError(f"{given} is a test file: red-first keeps the tests and reverts the fix", field="--revert")
        chosen += [c for c in hits if c not in tests and c not in chosen]
    return tuple(sorted(chosen, key=lambda c: c.path))


def _project_relative(root: Path, cwd: Path, given: str) -> str:
    normal = Path(os.path.normpath(Path(given) if os.path.isabs(given) else cwd / given))
    for folder, path in ((root, normal), (root.resolve(), Path(os.path.realpath(normal)))):
        try:
            rel = path.relative_to(folder).as_posix()
        except ValueError:
            continue
        return "" if rel == "." else rel
    raise GateError(f"{given} is outside the project ({root})", field="--revert")


def test_patterns(tree: dict[str, bytes]) -> tuple[str, ...]:
    """pytest's `python_files`, from pyproject.toml or pytest.ini at HEAD."""
    value: object = None
    if "pytest.ini" in tree:
        parser = configparser.ConfigParser()
        try:
            parser.read_string(tree["pytest.ini"].decode("utf-8", "replace"))
            value = parser.get("pytest", "python_files", fallback=None)
        except configparser.Error:
            value = None
    elif "pyproject.toml" in tree:
        try:
            data = tomllib.loads(tree["pyproject.toml"].decode("utf-8", "replace"))
            value = data.get("tool", {}).get("pytest", {}).get("ini_options", {}).get("python_files")
        except (tomllib.TOMLDecodeError, AttributeError):
            value = None
    if isinstance(value, str):
        value = value.split()
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return tuple(value)
    return DEFAULT_TEST_PATTERNS


def is_test_file(rel: str, settings: GateSettings, patterns: tuple[str, ...]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    if name == "conftest.py" or any(fnmatch.fnmatch(name, p) for p in patterns):
        return True
    for target in settings.tests:
        folder = target.split("::", 1)[0].rstrip("/")
        if folder not in ("", ".") and (rel == folder or rel.startswith(folder + "/")):
            return True
    return False


def _is_code(rel: str, head: dict[str, bytes], base: dict[str, bytes]) -> bool:
    if rel.endswith(".py"):
        return True
    parent = rel.rsplit("/", 1)[0] if "/" in rel else ""
    return bool(parent) and (f"{parent}/__init__.py" in head or f"{parent}/__init__.py" in base)


# --- tests: added, modified or unchanged, per function ---------------------------------------


def test_changes(change: Change, test_ids: tuple[str, ...]) -> dict[str, str]:
    """Each collected test id: added, modified, unchanged, or changed-file (in a changed
    test file, but its function could not be found: generated or inherited)."""
    changed = {c.path: c for c in change.tests}
    heads: dict[str, dict[str, str]] = {}
    bases: dict[str, dict[str, str]] = {}
    result = {}
    for test_id in test_ids:
        rel, _, rest = test_id.partition("::")
        item = changed.get(rel)
        if item is None:
            result[test_id] = "unchanged"
            continue
        if item.status == ADDED:
            result[test_id] = ADDED
            continue
        if rel not in heads:
            heads[rel] = _functions(change.text(change.head_tree, rel))
            bases[rel] = _functions(change.text(change.base_tree, rel))
        qualname = ".".join(part.split("[", 1)[0] for part in rest.split("::"))
        now, then = heads[rel].get(qualname), bases[rel].get(qualname)
        if now is None:
            result[test_id] = "changed-file"
        elif then is None:
            result[test_id] = ADDED
        else:
            result[test_id] = MODIFIED if now != then else "unchanged"
    return result


def _tree(text: str | None) -> ast.Module | None:
    """The module's syntax tree; None for a file that is absent or does not parse."""
    if text is None:
        return None
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def _functions(text: str | None) -> dict[str, str]:
    """Qualified name -> the syntax of every function and method (decorators included)."""
    found: dict[str, str] = {}
    tree = _tree(text)
    if tree is None:
        return found

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[prefix + node.name] = ast.dump(node)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return found


# --- names the fix introduces ------------------------------------------------------------------


@dataclass(frozen=True)
class NewNames:
    """What exists at HEAD and not with the fix reverted: modules, and names per module
    (a top-level name, or `Class.attribute`)."""

    modules: frozenset[str]
    names: dict[str, frozenset[str]]

    def explains(self, record: dict) -> str | None:
        """The missing name this absence record means, when the fix introduced it."""
        module, name, owner = record.get("module"), record.get("name"), record.get("owner")
        if not module:
            return None
        if record.get("type") == "ModuleNotFoundError":
            hit = any(module == m or module.startswith(m + ".") for m in self.modules)
            return module if hit else None
        if owner:
            return f"{module}.{owner}.{name}" if f"{owner}.{name}" in self.names.get(module, ()) else None
        if name in self.names.get(module, ()) or f"{module}.{name}" in self.modules:
            return f"{module}.{name}"
        return None


def module_names(change: Change, paths: tuple[str, ...]) -> dict[str, str]:
    """Each Python file of BASE and HEAD by the dotted name it imports as under `paths` (a file
    outside them has none). Read once: every tree red-first builds holds only these files."""
    return {
        rel: name
        for tree in (change.base_tree, change.head_tree)
        for rel in tree
        if rel.endswith(".py") and (name := module_name(rel, paths)) is not None
    }


def new_names(change: Change, module_of: dict[str, str]) -> NewNames:
    modules: set[str] = set()
    names: dict[str, frozenset[str]] = {}
    for item in change.reverted:
        if not item.path.endswith(".py"):
            continue
        module = module_of.get(item.path)
        if module is None:
            continue
        now = defined_names(change.text(change.head_tree, item.path))
        if item.status == ADDED:
            modules.add(module)
        then = defined_names(change.text(change.reverted_tree, item.path))
        names[module] = frozenset(now - then)
    return NewNames(frozenset(modules), names)


def defined_names(text: str | None) -> set[str]:
    """Top-level names a module binds, and `Class.name` for what its classes bind
    (methods, class attributes, and `self.name = ...` in methods)."""
    found: set[str] = set()
    tree = _tree(text)
    if tree is None:
        return found

    def bind(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.add(prefix + node.name)
                if prefix:
                    for sub in ast.walk(node):
                        if (
                            isinstance(sub, ast.Attribute)
                            and isinstance(sub.ctx, ast.Store)
                            and isinstance(sub.value, ast.Name)
                            and sub.value.id == "self"
                        ):
                            found.add(prefix + sub.attr)
            elif isinstance(node, ast.ClassDef):
                found.add(prefix + node.name)
                bind(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for sub in ast.walk(target):
                        if isinstance(sub, ast.Name):
                            found.add(prefix + sub.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    found.add(prefix + (alias.asname or alias.name.split(".")[0]))
            else:  # if / try / with at module or class level: their bodies bind too
                for name in ("body", "orelse", "finalbody"):
                    bind([s for s in getattr(node, name, []) or [] if isinstance(s, ast.stmt)], prefix)
                for handler in getattr(node, "handlers", []) or []:
                    bind(handler.body, prefix)

    bind(tree.body, "")
    return found


def working_tree(root: Path) -> dict[str, bytes]:
    """The files a sandbox of the working tree holds (tracked and untracked-unignored)."""
    return {rel: (root / rel).read_bytes() for rel in project_files(root)}


# --- exceptions the code raises on purpose ------------------------------------------------------


@dataclass(frozen=True)
class Purpose:
    """Whether an exception that turned a test red is one the code under test raises on
    purpose: its class is defined in one of the project's own source modules (not a test
    file, not the standard library or an installed package), or it escaped a `pytest.raises`
    in the test's own file, which expected another (a `match` that failed, or nothing raised,
    is pytest's own failure: an assertion already)."""

    own_modules: frozenset[str]
    tree: dict[str, bytes]  # the test files, as both trees hold them
    under_raises: dict[str, frozenset[int]] = field(default_factory=dict)  # filled as asked

    def raised(self, exc_module: str | None, test_id: str, test_lines: list[int] | None) -> bool:
        if exc_module and exc_module in self.own_modules:
            return True
        rel = test_id.split("::", 1)[0]
        if not test_lines or rel not in self.tree:
            return False
        if rel not in self.under_raises:
            self.under_raises[rel] = raises_lines(self.tree[rel].decode("utf-8", "replace"))
        return any(line in self.under_raises[rel] for line in test_lines)


def purpose_of(change: Change, settings: GateSettings, module_of: dict[str, str]) -> Purpose:
    """The project's own source modules in either tree, by the dotted names they import as."""
    patterns = test_patterns(change.head_tree)
    own = {
        name
        for tree in (change.head_tree, change.reverted_tree)
        for rel in tree
        if rel.endswith(".py")
        and not is_test_file(rel, settings, patterns)
        and (name := module_of.get(rel)) is not None
    }
    return Purpose(frozenset(own), change.head_tree)


def raises_lines(text: str) -> frozenset[int]:
    """The lines where an exception is under `pytest.raises`: the body of each `with raises(...)`
    block, and each call `raises(Error, function, ...)` that runs a function itself."""
    tree = _tree(text)
    lines: set[int] = set()
    if tree is None:
        return frozenset()
    for node in ast.walk(tree):
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(_is_raises(i.context_expr) for i in node.items):
            lines.update(range(node.body[0].lineno, (node.end_lineno or node.body[-1].lineno) + 1))
        elif isinstance(node, ast.Call) and _is_raises(node) and len(node.args) > 1:
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return frozenset(lines)


def _is_raises(node: ast.expr) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == "raises") or (
        isinstance(func, ast.Attribute) and func.attr == "raises"
    )


# --- the fix reverted with the names it adds kept ------------------------------------------------


@dataclass(frozen=True)
class KeptNames:
    """The fix reverted in behaviour only: each file the fix adds, or that only adds
    definitions, as at HEAD; each other Python file as at BASE with the definitions HEAD adds
    to it (top-level, or in a class BASE has) put back. A test red by absence with the fix
    reverted runs here to show whether anything but the missing name made it red."""

    tree: dict[str, bytes]
    files: tuple[tuple[str, str, tuple[str, ...]], ...]  # (path, how, the names kept)
    behaviour_reverted: bool  # some changed definition is as at BASE: the run can say something


def names_kept(change: Change) -> KeptNames:
    tree = dict(change.reverted_tree)
    files: list[tuple[str, str, tuple[str, ...]]] = []
    reverted = False
    for item in change.reverted:
        now = change.text(change.head_tree, item.path)
        if not item.path.endswith(".py") or now is None:
            reverted = reverted or item.status != ADDED
            continue
        if item.status == ADDED:
            tree[item.path] = change.head_tree[item.path]
            files.append((item.path, "at HEAD: the fix adds it", ()))
            continue
        then = change.text(change.base_tree, item.path) or ""
        text, kept = keep_added(then, now)
        if text == now:
            files.append((item.path, "at HEAD: it only adds definitions", kept))
        else:
            reverted = True
            if kept:
                files.append((item.path, "as at BASE, with the definitions it adds", kept))
        tree[item.path] = text.encode("utf-8")
    return KeptNames(tree, tuple(files), reverted)


def keep_added(then: str, now: str) -> tuple[str, tuple[str, ...]]:
    """BASE's module with HEAD's added definitions, and their names; HEAD's text itself when
    BASE's statements are all still there and HEAD only adds definitions to them."""
    base, head = _tree(then), _tree(now)
    if base is None or head is None:
        return then, ()
    had = defined_names(then)
    added = [(node, text) for node in head.body if (text := _added_text(node, had, now, "")) is not None]
    old = [ast.dump(node) for node in base.body]
    kept_old = [ast.dump(node) for node in head.body if not any(node is n for n, _ in added)]
    if kept_old == old:
        return now, _outermost(defined_names(now) - had)
    lines = then.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    names = [name for node, _ in added for name in _binds(node, "") if name not in had]
    inserts = _class_members(base, head, had, now, lines, names)
    for after in sorted(inserts, reverse=True):
        lines[after:after] = inserts[after]
    text = "".join(lines) + "".join("\n\n" + segment + "\n" for _, segment in added)
    if _tree(text) is None:
        return then, ()
    return text, _outermost(set(names))


def _outermost(names: set[str]) -> tuple[str, ...]:
    """The names, less those inside a class that is itself among them."""
    return tuple(sorted(n for n in names if "." not in n or n.split(".", 1)[0] not in names))


def _class_members(base: ast.Module, head: ast.Module, had: set[str], now: str, lines: list[str], names: list[str]):
    """The members HEAD adds to a class BASE has, each to go after that class's last line,
    at its body's indentation."""
    inserts: dict[int, list[str]] = {}
    classes = {node.name: node for node in base.body if isinstance(node, ast.ClassDef)}
    for node in head.body:
        if not isinstance(node, ast.ClassDef) or node.name not in classes:
            continue
        then = classes[node.name]
        indent = lines[then.body[0].lineno - 1][: then.body[0].col_offset]
        for member in node.body:
            text = _added_text(member, had, now, f"{node.name}.")
            if text is not None and then.end_lineno is not None:
                names += [name for name in _binds(member, f"{node.name}.") if name not in had]
                strip = member.col_offset
                moved = [indent + line[strip:] if line[:strip].isspace() else line for line in text.splitlines()]
                inserts.setdefault(then.end_lineno, []).append("\n" + "\n".join(moved) + "\n")
    return inserts


def _binds(node: ast.stmt, prefix: str) -> list[str]:
    """The names a definition binds: a function, a class, an import, an assignment to names."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [prefix + node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [prefix + (a.asname or a.name.split(".")[0]) for a in node.names]
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [prefix + s.id for t in targets for s in ast.walk(t) if isinstance(s, ast.Name)]
    return []


def _added_text(node: ast.stmt, had: set[str], now: str, prefix: str) -> str | None:
    """HEAD's text of a definition that binds only names BASE does not have (an import that
    binds some, narrowed to those); None for anything else."""
    bound = _binds(node, prefix)
    new = [name for name in bound if name not in had]
    if not new:
        return None
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        aliases = [a for a in node.names if prefix + (a.asname or a.name.split(".")[0]) in new]
        spelled = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in aliases)
        if isinstance(node, ast.Import):
            return f"import {spelled}"
        return f"from {'.' * node.level}{node.module or ''} import {spelled}"
    if len(new) < len(bound):
        return None  # it would bind again a name BASE has, and change it
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return "\n".join(now.splitlines()[first - 1 : node.end_lineno])
