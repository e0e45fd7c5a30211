"""`killmap init`: a starter catalog, mutations/<package>.toml, written from the project.

What the project looks like (layout, test paths, the package, the function to aim at, a
guess at the test that guards it) is init_detect.py's. Here: one live mutation, so the
catalog loads and `killmap check` passes, and one commented example per operator on the same
function. Every example is built here with the gate's own operators before it is written,
so uncommenting one gives a mutant that applies; an operator with no site in that function
gets a template saying so. It never overwrites a catalog (exit 2).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from killmap import __version__
from killmap.commands.shared import project_root
from killmap.errors import GateError

if TYPE_CHECKING:  # what reads the project is imported when the command runs, not to parse
    from killmap.catalog.init_detect import Plan


def add_parser(sub) -> None:
    init = sub.add_parser("init", help="write a starter catalog, mutations/<package>.toml")
    init.add_argument(
        "--package",
        default=None,
        help="the package or module to aim at: a dotted name (app.routing), a folder or a .py file (default: detected)",
    )
    init.set_defaults(main=main)


def main(args: argparse.Namespace) -> int:
    return write_catalog(project_root(), args.package)


# How many targets init passes over, each with no operator that applies cleanly, before it
# says so: jsonpointer's best-scored `pairwise` had none, and init gave up on the package.
TARGETS_TRIED = 5


def _aimed(root: Path, package: str | None) -> tuple[Plan, str]:
    """The plan and the catalog's text, aimed at the best target with a clean live example;
    refused before anything is built when the catalog exists."""
    from killmap.catalog.init_detect import detect

    skipped: list[str] = []
    refusal: GateError | None = None
    while True:
        try:
            plan = detect(root, package, frozenset(skipped))
        except GateError:
            if refusal is None:
                raise
            raise refusal from None  # every target left was passed over: the first's reason
        path = root / "mutations" / f"{plan.package}.toml"
        if path.exists():
            raise GateError(
                "already exists; killmap init never overwrites a catalog (edit it, or remove it and run init again)",
                file=path.relative_to(root).as_posix(),
            )
        _refuse_what_pytest_runs_on(plan)
        target = f"{plan.module}::{plan.function}"
        text = render(root, plan)
        if text is not None:
            plan.passed_over = skipped
            return plan, text
        refusal = refusal or GateError(
            f"no operator applies cleanly to {target}; pick another package with --package, "
            "or write the catalog by hand (README: The catalog)",
            field="--package",
        )
        skipped.append(target)
        if len(skipped) == TARGETS_TRIED:
            raise refusal


def _refuse_what_pytest_runs_on(plan: Plan) -> None:
    """A package pytest itself imports before any test (pluggy, iniconfig) cannot be gated:
    every test uses pytest's copy, never the sandbox's mutant, and every later command refuses
    it. Said here, before a catalog is written (pluggy: init wrote one, and `check`, `run`,
    `sweep`, `try` and `prove` each refused it)."""
    import subprocess
    import sys

    top = (plan.top or plan.package).split(".")[0]
    listed = subprocess.run(
        [sys.executable, "-c", "import sys, pytest; print(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    if top in {name.split(".")[0] for name in listed}:
        raise GateError(
            f"{top} cannot be gated by a pytest run: pytest itself imports {top} before any test, so every "
            "test uses that copy, never a mutant; no catalog written (pick another package with --package)",
            field="--package",
        )


def write_catalog(root: Path, package: str | None = None) -> int:
    """mutations/<package>.toml, never over an existing catalog, each example verified."""
    from killmap.catalog.init_detect import choice_reason
    from killmap.catalog.workspace import enclosing_workspace

    plan, text = _aimed(root, package)
    path = root / "mutations" / f"{plan.package}.toml"
    rel = path.relative_to(root).as_posix()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    live = sum(1 for *_, ok in plan.examples if ok)
    print(f"wrote {rel}: [gate] tests = {plan.tests} ({plan.tests_reason}), paths = {plan.paths} ({plan.paths_reason})")
    print(
        f"  aimed at {plan.module}::{plan.function}; {live} of {len(plan.examples)} operator examples "
        f"apply there; kills guessed: {plan.kills} ({plan.kills_reason})"
    )
    considered = "; ".join(f"{c.module}::{c.function} ({c.reason()})" for c in plan.considered)
    print(f"  considered: {considered}")
    print(f"  chose {plan.function}: {choice_reason(plan.considered)}")
    if plan.passed_over:
        print(f"  passed over (no operator applies cleanly): {', '.join(plan.passed_over)}")
    if plan.runs_at_import:
        print(
            f"  note: {plan.function}, like every public function here, runs while the package is imported "
            "or the tests are collected: a first run may select every test for it"
        )
    for line in _where_else(plan):
        print(line)
    enclosing = enclosing_workspace(root)
    if enclosing:
        # Its catalog can neither import nor target the other members: said before check fails on it.
        workspace, member = enclosing
        print(
            f"  note: this project is member {member.folder} of the workspace at {workspace}; a catalog there "
            "gates every member, with the tests that cross them (killmap init there writes one)"
        )
    if not _reports_ignored(root):
        print("  note: killmap run writes its reports to reports/; add reports/ to .gitignore to keep them out of git")
    print("next: killmap check, then killmap run")
    return 0


def _reports_ignored(root: Path) -> bool:
    """Whether git ignores the reports' default folder (True where git cannot say: no note)."""
    from killmap.git import git_or_none

    if git_or_none(root, "rev-parse", "--git-dir") is None:
        return True
    return git_or_none(root, "check-ignore", "-q", "--no-index", "reports/") is not None


