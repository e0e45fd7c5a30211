"""The mutant's code objects, compiled from the one function it changes.

A swap needs the mutant's code object for every function of the file. Compiling the whole
mutant file did that, in every fork: 3 ms of a 330-line module, a tenth of a sweep mutant's
run, and the same code objects each time for every function the mutant left alone.

When the mutant keeps every line where it was and changes lines of one function only, the
rest of the file compiles to the code objects of the original text. A function's code
depends on its own text and line numbers, the `__future__` flags, the scopes around it, and
which names the module binds by an import (CPython 3.11+ calls `module.f()` of an imported
name without LOAD_METHOD: found by the test below, not foreseen). So only that function is
compiled: the `__future__` imports, the class header it sits in (the class name mangles a
method's private names, and `super()` needs the class cell), one `import` of every name the
module imports, and the function, each on its own lines, every other line left empty so
that line numbers and columns are the file's. The unit is a whole top-level function or a
whole method of a top-level class: a function nested in another is compiled with its
outermost function, whose other locals decide which of its names are free.

Anything else (a line added or removed, a change outside every unit, a place that cannot be
matched) returns None, and the caller compiles the whole file as before. The worker does the
compiling (`unit_to_hand`) and hands the fork the code objects as bytes (`CompiledUnit`): a
compile in the fork copies every page it writes to first. tests/killmap/test_unit_compile.py
holds the result to a whole-file compile for every mutant of this project's own modules, code
object by code object.
"""

from __future__ import annotations

import ast
import marshal
import types
from dataclasses import dataclass

Place = tuple[str, ...]  # the path of names from the module down to a code object


@dataclass(frozen=True)
class Unit:
    """Lines (1-based, inclusive) that compile to one function's code, and the lines kept
    around it: a method's class header."""

    first: int
    last: int
    header: tuple[int, int] | None = None


@dataclass(frozen=True)
class Units:
    """The units of one original text, the `__future__` import lines every unit keeps, and
    the names the module binds by an import (CPython 3.11+ calls `name.attr()` of such a
    name without LOAD_METHOD: a function's code depends on them)."""

    units: tuple[Unit, ...]
    future: tuple[tuple[int, int], ...]
    imported: tuple[str, ...] = ()


def _start(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", ())
    return min([node.lineno, *(d.lineno for d in decorators)])


def _end(node: ast.stmt) -> int:
    assert node.end_lineno is not None  # every statement parsed from text has one
    return node.end_lineno


def units_of(text: str) -> Units | None:
    """Every unit of an original text; None when it does not parse, or holds a line break
    the compiler may not count as one."""
    if _lines(text) is None:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    found: list[Unit] = []
    future: list[tuple[int, int]] = []
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            future.append((_start(node), _end(node)))
        elif isinstance(node, functions):
            found.append(Unit(_start(node), _end(node)))
        elif isinstance(node, ast.ClassDef):
            # A def or class never shares a line with the statements around it, so each unit's
            # lines are its own. A class whose body starts on its header line holds no def.
            header = (node.lineno, _start(node.body[0]) - 1)
            for member in node.body:
                if isinstance(member, functions):
                    found.append(Unit(_start(member), _end(member), header))
    return Units(tuple(found), tuple(future), _imported_names(tree))


def _imported_names(tree: ast.Module) -> tuple[str, ...]:
    """Every name an import binds in the module's own scope: at its top level, or in the
    blocks there (`if`, `try`, `with`), never in a function or class."""
    names: set[str] = set()
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Import):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            names.update(alias.asname or alias.name for alias in node.names if alias.name != "*")
        else:
            pending.extend(ast.iter_child_nodes(node))
    return tuple(sorted(names))


def _changed_span(original: list[str], mutant: list[str]) -> tuple[int, int] | None:
    """The first and last changed line (1-based), or None when nothing changed."""
    changed = [number for number, (a, b) in enumerate(zip(original, mutant, strict=True), start=1) if a != b]
    return (changed[0], changed[-1]) if changed else None


# Characters str.splitlines() ends a line at and the compiler does not (or not always): a
# text holding one is compiled whole, so that line numbers are only ever the compiler's.
_OTHER_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def _lines(text: str) -> list[str] | None:
    if any(mark in text for mark in _OTHER_BREAKS):
        return None
    return text.split("\n")


def _unit_text(lines: list[str], units: Units, keep: list[tuple[int, int]]) -> str | None:
    """The kept lines where they are, every other line empty but one, which imports the
    module's imported names (on a line of its own, at the module's top level, after the
    `__future__` imports); None when no line is free for it."""
    kept = [""] * len(lines)
    for first, last in keep:
        kept[first - 1 : last] = lines[first - 1 : last]
    imported = units.imported
    if imported:
        taken = {number for first, last in keep for number in range(first - 1, last)}
        after = max((last for _, last in units.future), default=0)  # 0-based: the line after
        free = next((number for number in range(after, len(lines)) if number not in taken), None)
        if free is None:
            return None
        kept[free] = "import " + ", ".join(imported)
    return "\n".join(kept)


