"""What `killmap init` reads from a project that has never met killmap.

The layout (`[gate] paths`): `src/` (its namespace packages too: `src/acme/orders` is
acme.orders), else packages at the root, else a workspace's members (uv's declared ones,
else the projects found below a root with no code of its own), each member's source
folder. pytest's test paths (`[gate] tests`): `testpaths` in pytest.ini, pyproject.toml,
tox.ini or setup.cfg, in pytest's order; else each workspace member's own; else the
`tests/` or `test/` folder and the tests the packages keep inside them (`src/pkg/test/`),
with a package whole when the configuration runs doctests (`--doctest-modules`) and its
modules hold examples; a subpackage aimed at with `--package` keeps its own tests. The
package (the one the project is named after, else the largest, passing over one with
nothing to aim at); the function to aim at (among the public functions and methods that
neither the package nor its tests (nor the helper modules they import) run while they are
imported, directly or through a function they call, the one the tests call directly that
branches most; else the first of the largest module); and a guess at the test that
guards it: its own doctest when those run, else one of the package's own test modules.
"""

from __future__ import annotations

import ast
import configparser
import fnmatch
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeGuard

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from killmap.catalog.workspace import Member, declared_members, members
from killmap.errors import GateError

NOT_PACKAGES = {
    "tests",
    "test",
    "testing",
    "docs",
    "doc",
    "examples",
    "example",
    "benchmarks",
    "scripts",
    "tools",
    "build",
    "dist",
    "mutations",
    "reports",
    "site-packages",
}
NOT_MODULES = {
    "setup.py",
    "conftest.py",
    "noxfile.py",
    "fabfile.py",
    "manage.py",
    "versioneer.py",
    # Build hooks beside the package (bracex's hatch_build.py was listed as a package).
    "hatch_build.py",
    "pdm_build.py",
}
# A package's version and metadata: what a starter aims at last (bracex's __meta__.py holds a
# version parser its tests call, which outscored the brace expander the package is for).
METADATA_MODULES = {"__meta__.py", "__about__.py", "__version__.py", "_version.py", "version.py", "_meta.py"}


@dataclass
class Plan:
    package: str
    paths: list[str]
    paths_reason: str
    tests: list[str]
    tests_reason: str
    module: str  # relative path of the module aimed at
    function: str  # qualified name inside it
    kills: str  # the live example's test id (a guess, said so)
    kills_reason: str
    source: str = ""
    node: ast.AST | None = None
    examples: list[tuple[str, str, dict[str, object], bool]] = field(default_factory=list)
    considered: list[Candidate] = field(default_factory=list)  # the best three, the chosen first
    seen: list[str] = field(default_factory=list)  # the packages and modules init found at the top
    inside: list[str] = field(default_factory=list)  # the aimed package's own subpackages and modules
    top: str = ""  # the package `inside` lists: a namespace package's is dotted (acme.orders)
    runs_at_import: bool = False  # every candidate runs at import or collection: this one too
    passed_over: list[str] = field(default_factory=list)  # better-scored targets no operator applies to cleanly


CALLERS_CAP = 3  # past a few direct callers, being called everywhere (a bytes helper) is no merit
BRANCHES = (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.match_case, ast.comprehension)


@dataclass(frozen=True)
class Candidate:
    """A function init could aim at, and what speaks for it."""

    module: str
    function: str  # qualified name inside the module
    callers: int  # test functions that call it by name
    branches: int  # if, match case, loop, try, and/or, conditional expression, comprehension

    @property
    def score(self) -> int:
        # Both count: a test that calls it can see a mutant of it, and a branch is a decision to get wrong.
        return self.branches * min(self.callers, CALLERS_CAP)

    def reason(self) -> str:
        tests = f"{self.callers} test{'' if self.callers == 1 else 's'}"
        branches = f"{self.branches} branch{'' if self.branches == 1 else 'es'}"
        return f"called directly by {tests}, {branches}: score {self.score}"


def choice_reason(considered: Sequence[Candidate]) -> str:
    """Why the first of `considered` was chosen, in a clause."""
    best = considered[0]
    if best.score:
        return f"the highest score, branches times direct test callers (counted up to {CALLERS_CAP})"
    if best.callers:
        return "the tests call it directly (none they call branches)"
    return "no test calls a branching function directly: the first public one of the largest module"


