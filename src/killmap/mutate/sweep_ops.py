"""killmap's own sweep operators: the statement-level defects mutmut never makes.

mutmut's operators are token-level (`and` -> `or`, `>` -> `>=`, a number plus one, a
string changed). The seeds' defects are not: a check deleted, a predicate made constant, a
condition inverted, one half of a guard dropped, two refusals merged into one message.
These are the catalog's named operators, swept over every site:

- `delete-call`: each statement that is only a call, deleted (an emptied block gets `pass`);
- `constant-return`: each function that returns a bool made to return True, and False;
- `negate`: each `if` / `elif` condition inverted;
- `drop-operand`: each operand of a boolean `and` / `or` dropped;
- `merge-strings`: of two string literals the same function raises, the second replaced by
  the first (so the two refusals read alike).

Each candidate carries the catalog operator and fields that may rebuild it, for
`killmap sweep --promote` (which checks that they really do).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import libcst as cst
from libcst.helpers import get_full_name_for_node

from killmap.mutate.cst_tree import ATOMS, string_value

# Calls whose value is a bool, whatever their arguments.
_BOOL_CALLS = frozenset({"bool", "isinstance", "issubclass", "callable", "hasattr", "any", "all"})
_BOOL_METHODS = frozenset(
    {
        "startswith",
        "endswith",
        "isdigit",
        "isalpha",
        "isalnum",
        "isspace",
        "islower",
        "isupper",
        "isidentifier",
        "isdisjoint",
        "issubset",
        "issuperset",
        "is_file",
        "is_dir",
        "exists",
    }
)
_NO_RETURN = frozenset(
    {"NoReturn", "Never", "typing.NoReturn", "typing.Never", "typing_extensions.NoReturn", "typing_extensions.Never"}
)


@dataclass(frozen=True)
class Candidate:
    op: str  # "delete-call", "constant-return", ...
    original: cst.CSTNode  # the node replaced
    replacement: cst.CSTNode | cst.RemovalSentinel
    function: str  # qualified name of the innermost function
    hint: tuple[tuple[str, str], ...]  # catalog fields that may rebuild it


def candidates(
    definition: cst.FunctionDef, qualname: str, parents, code: Callable[[cst.CSTNode], str], raising: frozenset[str]
) -> Iterator[Candidate]:
    """Every statement-level mutant of one top-level function or method, in source order.
    `raising`: names of functions that never return (annotated NoReturn), whose string
    arguments count as raised."""
    for node, function in _walk(definition, qualname):
        if isinstance(node, cst.SimpleStatementLine):
            yield from _deleted_calls(node, function, code)
        elif isinstance(node, cst.FunctionDef):
            yield from _constant_returns(node, function)
            yield from _merged_strings(node, function, raising)
        elif isinstance(node, cst.If):
            yield _negated(node.test, function, code)
        elif isinstance(node, cst.BooleanOperation):
            yield from _dropped_operands(node, function, code)


def _walk(definition: cst.FunctionDef, qualname: str) -> Iterator[tuple[cst.CSTNode, str]]:
    """Each node with the qualified name of the innermost function (or class) holding it."""
    stack: list[tuple[cst.CSTNode, str]] = [(definition, qualname)]
    while stack:
        node, function = stack.pop()
        if node is not definition and isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            function = f"{function}.{node.name.value}"
        yield node, function
        stack.extend(reversed([(child, function) for child in node.children]))


def _deleted_calls(line: cst.SimpleStatementLine, function: str, code) -> Iterator[Candidate]:
    for small in line.body:
        value = small.value if isinstance(small, cst.Expr) else None
        if isinstance(value, cst.Await):
            value = value.expression
        if not isinstance(value, cst.Call):
            continue
        name = get_full_name_for_node(value.func)
        target = line if len(line.body) == 1 else small
        yield Candidate("delete-call", target, cst.RemoveFromParent(), function, (("call", name),) if name else ())


def _constant_returns(function: cst.FunctionDef, qualname: str) -> Iterator[Candidate]:
    if not _returns_bool(function) or not isinstance(function.body, cst.IndentedBlock):
        return
    body = list(function.body.body)
    keep = []
    if body and isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1:
        first = body[0].body[0]
        if isinstance(first, cst.Expr) and isinstance(first.value, (cst.SimpleString, cst.ConcatenatedString)):
            keep.append(body[0])
    for value in ("True", "False"):
        new_body = function.body.with_changes(
            body=keep + [cst.SimpleStatementLine([cst.Return(value=cst.Name(value))])]
        )
        yield Candidate("constant-return", function.body, new_body, qualname, (("value", value),))


def _returns_bool(function: cst.FunctionDef) -> bool:
    """Annotated `-> bool`, or every `return` of its own body returns a bool-shaped value."""
    if function.returns is not None:
        return get_full_name_for_node(function.returns.annotation) in ("bool", "builtins.bool")
    returns: list[cst.Return] = []
    yields = False

    class Own(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            return node is function  # nested definitions return for themselves

        def visit_Lambda(self, node):
            return False

        def visit_ClassDef(self, node):
            return False

        def visit_Return(self, node):
            returns.append(node)

        def visit_Yield(self, node):
            nonlocal yields
            yields = True

    function.visit(Own())
    return bool(returns) and not yields and all(r.value is not None and _is_bool(r.value) for r in returns)


def _is_bool(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.Name):
        return node.value in ("True", "False")
    if isinstance(node, cst.Comparison):
        return True
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.operator, cst.Not)
    if isinstance(node, cst.BooleanOperation):
        return _is_bool(node.left) and _is_bool(node.right)
    if isinstance(node, cst.Call):
        name = get_full_name_for_node(node.func) or ""
        return name in _BOOL_CALLS or name.rsplit(".", 1)[-1] in _BOOL_METHODS and "." in name
    return False


def _negated(test: cst.BaseExpression, function: str, code) -> Candidate:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inverted = test.expression
        if test.lpar and not inverted.lpar:
            inverted = inverted.with_changes(lpar=test.lpar, rpar=test.rpar)
    else:
        inner = (
            test
            if test.lpar or isinstance(test, ATOMS)
            else test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        )
        inverted = cst.UnaryOperation(operator=cst.Not(), expression=inner)
    return Candidate("negate", test, inverted, function, (("condition", code(test).strip()),))


def _dropped_operands(node: cst.BooleanOperation, function: str, code) -> Iterator[Candidate]:
    for dropped, kept in ((node.left, node.right), (node.right, node.left)):
        if node.lpar and not kept.lpar:
            kept = kept.with_changes(lpar=node.lpar, rpar=node.rpar)
        yield Candidate("drop-operand", node, kept, function, (("operand", code(dropped).strip()),))


def _merged_strings(function: cst.FunctionDef, qualname: str, raising: frozenset[str]) -> Iterator[Candidate]:
    literals = _raised_literals(function, raising)
    for i, (keep, keep_value) in enumerate(literals):
        for drop, drop_value in literals[i + 1 :]:
            if drop_value != keep_value:
                yield Candidate(
                    "merge-strings", drop, keep.deep_clone(), qualname, (("drop", drop_value), ("keep", keep_value))
                )


def _raised_literals(function: cst.FunctionDef, raising: frozenset[str]) -> list[tuple[cst.CSTNode, str]]:
    """The string literals a function raises, in source order: the arguments (or the
    exception) of its own `raise` statements, and the arguments of its calls of functions
    that never return. Only whole arguments count: `", ".join(...)` inside one is not a
    message, and an f-string is not a literal."""
    found: list[tuple[cst.CSTNode, str]] = []

    def take(node: cst.CSTNode) -> None:
        value = string_value(node)
        if value is not None:
            found.append((node, value))

    class Raises(cst.CSTVisitor):
        def visit_FunctionDef(self, node):
            return node is function

        def visit_Lambda(self, node):
            return False

        def visit_Raise(self, node):
            if isinstance(node.exc, cst.Call):
                for arg in node.exc.args:
                    take(arg.value)
            elif node.exc is not None:
                take(node.exc)
            return False

        def visit_Call(self, node):
            name = get_full_name_for_node(node.func)
            if name is not None and name.rsplit(".", 1)[-1] in raising:
                for arg in node.args:
                    take(arg.value)
            return True

    function.visit(Raises())
    return found


def never_returning(source: str) -> frozenset[str]:
    """Names of the functions a module defines with a NoReturn (or Never) annotation."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()
    return frozenset(
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.returns is not None
        and ast.unparse(node.returns) in _NO_RETURN
    )


def imported_names(source: str) -> list[tuple[str, int, str]]:
    """`from M import n` in a module: (M, level, n) for each name it imports."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [
        (node.module or "", node.level, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    ]
