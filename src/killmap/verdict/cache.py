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
import bisect
import contextlib
import functools
import hashlib
import json
import os
import platform
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import killmap
from killmap import pytest_version
from killmap.engine import cache_base
from killmap.mutate.memo import MutantMemo

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
                # A hash seed the user exported is the tests' (launch.py), not the gate's: a
                # set's order, so what a test runs, is its. tox exports a new one every run.
                "exported_hash_seed": os.environ.get("PYTHONHASHSEED", ""),
            }.items()
        )
    )


def environment_key() -> dict[str, str]:
    return dict(_environment())


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


def skeleton_of(source: str, functions: dict[str, tuple[int, int, str]] | None = None) -> str:
    """The file with every function body blanked out: what runs at import."""
    lines = source.split("\n")
    for start, end, _ in (functions_of(source) if functions is None else functions).values():
        for index in range(start, end):  # keep the def line, blank the rest
            lines[index] = ""
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def read_source(path: Path) -> bytes | None:
    """A dependency's bytes, None when it is gone (the one place the cache reads one)."""
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _text_of(data: bytes) -> str:
    # As read_text reads it: line numbers count every line ending ast counts.
    return data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


@dataclass(frozen=True)
class Shape:
    """What a verdict can depend on in one file: its whole text's hash, and the hashes of its
    skeleton and of each function (parsed only when the text's hash alone cannot answer)."""

    digest: str
    functions: dict[str, tuple[int, int, str]]
    skeleton: str


class Shapes:
    """Each dependency file read and hashed at most once per run, and parsed at most once,
    however many mutations depend on it: a large project's mutations share most of their
    few hundred files, and a memo smaller than that set re-read them all for each mutation.
    One per run, never across runs: a file is read again when the next run asks."""

    def __init__(self) -> None:
        self._texts: dict[str, tuple[str, str] | None] = {}  # rel -> (digest, text), None: gone
        self._parsed: dict[str, Shape] = {}  # by digest
        self._lock = threading.Lock()  # the dispatch's threads work out dependencies at once

    def digest(self, root: Path, rel: str) -> str | None:
        """The file's text hash, None when it is gone."""
        known = self._text(root, rel)
        return None if known is None else known[0]

    def shape(self, root: Path, rel: str) -> Shape | None:
        known = self._text(root, rel)
        if known is None:
            return None
        digest, text = known
        with self._lock:
            if digest not in self._parsed:
                functions = functions_of(text)
                self._parsed[digest] = Shape(digest, functions, skeleton_of(text, functions))
            return self._parsed[digest]

    def _text(self, root: Path, rel: str) -> tuple[str, str] | None:
        with self._lock:
            if rel not in self._texts:
                data = read_source(root / rel)
                self._texts[rel] = None if data is None else (hashlib.sha256(data).hexdigest(), _text_of(data))
            return self._texts[rel]


def dependencies(root: Path, executed: dict[str, set[int] | None], shapes: Shapes | None = None) -> dict[str, Any]:
    """For each executed file: its text's hash, its skeleton hash and the hashes of executed
    functions.

    `None` for a file means it was imported but not traced line by line: every function
    in it counts, so any change to it invalidates.
    """
    shapes = shapes or Shapes()
    deps: dict[str, Any] = {}
    for rel, lines in sorted(executed.items()):
        shape = shapes.shape(root, rel)
        if shape is None:
            continue
        ordered = None if lines is None else sorted(lines)
        used = {
            name: digest
            for name, (start, end, digest) in shape.functions.items()
            if ordered is None or _runs_within(ordered, start, end)
        }
        deps[rel] = {"sha256": shape.digest, "skeleton": shape.skeleton, "functions": used}
    return deps


def _runs_within(ordered: list[int], start: int, end: int) -> bool:
    """Whether any of the sorted executed lines lies in start..end: a bisection, not a walk over
    every line for every function (a sweep works this out for each mutant)."""
    at = bisect.bisect_left(ordered, start)
    return at < len(ordered) and ordered[at] <= end


def dependencies_still_hold(root: Path, deps: dict[str, Any], shapes: Shapes | None = None) -> bool:
    """Every file as it was, or changed only in functions the verdict's tests never ran. A file
    whose whole text is unchanged answers without being parsed."""
    shapes = shapes or Shapes()
    for rel, recorded in deps.items():
        digest = shapes.digest(root, rel)
        if digest is None:
            return False
        if digest == recorded.get("sha256"):
            continue
        shape = shapes.shape(root, rel)
        if shape is None or shape.skeleton != recorded["skeleton"]:
            return False
        functions = shape.functions
        for name, body in recorded["functions"].items():
            if name not in functions or functions[name][2] != body:
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
    """The project's cache file. `reads`: reuse what it holds (--no-cache: nothing, though what
    it holds is kept when it is saved); `writes`: save this run's entries (--no-cache-write:
    the file is left as it was)."""

    def __init__(self, root: Path, folder: Path | None = None, *, reads: bool = True, writes: bool = True):
        # Named by the project folder's name, not its full path: a cache restored on a fresh CI
        # runner, or a checkout elsewhere, still finds it. Sharing is safe, since every key is
        # relative to the project and a verdict is reused only when its whole key matches.
        project = hashlib.sha256(f"project:{root.resolve().name}".encode()).hexdigest()[:16]
        self.path = cache_base(folder) / project / "verdicts.json"
        self.root = root
        self.reads, self.writes = reads, writes
        try:
            self.entries: dict[str, Any] = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.entries = {}
        self._checked: dict[str, tuple[dict[str, Any], bool]] = {}  # name -> (entry, deps hold)
        self.shapes = Shapes()  # this run's reads of the dependency files, shared by every entry
        self.mutants = MutantMemo(self.entries, environment_key, reads=reads)  # kept in the same file

    @staticmethod
    def static_key(fingerprint: dict[str, Any], diff: str, tests_digest: str, seed: int | None = None) -> str:
        # The seed too: a randomized suite's verdict holds for the draws it made (docs/randomized.md).
        key = {"entry": fingerprint, "diff": diff, "tests": tests_digest, "env": environment_key()}
        return _digest({**key, "seed": seed} if seed is not None else key)

    def lookup(self, name: str, static_key: str) -> dict[str, Any] | None:
        entry = self.entries.get(name) if self.reads else None
        if not entry or entry.get("static_key") != static_key:
            return None
        # The gate asks twice per mutation (does anything run? then, its verdict), and each
        # answer re-reads every file the verdict depends on: once per entry is enough.
        checked = self._checked.get(name)
        if checked is None or checked[0] is not entry:
            holds = dependencies_still_hold(self.root, entry.get("deps", {}), self.shapes)
            checked = self._checked[name] = (entry, holds)
        return entry["verdict"] if checked[1] else None

    def store(self, name: str, static_key: str, deps: dict[str, Any], verdict: dict[str, Any]) -> None:
        self.entries[name] = {"static_key": static_key, "deps": deps, "verdict": verdict}

    def save(self) -> None:
        """Write atomically: a temporary file of this writer's own, then os.replace.

        Several gates may save the same project's cache at once (CI jobs, a pre-push run
        beside an editor's): a shared temporary name let one writer rename another's file
        away mid-write (FileNotFoundError). Readers see the old file or the new one, never
        half of one; the last writer wins, which only costs a later cache miss.
        """
        if not self.writes:
            return
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