def detect(root: Path, package: str | None = None, skip: frozenset[str] = frozenset()) -> Plan:
    """What init aims at; `skip`: targets (`module::function`) it found no clean operator for."""
    layout = _layout(root)
    names = test_names(root)
    # A module pytest collects as tests (jsonpointer's tests.py, under python_files) is no code to aim at.
    candidates = {
        name: files
        for name, files in _candidates(root, layout, names).items()
        if not (len(files) == 1 and (names.hold(files[0].name) or _a_test_module(root, files[0])))
    }
    seen = sorted(candidates)
    aimed_at = None
    if package is not None:
        chosen, files, aimed_at = _aimed_package(root, layout.bases, package, seen, names)
        candidates = {**candidates, chosen: files}
    elif not candidates:
        where = ", ".join(b.relative_to(root).as_posix() or "." for b in layout.bases)
        raise GateError(
            f"no Python package or module found under {where}: killmap init needs code to aim at", file="pyproject.toml"
        )
    else:
        chosen = None
    doctests = _doctest_option(root)
    tests, tests_reason = _aimed_tests(root, layout, aimed_at, doctests, names) or _test_paths(
        root, layout, doctests, names
    )
    tests, tests_reason = _with_doctest_globs(root, tests, tests_reason)
    # The package the project is named after first, then the largest: but one with nothing
    # to aim at (attrs' `attrs`, a shim re-exporting `attr`) gives way to the next.
    named = _project_name(root)
    order = [chosen] if chosen else sorted(candidates, key=lambda n: (n != named, -_size(candidates[n]), n))
    test_modules = _parsed_trees(root, _test_files(root, tests, conftests=True, names=names))  # read once
    test_trees = [tree for _, tree in test_modules]
    helpers = _imported_modules(root, [root / rel for rel, _ in test_modules])
    for chosen in order:
        aimed = _target(root, candidates[chosen], test_trees, helpers, skip)
        if aimed is not None:
            break
    else:
        others = sorted(set(candidates) - set(order))
        raise GateError(
            f"no public function or method in {'package' if len(order) == 1 else 'any package'} "
            f"{', '.join(map(repr, order))} to aim a mutation at"
            + (f" (the others: {', '.join(others)})" if others else ""),
            field="--package",
        )
    module, function, source, node, considered, runs_at_import = aimed
    top = next((n for n in seen if chosen == n or chosen.startswith(n + ".")), chosen)
    folder = _place(root, layout, top)
    kills, kills_reason = _doctest_kills(root, module, function, node, tests, doctests) or _guess_kills(
        test_modules, tests, function, _Imports(top, _relative(root, folder)), module
    )
    plan = Plan(chosen, layout.paths, layout.reason, tests, tests_reason, module, function, kills, kills_reason)
    plan.source, plan.node = source, node
    plan.considered = considered
    plan.runs_at_import = runs_at_import
    plan.seen = seen
    plan.inside = _inside(folder, top, names) if folder is not None and folder.is_dir() else []
    plan.top = top
    return plan


def _relative(root: Path, place: Path | None) -> str:
    return place.relative_to(root).as_posix() if place is not None and place.is_dir() else ""


def _candidates(root: Path, layout: Layout, names: TestNames) -> dict[str, list[Path]]:
    """Every source folder's packages and modules, dotted; the first folder to hold a name keeps it."""
    found: dict[str, list[Path]] = {}
    for base in layout.bases:
        for name, files in _packages(base, namespaces=base != root and base.name == "src", names=names).items():
            found.setdefault(name, files)
    return found


def _place(root: Path, layout: Layout, dotted: str) -> Path | None:
    """The folder (or module file) of a dotted name, in the first source folder that holds it."""
    for base in layout.bases:
        where = base.joinpath(*dotted.split("."))
        if where.is_dir():
            return where
        if where.with_name(where.name + ".py").is_file():
            return where.with_name(where.name + ".py")
    return None


def _aimed_package(
    root: Path, bases: tuple[Path, ...], package: str, seen: list[str], names: TestNames
) -> tuple[str, list[Path], Path]:
    """`--package` as a dotted name (app.routing), a folder (src/app/routing) or a file
    (src/app/routing/matcher.py), in any of the source folders: its dotted name, its source
    files, and its folder or file."""
    where = ", ".join(base.relative_to(root).as_posix() or "." for base in bases)
    if "/" in package or "\\" in package or package.endswith(".py"):
        dotted, path = _aimed_path(root, bases, package, where, names)
    else:
        dotted = package
        parts = package.split(".")
        valid = all(n.isidentifier() for n in parts)
        tried = [base.joinpath(*parts) for base in bases] if valid else [bases[0] / package]
        path = next((p for p in tried if p.is_dir()), None) or next(
            (p.with_name(parts[-1] + ".py") for p in tried if p.with_name(parts[-1] + ".py").is_file()),
            tried[0].with_name(parts[-1] + ".py"),
        )
    files = (
        [path]
        if path.is_file() and path.suffix == ".py"
        else sorted(p for p in path.rglob("*.py") if _is_source(p, path, names))
        if path.is_dir()
        else []
    )
    if not files:
        raise GateError(
            f"no package or module {package!r} under {where} (seen: {', '.join(seen) or 'none'}; "
            "give a dotted name, a folder or a .py file)",
            field="--package",
        )
    return dotted, files, path


def _aimed_path(root: Path, bases: tuple[Path, ...], package: str, where: str, names: TestNames) -> tuple[str, Path]:
    """A folder or .py file given to --package: its dotted name below the source folder that holds it."""
    given = Path(package)
    for base in sorted(bases, key=lambda b: -len(b.parts)):  # a member's src/ before the workspace root
        path = given if given.is_absolute() else root / given
        if not path.exists() and not given.is_absolute():
            path = base / given  # app/routing, written from inside the source folder
        try:
            parts = path.resolve().relative_to(base.resolve()).parts
        except ValueError:
            continue
        # A test folder or module is not code to aim at, even in a flat layout.
        inner = base.joinpath(*parts, *(() if path.is_file() else ("x.py",)))
        source = bool(parts) and parts[0] not in NOT_PACKAGES and _is_source(inner, base, names)
        if path.exists() and source and all(p.removesuffix(".py").isidentifier() for p in parts):
            return ".".join(parts).removesuffix(".py"), path
    raise GateError(f"{package!r} is not a package folder or module file under {where}", field="--package")


def _inside(folder: Path, dotted: str, names: TestNames) -> list[str]:
    """The subpackages and modules directly inside a package, dotted: where else init could aim.
    Only those with a public function or method: init refuses the others (toolz.compatibility,
    which only re-exports, was offered as the place to aim at next)."""
    found = []
    for entry in sorted(folder.iterdir()):
        name = entry.name.removesuffix(".py")
        if entry.is_dir() and (entry / "__init__.py").is_file() and _is_source(entry / "x.py", folder, names):
            files = [p for p in entry.rglob("*.py") if _is_source(p, entry, names)]
            if any(_has_public_callable(p) for p in files):
                found.append(f"{dotted}.{entry.name}")
        elif entry.is_file() and entry.suffix == ".py" and name.isidentifier() and not name.startswith("__"):
            if _is_source(entry, folder, names) and _has_public_callable(entry):
                found.append(f"{dotted}.{name}")
    return found


