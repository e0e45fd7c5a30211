"""What `killmap init` reads from a project that has never met killmap.

The layout (`src/` or flat: `[gate] paths`) and pytest's test paths (`testpaths` in
pytest.ini, pyproject.toml, tox.ini or setup.cfg, in pytest's order; else `tests/` or
`test/`: `[gate] tests`); the package (the one the project is named after, else the
largest, passing over one with nothing to aim at); the function to aim at (among the public
functions and methods that neither the package nor its tests (nor the helper modules they
import) run while they are imported, directly or through a function they call, the
one the tests call directly that branches most; else the first of the largest module); and a
guess at the test that guards it.
"""

from __future__ import annotations

import ast
import configparser
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
NOT_MODULES = {"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "manage.py"}


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
    runs_at_import: bool = False  # every candidate runs at import or collection: this one too


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


def detect(root: Path, package: str | None = None) -> Plan:
    base, paths, paths_reason = _layout(root)
    candidates = _packages(base)
    seen = sorted(candidates)
    if package is not None:
        chosen, files = _aimed_package(root, base, package, seen)
        candidates = {**candidates, chosen: files}
    elif not candidates:
        raise GateError(
            f"no Python package or module found under {base.relative_to(root).as_posix() or '.'}"
            ": killmap init needs code to aim at",
            file="pyproject.toml",
        )
    else:
        chosen = None
    tests, tests_reason = _test_paths(root)
    # The package the project is named after first, then the largest: but one with nothing
    # to aim at (attrs' `attrs`, a shim re-exporting `attr`) gives way to the next.
    named = _project_name(root)
    order = [chosen] if chosen else sorted(candidates, key=lambda n: (n != named, -_size(candidates[n]), n))
    test_modules = _parsed_trees(root, _test_files(root, tests, conftests=True))  # read once, used twice
    test_trees = [tree for _, tree in test_modules]
    helpers = _imported_modules(root, [root / rel for rel, _ in test_modules])
    for chosen in order:
        aimed = _target(root, candidates[chosen], test_trees, helpers)
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
    kills, kills_reason = _guess_kills(test_modules, tests, function.split(".")[-1])
    plan = Plan(chosen, paths, paths_reason, tests, tests_reason, module, function, kills, kills_reason, source, node)
    plan.considered = considered
    plan.runs_at_import = runs_at_import
    plan.seen = seen
    top = chosen.split(".")[0]
    plan.inside = _inside(base / top, top) if (base / top).is_dir() else []
    return plan


def _aimed_package(root: Path, base: Path, package: str, seen: list[str]) -> tuple[str, list[Path]]:
    """`--package` as a dotted name (app.routing), a folder (src/app/routing) or a file
    (src/app/routing/matcher.py): its dotted name and its source files."""
    where = base.relative_to(root).as_posix() or "."
    if "/" in package or "\\" in package or package.endswith(".py"):
        given = Path(package)
        path = given if given.is_absolute() else root / given
        if not path.exists() and not given.is_absolute():
            path = base / given  # app/routing, written from inside the source folder
        try:
            parts = path.resolve().relative_to(base.resolve()).parts
        except ValueError:
            parts = ()
        # A test folder or module is not code to aim at, even in a flat layout.
        inner = base.joinpath(*parts, *(() if path.is_file() else ("x.py",)))
        source = bool(parts) and parts[0] not in NOT_PACKAGES and _is_source(inner, base)
        if not path.exists() or not source or not all(p.removesuffix(".py").isidentifier() for p in parts):
            raise GateError(f"{package!r} is not a package folder or module file under {where}", field="--package")
        dotted = ".".join(parts).removesuffix(".py")
    else:
        dotted = package
        names = package.split(".")
        path = base.joinpath(*names)
        if not all(n.isidentifier() for n in names) or not path.is_dir():
            path = path.with_name(names[-1] + ".py")
    files = (
        [path]
        if path.is_file() and path.suffix == ".py"
        else sorted(p for p in path.rglob("*.py") if _is_source(p, path))
        if path.is_dir()
        else []
    )
    if not files:
        raise GateError(
            f"no package or module {package!r} under {where} (seen: {', '.join(seen) or 'none'}; "
            "give a dotted name, a folder or a .py file)",
            field="--package",
        )
    return dotted, files


def _inside(folder: Path, dotted: str) -> list[str]:
    """The subpackages and modules directly inside a package, dotted: where else init could aim."""
    found = []
    for entry in sorted(folder.iterdir()):
        name = entry.name.removesuffix(".py")
        if entry.is_dir() and (entry / "__init__.py").is_file() and _is_source(entry / "x.py", folder):
            found.append(f"{dotted}.{entry.name}")
        elif entry.is_file() and entry.suffix == ".py" and name.isidentifier() and not name.startswith("__"):
            if _is_source(entry, folder):
                found.append(f"{dotted}.{name}")
    return found


def _layout(root: Path) -> tuple[Path, list[str], str]:
    src = root / "src"
    if src.is_dir() and _packages(src):
        return src, ["src"], "src layout"
    return root, ["."], "flat layout: packages at the project root"


def _packages(base: Path) -> dict[str, list[Path]]:
    """Importable packages (with their .py files) and single modules directly under base."""
    found: dict[str, list[Path]] = {}
    for entry in sorted(base.iterdir()):
        name = entry.name
        if entry.is_dir() and (entry / "__init__.py").is_file() and name.isidentifier() and name not in NOT_PACKAGES:
            found[name] = sorted(p for p in entry.rglob("*.py") if _is_source(p, entry))
        elif (
            entry.is_file()
            and name.endswith(".py")
            and name[:-3].isidentifier()
            and name not in NOT_MODULES
            and not name.startswith("test_")
        ):
            found[name[:-3]] = [entry]
    return found


def _is_source(path: Path, package: Path) -> bool:
    parts = path.relative_to(package).parts
    return not (
        any(p in NOT_PACKAGES or p.startswith(".") for p in parts[:-1])
        or parts[-1].startswith("test_")
        or parts[-1].endswith("_test.py")
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


def _test_paths(root: Path) -> tuple[list[str], str]:
    """pytest's own order of configuration files; the first that configures pytest decides."""

    def ini(file: str, section: str) -> list[str] | None:
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
        return parser.get(section, "testpaths", fallback="").split()

    sources: list[tuple[str, list[str] | None]] = [("pytest.ini [pytest]", ini("pytest.ini", "pytest"))]
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
        options = data.get("tool", {}).get("pytest", {}).get("ini_options")
    except (OSError, tomllib.TOMLDecodeError):
        options = None
    if isinstance(options, dict):
        value = options.get("testpaths", [])
        sources.append(
            (
                "pyproject.toml [tool.pytest.ini_options]",
                value.split() if isinstance(value, str) else [str(v) for v in value],
            )
        )
    sources += [
        ("tox.ini [pytest]", ini("tox.ini", "pytest")),
        ("setup.cfg [tool:pytest]", ini("setup.cfg", "tool:pytest")),
    ]
    for where, paths in sources:
        if paths is None:
            continue
        existing = [p.rstrip("/") for p in paths if (root / p).exists()]
        if existing:
            return existing, f"testpaths in {where}"
        break  # pytest reads only the first configuration file it finds
    for folder in ("tests", "test"):
        if (root / folder).is_dir():
            return [folder], f"the {folder}/ folder"
    return ["."], "no testpaths and no tests/ folder: the whole project"


def _test_files(root: Path, tests: list[str], *, conftests: bool) -> list[Path]:
    """The test modules under the test paths (and their conftests, if asked), in order."""
    found = []
    for folder in tests:
        base = root / folder
        files = [base] if base.is_file() else sorted(base.rglob("*.py")) if base.is_dir() else []
        for path in files:
            if not (
                path.name.startswith("test_")
                or path.name.endswith("_test.py")
                or conftests
                and path.name == "conftest.py"
            ):
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
    root: Path, files: list[Path], test_trees: Sequence[ast.Module] = (), helpers: Sequence[ast.Module] = ()
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
    callers = _test_callers(test_trees)
    for avoid in (at_import, frozenset()):
        found = [
            (Candidate(rel, name, callers.get(node.name, 0), _branches(node)), source, node)
            for rel, name, source, node in _public_callables(parsed)
            if node.name not in avoid
        ]
        if found:
            # sorted() is stable: a tie keeps the old order, functions first, largest module first.
            found.sort(key=lambda f: (-f[0].score, not f[0].callers, not f[0].branches))
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


def _guess_kills(test_modules: list[tuple[str, ast.Module]], tests: list[str], name: str) -> tuple[str, str]:
    """The first test that names the function; else the first test at all. A guess either way:
    the first `killmap run` says what really turns red. `test_modules`: the parsed test files
    (conftests hold no tests)."""
    first = None
    for rel, tree in test_modules:
        if rel.rsplit("/", 1)[-1] == "conftest.py":
            continue
        for test_id, node in _tests_in(rel, tree):
            first = first or test_id
            if any(
                isinstance(n, ast.Name) and n.id == name or isinstance(n, ast.Attribute) and n.attr == name
                for n in ast.walk(node)
            ):
                return test_id, f"the first test that names {name}"
    if first:
        return first, f"no test names {name}; the first test found"
    return f"{tests[0].rstrip('/')}/test_{name}.py::test_{name}", "no test found: write this one"


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
