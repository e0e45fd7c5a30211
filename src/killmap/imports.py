"""Which test files can reach a mutation at all: the static import closure.

A test file whose imports (followed through the project's own modules, with the
conftest.py files above it) never reach a mutated file cannot run a line of it: not at
import, not in a test. Such files need no baseline run and no mutant run. Anything that
imports by name at run time (importlib, __import__, importorskip, pytest_plugins) makes a
file count as reaching everything, so the filter only ever errs towards running a test.
"""

from __future__ import annotations

import ast
from pathlib import Path

_DYNAMIC_CALLS = {"import_module", "__import__", "importorskip", "load_module", "exec_module",
                  "run_module", "run_path", "entry_points", "iter_modules", "walk_packages"}


class ImportGraph:
    def __init__(self, root: Path, files: list[str], paths: tuple[str, ...]):
        self.root = root
        self.modules: dict[str, str] = {}            # dotted name -> relative file
        for rel in files:
            if rel.endswith(".py"):
                for name in _module_names(rel, paths):
                    self.modules.setdefault(name, rel)
        self._edges: dict[str, set[str] | None] = {}  # file -> imported files (None: anything)

    def _imports_of(self, rel: str) -> set[str] | None:
        if rel in self._edges:
            return self._edges[rel]
        try:
            tree = ast.parse((self.root / rel).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            self._edges[rel] = None
            return None
        package = _package_of(rel, self.modules)
        found: set[str] = set()
        dynamic = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    found |= self._prefixes(alias.name)
            elif isinstance(node, ast.ImportFrom):
                base = _resolve_relative(node.module, node.level, package)
                if base is None:
                    continue
                found |= self._prefixes(base)
                for alias in node.names:
                    found |= self._prefixes(f"{base}.{alias.name}" if base else alias.name)
            elif isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else \
                    node.func.id if isinstance(node.func, ast.Name) else ""
                dynamic |= name in _DYNAMIC_CALLS
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                dynamic |= any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in targets)
        self._edges[rel] = None if dynamic else found
        return self._edges[rel]

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
            dotted = rel[len(prefix):-3].replace("/", ".")
            if dotted.endswith(".__init__"):
                dotted = dotted[: -len(".__init__")]
            if dotted and all(part.isidentifier() for part in dotted.split(".")):
                names.append(dotted)
    return names


def _package_of(rel: str, modules: dict[str, str]) -> str:
    for name, path in modules.items():
        if path == rel:
            return name if rel.endswith("__init__.py") else name.rpartition(".")[0]
    return ""


def _resolve_relative(module: str | None, level: int, package: str) -> str | None:
    if level == 0:
        return module or ""
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join([*base, module] if module else base)


def unreachable_test_files(root: Path, files: list[str], tests: tuple[str, ...],
                           paths: tuple[str, ...], targets: set[str], keep: set[str]) -> list[str]:
    """Python files under the pytest targets that provably cannot run a target's code.

    The caller passes them to pytest as --ignore, so pytest's own collection rules still
    decide what a test file is; `keep` (files the contract names) is never ignored.
    """
    def under(rel: str, folder: str) -> bool:
        return folder in (".", "") or rel == folder or rel.startswith(folder.rstrip("/") + "/")

    # `keep` holds files and folders ("tests", "tests/"): a folder the contract names keeps
    # every file in it, since each of its tests must (or may) go red.
    candidates = [f for f in files if f.endswith(".py") and any(under(f, t) for t in tests)
                  and f.rsplit("/", 1)[-1] != "conftest.py"
                  and not any(f == k or (not k.endswith(".py") and under(f, k)) for k in keep)]
    if not candidates:
        return []
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

    return [f for f in candidates if not graph.reaches([f, *conftests_above(f)], targets)]
