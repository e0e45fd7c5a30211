"""The swap: put a mutant's code into an already-imported module, when that is provably
the same program as importing the mutant afresh.

A forked copy of a collected session has imported the project once, unmutated. For a
mutant whose changed statements all lie inside function bodies, importing it afresh would
build the very same module, classes and function objects, except that the functions'
code would be the mutant's. So the swap replaces the `__code__` of every function object
of the file with the mutant's code object of the same place in the file. It is exact when:

- (a) no changed statement ran before the first test (the gate checks this against the
  baseline's collection-time coverage: a table built at import by a changed function
  would hold the original's values);
- (b) no module-level or class-level statement changed, nor a function's docstring,
  which its `def` evaluates (the gate: the region is not import-time);
- (c) each swapped pair has the same free variables (a closure's cells are bound to the
  function object, not its code);
- (d) afterwards no function object of the file still holds an original code object.

(c) and (d) are checked here; any doubt falls back to importing the mutant afresh.
Every function of the file is made to run the mutant's code object of its place, not only
the changed one, so line numbers and tracebacks match the mutant text on disk (where only the
changed function was compiled, the others' places hold the original's own code objects, and
those functions are left as they are). Function objects are found through the garbage
collector, so decorated, aliased, registered and bound functions are all found: a
dispatch table or a functools.partial holds the function object, which now runs the
mutant's code. This is PIT's design (bytecode redefined in a running JVM, static
initialisers excluded); pytest-gremlins' in-process modes missed the import-time cases.
"""

from __future__ import annotations

import gc
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from killmap.engine.swap.unit_compile import (
    CompiledUnit,
    Place,
    Units,
    code_places,
    mutant_places,
    places_of_unit,
    units_of,
)


def every_object() -> list[Any]:
    """Every object the collector tracks that the project may have made, those `gc.freeze()`
    set aside too: `gc.get_objects` leaves them out, and a project that freezes its heap at
    import (a conftest, a server that forks) would hide its functions: from the swap, which
    would leave them running the original, and from the probes, which would record nothing.

    The worker freezes its own heap before any session (before_fork.py), and nothing of the project
    is in it: while the project itself has frozen nothing (`_FreezeWatch`), the unfrozen
    objects are all there is to look at, and listing the worker's 30,000 besides cost every
    session 15-30 ms and every traced run 30 ms, in pages copied."""
    if not gc.get_freeze_count() or _freezes.only_the_harness():
        return gc.get_objects()
    gc.unfreeze()
    try:
        return gc.get_objects()
    finally:
        _freezes.freeze()


class _FreezeWatch:
    """Whether anything but the harness called `gc.freeze()` since the harness froze its own
    heap: `gc.freeze` is replaced by a function that notes the call (code of the project
    calls it by its module attribute, looked up when called)."""

    def __init__(self) -> None:
        self._freeze = gc.freeze
        self.installed = False
        self.project_froze = False

    def harness_frozen(self) -> None:
        """Freeze the harness's heap, and note every later freeze."""
        self._freeze()
        if not self.installed:
            self.installed = True
            gc.freeze = self._noted

    def _noted(self) -> None:
        self.project_froze = True
        self._freeze()

    def freeze(self) -> None:
        self._freeze()

    def only_the_harness(self) -> bool:
        return self.installed and not self.project_froze


_freezes = _FreezeWatch()  # one per process: the harness's heap is the process's
harness_frozen = _freezes.harness_frozen


@dataclass(frozen=True)
class SwapResult:
    ok: bool
    reason: str = ""  # why not, for the report's fallback reason
    swapped: int = 0  # function objects whose code was replaced
    places: tuple[str, ...] = ()  # where in the file, e.g. "Resolver.classify"
    compiled_by: str = ""  # "worker": the unit it was handed; "fork": compiled in the swap


def _identity(code: types.CodeType) -> tuple:
    return code.co_name, code.co_firstlineno, code.co_code


