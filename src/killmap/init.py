"""`killmap init`: a starter catalog, mutations/<package>.toml, written from the project.

It detects the layout (`src/` or flat: `[gate] paths`) and pytest's test paths
(`testpaths` in pytest.ini, pyproject.toml, tox.ini or setup.cfg, in pytest's order; else
`tests/` or `test/`: `[gate] tests`), picks the package (the one the project is named
after, else the largest) and aims at a real function: the first public function of the
package's largest module. It writes one live mutation, so the catalog loads and `killmap
check` passes, and one commented example per operator on the same function. Every example
is built here with the gate's own operators before it is written, so uncommenting one
gives a mutant that applies; an operator with no site in that function gets a template
saying so. It never overwrites a catalog (exit 2).
"""

from __future__ import annotations

import ast
import configparser
import json
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from killmap import __version__
from killmap.errors import GateError

NOT_PACKAGES = {"tests", "test", "testing", "docs", "doc", "examples", "example", "benchmarks",
                "scripts", "tools", "build", "dist", "mutations", "reports", "site-packages"}
NOT_MODULES = {"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "manage.py"}


@dataclass
class Plan:
    package: str
    paths: list[str]
    paths_reason: str
    tests: list[str]
    tests_reason: str
    module: str                          # relative path of the module aimed at
    function: str                        # qualified name inside it
    kills: str                           # the live example's test id (a guess, said so)
    kills_reason: str
    source: str = ""
    node: ast.AST | None = None
    examples: list[tuple[str, str, dict[str, object], bool]] = field(default_factory=list)


def main(root: Path, package: str | None = None) -> int:
    plan = detect(root, package)
    path = root / "mutations" / f"{plan.package}.toml"
    rel = path.relative_to(root).as_posix()
    if path.exists():
        raise GateError("already exists; killmap init never overwrites a catalog (edit it, or remove it "
                        "and run init again)", file=rel)
    text = render(root, plan)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    live = sum(1 for *_, ok in plan.examples if ok)
    print(f"wrote {rel}: [gate] tests = {plan.tests} ({plan.tests_reason}), paths = {plan.paths} "
          f"({plan.paths_reason})")
    print(f"  aimed at {plan.module}::{plan.function}; {live} of {len(plan.examples)} operator examples "
          f"apply there; kills guessed: {plan.kills} ({plan.kills_reason})")
    print("next: killmap check, then killmap run")
    return 0


# --- detection ---------------------------------------------------------------------------

def detect(root: Path, package: str | None = None) -> Plan:
    base, paths, paths_reason = _layout(root)
    candidates = _packages(base)
    if package is not None:
        if package not in candidates:
            raise GateError(f"no package or module {package!r} under {base.relative_to(root).as_posix() or '.'}",
                            field="--package")
        chosen = package
    elif not candidates:
        raise GateError(f"no Python package or module found under {base.relative_to(root).as_posix() or '.'}"
                        ": killmap init needs code to aim at", file="pyproject.toml")
    else:
        chosen = None
    tests, tests_reason = _test_paths(root)
    # The package the project is named after first, then the largest: but one with nothing
    # to aim at (attrs' `attrs`, a shim re-exporting `attr`) gives way to the next.
    named = _project_name(root)
    order = [chosen] if chosen else sorted(candidates, key=lambda n: (n != named, -_size(candidates[n]), n))
    for chosen in order:
        aimed = _target(root, candidates[chosen])
        if aimed is not None:
            break
    else:
        others = sorted(set(candidates) - set(order))
        raise GateError(f"no public function or method in {'package' if len(order) == 1 else 'any package'} "
                        f"{', '.join(map(repr, order))} to aim a mutation at"
                        + (f" (the others: {', '.join(others)})" if others else ""), field="--package")
    module, function, source, node = aimed
    kills, kills_reason = _guess_kills(root, tests, function.split(".")[-1])
    return Plan(chosen, paths, paths_reason, tests, tests_reason, module, function, kills, kills_reason,
                source, node)


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
        if entry.is_dir() and (entry / "__init__.py").is_file() and name.isidentifier() \
                and name not in NOT_PACKAGES:
            found[name] = sorted(p for p in entry.rglob("*.py") if _is_source(p, entry))
        elif entry.is_file() and name.endswith(".py") and name[:-3].isidentifier() \
                and name not in NOT_MODULES and not name.startswith("test_"):
            found[name[:-3]] = [entry]
    return found


def _is_source(path: Path, package: Path) -> bool:
    parts = path.relative_to(package).parts
    return not (any(p in NOT_PACKAGES or p.startswith(".") for p in parts[:-1])
                or parts[-1].startswith("test_") or parts[-1].endswith("_test.py")
                or parts[-1] == "conftest.py")


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
        sources.append(("pyproject.toml [tool.pytest.ini_options]",
                        value.split() if isinstance(value, str) else [str(v) for v in value]))
    sources += [("tox.ini [pytest]", ini("tox.ini", "pytest")),
                ("setup.cfg [tool:pytest]", ini("setup.cfg", "tool:pytest"))]
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


def _target(root: Path, files: list[Path]) -> tuple[str, str, str, ast.AST] | None:
    """The first public function of the largest module (then the next largest, and so on);
    a public method of a public class when no module has a public function; None when the
    package has neither."""
    ranked = sorted(files, key=lambda p: (-p.stat().st_size, p.as_posix()))
    parsed = []
    for path in ranked:
        try:
            source = path.read_text(encoding="utf-8")
            parsed.append((path, source, ast.parse(source)))
        except (OSError, UnicodeDecodeError, SyntaxError):
            continue
    for path, source, tree in parsed:
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                return path.relative_to(root).as_posix(), node.name, source, node
    for path, source, tree in parsed:
        for cls in tree.body:
            if isinstance(cls, ast.ClassDef) and not cls.name.startswith("_"):
                for node in cls.body:
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                        return path.relative_to(root).as_posix(), f"{cls.name}.{node.name}", source, node
    return None


def _guess_kills(root: Path, tests: list[str], name: str) -> tuple[str, str]:
    """The first test that names the function; else the first test at all. A guess either way:
    the first `killmap run` says what really turns red."""
    first = None
    for folder in tests:
        base = root / folder
        files = [base] if base.is_file() else sorted(base.rglob("*.py")) if base.is_dir() else []
        for path in files:
            if not (path.name.startswith("test_") or path.name.endswith("_test.py")):
                continue
            if any(part.startswith(".") or part in ("node_modules", "site-packages")
                   for part in path.relative_to(root).parts):
                continue
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, SyntaxError):
                continue
            rel = path.relative_to(root).as_posix()
            for test_id, node in _tests_in(rel, tree):
                first = first or test_id
                if any(isinstance(n, ast.Name) and n.id == name or isinstance(n, ast.Attribute) and n.attr == name
                       for n in ast.walk(node)):
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
    bases = {node.name: {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
                         for b in node.bases}
             for node in tree.body if isinstance(node, ast.ClassDef)}
    cases: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, parents in bases.items():
            if name not in cases and ("TestCase" in parents or parents & cases):
                cases.add(name)
                grew = True
    return cases

