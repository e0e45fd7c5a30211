"""Which test files can reach a mutation at all: the static import closure.

A test file whose imports (followed through the project's own modules, with the
conftest.py files above it) never reach a mutated file cannot run a line of it: not at
import, not in a test. Such files need no baseline run and no mutant run. Anything that
imports by name at run time (importlib, __import__, importorskip, pytest_plugins) makes a
file count as reaching everything, so the filter only ever errs towards running a test.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

_DYNAMIC_CALLS = {
    "import_module",
    "__import__",
    "importorskip",
    "load_module",
    "exec_module",
    "run_module",
    "run_path",
    "entry_points",
    "iter_modules",
    "walk_packages",
}


class ImportGraph:
    def __init__(self, root: Path, files: list[str], paths: tuple[str, ...]):
        self.root = root
        self.modules: dict[str, str] = {}  # dotted name -> relative file
        for rel in files:
            if rel.endswith(".py"):
                for name in _module_names(rel, paths):
                    self.modules.setdefault(name, rel)
        self._edges: dict[str, set[str] | None] = {}  # file -> imported files (None: anything)
        self._packages: dict[str, str] | None = None  # file -> its first dotted name
        self.scanned: set[str] = set()  # files read by the line scan, never parsed

    def _imports_of(self, rel: str) -> set[str] | None:
        if rel in self._edges:
            return self._edges[rel]
        try:
            text = (self.root / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            self._edges[rel] = None
            return None
        statements = scanned_imports(text)
        if statements is None:
            statements = parsed_imports(text)
        else:
            self.scanned.add(rel)
        self._edges[rel] = None if statements is None else self._files_imported(rel, statements)
        return self._edges[rel]

    def _files_imported(self, rel: str, statements: list[ast.Import | ast.ImportFrom]) -> set[str]:
        package = self._package_of(rel)
        found: set[str] = set()
        for node in statements:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    found |= self._prefixes(alias.name)
                continue
            base = _resolve_relative(node.module, node.level, package)
            if base is None:
                continue
            found |= self._prefixes(base)
            for alias in node.names:
                found |= self._prefixes(f"{base}.{alias.name}" if base else alias.name)
        return found

    def _package_of(self, rel: str) -> str:
        if self._packages is None:
            self._packages = {}
            for name, path in self.modules.items():
                self._packages.setdefault(path, name)
        name = self._packages.get(rel, "")
        return name if rel.endswith("__init__.py") else name.rpartition(".")[0]

    def _prefixes(self, dotted: str) -> set[str]:
        """Importing a.b.c runs a, a.b and a.b.c: every package on the way."""
        parts = dotted.split(".")
        names = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        return {self.modules[n] for n in names if n in self.modules}

    def reaches(self, start: list[str], targets: set[str]) -> bool:
        seen: set[str] = set()
        stack = list(start)
        while stack:
            rel = stack.pop()
            if rel in seen:
                continue
            seen.add(rel)
            if rel in targets:
                return True
            edges = self._imports_of(rel)
            if edges is None:
                return True  # imports by name at run time: assume it can reach anything
            stack.extend(edges - seen)
        return False


def _module_names(rel: str, paths: tuple[str, ...]) -> list[str]:
    names = []
    for entry in (*paths, "."):
        prefix = "" if entry in (".", "") else entry.rstrip("/") + "/"
        if rel.startswith(prefix):
            dotted = rel[len(prefix) : -3].replace("/", ".")
            if dotted.endswith(".__init__"):
                dotted = dotted[: -len(".__init__")]
            if dotted and all(part.isidentifier() for part in dotted.split(".")):
                names.append(dotted)
    return names


def parsed_imports(text: str) -> list[ast.Import | ast.ImportFrom] | None:
    """Every import statement of a module, from its syntax tree; None when it may import
    by name at run time (or does not parse), so it must count as reaching anything."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    found: list[ast.Import | ast.ImportFrom] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.Call):
            name = (
                node.func.attr
                if isinstance(node.func, ast.Attribute)
                else node.func.id
                if isinstance(node.func, ast.Name)
                else ""
            )
            if name in _DYNAMIC_CALLS:
                return None
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in targets):
                return None
    return found