def _has_public_callable(path: Path) -> bool:
    """Whether the module defines a public function, or a public method of a public class."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return False
    return next(_public_callables([("", "", tree)]), None) is not None


@dataclass(frozen=True)
class Layout:
    """Where the project's packages are imported from: the folders (`bases`) and, relative
    to the root, the `[gate] paths` that put them on sys.path."""

    bases: tuple[Path, ...]
    paths: list[str]
    reason: str
    members: tuple[Member, ...] = ()  # a workspace's members, when the root is one


def _layout(root: Path) -> Layout:
    """`src/` (its namespace packages too), else packages at the root, else a workspace's
    members: uv's declared ones always, else the projects found below a root with no code."""
    src = root / "src"
    own = None
    if src.is_dir() and _packages(src, namespaces=True):
        own = Layout((src,), ["src"], "src layout")
    elif _packages(root):
        own = Layout((root,), ["."], "flat layout: packages at the project root")
    found = members(root) if own is None or declared_members(root) else []
    sources = [m for m in found if _packages(root / m.source, namespaces=m.source.endswith("src"))]
    if not sources:
        return own or Layout((root,), ["."], "flat layout: packages at the project root")
    bases = (own.bases if own else ()) + tuple(root / m.source for m in sources)
    paths = (own.paths if own else []) + [m.source for m in sources]
    folders = ", ".join(m.folder for m in sources)
    return Layout(bases, paths, f"the workspace members' source folders ({folders})", tuple(sources))


def _packages(
    base: Path, *, namespaces: bool = False, prefix: str = "", depth: int = 3, names: TestNames | None = None
) -> dict[str, list[Path]]:
    """Importable packages (with their .py files) and single modules directly under base,
    dotted. `namespaces`: a folder without `__init__.py` is a namespace package (PEP 420),
    and the packages inside it count (`acme/pricing` as acme.pricing): only under `src/`,
    where every folder is code; at a project's root most such folders are not. `names`: what
    pytest collects as test modules (pytest's default when not given)."""
    names = names or TestNames()
    found: dict[str, list[Path]] = {}
    for entry in sorted(base.iterdir()):
        name = entry.name
        if entry.is_dir() and name.isidentifier() and name not in NOT_PACKAGES:
            if (entry / "__init__.py").is_file():
                found[prefix + name] = sorted(p for p in entry.rglob("*.py") if _is_source(p, entry, names))
            elif namespaces and depth > 1:
                found.update(_packages(entry, namespaces=True, prefix=f"{prefix}{name}.", depth=depth - 1, names=names))
        elif (
            entry.is_file()
            and name.endswith(".py")
            and name[:-3].isidentifier()
            and name not in NOT_MODULES
            and not names.hold(name)
            and not (prefix and name == "__init__.py")
        ):
            found[prefix + name[:-3]] = [entry]
    return found


def _is_source(path: Path, package: Path, names: TestNames) -> bool:
    parts = path.relative_to(package).parts
    return not (
        any(p in NOT_PACKAGES or p.startswith(".") for p in parts[:-1])
        or names.hold(parts[-1])
        or parts[-1] == "conftest.py"
    )


def _size(files: list[Path]) -> int:
    return sum(p.stat().st_size for p in files)


def _project_name(root: Path) -> str | None:
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return None
    name = data.get("project", {}).get("name")
    return re.sub(r"[-.]+", "_", name).lower() if isinstance(name, str) else None


TEST_FOLDERS = ("tests", "test", "testing")


def _pytest_config(root: Path) -> tuple[str, list[str], str, list[str]] | None:
    """The first file that configures pytest, in pytest's own order (pytest.ini,
    pyproject.toml, tox.ini, setup.cfg): where, its testpaths, its addopts and its
    python_files (the test modules' name patterns; empty when it keeps pytest's)."""

    def ini(file: str, section: str) -> tuple[str, list[str], str, list[str]] | None:
        path = root / file
        if not path.is_file():
            return None
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(path, encoding="utf-8")
        except configparser.Error:
            return None
        if not parser.has_section(section):
            return None
        return (
            f"{file} [{section}]",
            parser.get(section, "testpaths", fallback="").split(),
            parser.get(section, "addopts", fallback=""),
            parser.get(section, "python_files", fallback="").split(),
        )

    found = ini("pytest.ini", "pytest")
    if found:
        return found
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
        options = data.get("tool", {}).get("pytest", {}).get("ini_options")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        options = None
    if isinstance(options, dict):
        paths, addopts = options.get("testpaths", []), options.get("addopts", "")
        patterns = options.get("python_files", [])
        return (
            "pyproject.toml [tool.pytest.ini_options]",
            paths.split() if isinstance(paths, str) else [str(v) for v in paths],
            addopts if isinstance(addopts, str) else " ".join(map(str, addopts)),
            patterns.split() if isinstance(patterns, str) else [str(v) for v in patterns],
        )
    return ini("tox.ini", "pytest") or ini("setup.cfg", "tool:pytest")


def _with_doctest_globs(root: Path, tests: list[str], reason: str) -> tuple[list[str], str]:
    """The tests, and the files beside the configuration its `--doctest-glob` runs (intervaltree:
    plain pytest ran README.md's examples, and the gate init wrote left them out)."""
    globbed, where = _doctest_glob_files(root)
    globbed = [file for file in globbed if file not in tests and "." not in tests]
    if not globbed:
        return tests, reason
    return [*tests, *globbed], f"{reason}; and {', '.join(globbed)}, whose examples --doctest-glob in {where} runs"