def _where_else(plan: Plan) -> list[str]:
    """The packages init saw and how to aim it at another: on a framework it picks one package
    by name and size, and its core (the router) may be another, or a subpackage of it."""

    def listed(names: list[str]) -> str:
        shown = ", ".join(names[:8])
        return shown + (f" and {len(names) - 8} more" if len(names) > 8 else "")

    top = plan.top or plan.package.split(".")[0]
    seen = [f"{name} (aimed at)" if name == plan.package else name for name in plan.seen]
    lines = [f"  packages seen: {listed(seen) or 'none'}"]
    if plan.inside:
        lines[0] += f"; in {top}: {listed(plan.inside)}"
    aimed = plan.module.removesuffix(".py").replace("/", ".")
    # Never the aimed package's own parent: it holds the aimed code, and more tests than its own.
    others = [n for n in plan.inside if not aimed.endswith(n) and not (plan.package + ".").startswith(n + ".")]
    others += [n for n in plan.seen if not (plan.package + ".").startswith(n + ".")]
    # A public one first: a private module (humanize's generated `_version`) is seldom code to
    # aim at, and one with nothing to aim at is refused.
    public = [n for n in others if not any(part.startswith("_") for part in n.split("."))]
    if public or others:  # never the package aimed at itself, as though it were elsewhere
        example = (public or others)[0]
        lines.append(f"  aim elsewhere: killmap init --package {example} (a dotted name, a folder or a .py file)")
    return lines


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
PREFERRED_LIVE = ("constant-return", "negate", "drop-operand", "stub-call", "delete-call", "replace", "merge-strings")


def _segment(source: str, node: ast.AST) -> str | None:
    text = ast.get_source_segment(source, node)
    return text if text and "\n" not in text else None


def _constant_return(fn: ast.AST, slug: str) -> tuple[str, str, dict[str, object]]:
    """A generator's body as `return None` is no generator at all: callers that iterate it
    crash on None (jmespath's tokenize: 68 tests red by TypeError). One that yields nothing
    is the defect a reader means."""
    if isinstance(fn, ast.FunctionDef) and _yields(fn):
        return ("constant-return", f"{slug}-yields-nothing", {"value": "iter(())"})
    return ("constant-return", f"{slug}-returns-none", {"value": "None"})


