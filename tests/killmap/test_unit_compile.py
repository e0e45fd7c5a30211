"""A mutant's code objects compiled from the one function it changes (unit_compile.py) are the
ones a compile of the whole mutant file gives, or the whole file is compiled."""

from __future__ import annotations

import functools
import sys
import types
from pathlib import Path

import pytest

from killmap.engine.swap.unit_compile import (
    CompiledUnit,
    code_places,
    mutant_places,
    places_of_unit,
    unit_to_hand,
    units_of,
)

REPO = Path(__file__).resolve().parents[2]


def _whole(path: str, text: str) -> dict:
    return code_places(compile(text, path, "exec", dont_inherit=True))


_FUNCTION = 0x2  # CO_NEWLOCALS: a function's code; a class body's has it not


def _shape(code: types.CodeType) -> tuple:
    """Everything of a code object a swap hands to a function, nested code included."""
    nested = tuple(_shape(c) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return (
        code.co_name,
        getattr(code, "co_qualname", code.co_name),
        code.co_firstlineno,
        code.co_flags,
        code.co_code,
        nested,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        tuple(code.co_positions()) if hasattr(code, "co_positions") else code.co_lnotab,
    )


def _same(partial: dict, whole: dict) -> bool:
    """The same places, and the same code at every place a function can hold. A class
    body's code runs once, at import, in no function object: a swap never hands it out,
    and a mutant that changes it (a method's default value) is import-time, run afresh."""
    functions = [place for place, code in whole.items() if code.co_flags & _FUNCTION]
    return partial.keys() == whole.keys() and all(
        partial[p] == whole[p] and _shape(partial[p]) == _shape(whole[p]) for p in functions
    )


def _partial(path: str, original: str, mutant: str) -> dict | None:
    return mutant_places(path, original, mutant, _original(path, original), units_of(original))


@functools.cache
def _original(path: str, text: str) -> dict:
    """The original's code, compiled once for every mutant of its file (read, never changed)."""
    return _whole(path, text)


@functools.cache  # both draftroute-wide tests hold the same 700-odd mutants
def _sweep_mutants(root: Path, target: str, ops: tuple[str, ...]) -> list:
    from killmap.verdict.sweep import enumerate_mutants, load_optional_catalogs, resolve_targets

    targets = resolve_targets(root, [target], load_optional_catalogs(root, ()))
    return [m.mutant for m in enumerate_mutants(root, targets, ops).mutants]


def test_every_sweep_mutant_of_draftroute_compiles_from_its_function_to_the_whole_files_code():
    mutants = _sweep_mutants(REPO, "src/draftroute/", ("mutmut", "killmap"))
    partial_ones = 0
    for mutant in mutants:
        path = str(REPO / mutant.file)
        partial = _partial(path, mutant.original, mutant.mutated)
        if partial is not None:
            partial_ones += 1
            assert _same(partial, _whole(path, mutant.mutated)), (mutant.file, mutant.changed_lines)
    # Most mutants take the short way: else this test would hold nothing to the whole file.
    assert partial_ones >= 0.8 * len(mutants) > 400


def test_a_unit_the_worker_compiled_gives_the_fork_the_whole_files_code_after_its_trip_as_bytes():
    # The worker compiles (the unit, else the whole mutant) and hands the fork bytes; the fork's
    # code objects must be the ones a compile of the whole mutant in the fork itself gives.
    mutants = _sweep_mutants(REPO, "src/draftroute/", ("mutmut", "killmap"))
    depths = set()
    for mutant in mutants:
        path = str(REPO / mutant.file)
        original = _original(path, mutant.original)
        unit = unit_to_hand(path, mutant.original, mutant.mutated, units_of(mutant.original), original)
        if unit is None:  # it does not compile: the fork, handed nothing, finds it so itself
            with pytest.raises(SyntaxError):
                compile(mutant.mutated, path, "exec", dont_inherit=True)
            continue
        carried = CompiledUnit.from_bytes(unit.to_bytes())
        depths.add(carried.depth)
        places = places_of_unit(original, carried)
        assert places is not None and _same(places, _whole(path, mutant.mutated)), (mutant.file, mutant.changed_lines)
    assert depths == {0, 1, 2}  # whole files, functions and methods each made the trip


_CLASS = '''from __future__ import annotations

import functools


class Door:
    """A door."""

    limit = 3

    def __init__(self, width: int) -> None:
        self.__width = width

    @property
    def width(self) -> int:
        return self.__width

    @width.setter
    def width(self, value: int) -> None:
        self.__width = value + 0

    @functools.lru_cache(maxsize=None)
    def area(self, height: int) -> int:
        return super().__hash__() and self.__width * height


def outer(n):
    base = n + 1

    def inner(k):
        return base + k

    return inner


async def fetch(items):
    return [i async for i in items if i > 1]
'''


@pytest.mark.parametrize(
    "before, after",
    [
        ("value + 0", "value - 0"),  # a property's setter, named as its getter
        ("self.__width * height", "self.__width + height"),  # a private name, super(), a decorator
        ("return base + k", "return base - k"),  # a closure: compiled with its outer function
        ("if i > 1", "if i >= 1"),  # an async comprehension
        ("self.__width = width", "self.__width = None"),
    ],
)
def test_a_method_or_function_of_every_shape_compiles_alone_to_the_whole_files_code(before, after):
    mutant = _CLASS.replace(before, after)
    partial = _partial("door.py", _CLASS, mutant)
    assert partial is not None
    assert _same(partial, _whole("door.py", mutant))


@pytest.mark.parametrize(
    "original, mutant, why",
    [
        (_CLASS, _CLASS.replace("limit = 3", "limit = 4"), "a change in a class body, outside every method"),
        (_CLASS, _CLASS.replace("        return base + k", "        pass\n        return base + k"), "a line added"),
        (_CLASS, _CLASS.replace("value + 0", "value - 0").replace("base + k", "base - k"), "two units changed"),
        (_CLASS, _CLASS.replace("return base + k", "return (lambda: base + k)()"), "a lambda came into the unit"),
        (
            "def f():\n    return 1\n\f\ndef g():\n    return 2\n",
            "def f():\n    return 0\n\f\ndef g():\n    return 2\n",
            "a form feed",
        ),
        (
            "def f():\r    return 1\r\rdef g():\r    return 2\r",
            "def f():\r    return 0\r\rdef g():\r    return 2\r",
            "old Mac line ends, which the compiler counts and a split on newlines does not",
        ),
        ("x = 1; y = 2\ndef f():\n    return 1\n", "x = 1; y = 2\ndef f():\n    return 1\n", "nothing changed"),
        (
            "@(lambda f: f)\ndef f():\n    return 1\n",
            "@(lambda f: f)\ndef f():\n    return 0\n",
            "a lambda in the decorator, compiled in the module's code",
        ),
    ],
)
def test_a_mutant_the_unit_cannot_say_exactly_is_left_to_the_whole_file(original, mutant, why):
    assert _partial("m.py", original, mutant) is None, why


def test_the_future_imports_and_the_class_header_are_what_makes_the_unit_exact(monkeypatch):
    # Without them the method compiles, but not to the file's code: the __future__ flag is in
    # every code object's flags, and the class name mangles the method's private names.
    from killmap.engine.swap import unit_compile

    mutant = _CLASS.replace("self.__width * height", "self.__width + height")
    whole = _whole("door.py", mutant)
    real = unit_compile.Unit
    units = units_of(_CLASS)
    assert units is not None
    stripped = unit_compile.Units(tuple(real(u.first, u.last, None) for u in units.units), ())
    monkeypatch.setattr(unit_compile, "units_of", lambda text: stripped)
    # Compiled without its header, the method lands at depth one and finds no place.
    assert mutant_places("door.py", _CLASS, mutant, _whole("door.py", _CLASS), stripped) is None
    future_less = unit_compile.Units(units.units, ())
    partial = mutant_places("door.py", _CLASS, mutant, _whole("door.py", _CLASS), future_less)
    assert partial is not None and not _same(partial, whole)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="co_qualname is 3.11+")
def test_a_swapped_method_keeps_its_qualified_name():
    mutant = _CLASS.replace("value + 0", "value - 0")
    partial = _partial("door.py", _CLASS, mutant)
    assert partial is not None
    assert {c.co_qualname for c in partial.values()} >= {"Door.width", "outer.<locals>.inner"}


def test_a_unit_says_how_deep_its_function_lies_and_nothing_else():
    code = compile("x = 1\n", "m.py", "exec")
    assert CompiledUnit.from_bytes(CompiledUnit(code, depth=2).to_bytes()).depth == 2
    with pytest.raises(ValueError, match="depth 0, 1 or 2"):
        CompiledUnit(code, depth=3)