# --- the examples ------------------------------------------------------------------------

OPERATOR_NOTES = {
    "constant-return": "the function body becomes `return <value>` (docstring kept)",
    "negate": "the expression is inverted (x -> not (x))",
    "drop-operand": "the operand is removed from a boolean and/or",
    "delete-call": "the statement holding the call is removed",
    "stub-call": "the call expression becomes <value>",
    "replace": "exact text <old> becomes <new> within the target: the escape hatch",
    "merge-strings": "the literal containing <drop> becomes the literal containing <keep>",
    "revert-patch": "a fix's unified diff, saved beside this catalog, applied in reverse",
}
PREFERRED_LIVE = ("constant-return", "negate", "drop-operand", "stub-call", "delete-call", "replace",
                  "merge-strings")


def _segment(source: str, node: ast.AST) -> str | None:
    text = ast.get_source_segment(source, node)
    return text if text and "\n" not in text else None


def _candidates(plan: Plan) -> list[tuple[str, str, dict[str, object]]]:
    """(op, short name, fields) per operator, from the function's own code where it has a site."""
    source, fn = plan.source, plan.node
    nodes = [n for n in ast.walk(fn) if n is not fn]
    docstring = ast.get_docstring(fn, clean=False) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    slug = re.sub(r"[^a-z0-9]+", "-", plan.function.split(".")[-1].lower()).strip("-") or "target"
    out: list[tuple[str, str, dict[str, object]]] = [
        ("constant-return", f"{slug}-returns-none", {"value": "None"})]
    test = next((n.test for n in nodes if isinstance(n, (ast.If, ast.While, ast.IfExp))), None) or \
        next((n for n in nodes if isinstance(n, ast.Compare)), None)
    condition = _segment(source, test) if test is not None else None
    out.append(("negate", f"{slug}-condition-negated", {"condition": condition or "ready"}))
    boolop = next((n for n in nodes if isinstance(n, ast.BoolOp)), None)
    operand = _segment(source, boolop.values[-1]) if boolop is not None else None
    out.append(("drop-operand", f"{slug}-operand-dropped", {"operand": operand or "is_allowed(user)"}))
    def called(call: ast.Call) -> str | None:
        func = call.func
        return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None

    # Deleting a call is cleanest where it is a statement of its own (a check, a side effect):
    # deleting `x = f()` leaves x undefined, a broken mutant.
    statements = [called(n.value) for n in nodes if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)]
    names = [called(n) for n in nodes if isinstance(n, ast.Call)]
    statement_call = next((c for c in statements if c), None)
    any_call = next((c for c in names if c), None)
    out.append(("delete-call", f"{slug}-call-deleted", {"call": statement_call or any_call or "validate"}))
    out.append(("stub-call", f"{slug}-call-stubbed", {"call": any_call or "validate", "value": "None"}))
    constants = [n for n in nodes if isinstance(n, ast.Constant) and not isinstance(n.value, bool)
                 and isinstance(n.value, (int, float, str)) and n.value != docstring]
    old = _segment(source, constants[0]) if constants else None
    if old is not None and isinstance(constants[0].value, str):
        quote = len(old) - len(old.lstrip("rRbBuUfF"))
        new = old[:quote + 1] + "mutated " + old[quote + 1:]
    elif old is not None:
        new = f"{old} + 1"
    out.append(("replace", f"{slug}-constant-changed", {"old": old or "limit + 1", "new": new if old else "limit"}))
    # drop and keep must each name exactly one literal; the longest texts are the messages.
    strings = [str(n.value) for n in constants if isinstance(n.value, str) and n.value]
    unique = sorted({t for t in strings if sum(t in other for other in strings) == 1}, key=lambda t: (-len(t), t))
    pair = (unique[0], unique[1]) if len(unique) > 1 else None
    out.append(("merge-strings", f"{slug}-messages-merged",
                {"drop": pair[0], "keep": pair[1]} if pair else {"drop": "first message", "keep": "second message"}))
    out.append(("revert-patch", f"{slug}-fix-reverted", {"patch": f"{slug}-fix.patch"}))
    return out


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    text = str(value)
    if "'" not in text and not any(ord(c) < 32 or c == "\x7f" for c in text):
        return f"'{text}'"  # a literal string: Python source reads as written
    return json.dumps(text, ensure_ascii=False)  # JSON string syntax is valid TOML basic string