# Every import statement holds the keyword on some line. A line that is one import statement
# and nothing else: `import a.b as c, d` or `from ..a import (b as c, d)`, perhaps with a comment.
_IMPORT_WORD = re.compile(r"\bimport\b")
_LONE_IMPORT = re.compile(
    r"[ \t]*(?:import[ \t]+[\w., \t]+|from[ \t]+[\w.]+[ \t]+import[ \t]+"
    r"(?:\*|[\w, \t]+|\([\w, \t]*\)))[ \t]*(?:#.*)?"
)
_RUN_TIME_IMPORT = re.compile("|".join(sorted(_DYNAMIC_CALLS | {"pytest_plugins"})))


def scanned_imports(text: str) -> list[ast.Import | ast.ImportFrom] | None:
    """The same statements as parsed_imports, found without parsing the whole module (a
    parse is most of the filter's time, once per test file); None when the scan cannot vouch
    for every one of them, and the caller parses.

    Sound because each `import` keyword is found as a word: the scan answers only when every
    line holding the word is a lone import statement (not continued from the line before,
    not one of several on a line), and when no run-time import name appears anywhere. A lone
    import inside a string is taken for a real one: an extra edge, which errs towards running.
    """
    if _RUN_TIME_IMPORT.search(text):
        return None
    lines: dict[int, str] = {}
    for match in _IMPORT_WORD.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        if start in lines:
            continue
        end = text.find("\n", match.end())
        line = text[start:] if end < 0 else text[start:end]
        if text.endswith("\\\n", 0, start) or not _LONE_IMPORT.fullmatch(line):
            return None
        lines[start] = line.strip()
    try:
        return ast.parse("\n".join(lines.values())).body  # type: ignore[return-value]
    except SyntaxError:
        return None


def _resolve_relative(module: str | None, level: int, package: str) -> str | None:
    if level == 0:
        return module or ""
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, module] if module else base)


@dataclass(frozen=True)
class Unreachable:
    """Test files no target can be reached from, for pytest's --ignore."""

    files: tuple[str, ...]
    # Those of them read by the line scan alone: not known to parse. pytest would have
    # reported a syntax error collecting one, so the baseline checks them (in parallel).
    unparsed: tuple[str, ...] = ()


def unreachable_test_files(
    root: Path, files: list[str], tests: tuple[str, ...], paths: tuple[str, ...], targets: set[str], keep: set[str]
) -> Unreachable:
    """Python files under the pytest targets that provably cannot run a target's code.

    The caller passes them to pytest as --ignore, so pytest's own collection rules still
    decide what a test file is; `keep` (files the contract names) is never ignored.
    """

    def under(rel: str, folder: str) -> bool:
        return folder in (".", "") or rel == folder or rel.startswith(folder.rstrip("/") + "/")

    # `keep` holds files and folders ("tests", "tests/"): a folder the contract names keeps
    # every file in it, since each of its tests must (or may) go red.
    candidates = [
        f
        for f in files
        if f.endswith(".py")
        and any(under(f, t) for t in tests)
        and f.rsplit("/", 1)[-1] != "conftest.py"
        and not any(f == k or (not k.endswith(".py") and under(f, k)) for k in keep)
    ]
    if not candidates:
        return Unreachable(())
    graph = ImportGraph(root, files, paths)
    conftests = [f for f in files if f.rsplit("/", 1)[-1] == "conftest.py"]

    def conftests_above(rel: str) -> list[str]:
        folder = rel.rpartition("/")[0]
        found = []
        for conftest in conftests:
            home = conftest.rpartition("/")[0]
            if home == "" or folder == home or folder.startswith(home + "/"):
                found.append(conftest)
        return found

    ignored = tuple(f for f in candidates if not graph.reaches([f, *conftests_above(f)], targets))
    return Unreachable(ignored, tuple(f for f in ignored if f in graph.scanned))


def first_syntax_error(root: Path, files: tuple[str, ...]) -> tuple[str, str] | None:
    """The first of `files` that does not parse, with pytest's kind of message."""
    for rel in files:
        try:
            ast.parse((root / rel).read_text(encoding="utf-8"), filename=rel)
        except SyntaxError as exc:
            return rel, f"SyntaxError: {exc.msg} (line {exc.lineno})"
        except (OSError, UnicodeDecodeError):
            continue  # unreadable files are never ignored: they reach anything
    return None
