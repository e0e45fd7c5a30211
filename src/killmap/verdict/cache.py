"""The verdict cache: reuse a verdict only when nothing that could change it has changed.

The key has two parts. The static part: the catalog entry, the mutant's diff, every test
file and pytest configuration the run could see, and the versions of killmap, Python and
pytest. The dependency part is finer than a file: for each source file the selected
tests executed, a hash of its module-level skeleton (everything outside function bodies,
which runs at import) and of each function those tests executed. Touching a function no
selected test runs leaves the verdict valid, for the same reason test selection is sound.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import json
import os
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

import killmap
from killmap import pytest_version
from killmap.engine import cache_base

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
CONFIG_FILES = ("pyproject.toml", "pytest.ini", "setup.cfg", "tox.ini", "conftest.py")


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def gate_source_digest(folder: Path | None = None) -> str:
    """The gate's own code (killmap's folder, every layer's subpackage included): a fixed bug
    in killmap must invalidate what it decided."""
    folder = folder or Path(killmap.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.py")):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@functools.lru_cache(maxsize=1)
def _environment() -> tuple[tuple[str, str], ...]:
    # Once per process: it reads every file of killmap's own source.
    return tuple(
        sorted(
            {
                "killmap": killmap.__version__,
                "killmap_source": gate_source_digest(),
                "python": platform.python_version(),
                "implementation": sys.implementation.name,
                "pytest": pytest_version(),
            }.items()
        )
    )


def environment_key() -> dict[str, str]:
    return dict(_environment())


@functools.lru_cache(maxsize=256)  # every mutation's dependencies re-read the same few files
def functions_of(source: str) -> dict[str, tuple[int, int, str]]:
    """Outermost functions and methods: qualified name -> (first line, last line, hash)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    lines = source.split("\n")  # ast counts '\n' only; splitlines() would also split at form feeds
    found: dict[str, tuple[int, int, str]] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, _FUNCTIONS):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                end = node.end_lineno or node.lineno
                text = "\n".join(lines[start - 1 : end])
                found[prefix + node.name] = (start, end, hashlib.sha256(text.encode()).hexdigest())
            elif isinstance(node, ast.ClassDef):
                visit(node.body, prefix + node.name + ".")

    visit(tree.body, "")
    return found


@functools.lru_cache(maxsize=256)
def skeleton_of(source: str) -> str:
    """The file with every function body blanked out: what runs at import."""
    functions = functions_of(source)
    lines = source.split("\n")
    for start, end, _ in functions.values():
        for index in range(start, end):  # keep the def line, blank the rest
            lines[index] = ""
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def dependencies(root: Path, executed: dict[str, set[int] | None]) -> dict[str, Any]:
    """For each executed file: its skeleton hash and the hashes of executed functions.

    `None` for a file means it was imported but not traced line by line: every function
    in it counts, so any change to it invalidates.
    """
    deps: dict[str, Any] = {}
    for rel, lines in sorted(executed.items()):
        path = root / rel
        if not path.is_file():
            continue
        source = path.read_text(encoding="utf-8", errors="replace")
        functions = functions_of(source)
        used = {
            name: digest
            for name, (start, end, digest) in functions.items()
            if lines is None or any(start <= line <= end for line in lines)
        }
        deps[rel] = {"skeleton": skeleton_of(source), "functions": used}
    return deps


def dependencies_still_hold(root: Path, deps: dict[str, Any]) -> bool:
    for rel, recorded in deps.items():
        path = root / rel
        if not path.is_file():
            return False
        source = path.read_text(encoding="utf-8", errors="replace")
        if skeleton_of(source) != recorded["skeleton"]:
            return False
        functions = functions_of(source)
        for name, digest in recorded["functions"].items():
            if name not in functions or functions[name][2] != digest:
                return False
    return True