def _entry(plan: Plan, op: str, name: str, fields: dict[str, object], target: str | None = None) -> list[str]:
    lines = ["[[mutation]]", f"name = {_toml(name)}",
             f"target = {_toml(target or f'{plan.module}::{plan.function}')}", f"op = {_toml(op)}"]
    lines += [f"{key} = {_toml(value)}" for key, value in fields.items()]
    lines.append(f"kills = {_toml([plan.kills])}")
    return lines


def _verify(root: Path, plan: Plan, op: str, name: str, fields: dict[str, object], target: str
            ) -> tuple[str, dict[str, object]]:
    """Load the entry as a catalog and build its mutant with the gate's own code: "" when it
    applies and the mutant passes the validity check, else why not. A call or text matched
    at several sites gets `count`."""
    from killmap.catalog import load_catalog
    from killmap.mutants import build_mutant
    from killmap.validity import check_mutant
    for attempt in range(2):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "candidate.toml"
            path.write_text("\n".join(_entry(plan, op, name, fields, target)) + "\n", encoding="utf-8")
            try:
                mutation = load_catalog(root, path).mutations[0]
                mutant = build_mutant(root, mutation)
            except GateError as exc:
                return exc.message, fields
        if mutant.applied:
            # A starter example should not even leave dead code behind (a warning in a run).
            validity = check_mutant(mutant.original, mutant.mutated or "", mutant.file)
            if not validity.ok:
                return f"the mutant would be broken ({validity.problem})", fields
            if validity.warnings:
                return f"{LEAVES_DEAD_CODE} ({'; '.join(validity.warnings)})", fields
            return "", fields
        if attempt == 0 and mutant.sites > 1 and op in ("delete-call", "stub-call", "replace", "negate"):
            fields = {**fields, "count": mutant.sites}
            continue
        return mutant.reason, fields
    return "no single site", fields