def _doctest_glob_files(root: Path) -> tuple[list[str], str]:
    """The files beside the configuration that its `--doctest-glob` runs as doctests, and the
    configuration's name."""
    config = _pytest_config(root)
    if not config:
        return [], ""
    args = config[2].split()
    patterns = [a.split("=", 1)[1] for a in args if a.startswith("--doctest-glob=")]
    patterns += [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--doctest-glob"]
    if not patterns:
        return [], ""
    files = sorted(p.name for p in root.iterdir() if p.is_file() and any(fnmatch.fnmatch(p.name, g) for g in patterns))
    return files, config[0]


def _doctest_option(root: Path) -> str:
    """Where the project's pytest configuration turns on `--doctest-modules`, or ""."""
    config = _pytest_config(root)
    return f"--doctest-modules in {config[0]}" if config and "--doctest-modules" in config[2].split() else ""


def _test_paths(root: Path, layout: Layout, doctests: str, names: TestNames) -> tuple[list[str], str]:
    """The whole project's tests, as plain pytest at the root finds them: the configuration's
    testpaths; else each workspace member's own; else the tests/ (or test/) folder and the
    tests inside the packages (with `doctests`, the packages whose docstrings hold examples,
    whole); else the whole project."""
    config = _pytest_config(root)
    existing = [p.rstrip("/") for p in (config[1] if config else []) if (root / p).exists()]
    if config and existing:
        return existing, f"testpaths in {config[0]}"
    if layout.members:
        found = []
        for member in layout.members:
            inner = root / member.folder
            tests, _ = _test_paths(inner, _layout(inner), _doctest_option(inner), test_names(inner))
            found += [f"{member.folder}/{t}".removesuffix("/.") for t in tests if t != "." or len(layout.members) == 1]
        if found:
            return found, "each workspace member's own tests"
    outside = next((f for f in ("tests", "test") if (root / f).is_dir()), None)
    inside: list[str] = []
    for base in layout.bases:
        for name in _packages(base, namespaces=base != root and base.name == "src", names=names):
            place = _place(root, layout, name)
            if place is not None:
                inside += _tests_within(root, place, doctests, names)
    if outside and not inside:
        unnamed = _unnamed_test_modules(root / outside, names)
        if unnamed:
            return [f.relative_to(root).as_posix() for f in unnamed], (
                f"the modules of {outside}/ that define tests: python_files names none of them, and "
                "pytest collects a module named on its command line all the same"
            )
        return [outside], f"the {outside}/ folder"
    loose = _root_test_modules(root)
    if not outside and not inside and loose:
        names_said = ", ".join(p.name for p in loose)
        return [p.name for p in loose], f"the test module{'s' if len(loose) > 1 else ''} at the root ({names_said})"
    if inside:
        said = f"the {outside}/ folder, and " if outside else ""
        doctested = doctests and any(_has_doctests(root / p, names) for p in inside)
        packages = "package" if len(inside) == 1 else "packages"  # one place per package
        what = f"tests and doctests inside the {packages} ({doctests})" if doctested else f"tests inside the {packages}"
        return ([outside] if outside else []) + inside, f"{said}the {what}"
    return ["."], "no testpaths and no tests/ folder: the whole project"


def _aimed_tests(
    root: Path, layout: Layout, aimed: Path | None, doctests: str, names: TestNames
) -> tuple[list[str], str] | None:
    """A subpackage (or a module of one) aimed at with --package keeps its own tests: the
    tests/ folder inside it, or the subpackage whole when the project runs doctests. None
    for a top-level package, or one with no tests of its own: the project's tests gate it."""
    if aimed is None:
        return None
    folder = aimed if aimed.is_dir() else aimed.parent
    tops = {_place(root, layout, n) for n in _candidates(root, layout, names)}
    if folder in layout.bases or folder in tops or not any(folder.is_relative_to(b) for b in layout.bases):
        return None
    own = _tests_within(root, folder, doctests, names)
    if not own:
        return None
    rel = folder.relative_to(root).as_posix()
    if own == [rel] and doctests:
        return own, f"the tests and doctests inside {rel} ({doctests})"
    return own, f"the tests inside {rel}"


def _tests_within(root: Path, place: Path, doctests: str, names: TestNames) -> list[str]:
    """Where a package keeps its own tests, relative to root: its folder whole when the
    project runs doctests and one of its modules has an example; else the one folder its
    test modules are in (`pkg/test`), or its folder when they are spread over several."""
    rel = place.relative_to(root).as_posix()
    if doctests and _has_doctests(place, names):
        return [rel]
    if not place.is_dir():
        return []
    found = set()
    for path in place.rglob("*.py"):
        inner = path.relative_to(place).parts
        if any(p.startswith(".") or p == "site-packages" for p in inner) or not names.hold(path.name):
            continue
        if not _defines_a_test(path):
            continue  # a helper named like tests (Python-Markdown's test_tools.py): pytest finds none
        folders = [i for i, part in enumerate(inner[:-1]) if part in TEST_FOLDERS]
        found.add(place.joinpath(*inner[: folders[0] + 1]) if folders else path.parent)
    if len(found) > 1:
        return [rel]
    return [f.relative_to(root).as_posix() for f in found]


ROOT_TEST_MODULES = ("tests.py", "test.py")


def _root_test_modules(root: Path) -> list[Path]:
    """`tests.py` or `test.py` at the project's root that defines tests: a project that runs its
    suite as `python tests.py` (jsonpatch) keeps it there, outside pytest's default
    `python_files`, which collects a module it is given by name all the same."""
    return [root / name for name in ROOT_TEST_MODULES if (root / name).is_file() and _defines_a_test(root / name)]


def _unnamed_test_modules(folder: Path, names: TestNames) -> list[Path]:
    """The modules of a tests folder that define tests, where python_files names none of its
    modules: pytest would collect nothing there (decorator: `tests/test.py` and
    `tests/documentation.py`, and `tests = ["tests"]` collected no test). [] where it names any."""
    files = [f for f in sorted(folder.rglob("*.py")) if not any(p.startswith(".") for p in f.relative_to(folder).parts)]
    if any(names.hold(f.name) for f in files):
        return []
    return [f for f in files if f.name not in ("conftest.py", "__init__.py") and _defines_a_test(f)]


def _a_test_module(root: Path, path: Path) -> bool:
    """A module at the root named as tests are (`tests.py`, `test.py`, `ext_tests.py`) that
    defines tests: never code to aim at (jsonpatch: init aimed at a helper of `tests.py`)."""
    named = path.name in ROOT_TEST_MODULES or path.name.endswith("_tests.py")
    return path.parent == root and named and _defines_a_test(path)


def _defines_a_test(path: Path) -> bool:
    """Whether a module defines a function or method named as pytest collects tests (`test*`),
    or a unittest TestCase (jsonpatch's `ext_tests.py` makes its methods at run time); one
    that cannot be read or parsed is taken to."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError):
        return True
    return any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name.startswith("test")
        or isinstance(node, ast.ClassDef)
        and any((getattr(b, "attr", None) or getattr(b, "id", None)) == "TestCase" for b in node.bases)
        for node in ast.walk(tree)
    )


@dataclass(frozen=True)
class TestNames:
    """The file names pytest collects test modules from (`python_files`): a module so named
    is a test, wherever it lies (Django's `app/tests.py`), never code to aim at."""

    __test__ = False  # a class of killmap's own, named like a test: pytest leaves it alone
    patterns: tuple[str, ...] = ("test_*.py", "*_test.py")  # pytest's default

    def hold(self, name: str) -> bool:
        return any(fnmatch.fnmatch(name, pattern) for pattern in self.patterns)


def test_names(root: Path) -> TestNames:
    """The project's python_files, else pytest's default."""
    config = _pytest_config(root)
    return TestNames(tuple(config[3])) if config and config[3] else TestNames()


def _has_doctests(place: Path, names: TestNames) -> bool:
    """Whether any source module at `place` holds an interactive example (`>>>`)."""
    files = [place] if place.is_file() else sorted(place.rglob("*.py"))
    for path in files:
        try:
            if ">>>" in path.read_text(encoding="utf-8") and not names.hold(path.name):
                return True
        except (OSError, UnicodeDecodeError):
            continue
    return False


def _test_files(root: Path, tests: list[str], *, conftests: bool, names: TestNames | None = None) -> list[Path]:
    """The test modules under the test paths (and their conftests, if asked), in order:
    the modules `names` holds (pytest's python_files; its default when not given), and a
    test path that is a file itself, which pytest collects whatever its name."""
    names = names or TestNames()
    found = []
    for folder in tests:
        base = root / folder
        files = [base] if base.is_file() else sorted(base.rglob("*.py")) if base.is_dir() else []
        for path in files:
            if not (names.hold(path.name) or path == base or conftests and path.name == "conftest.py"):
                continue
            if any(
                part.startswith(".") or part in ("node_modules", "site-packages")
                for part in path.relative_to(root).parts
            ):
                continue
            found.append(path)
    return found


def _parsed_trees(root: Path, files: list[Path]) -> list[tuple[str, ast.Module]]:
    """(relative path, tree) of each file that parses, in order."""
    trees = []
    for path in files:
        try:
            trees.append((path.relative_to(root).as_posix(), ast.parse(path.read_text(encoding="utf-8"))))
        except (OSError, UnicodeDecodeError, SyntaxError):
            continue
    return trees


def _target(
    root: Path,
    files: list[Path],
    test_trees: Sequence[ast.Module] = (),
    helpers: Sequence[ast.Module] = (),
    skip: frozenset[str] = frozenset(),
) -> tuple[str, str, str, ast.AST, list[Candidate], bool] | None:
    """Of the public functions, then the public methods of public classes, that nothing runs
    at import: the one the tests call directly that branches most (Candidate.score), ties to
    the first of the largest module; the same again, import or not, when nothing else is
    public; None when the package has no public function or method at all. With it, the best
    three considered, and whether it runs at import after all. `helpers`: the modules the
    tests import at module level (tests/helpers.py), whose module-level code runs at collection."""
    ranked = sorted(files, key=lambda p: (-p.stat().st_size, p.as_posix()))
    parsed = []
    for path in ranked:
        try:
            source = path.read_text(encoding="utf-8")
            parsed.append((path.relative_to(root).as_posix(), source, ast.parse(source)))
        except (OSError, UnicodeDecodeError, SyntaxError):
            continue
    # A function run while the package or a test module is imported (a decorator, a call in
    # a class body or at module level: attrs' `attrib`, semver's `@deprecated`, jmespath's
    # `@signature`, attrs' tests calling `fields(C)` at module level) makes a poor first
    # mutation: its mutants run at import or collection, and most break it instead of
    # saying what the tests catch. It is aimed at only when nothing else is public.
    at_import = _run_at_import([tree for _, _, tree in parsed] + list(test_trees) + list(helpers))
    # The first public function of the largest module is a trivial helper as often as not
    # (bottle's `tob`): the tests' direct calls and the branches say where a mutant tells.
    callers = _Callers(test_trees, parsed)
    for avoid in (at_import, frozenset()):
        found = [
            (Candidate(rel, name, callers.of(name, rel), _branches(node)), source, node)
            for rel, name, source, node in _public_callables(parsed)
            if node.name not in avoid and f"{rel}::{name}" not in skip
        ]
        if found:
            # sorted() is stable: a tie keeps the old order, functions first, largest module first.
            found.sort(
                key=lambda f: (
                    f[0].module.rsplit("/", 1)[-1] in METADATA_MODULES,
                    -f[0].score,
                    not f[0].callers,
                    not f[0].branches,
                )
            )
            best, source, node = found[0]
            considered = [c for c, _, _ in found[:3]]
            return best.module, best.function, source, node, considered, node.name in at_import
    return None


def _public_callables(parsed: list[tuple[str, str, ast.Module]]):
    """(module, qualified name, source, node): every module's public functions, then the public
    methods of its public classes, the largest module first."""
    for rel, source, tree in parsed:
        for node in tree.body:
            if _public_function(node):
                yield rel, node.name, source, node
    for rel, source, tree in parsed:
        for cls in tree.body:
            if isinstance(cls, ast.ClassDef) and not cls.name.startswith("_"):
                for node in cls.body:
                    if _public_function(node):
                        yield rel, f"{cls.name}.{node.name}", source, node


class _Callers:
    """How many test functions call a function directly, by its name; a method, by its name in
    the test modules that name its class: croniter's tests call `croniter.expand`, and its
    `HashExpander.expand`, which no test names, read as called by 33 of them. A function whose
    name another module's function shares, in the test modules that import it from its own
    module or from a package that re-exports it from there: python-slugify's `_legacy.slugify`
    read as called by the 101 tests that call the public `slugify`."""

    def __init__(self, test_trees: Sequence[ast.Module], parsed: Sequence[tuple[str, str, ast.Module]] = ()):
        self._trees = test_trees
        self._all = _test_callers(test_trees)
        self._by_class: dict[str, dict[str, int]] = {}
        self._packages = frozenset(rel.rpartition("/")[0] for rel, _, _ in parsed if rel.endswith("/__init__.py"))
        self._modules = {self._dotted(rel): tree for rel, _, tree in parsed}
        defined: dict[str, list[str]] = {}
        for rel, _, tree in parsed:
            for node in tree.body:
                if _public_function(node):
                    defined.setdefault(node.name, []).append(self._dotted(rel))
        self._shared = {name for name, where in defined.items() if len(where) > 1}

    def _dotted(self, rel: str) -> str:
        """A module's file as the dotted name a test imports it by: its path below the
        nearest folder up that is no package (`src/`, `lib/`, the root), as a sys.path
        entry sees it (`lib/slugify/_legacy.py`: slugify._legacy; an __init__: the package)."""
        parts = rel.removesuffix(".py").split("/")
        below = len(parts) - 1
        while below > 0 and "/".join(parts[:below]) in self._packages:
            below -= 1
        dotted = ".".join(parts[below:])
        return dotted.removesuffix(".__init__")

    def of(self, qualified: str, rel: str = "") -> int:
        owner, _, name = qualified.rpartition(".")
        if not owner and name in self._shared and rel:
            module = self._dotted(rel)
            naming = [tree for tree in self._trees if module in self._origins(tree, name)]
            return _test_callers(naming).get(name, 0)
        if not owner:
            return self._all.get(name, 0)
        if owner not in self._by_class:
            naming = [tree for tree in self._trees if owner.rsplit(".", 1)[-1] in _names_in(tree)]
            self._by_class[owner] = _test_callers(naming)
        return self._by_class[owner].get(name, 0)

    def _origins(self, tree: ast.Module, name: str) -> set[str]:
        """The modules (dotted, as `_dotted` names them) whose `name` a test module imports
        with `from X import name`, or calls as `X.name(...)` after `import X` (dpath's tests:
        `dpath.new(...)`, counted by no test while `segments.new` shares the name): X itself,
        or where X's __init__ takes it from (`from .slugify import *`), one step."""
        found: set[str] = set()
        bound = {
            alias.asname or alias.name: alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        for node in ast.walk(tree):
            module = None
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                if any(alias.name == name and alias.asname is None for alias in node.names):
                    module = node.module
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name:
                module = bound.get(ast.unparse(node.func.value))
            if module:
                found.add(module)
                found.update(self._reexported(module, name))
        return found

    def _reexported(self, package: str, name: str) -> set[str]:
        init = self._modules.get(package)
        if init is None:
            return set()
        return {
            f"{package}.{node.module}"
            for node in init.body
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
            if any(alias.name in (name, "*") for alias in node.names)
        }


def _names_in(tree: ast.Module) -> set[str]:
    """Every name a module uses or imports, and every attribute it reads."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.rsplit(".", 1)[-1])
    return names


def _test_callers(test_trees: Sequence[ast.Module]) -> dict[str, int]:
    """For each name, how many test functions call it (`name(...)` or `x.name(...)`)."""
    counts: dict[str, int] = {}
    for tree in test_trees:
        for _, test in _tests_in("", tree):
            names = {_called_name(n) for n in ast.walk(test) if isinstance(n, ast.Call)}
            for name in filter(None, names):
                counts[name] = counts.get(name, 0) + 1
    return counts


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _branches(function: ast.AST) -> int:
    count = 0
    for node in ast.walk(function):
        if isinstance(node, ast.BoolOp):
            count += len(node.values) - 1
        elif isinstance(node, BRANCHES):
            count += 1
    return count


def _public_function(node: ast.AST) -> TypeGuard[ast.FunctionDef | ast.AsyncFunctionDef]:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_")


def _run_at_import(trees: list[ast.Module]) -> frozenset[str]:
    """Names the modules call or decorate with outside any function body: at import; then,
    by name, what the functions (and the constructors of the classes) so called call in
    turn, so `APP = build_app()` in a test module rules out what build_app() runs."""
    names: set[str] = set()

    def called(expression: ast.AST) -> None:
        names.update(filter(None, (_called_name(n) for n in ast.walk(expression) if isinstance(n, ast.Call))))

    def block(statements: list[ast.stmt]) -> None:
        for statement in statements:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for decorator in statement.decorator_list:
                    called(ast.Call(func=decorator, args=[], keywords=[]))  # `@name` runs name
                if isinstance(statement, ast.ClassDef):
                    for base in statement.bases + [k.value for k in statement.keywords]:
                        called(base)
                    block(statement.body)
                else:
                    for default in statement.args.defaults + [d for d in statement.args.kw_defaults if d]:
                        called(default)
            elif isinstance(statement, ast.If) and _runs_as_script(statement.test):
                block(statement.orelse)  # `if __name__ == "__main__": main()` runs no import
            elif isinstance(statement, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
                # Its own expressions run; its blocks are statements like any other, a def in
                # one defines, and its body runs at no import (xmltodict's tests define a test
                # under `if not IS_JYTHON:` in a class body: `parse` read as run at import).
                for name, value in ast.iter_fields(statement):
                    if name in ("body", "orelse", "finalbody"):
                        block(value)
                    elif name == "handlers":
                        for handler in value:
                            block(handler.body)
                    else:
                        for part in value if isinstance(value, list) else [value]:
                            if isinstance(part, ast.AST):
                                called(part)
            else:
                called(statement)

    for tree in trees:
        block(tree.body)
    calls = _calls_by_name(trees)
    pending = list(names)
    while pending:
        for name in calls.get(pending.pop(), ()):
            if name not in names:
                names.add(name)
                pending.append(name)
    return frozenset(names)


def _runs_as_script(test: ast.expr) -> bool:
    """`__name__ == "__main__"`, either way round: true when the module is run, never imported
    (tabulate's `_main()` there made every function it calls, `tabulate` first, read as
    run at import, and init aimed at a helper with no branch)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    named = any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides)
    return named and any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)


def _calls_by_name(trees: list[ast.Module]) -> dict[str, set[str]]:
    """For each function or method name (every definition of it, merged), the names its body
    calls; a class's name stands for its constructor (__init__, __new__, __post_init__)."""
    calls: dict[str, set[str]] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                owners = [node.name]
            elif isinstance(node, ast.ClassDef):
                owners = [node.name]
                node = ast.Module(
                    body=[m for m in node.body if getattr(m, "name", "") in ("__init__", "__new__", "__post_init__")],
                    type_ignores=[],
                )
            else:
                continue
            found = {_called_name(n) for n in ast.walk(node) if isinstance(n, ast.Call)}
            for owner in owners:
                calls.setdefault(owner, set()).update(filter(None, found))
    return calls


HELPERS_CAP = 500  # modules followed from the tests' imports: enough for any test suite's own helpers


def _imported_modules(root: Path, files: list[Path]) -> list[ast.Module]:
    """The project's own modules (tests/helpers.py, a support package) that the test modules
    and conftests import at module level, and that those import in turn: pytest runs their
    module-level code while it collects. Found where pytest's import modes would find them:
    beside the importing file, in any folder above it up to the project root, or relative."""
    tests = {path.resolve() for path in files}  # already read as test modules
    seen = set(tests)
    queue, trees = list(files), []
    while queue and len(seen) < HELPERS_CAP:
        path = queue.pop(0)
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        if path.resolve() not in tests:
            trees.append(tree)
        for found in _import_targets(root, path, tree):
            if found.resolve() not in seen:
                seen.add(found.resolve())
                queue.append(found)
    return trees


def _import_targets(root: Path, path: Path, tree: ast.Module):
    """The files under root that the module's module-level imports may load."""
    folders = [path.parent, *[f for f in path.parent.parents if f == root or root in f.parents]]
    for statement in _module_level(tree.body):
        names: list[tuple[list[str], list[str]]]
        if isinstance(statement, ast.Import):
            names, bases = [(a.name.split("."), []) for a in statement.names], folders
        elif isinstance(statement, ast.ImportFrom) and statement.level <= len(path.parents):
            module = statement.module.split(".") if statement.module else []
            names = [(module, [a.name for a in statement.names])]
            bases = [path.parents[statement.level - 1]] if statement.level else folders
        else:
            continue
        for parts, imported in names:
            # `from x import y`: y may be a module of package x, or a name in x.
            wheres = [folder.joinpath(*parts, *tail) for folder in bases for tail in [[], *([n] for n in imported)]]
            for where in wheres:
                for candidate in (where.with_name(where.name + ".py"), where / "__init__.py"):
                    inside = candidate.relative_to(root).parts if root in candidate.parents else ("..",)
                    if candidate.is_file() and not any(p.startswith(".") or p == "site-packages" for p in inside):
                        yield candidate


def _module_level(statements: list[ast.stmt]):
    """The statements that run at import: the module's own, and those inside its if and try
    blocks (`try: import x`), not inside functions or classes."""
    for statement in statements:
        yield statement
        if isinstance(statement, (ast.If, ast.Try)):
            yield from _module_level(statement.body + statement.orelse)
            if isinstance(statement, ast.Try):
                yield from _module_level(statement.finalbody + [s for h in statement.handlers for s in h.body])


@dataclass(frozen=True)
class _Imports:
    """What makes a test module one of the aimed package's own: it imports the package (or
    a module of it), or it lives inside the package's folder."""

    package: str  # dotted
    folder: str  # relative to the root, "" for a single module

    def module_names(self, tree: ast.Module) -> set[str]:
        """The names a test file binds to the package or a module of it (`import toolz`,
        `import toolz.itertoolz as tz`, `from toolz import itertoolz`): what `NAME.function`
        reaches the package's function through."""
        bound: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if self._ours(alias.name):
                        bound.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module and self._ours(node.module):
                bound.update(alias.asname or alias.name for alias in node.names)
        return bound

    def _ours(self, dotted: str) -> bool:
        return dotted == self.package or dotted.startswith(self.package + ".")

    def related(self, rel: str, tree: ast.Module) -> bool:
        if self.folder and rel.startswith(self.folder + "/"):
            return True
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            else:
                continue
            if any(n == self.package or n.startswith(self.package + ".") for n in names):
                return True
        return False


def _guess_kills(
    test_modules: list[tuple[str, ast.Module]], tests: list[str], function: str, imports: _Imports, module: str = ""
) -> tuple[str, str]:
    """The first test that names the function, among the modules that import its package
    (a method's name alone, `add`, is shared with any other library's tests); else the
    first test of those modules; else, when no module imports it, the first test that
    names it, else the first test at all. A guess either way: the first `killmap run` says
    what really turns red. `test_modules`: the parsed test files (conftests hold no tests).

    A module-level function is named by its bare name or through a module the test file
    imports from the package (`toolz.join`, `tz.join`); any other attribute of that name
    (`"\\n".join`, a str method) names it only where no test names it so. The test modules
    named after the function's `module` (`test_time.py` for `time.py`) are read first: a
    function of one name is often named by another module's tests too (humanize's
    `naturaldelta`, by its locale tests, which skip without translations)."""
    name = function.split(".")[-1]
    stem = module.rsplit("/", 1)[-1].removesuffix(".py")
    modules = sorted(
        (pair for pair in test_modules if pair[0].rsplit("/", 1)[-1] != "conftest.py"),
        key=lambda pair: not _named_after(pair[0], stem),
    )
    own = [(rel, tree) for rel, tree in modules if imports.related(rel, tree)]
    first, loosely = None, None
    for rel, tree in own or modules:
        aliases = None if "." in function else imports.module_names(tree)  # a method: any attribute
        for test_id, node in _tests_in(rel, tree):
            first = first or test_id
            naming = _naming(node, name, aliases)
            if naming == "by name":
                return test_id, f"the first test that names {name}"
            if naming and loosely is None:
                loosely = test_id
    if loosely:
        return loosely, f"the first test that names {name}, as an attribute of something else"
    if first and own:
        return first, f"no test names {name}; the first test of a module that imports {imports.package}"
    if first:
        return first, f"no test names {name}; the first test found"
    folder = tests[0].rstrip("/")
    if folder.endswith(".py"):  # a test module at the root: the one to write goes beside it
        folder = str(Path(folder).parent)
    return f"{folder}/test_{name}.py::test_{name}".removeprefix("./"), "no test found: write this one"


def _named_after(test_module: str, stem: str) -> bool:
    """Whether a test module's name is the module's own: test_time.py or time_test.py for time."""
    name = test_module.rsplit("/", 1)[-1].removesuffix(".py")
    return bool(stem) and name in (f"test_{stem}", f"{stem}_test")


def _naming(test: ast.AST, name: str, aliases: set[str] | None) -> str:
    """How a test names the function: "by name" (a bare name; an attribute of a module of the
    package; any attribute when `aliases` is None, for a method), "loosely" (an attribute of
    something else), or ""."""
    loosely = ""
    for n in ast.walk(test):
        if isinstance(n, ast.Name) and n.id == name:
            return "by name"
        if isinstance(n, ast.Attribute) and n.attr == name:
            if aliases is None or isinstance(n.value, ast.Name) and n.value.id in aliases:
                return "by name"
            loosely = "loosely"
    return loosely


def _doctest_kills(
    root: Path, module: str, function: str, node: ast.AST | None, tests: list[str], doctests: str
) -> tuple[str, str] | None:
    """The function's own doctest, when the project runs doctests and the test paths hold
    its module: pytest's id, `path.py::<module's dotted name>.<qualified name>`, the dotted
    name as pytest's default import mode reads it (up the folders with an `__init__.py`)."""
    if not doctests or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    docstring = ast.get_docstring(node, clean=False)
    if not docstring or ">>>" not in docstring:
        return None
    if not any(t == "." or module == t or module.startswith(t.rstrip("/") + "/") for t in tests):
        return None
    path = root / module
    names = [] if path.stem == "__init__" else [path.stem]
    folder = path.parent
    while folder != root and (folder / "__init__.py").is_file():
        names.insert(0, folder.name)
        folder = folder.parent
    return f"{module}::{'.'.join([*names, function])}", f"its own doctest ({doctests})"


def _tests_in(rel: str, tree: ast.Module):
    cases = _unittest_cases(tree)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            yield f"{rel}::{node.name}", node
        elif isinstance(node, ast.ClassDef) and (node.name.startswith("Test") or node.name in cases):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test"):
                    yield f"{rel}::{node.name}::{item.name}", item


def _unittest_cases(tree: ast.Module) -> set[str]:
    """The file's classes that derive from a `TestCase`, directly or through another class of
    the same file: pytest collects those whatever their name (more-itertools' `ChunkedTests`),
    so a guess that only looked at `Test*` classes missed every test of a unittest suite."""
    bases = {
        node.name: {
            b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in node.bases
        }
        for node in tree.body
        if isinstance(node, ast.ClassDef)
    }
    cases: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, parents in bases.items():
            if name not in cases and ("TestCase" in parents or parents & cases):
                cases.add(name)
                grew = True
    return cases