def compiled_unit(path: str, original_text: str, mutant_text: str, units: Units | None) -> CompiledUnit | None:
    """The one unit the mutant changes, compiled where its lines are in the file; None when only
    a whole-file compile can say."""
    original_lines, mutant_lines = _lines(original_text), _lines(mutant_text)
    if units is None or original_lines is None or mutant_lines is None or len(original_lines) != len(mutant_lines):
        return None
    span = _changed_span(original_lines, mutant_lines)
    if span is None:
        return None
    unit = next((u for u in units.units if u.first <= span[0] and span[1] <= u.last), None)
    if unit is None:
        return None
    keep = [*units.future, *([unit.header] if unit.header else []), (unit.first, unit.last)]
    text = _unit_text(mutant_lines, units, keep)
    if text is None:
        return None
    try:
        compiled = compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    return CompiledUnit(compiled, depth=2 if unit.header else 1)


def unit_to_hand(
    path: str, original_text: str, mutant_text: str, units: Units | None, original: dict[Place, types.CodeType]
) -> CompiledUnit | None:
    """What a worker compiles for the fork that swaps the mutant in: the function it changes,
    where that fits the original's code objects (`original`), else the whole mutant; None when
    the mutant does not compile."""
    unit = compiled_unit(path, original_text, mutant_text, units)
    if unit is None or places_of_unit(original, unit) is None:
        return compiled_whole(path, mutant_text)
    return unit


def compiled_whole(path: str, mutant_text: str) -> CompiledUnit | None:
    """The whole mutant compiled, as a unit of depth 0; None when it does not compile."""
    try:
        return CompiledUnit(compile(mutant_text, path, "exec", dont_inherit=True), depth=0)
    except (SyntaxError, ValueError):
        return None


@dataclass(frozen=True)
class CompiledUnit:
    """A unit's text compiled as a module (`code`), and how deep its function lies in it: 1 for
    a function, 2 for a method of a class; 0 for the whole file."""

    code: types.CodeType
    depth: int

    def __post_init__(self) -> None:
        if self.depth not in (0, 1, 2):
            raise ValueError(f"a unit lies at depth 0, 1 or 2, not {self.depth}")

    def to_bytes(self) -> bytes:
        """For another process of this same interpreter (marshal's format is its own)."""
        return bytes([self.depth]) + marshal.dumps(self.code)

    @classmethod
    def from_bytes(cls, data: bytes) -> CompiledUnit:
        return cls(marshal.loads(data[1:]), depth=data[0])


def places_of_unit(original: dict[Place, types.CodeType], unit: CompiledUnit) -> dict[Place, types.CodeType] | None:
    """Every place's code object in the mutant: the original's, with the unit's in its place."""
    if unit.depth == 0:
        return code_places(unit.code)
    return _merged(original, code_places(unit.code), unit.depth)


def mutant_places(
    path: str, original_text: str, mutant_text: str, original: dict[Place, types.CodeType], units: Units | None
) -> dict[Place, types.CodeType] | None:
    """Every place's code object in the mutant, the original's where the mutant did not
    change it; None when only a whole-file compile can say."""
    unit = compiled_unit(path, original_text, mutant_text, units)
    return None if unit is None else places_of_unit(original, unit)


def code_places(module_code: types.CodeType) -> dict[Place, types.CodeType]:
    """Every function's code object in a compiled module, by its place in the file.

    Siblings with one name (a property's getter and setter, two lambdas) are told apart by
    their order, which a mutation inside a function body does not change.
    """
    found: dict[Place, types.CodeType] = {}

    def visit(code: types.CodeType, place: Place) -> None:
        seen: dict[str, int] = {}
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                index = seen.get(const.co_name, 0)
                seen[const.co_name] = index + 1
                child = place + (f"{const.co_name}#{index}",)
                found[child] = const
                visit(const, child)

    visit(module_code, ())
    return found


def _merged(
    original: dict[Place, types.CodeType], partial: dict[Place, types.CodeType], depth: int
) -> dict[Place, types.CodeType] | None:
    """The original's places with the unit's replaced: the unit's root is found in the
    original by name and first line, and everything under it keeps its path."""
    roots = [place for place in partial if len(place) == depth]
    if len(roots) != 1:
        return None
    root_code = partial[roots[0]]
    matches = [
        place
        for place, code in original.items()
        if len(place) == depth
        and code.co_name == root_code.co_name
        and code.co_firstlineno == root_code.co_firstlineno
        and (depth == 1 or place[0].split("#")[0] == roots[0][0].split("#")[0])
    ]
    if len(matches) != 1:
        return None
    home = matches[0]
    inside = {place[depth:]: code for place, code in partial.items() if place[:depth] == roots[0]}
    before = {place[depth:] for place in original if place[:depth] == home}
    if set(inside) != before:
        return None  # a lambda or nested function came or went: let the whole file say
    # A method's class keeps the original's body code, which still holds the original method:
    # no function object runs a class body (the import did, once), so no swap hands it out.
    merged = dict(original)
    for suffix, code in inside.items():
        merged[home + suffix] = code
    return merged
