"""The quick answer for most mutants: the one function the change lies in, checked on its own.

Validity (check.py) compares pyflakes' findings on the whole mutant with those on the whole
original. Even with the rest of the module reduced (skeleton.py) that was 100 ms a mutant on
packaging's specifiers.py: parsing, compiling and walking a thousand lines to judge a change
to one. A sweep's mutants almost all change one expression inside one function body, and
for those the function alone decides:
- it parses and compiles where the module does, when its text is one whole definition that
  ends where it ended (after a complete statement the tokenizer is where it was);
- inside it, pyflakes needs only which names the module binds: they are stood in for by
  imports, so that a name the original read and the mutant no longer does shows as an
  unused import here exactly when it could become one in the module.

So the original's function and the mutant's are each checked after a prelude: the module's
`from __future__` imports, then, for each module name the original function reads, the
module's own import of it or a plain `import NAME`. (A name left out can only add findings, to
both sides or to the mutant's alone: a yes is never made by it.) When the mutant's findings are
the original's, or add only an unused import that something else in the module still reads,
the whole-module check would add none either: the mutant is valid with no warning. Anything
else (another finding added, a parse or compile error, a change outside a function body, a
star import) goes to the whole-module check, which alone writes the messages: this path only
ever says yes. benchmarks/validity_equality.py holds the two paths equal on real modules.
"""

from __future__ import annotations

import ast
import functools
from collections import Counter
from dataclasses import dataclass

from pyflakes import checker

from killmap.mutate.patching import equal_ends, split_lines
from killmap.mutate.validity.flakes import check as flakes_check
from killmap.mutate.validity.skeleton import outermost_functions, stub_of

WRAPPER = "class _killmap_fragment_:\n"  # a method, or a function under an if, keeps its indent


@dataclass(frozen=True)
class Extent:
    """An outermost function's lines, 1-based (first: its first decorator), and what is checked
    in front of it."""

    first: int
    body: int
    last: int
    indented: bool  # a method, or under an if: checked inside WRAPPER
    prelude: str
    statements: int  # in the prelude


def is_valid_quickly(original: str, mutated: str, filename: str) -> bool:
    """True when the function the change lies in gives the mutant the original's findings; False
    means only "ask the whole-module check", never "invalid"."""
    functions = _outline(original, filename)
    if functions is None:
        return False
    a, b = _lines(original), split_lines(mutated)
    head, tail = equal_ends(a, b)
    extent = _enclosing(functions, head, len(a) - tail)
    if extent is None:
        return False
    before = _function_findings(original, filename, extent)
    if before is None:
        return False
    shift = len(b) - len(a)
    after = _findings("".join(b[extent.first - 1 : extent.last + shift]), extent, filename)
    if after is None:
        return False
    added = after.counts - before.counts
    if not added:
        return True
    # The one finding told apart here: an import the original function read and the mutant no
    # longer does (mutmut's `x = None`, an argument removed). The module finds it unused only
    # if nothing else reads it: common enough (one sweep mutant in twenty) to be worth asking.
    dropped = after.unused - before.unused
    if set(kind for kind, _ in added) != {"UnusedImport"} or sum(added.values()) != len(dropped):
        return False
    return dropped <= _read_elsewhere(original, filename, functions.index(extent))


def _enclosing(functions: tuple[Extent, ...], head: int, last_changed: int) -> Extent | None:
    """The function whose body holds every changed line of the original (lines head+1 to
    last_changed; none when the mutant only inserts, after line head)."""
    first_changed = head + 1
    for extent in functions:
        if first_changed <= last_changed:
            if extent.body <= first_changed and last_changed <= extent.last:
                return extent
        elif extent.body - 1 <= head <= extent.last:
            # Lines inserted after the last: the function's when indented as its body, which
            # the check of its text as one whole definition tells (a constant return added
            # after a docstring that is the whole body).
            return extent
    return None


@functools.lru_cache(maxsize=32)
def _lines(original: str) -> list[str]:
    return split_lines(original)


@functools.lru_cache(maxsize=32)
def _outline(original: str, filename: str) -> tuple[Extent, ...] | None:
    if "\r" in original.replace("\r\n", ""):
        return None  # Python counts a lone '\r' as a line break, split_lines does not
    try:
        tree = ast.parse(original, filename=filename)
    except SyntaxError:
        return None
    names = _module_names(tree)
    if names is None:
        return None
    futures = [ast.get_source_segment(original, node) for node in tree.body if _is_future(node)]
    texts = [text for text in futures if text]
    if len(texts) != len(futures):
        return None
    return tuple(_extent(function, texts, names) for function in outermost_functions(tree))


@dataclass(frozen=True)
class Findings:
    counts: Counter  # by kind and arguments
    unused: frozenset[str]  # the prelude's imports the function does not read


@functools.lru_cache(maxsize=256)
def _function_findings(original: str, filename: str, extent: Extent) -> Findings | None:
    return _findings("".join(_lines(original)[extent.first - 1 : extent.last]), extent, filename)