def test_files_digest(root: Path, files: list[str], tests: tuple[str, ...]) -> str:
    """Every file under the pytest targets, plus configuration that changes collection."""
    chosen = []
    for rel in files:
        name = rel.rsplit("/", 1)[-1]
        under_tests = any(rel == t or rel.startswith(t.rstrip("/") + "/") for t in tests)
        if under_tests or name in CONFIG_FILES:
            chosen.append((rel, hashlib.sha256((root / rel).read_bytes()).hexdigest()))
    return _digest(chosen)


class VerdictCache:
    def __init__(self, root: Path, folder: Path | None = None):
        # Named by the project folder's name, not its full path: a cache restored on a fresh CI
        # runner, or a checkout elsewhere, still finds it. Sharing is safe, since every key is
        # relative to the project and a verdict is reused only when its whole key matches.
        project = hashlib.sha256(f"project:{root.resolve().name}".encode()).hexdigest()[:16]
        self.path = cache_base(folder) / project / "verdicts.json"
        self.root = root
        try:
            self.entries: dict[str, Any] = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.entries = {}
        self._checked: dict[str, tuple[dict[str, Any], bool]] = {}  # name -> (entry, deps hold)

    @staticmethod
    def static_key(fingerprint: dict[str, Any], diff: str, tests_digest: str, seed: int | None = None) -> str:
        # The seed too: a randomized suite's verdict holds for the draws it made (docs/randomized.md).
        key = {"entry": fingerprint, "diff": diff, "tests": tests_digest, "env": environment_key()}
        return _digest({**key, "seed": seed} if seed is not None else key)

    def lookup(self, name: str, static_key: str) -> dict[str, Any] | None:
        entry = self.entries.get(name)
        if not entry or entry.get("static_key") != static_key:
            return None
        # The gate asks twice per mutation (does anything run? then, its verdict), and each
        # answer re-reads every file the verdict depends on: once per entry is enough.
        checked = self._checked.get(name)
        if checked is None or checked[0] is not entry:
            checked = self._checked[name] = (entry, dependencies_still_hold(self.root, entry.get("deps", {})))
        return entry["verdict"] if checked[1] else None

    def store(self, name: str, static_key: str, deps: dict[str, Any], verdict: dict[str, Any]) -> None:
        self.entries[name] = {"static_key": static_key, "deps": deps, "verdict": verdict}

    # Mutants, by what makes them: building one costs a libcst parse and transform, which is
    # most of a fully cached run; the same operator on the same file text gives the same mutant.
    MUTANT_ENTRIES = 2000

    @staticmethod
    def mutant_key(mutation, text: str, patch_text: str | None) -> str:
        return _digest(
            {
                "target": str(mutation.target),
                "op": mutation.op,
                "params": [list(p) for p in mutation.params],
                "count": mutation.count,
                "text": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                "patch": patch_text,
                "env": environment_key(),
            }
        )

    @staticmethod
    def validity_key(original: str, mutated: str, file: str, werror: bool) -> str:
        return _digest(
            {
                "original": hashlib.sha256(original.encode("utf-8")).hexdigest(),
                "mutated": hashlib.sha256(mutated.encode("utf-8")).hexdigest(),
                "file": file,
                "werror": werror,
                "env": environment_key(),
            }
        )

    def mutant(self, key: str) -> dict[str, Any] | None:
        return self.entries.get("#mutants", {}).get(key)

    def store_mutant(self, key: str, fields: dict[str, Any]) -> None:
        mutants = self.entries.setdefault("#mutants", {})
        mutants.pop(key, None)
        mutants[key] = fields
        while len(mutants) > self.MUTANT_ENTRIES:
            mutants.pop(next(iter(mutants)))

    def save(self) -> None:
        """Write atomically: a temporary file of this writer's own, then os.replace.

        Several gates may save the same project's cache at once (CI jobs, a pre-push run
        beside an editor's): a shared temporary name let one writer rename another's file
        away mid-write (FileNotFoundError). Readers see the old file or the new one, never
        half of one; the last writer wins, which only costs a later cache miss.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, tmp = tempfile.mkstemp(prefix=".verdicts.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(json.dumps(self.entries))
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