def _yields(fn: ast.FunctionDef) -> bool:
    """Whether the function itself yields (a generator), not a function or class inside it."""
    todo: list[ast.AST] = list(fn.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return False


def _condition(source: str, nodes: list[ast.AST]) -> str | None:
    """The first branch's test, or comparison, that the function reads only there: `negate`
    inverts every read of its text, and `if strict:` beside `check(x, strict=strict)` would
    invert the argument too, two defects under one name. The first test at all when none is."""
    tests = [n.test for n in nodes if isinstance(n, (ast.If, ast.While, ast.IfExp))]
    tests += [n for n in nodes if isinstance(n, ast.Compare)]
    reads = Counter(ast.dump(n) for n in nodes if isinstance(n, ast.expr))
    unique = next((test for test in tests if reads[ast.dump(test)] == 1 and _segment(source, test)), None)
    chosen = unique or next(iter(tests), None)
    return _segment(source, chosen) if chosen is not None else None


def _candidates(plan: Plan) -> list[tuple[str, str, dict[str, object]]]:
    """(op, short name, fields) per operator, from the function's own code where it has a site."""
    source, fn = plan.source, plan.node
    assert fn is not None  # detect() builds every Plan around the node it aims at
    nodes = [n for n in ast.walk(fn) if n is not fn]
    docstring = ast.get_docstring(fn, clean=False) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    slug = re.sub(r"[^a-z0-9]+", "-", plan.function.split(".")[-1].lower()).strip("-") or "target"
    out: list[tuple[str, str, dict[str, object]]] = [_constant_return(fn, slug)]
    condition = _condition(source, nodes)
    out.append(("negate", f"{slug}-condition-negated", {"condition": condition or "ready"}))
    boolop = next((n for n in nodes if isinstance(n, ast.BoolOp)), None)
    operand = _segment(source, boolop.values[-1]) if boolop is not None else None
    out.append(("drop-operand", f"{slug}-operand-dropped", {"operand": operand or "is_allowed(user)"}))

    def called(call: ast.Call) -> str | None:
        func = call.func
        return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None

    # Deleting a call is cleanest where it is a statement of its own (a check, a side effect),
    # then where an `if` tests it (the whole check goes) or a `raise` builds it (the refusal
    # goes): deleting `x = f()` leaves x undefined, a broken mutant.
    def calls_in(kind: type, part: str) -> list[str | None]:
        held = [getattr(n, part) for n in nodes if isinstance(n, kind)]
        return [called(c) for h in held if h is not None for c in ast.walk(h) if isinstance(c, ast.Call)]

    names = [called(n) for n in nodes if isinstance(n, ast.Call)]
    preferred = [*calls_in(ast.Expr, "value"), *calls_in(ast.If, "test"), *calls_in(ast.Raise, "exc"), *names]
    out.append(("delete-call", f"{slug}-call-deleted", {"call": next((c for c in preferred if c), "validate")}))
    out.append(("stub-call", f"{slug}-call-skipped", _stub_fields(source, nodes, called)))
    constants = [
        n
        for n in nodes
        if isinstance(n, ast.Constant)
        and not isinstance(n.value, bool)
        and isinstance(n.value, (int, float, str))
        and n.value != docstring
    ]
    out.append(("replace", *_replace_fields(source, fn, nodes, constants, slug)))
    pair = _merge_pair(ast.get_source_segment(source, fn) or "", nodes, constants)
    # Two names merged (getattr's, a key's) are no merged message: said as texts.
    merged = "messages" if pair is None or all(_is_message(text) for text in pair) else "texts"
    out.append(
        (
            "merge-strings",
            f"{slug}-{merged}-merged",
            {"drop": pair[0], "keep": pair[1]} if pair else {"drop": "first message", "keep": "second message"},
        )
    )
    out.append(("revert-patch", f"{slug}-fix-reverted", {"patch": f"{slug}-fix.patch"}))
    return out


def _merge_pair(body: str, nodes: list[ast.AST], constants: list[ast.Constant]) -> tuple[str, str] | None:
    """merge-strings' (drop, keep): the longest messages, `drop` in exactly one literal, `keep`
    in one or in copies of one text (the operator keeps any copy: the same mutant).

    A text is offered only as the source writes it: Python joins `f"a {x}, " "b {y}"` into
    one constant (", b ") that no single literal of the file holds (semver's compare). A
    piece of an f-string keeps its placeholders' names when merged into another site, where
    they may be undefined (itsdangerous: `f"... {age} < 0 seconds"` kept at the site of
    "timestamp missing", which has no `age`; "Malformed timestamp", written twice, was
    passed over): whole literals first."""
    pieces = {id(v) for n in nodes if isinstance(n, ast.JoinedStr) for v in n.values}
    strings = [str(n.value) for n in constants if isinstance(n.value, str) and n.value and str(n.value) in body]
    whole = {str(n.value) for n in constants if isinstance(n.value, str) and id(n) not in pieces}

    def order(text: str) -> tuple[bool, bool, int, str]:
        return not _is_message(text), text not in whole, -len(text), text

    unique = sorted({t for t in strings if sum(t in other for other in strings) == 1}, key=order)
    copies = {t for t in strings if t in whole and all(t == other for other in strings if t in other)}
    if not unique:
        return None
    keep = sorted(({*unique, *copies} - {unique[0]}), key=order)
    return (unique[0], keep[0]) if keep else None


def _is_message(text: str) -> bool:
    """Whether a string literal reads as a message rather than a name: `getattr(uri, "scheme")`'s
    "scheme" and a hash key's "all" read as names (rfc3986, tinydb: "validate-message-changed"
    made "mutated scheme", which only crashed every test by AttributeError). A message is
    preferred; a name is offered when there is no message, and called a text."""
    return any(c.isalpha() for c in text) and not all(part.isidentifier() for part in text.split("."))


# A comparison's boundary moved by one: the off-by-one a test at the edge catches.
_BOUNDARY = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">")}