def _findings(text: str, extent: Extent, filename: str) -> Findings | None:
    """pyflakes' findings, by kind and arguments, on the prelude and one function; None when it
    does not parse or compile as one whole definition."""
    indented = extent.indented
    source = extent.prelude + (WRAPPER if indented else "") + text
    try:
        tree = ast.parse(source, filename=filename)
        compile(tree, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    last = tree.body[-1] if tree.body else None
    if indented and isinstance(last, ast.ClassDef):
        last = last.body[-1] if len(last.body) == 1 else None
    whole = len(tree.body) == extent.statements + 1 and isinstance(last, (ast.FunctionDef, ast.AsyncFunctionDef))
    if not whole or last is None or last.end_lineno != source.count("\n") + (not source.endswith("\n")):
        return None  # the mutant's text is not one definition ending where the original's did
    flakes = flakes_check(tree, filename, source)
    counts = Counter((type(m).__name__, line_free_args(m)) for m in flakes.messages)
    return Findings(counts, _unused_imports(flakes))


def _module_scope(flakes: checker.Checker) -> checker.ModuleScope:
    return next(scope for scope in flakes.deadScopes if isinstance(scope, checker.ModuleScope))


def _unused_imports(flakes: checker.Checker) -> frozenset[str]:
    module = _module_scope(flakes)
    return frozenset(name for name, b in module.items() if isinstance(b, checker.Importation) and not b.used)


def _read_elsewhere(original: str, filename: str, index: int) -> frozenset[str]:
    """The module's names something other than the body of its `index`-th outermost function
    reads: the module with every such body emptied still uses them (module-level code, class
    bodies, signatures, decorators, `__all__`), or another function's body reads them."""
    used, reads = _module_reads(original, filename)
    return used.union(*(r for i, r in enumerate(reads) if i != index))


@functools.lru_cache(maxsize=32)
def _module_reads(original: str, filename: str) -> tuple[frozenset[str], tuple[frozenset[str], ...]]:
    """(what the module uses with every outermost function's body emptied, what each body reads)"""
    tree = ast.parse(original, filename=filename)
    functions = outermost_functions(tree)
    reads = tuple(frozenset(stub_of(function).reads) for function in functions)
    for function in functions:
        function.body = [ast.copy_location(ast.Pass(), function.body[0])]
    flakes = flakes_check(tree, filename, original)
    module = _module_scope(flakes)
    exported = module.get("__all__")  # pyflakes counts a name `__all__` lists as used, at the end
    listed = exported.names if isinstance(exported, checker.ExportBinding) else []
    return frozenset([name for name, binding in module.items() if binding.used] + listed), reads


def line_free_args(message) -> tuple[str, ...]:
    """A pyflakes message's arguments without the line numbers some of them carry.

    'redefinition of unused %r from line %r' (and the other 'from line'/'on line'
    messages) hold the earlier definition's line among their arguments; a mutant that
    deletes a line above it would otherwise read as adding a finding.
    """
    args = message.message_args if isinstance(message.message_args, tuple) else (message.message_args,)
    if "line %r" in message.message:
        args = tuple(a for a in args if not isinstance(a, int))
    return tuple(str(a) for a in args)


def _is_future(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"


def _module_names(tree: ast.Module) -> dict[str, str] | None:
    """Every name bound at module level, by any statement, and every name a function declares
    `global`, each with the statement that stands in for it in a prelude: an import is its own
    import (pyflakes reads `cast(...)`'s first argument as an annotation only when `cast` is
    typing's), anything else a plain `import NAME`. None for a star import (pyflakes then reads
    undefined names differently)."""
    names: dict[str, str] = {}
    for node in _module_level_nodes(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(alias.name == "*" for alias in node.names):
                return None
            if not _is_future(node):
                for alias in node.names:
                    alone: ast.stmt = ast.Import([alias])
                    if isinstance(node, ast.ImportFrom):
                        alone = ast.ImportFrom(node.module, [alias], node.level)
                    names[(alias.asname or alias.name).split(".")[0]] = ast.unparse(alone)
            continue
        name = _bound_name(node)
        if name is not None:
            names[name] = f"import {name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            names.update((name, f"import {name}") for name in node.names if name not in names)
    return {name: statement for name, statement in names.items() if name.isidentifier()}


def _bound_name(node: ast.AST) -> str | None:
    """The name a module-level node binds, other than by an import."""
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return node.id
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    if isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
        return node.name
    if isinstance(node, ast.MatchMapping):
        return node.rest
    return None


def _module_level_nodes(node: ast.AST):
    """In source order, the nodes that run in the module's own scope: not inside a function, a
    lambda, a class body or a comprehension (their names are their own), though the def or
    class itself is. The last binding of a name is the one a function body sees."""
    for child in ast.iter_child_nodes(node):
        yield child
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for decorator in child.decorator_list:
                yield from _module_level_nodes(decorator)
        elif not isinstance(child, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            yield from _module_level_nodes(child)


def _extent(function: ast.FunctionDef | ast.AsyncFunctionDef, futures: list[str], names: dict[str, str]) -> Extent:
    first = min([function.lineno] + [d.lineno for d in function.decorator_list])
    reads = sorted({n.id for n in ast.walk(function) if isinstance(n, ast.Name) and n.id in names})
    prelude = "".join(f"{text}\n" for text in futures) + "".join(f"{names[name]}\n" for name in reads)
    last = function.end_lineno or function.lineno
    return Extent(first, function.body[0].lineno, last, function.col_offset > 0, prelude, len(futures) + len(reads))
