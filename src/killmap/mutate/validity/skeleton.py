"""The module as pyflakes needs it to judge one changed definition: every other function's
body reduced to the module-level names it reads.

Validity (check.py) compares pyflakes' findings on the mutant with those on the original.
A mutant changes one place; pyflakes walks the whole module, once per mutant, and on a
thousand-line module that was most of a sweep's time in the gate's own thread (33 of 46 s on
packaging's specifiers.py, 346 mutants). What a function body outside the change contributes
to the findings of the rest is only which module-level names it reads (an import it alone
uses is not unused, a name it reads is not undefined elsewhere): a body reduced to a tuple of
those names gives the rest of the module the same findings, and its own findings are the same
in the original's skeleton and the mutant's, so they cancel in the comparison.

Reduced in place, in the parsed tree: the changed definition keeps its line numbers, so every
finding names the mutant's real line. Kept whole: every function that holds the change, and
any that declares `global` or `nonlocal` (it binds names outside itself).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from killmap.mutate.patching import equal_ends, split_lines


def changed_span(original: str, mutated: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """The changed lines, 1-based and inclusive, in the original and in the mutant, widened by
    one line each side (a deletion changes no line of its own) and back over blank lines: a
    function whose last statement is deleted ends at the code line above the blank ones."""
    a, b = split_lines(original), split_lines(mutated)
    prefix, suffix = equal_ends(a, b)
    start = prefix
    while start > 1 and not a[start - 1].strip():
        start -= 1
    return (start, len(a) - suffix + 1), (start, len(b) - suffix + 1)


def reduce_outside(tree: ast.Module, span: tuple[int, int], stubs: list[Stub] | None = None) -> list[str]:
    """Reduce, in place, every outermost function whose lines do not meet `span`; return their
    positions and names in order ("3:process"), so that the original's and the mutant's
    reductions can be matched.
    `stubs`: the original's (`stubs_of`), in the same order, so that a mutant's unchanged
    functions are not walked again; a function that does not match its stub is walked."""
    reduced: list[str] = []
    for index, function in enumerate(outermost_functions(tree)):
        if _meets(function, span):
            continue
        stub = stubs[index] if stubs is not None and index < len(stubs) else None
        if stub is None or stub.name != function.name:
            stub = stub_of(function)
        if stub.binds_outside:
            continue
        _replace_body(function, stub.reads)
        reduced.append(f"{index}:{function.name}")  # two methods may share a name
    return reduced


@dataclass(frozen=True)
class Stub:
    """What an outermost function contributes to the rest of the module's findings."""

    name: str
    reads: tuple[str, ...]  # the names its body reads and never binds
    binds_outside: bool  # it declares `global` or `nonlocal`: kept whole
    lines: tuple[int, int] = (0, 0)  # first (its first decorator) and last


def reduced_by_stubs(stubs: list[Stub], span: tuple[int, int]) -> list[str]:
    """What reduce_outside would return for the tree the stubs were taken from, without it."""
    return [
        f"{index}:{stub.name}"
        for index, stub in enumerate(stubs)
        if not stub.binds_outside and not (stub.lines[0] <= span[1] and span[0] <= stub.lines[1])
    ]


def stubs_of(tree: ast.Module) -> list[Stub]:
    return [stub_of(function) for function in outermost_functions(tree)]


def outermost_functions(node: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Functions not inside another, in source order: at module level, in classes, and under
    module-level if/try/with."""
    found: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append(child)
        elif isinstance(child, (ast.ClassDef, ast.If, ast.Try, ast.With)):
            found.extend(outermost_functions(child))
    return found


def _meets(function: ast.FunctionDef | ast.AsyncFunctionDef, span: tuple[int, int]) -> bool:
    first = min([function.lineno] + [d.lineno for d in function.decorator_list])
    last = function.end_lineno or function.lineno
    return first <= span[1] and span[0] <= last


def stub_of(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Stub:
    """The names the body reads and never binds (the module-level names it uses)."""
    bound: set[str] = set()
    read: dict[str, None] = {}
    binds_outside = False
    for statement in function.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    read.setdefault(node.id)
                else:
                    bound.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bound.add(node.name)
            elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
                bound.add(node.name)
            elif isinstance(node, ast.MatchMapping) and node.rest:
                bound.add(node.rest)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                binds_outside = True
    arguments = function.args
    parameters = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
    bound.update(a.arg for a in parameters)
    bound.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None)
    first = min([function.lineno] + [d.lineno for d in function.decorator_list])
    lines = (first, function.end_lineno or function.lineno)
    return Stub(function.name, tuple(name for name in read if name not in bound), binds_outside, lines)


def _replace_body(function: ast.FunctionDef | ast.AsyncFunctionDef, reads: tuple[str, ...]) -> None:
    """The body becomes one expression reading `reads`, at the body's first line."""
    first = function.body[0]
    names: list[ast.expr] = [ast.Name(id=name, ctx=ast.Load()) for name in reads]
    expression = ast.Expr(value=ast.Tuple(elts=names, ctx=ast.Load()))
    function.body = [ast.copy_location(expression, first)]
    ast.fix_missing_locations(function)