def _stub_fields(source: str, nodes: list[ast.AST], called: Callable[[ast.Call], str | None]) -> dict[str, object]:
    """A call whose result the function uses, skipped: its first argument passed through
    (`grams(weight)` becomes `weight`), so the mutant is the step left out, not a None that
    crashes the next line. An exception's constructor is passed over: `raise x` is no defect."""
    raised = {id(n.exc) for n in nodes if isinstance(n, ast.Raise) and n.exc is not None}
    used = {id(n.value) for n in nodes if isinstance(n, ast.Expr)}
    for call in (n for n in nodes if isinstance(n, ast.Call) and id(n) not in raised | used):
        name, argument = called(call), _segment(source, call.args[0]) if call.args else None
        if name and argument and not isinstance(call.args[0], ast.Starred):
            return {"call": name, "value": argument}
    return {"call": "normalize", "value": "value"}


def _replace_fields(
    source: str, fn: ast.AST, nodes: list[ast.AST], constants: list[ast.Constant], slug: str
) -> tuple[str, dict[str, object]]:
    """(name, fields) of a `replace` that changes one thing a reader can name: a comparison's
    boundary, else a number, else a message. `replace` matches text anywhere in the target,
    docstring and longer numbers included (`0` is inside `100`), so only a text that occurs
    once in the function is offered."""
    body = ast.get_source_segment(source, fn) or ""

    def once(text: str | None) -> bool:
        return bool(text) and body.count(text or "") == 1

    for node in nodes:
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _BOUNDARY:
            text = _segment(source, node)
            old_op, new_op = _BOUNDARY[type(node.ops[0])]
            if once(text) and text and f" {old_op} " in text:
                return f"{slug}-boundary-moved", {"old": text, "new": text.replace(f" {old_op} ", f" {new_op} ", 1)}
    for node in constants:
        text = _segment(source, node)
        if isinstance(node.value, (int, float)) and once(text):
            return f"{slug}-number-changed", {"old": text, "new": repr(node.value + 1)}
    strings = [n for n in constants if isinstance(n.value, str) and n.value]
    for node in sorted(strings, key=lambda n: not _is_message(str(n.value))):  # a message before a name
        text = _segment(source, node)
        if once(text) and text:
            quote = len(text) - len(text.lstrip("rRbBuUfF"))
            kind = "message" if _is_message(str(node.value)) else "text"
            return f"{slug}-{kind}-changed", {"old": text, "new": text[: quote + 1] + "mutated " + text[quote + 1 :]}
    return f"{slug}-text-changed", {"old": "limit + 1", "new": "limit"}


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
    lines = [
        "[[mutation]]",
        f"name = {_toml(name)}",
        f"target = {_toml(target or f'{plan.module}::{plan.function}')}",
        f"op = {_toml(op)}",
    ]
    lines += [f"{key} = {_toml(value)}" for key, value in fields.items()]
    lines.append(f"kills = {_toml([plan.kills])}")
    return lines