class LiveFunctions:
    """Every function object alive in this process, by the file its code came from.

    Built by one scan of the heap in the session server, after collection and before any
    fork: a fork then finds the functions of the mutated file without scanning again (the
    scan touches every object, so in a fork it also copies every page of the heap). It is
    exact in the fork because nothing of the project runs between the scan and the swap:
    the server only reads requests and forks, and the fork swaps before any test starts.
    The worker froze its own heap before the session began (before_fork.py): the scan lists only
    what the session made, which holds every function of the project.
    The originals' code objects are compiled here too, once per file, when first asked.
    """

    def __init__(self) -> None:
        self.by_file: dict[str, list[types.FunctionType]] = {}
        for obj in every_object():
            if isinstance(obj, types.FunctionType):
                self.by_file.setdefault(obj.__code__.co_filename, []).append(obj)
        self._originals: dict[tuple[str, str], dict[Place, types.CodeType]] = {}
        self._units: dict[tuple[str, str], Units | None] = {}
        self._placed: dict[tuple[str, str], list[tuple[types.FunctionType, Place | None, str]]] = {}

    def mutant(
        self, path: str, original_text: str, mutant_text: str | Callable[[], str], unit: CompiledUnit | None = None
    ) -> dict[Place, types.CodeType]:
        """The places of the mutant's text: only the function it changed is compiled when
        that is exact (unit_compile.py), else the whole text (SyntaxError if it does not
        compile). `unit`: that function compiled already, from this very text, by the worker
        (whose pages, unlike a fork's, are its own: compiling there copies none). `mutant_text`
        may be a function that reads it: a handed unit needs no text."""
        original = self.originals(path, original_text)
        if unit is not None:
            places = places_of_unit(original, unit)
            if places is not None:
                return places
        if callable(mutant_text):
            mutant_text = mutant_text()
        places = mutant_places(path, original_text, mutant_text, original, self._units[(path, original_text)])
        if places is not None:
            return places
        return code_places(compile(mutant_text, path, "exec", dont_inherit=True))

    def originals(self, path: str, text: str) -> dict[Place, types.CodeType]:
        """The places of the file's unmutated text (SyntaxError if it does not compile)."""
        key = (path, text)
        if key not in self._originals:
            self._originals[key] = code_places(compile(text, path, "exec", dont_inherit=True))
            self._units[key] = units_of(text)
        return self._originals[key]

    def placed(self, path: str, text: str) -> list[tuple[types.FunctionType, Place | None, str]]:
        """Each live function of the file with its place in the unmutated text, or None and why
        it has none. Worked out once per file, in the session server when it prepares the file,
        so that no fork reads every code object of the file again: in a fork each object read is
        a page copied."""
        key = (path, text)
        if key not in self._placed:
            original = self.originals(path, text)
            # Two code objects alike in name, first line and bytecode (two `sum(x for x in xs)`
            # on one line: more-itertools has them) cannot be told apart; that matters only if
            # a live function holds one. A generator expression's code is reached through its
            # enclosing function's constants, which the swap replaces whole.
            where: dict[tuple, Place | None] = {}
            for known, code in original.items():
                where[_identity(code)] = None if _identity(code) in where else known
            placed: list[tuple[types.FunctionType, Place | None, str]] = []
            for function in self.by_file.get(path, []):
                identity = _identity(function.__code__)
                if identity in where and where[identity] is None:
                    why = f"two functions of the file are indistinguishable ({function.__code__.co_name})"
                    placed.append((function, None, why))
                else:
                    place = where.get(identity)
                    why = "" if place is not None else f"{function.__qualname__} has no place in the file's text"
                    placed.append((function, place, why))
            self._placed[key] = placed
        return self._placed[key]


def swap_in(
    path: str,
    original_text: str,
    mutant_text: str | Callable[[], str],
    functions: LiveFunctions | None = None,
    unit: CompiledUnit | None = None,
) -> SwapResult:
    """Replace the code of every live function defined in `path` with the mutant's.

    `functions`: the live functions as the session server found them; without it the heap
    is scanned now. `unit`: the changed function compiled from `mutant_text` elsewhere."""
    functions = functions or LiveFunctions()
    try:
        original = functions.originals(path, original_text)
        mutant = functions.mutant(path, original_text, mutant_text, unit)
    except SyntaxError as exc:
        return SwapResult(False, f"does not compile: {exc.msg}")
    placed = functions.placed(path, original_text)
    plan = []
    for function, place, why in placed:
        if place is None:
            return SwapResult(False, why)
        new = mutant.get(place)
        if new is None:
            return SwapResult(False, f"{function.__qualname__} has no counterpart in the mutant")
        if new is function.__code__:
            continue  # a place the mutant left as it was holds the original's own code object
        if new.co_freevars != function.__code__.co_freevars:  # (c)
            return SwapResult(False, f"{function.__qualname__} closes over other variables in the mutant")
        plan.append((function, new))
    if not placed:
        return SwapResult(False, "no function of the file is alive in the session")
    for function, new in plan:
        function.__code__ = new
    mutant_codes = {id(code) for code in mutant.values()}
    # (d): no function can appear while nothing runs, so the functions found are all there
    # are; one scan of the heap is most of the swap's cost, so it is not repeated.
    still = [f.__qualname__ for f, _, _ in placed if id(f.__code__) not in mutant_codes]
    if still:
        return SwapResult(False, f"{still[0]} still runs the original code after the swap")
    changed = sorted({".".join(part.split("#")[0] for part in place) for place in _changed(original, mutant)})
    handed = {id(code) for code in code_places(unit.code).values()} if unit is not None else set()
    compiled_by = "worker" if handed & mutant_codes else "fork"
    return SwapResult(True, swapped=len(placed), places=tuple(changed), compiled_by=compiled_by)


def _changed(original: dict[Place, types.CodeType], mutant: dict[Place, types.CodeType]) -> list[Place]:
    """Places whose code differs in more than line numbers."""

    def body(code: types.CodeType) -> tuple:
        return code.co_code, tuple(c for c in code.co_consts if not isinstance(c, types.CodeType)), code.co_names

    # A place whose code object is the original's own is unchanged: only the compiled unit's
    # places are compared by body (reading every code object's body copied pages in a fork).
    return [
        place
        for place, code in original.items()
        if place not in mutant or (mutant[place] is not code and body(mutant[place]) != body(code))
    ]