LEAVES_DEAD_CODE = "the mutant would leave dead code"


def render(root: Path, plan: Plan) -> str:
    target = f"{plan.module}::{plan.function}"
    verified = []
    for op, name, fields in _candidates(plan):
        if op == "revert-patch":
            verified.append((op, name, fields, "needs the fix's patch", plan.module))
            continue
        why, fields = _verify(root, plan, op, name, fields, target)
        verified.append((op, name, fields, why, target))
    plan.examples = [(op, name, fields, not why or why.startswith(LEAVES_DEAD_CODE))
                     for op, name, fields, why, _ in verified if op != "revert-patch"]
    live = next((v for op in PREFERRED_LIVE for v in verified if v[0] == op and not v[3]), None)
    if live is None:
        raise GateError(f"no operator applies cleanly to {target}; pick another package with --package, "
                        "or write the catalog by hand (README: The catalog)", field="--package")
    out = [
        f"# killmap catalog for {plan.package}, written by `killmap init` (killmap {__version__}).",
        "#",
        "# Each [[mutation]] is a named, deliberate defect and the exact tests it must turn red.",
        f"# The live one is aimed at {target}, the first public function of",
        "# the largest module, and its kills is only a guess",
        f"# ({plan.kills_reason}).",
        "# `killmap check` validates the catalog in seconds; `killmap run` applies each mutation",
        "# in a sandbox copy and says what really went red: make the contract say what should,",
        "# and rename the mutation after its defect. `killmap pin NAME` binds a mutation to its",
        "# target's current text, so a later change there is flagged for review.",
        "#",
        "# The commented examples show one of each operator on the same function. init built each",
        "# with the gate's own operators: uncommented, it applies (unless its comment says why not).",
        "",
        "[gate]",
        f"tests = {_toml(plan.tests)}  # detected: {plan.tests_reason}",
        f"paths = {_toml(plan.paths)}  # detected: {plan.paths_reason}",
        "",
    ]
    op, name, fields, _, entry_target = live
    out += [f"# {op}: {OPERATOR_NOTES[op]}"]
    out += _entry(plan, op, name, fields, entry_target)
    out.append(f"note = {_toml('a starter mutation written by killmap init: replace it with a defect worth naming')}")
    out.append("")
    for op, name, fields, why, entry_target in verified:
        if (op, name) == live[:2]:
            continue
        out.append(f"# {op}: {OPERATOR_NOTES[op]}")
        if op == "revert-patch":
            out.append(f"#   save the fix first: git diff <before-the-fix> -- {plan.module} > mutations/{fields['patch']}")
            out.append("#   (the target must be exactly the patch's postimage; `killmap pin` pins the patch too)")
        elif why.startswith(LEAVES_DEAD_CODE):
            # It runs (dead code is a warning, not broken): only the live one is kept clean.
            out.append(f"#   applies, with a warning in a run: {why}.")
        elif why:
            out.append(f"#   not as written here: {why}.")
            out.append("#   The fields only show the shape; aim it at code where it applies.")
        out += [f"# {line}" for line in _entry(plan, op, name, fields, entry_target)]
        out.append("")
    return "\n".join(out)