def _verify(
    root: Path, plan: Plan, op: str, name: str, fields: dict[str, object], target: str
) -> tuple[str, dict[str, object]]:
    """Load the entry as a catalog and build its mutant with the gate's own code: "" when it
    applies and the mutant passes the validity check, else why not. A call or text matched
    at several sites gets `count`."""
    from killmap.catalog.reader import load_catalog
    from killmap.mutate.mutants import build_mutant
    from killmap.mutate.validity.check import check_mutant

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


def render(root: Path, plan: Plan) -> str | None:
    """The catalog's text; None when no operator applies cleanly to the plan's target."""
    target = f"{plan.module}::{plan.function}"
    verified = _verified(root, plan, target)
    plan.examples = [
        (op, name, fields, not why or why.startswith(LEAVES_DEAD_CODE))
        for op, name, fields, why, _ in verified
        if op != "revert-patch"
    ]
    live = next((v for op in PREFERRED_LIVE for v in verified if v[0] == op and not v[3]), None)
    if live is None:
        return None
    out = _header(plan, target)
    op, name, fields, _, entry_target = live
    out += [f"# {op}: {OPERATOR_NOTES[op]}"]
    out += _entry(plan, op, name, fields, entry_target)
    out.append(f"note = {_toml('a starter mutation written by killmap init: replace it with a defect worth naming')}")
    out.append("")
    for op, name, fields, why, entry_target in verified:
        if (op, name) == live[:2]:
            continue
        out += _commented_example(plan, op, name, fields, why, entry_target)
    return "\n".join(out)


# op, name, fields, why it does not apply ("" when it does), target
_Verified = tuple[str, str, dict[str, object], str, str]


def _verified(root: Path, plan: Plan, target: str) -> list[_Verified]:
    """Every candidate, built with the gate's own operators (a patch cannot be: it is not saved yet)."""
    verified: list[_Verified] = []
    for op, name, fields in _candidates(plan):
        if op == "revert-patch":
            verified.append((op, name, fields, "needs the fix's patch", plan.module))
            continue
        why, fields = _verify(root, plan, op, name, fields, target)
        verified.append((op, name, fields, why, target))
    return verified


def _header(plan: Plan, target: str) -> list[str]:
    """What the catalog is and how to go on from it, then the detected [gate]."""
    from killmap.catalog.init_detect import choice_reason

    return [
        f"# killmap catalog for {plan.package}, written by `killmap init` (killmap {__version__}).",
        "#",
        "# Each [[mutation]] is a named, deliberate defect and the exact tests it must turn red.",
        f"# The live one is aimed at {target} ({choice_reason(plan.considered)}),",
        f"# and its kills is only a guess ({plan.kills_reason}).",
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


def _commented_example(
    plan: Plan, op: str, name: str, fields: dict[str, object], why: str, entry_target: str
) -> list[str]:
    """One operator's example, commented out, with what it takes to make it apply."""
    out = [f"# {op}: {OPERATOR_NOTES[op]}"]
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
    return out
