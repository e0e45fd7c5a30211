"""Per-test lines of the mutation targets before Python 3.12, from probes, not a tracer.

Why: on Python 3.10 and 3.11 any trace function puts the whole interpreter on its slow path,
whatever it traces. A loop ran 2.5x slower under `sys.settrace(lambda *a: None)`, and under
coverage's C tracer a test that ran no line of a target file still ran 2.2x slower (the
synthetic S1000's reach pass took longer on two workers than plain pytest on one). There is
no sys.monitoring there (line_monitor.py). So in a traced run's fork, the target files' functions
run a copy of their code with a probe before each statement, `hits[line] = 1` into a
bytearray of their file held as a constant; everything else runs at full speed, and a probed
loop about 1.3x slower.

What it records must be what the C tracer records, at the grain reach reads it (reach.py: a
region is whole statements, so a statement's first line stands for it):

- every statement in a function or class body, at any depth, records its first line when it
  starts; a lambda's body and a generator expression's element record theirs each time they
  run (a lambda made at import and called by a test is that test's), and so does every
  statement of a module imported or reloaded while a test runs (the loader is patched in the
  fork for the target files);
- what ran while the tests were collected (the "" context) is coverage's, as before: the
  session traced its collection, and the fork only reads it;
- a docstring, `global` and `nonlocal` compile to no instruction, and record nothing, as
  under the tracer.

Sound, or not used: the fork keeps coverage's C tracer (the run is only slower) unless every
target file was imported by the session, every function of one that the session holds has
code equal to one compiled from the file as it is (not if pytest rewrote its asserts, a
decorator rebuilt it, or the file changed since), and no generator or coroutine of one is
suspended (its frame keeps the old code). After the run, a function of a target file whose
code is still unprobed (made from code held elsewhere) makes that file's reach unproven:
`contexts` then leaves the file out, and the gate selects every test for its mutants.
`benchmarks/tracer_agreement.py` compares the probes with the C tracer on real projects.

Invisible to the tests: the audit hook and the patched loader run inside the tests' own call
stack (a `namedtuple` built at call time compiles and execs), where a test, a fixture or a
plugin can watch every filesystem call (blockbuster fails a test on one). So they resolve no
path there: a code's file name is looked up among the spellings the session already showed
(every function's file name when the probes went in), matched by its last component alone
otherwise, and a name that might be a target's is resolved only by `contexts`, after the run.
"""

from __future__ import annotations

import ast
import importlib.machinery
import os
import sys
import types
from collections.abc import Iterable
from typing import Any

from killmap.engine.swap.code_swap import every_object

AVAILABLE = sys.version_info < (3, 12)  # 3.12+ has the line monitor, which needs no copy
UNPROVEN = "<unproven>"  # the context a file's reach is put under when it cannot be trusted


class Hits(bytearray):
    """A file's probes: byte `line` is 1 once a statement starting there ran in this context.

    Hashable by identity: it is a constant of the probed code objects, which are hashed
    with their constants (a plain bytearray would make `hash(code)` raise)."""

    __hash__ = object.__hash__  # type: ignore[assignment]


class _Probe(ast.NodeTransformer):
    """Puts a probe before each statement in function and class bodies (and a module's own,
    when `module` is set), and into lambda bodies and generator elements."""

    def __init__(self, token: str, module: bool):
        self.token, self.module = token, module
        self._scopes: list[bool] = []  # for each enclosing def or class: whether a def

    def probe(self, node: ast.AST, line: int) -> ast.stmt:
        target = ast.Subscript(value=ast.Constant(self.token), slice=ast.Constant(line), ctx=ast.Store())
        return ast.copy_location(ast.Assign(targets=[target], value=ast.Constant(1)), node)

    def marked(self, node: ast.expr) -> ast.expr:
        """`(hits.__setitem__(line, 1), node)[1]`: the node's value, after its probe."""
        record = ast.Call(
            func=ast.Attribute(value=ast.Constant(self.token), attr="__setitem__", ctx=ast.Load()),
            args=[ast.Constant(node.lineno), ast.Constant(1)],
            keywords=[],
        )
        pair = ast.Tuple(elts=[record, node], ctx=ast.Load())
        return ast.copy_location(ast.Subscript(value=pair, slice=ast.Constant(1), ctx=ast.Load()), node)

    def body(
        self, statements: list[ast.stmt], *, scope: bool, probed: bool = True, local: bool = False
    ) -> list[ast.stmt]:
        """`statements` with their probes; `local`: a function's own block, where a name's
        annotation without a value (`x: int`, not `self.x: int`) compiles to nothing."""
        result: list[ast.stmt] = []
        for index, statement in enumerate(statements):
            statement = self.visit(statement)
            docstring = scope and index == 0 and _is_docstring(statement)
            declared = local and isinstance(statement, ast.AnnAssign) and statement.value is None and statement.simple
            if probed and not (docstring or declared or _runs_nothing(statement)):
                result.append(self.probe(statement, statement.lineno))
            result.append(statement)
        return result

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and all(
            _runs_nothing(s) or _is_docstring(s) or (isinstance(s, ast.AnnAssign) and s.value is None and s.simple)
            for s in node.body
        ):
            # A body of a docstring alone runs its implicit `return None` on the def's line,
            # which the tracer records at each call: so does a probe there.
            node.body.append(self.probe(node, node.lineno))
        for name, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                # A module's own statements ran at import, while the tests were collected:
                # coverage recorded them; probed only when a test imports the module.
                probed = self.module or not isinstance(node, ast.Module)
                scope = name == "body" and _is_scope(node)
                setattr(node, name, self.body(value, scope=scope, probed=probed, local=self._local(node)))
            else:
                _visit_field(self, node, name, value)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return self._scoped(node, True)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return self._scoped(node, True)

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        return self._scoped(node, False)

    def _scoped(self, node: ast.AST, function: bool) -> ast.AST:
        self._scopes.append(function)
        try:
            return self.generic_visit(node)
        finally:
            self._scopes.pop()

    def _local(self, node: ast.AST) -> bool:
        """Whether blocks of `node` are a function's own (a class body in a function is not)."""
        return bool(self._scopes) and self._scopes[-1]

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        node.args = self.visit(node.args)
        node.body = self.marked(self.visit(node.body))
        return node

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> ast.AST:
        node.generators = [self.visit(g) for g in node.generators]
        node.elt = self.marked(self.visit(node.elt))
        return node


def _visit_field(transformer: ast.NodeTransformer, node: ast.AST, name: str, value: Any) -> None:
    if isinstance(value, list):
        setattr(node, name, [transformer.visit(v) if isinstance(v, ast.AST) else v for v in value])
    elif isinstance(value, ast.AST):
        setattr(node, name, transformer.visit(value))


def _is_scope(node: ast.AST) -> bool:
    return isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))


def _runs_nothing(statement: ast.stmt) -> bool:
    """Declarations the compiler turns into no instruction: the tracer sees no line of them
    (and a probe before a `__future__` import would be a syntax error)."""
    future = isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
    return future or isinstance(statement, (ast.Global, ast.Nonlocal))


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def probed_code(source: str | bytes, filename: str, hits: Hits, *, module: bool = False) -> types.CodeType:
    """`source` compiled as the import system compiles it, with the probes in; `module`:
    the module's own statements too (an import while a test runs)."""
    token = f"\0killmap-probe-{id(hits)}"
    tree = _Probe(token, module).visit(ast.parse(source, filename))
    ast.fix_missing_locations(tree)
    code = compile(tree, filename, "exec", dont_inherit=True)
    return _with_hits(code, token, hits)


def _with_hits(code: types.CodeType, token: str, hits: Hits) -> types.CodeType:
    consts = tuple(
        hits if type(c) is str and c == token else _with_hits(c, token, hits) if isinstance(c, types.CodeType) else c
        for c in code.co_consts
    )
    return code.replace(co_consts=consts)


def _code_tree(code: types.CodeType) -> list[types.CodeType]:
    """`code` and every code object nested in it, depth first, in the compiler's order."""
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.extend(_code_tree(const))
    return found


def _line_count(source: str | bytes) -> int:
    return (source.count(b"\n") if isinstance(source, bytes) else source.count("\n")) + 2


class ProbedFile:
    """One target file: its hits, and each of its code objects (as the import system compiles
    them) paired with the probed copy, or None where two equal ones have unequal copies."""

    def __init__(self, filename: str, source: bytes):
        self.filename = filename
        self.hits = Hits(_line_count(source))
        self.zero = bytes(len(self.hits))
        original = compile(source, filename, "exec", dont_inherit=True)
        probed = probed_code(source, filename, self.hits)
        self.copies: dict[types.CodeType, types.CodeType | None] = {}
        for before, after in zip(_code_tree(original), _code_tree(probed), strict=True):
            known = self.copies.get(before, after)
            self.copies[before] = after if known == after else None
        self.probed = set(map(id, (c for c in self.copies.values() if c is not None)))
        # Held, not only their ids: a module reloaded twice frees the first reload's code, and
        # an unprobed code object at a freed one's address would pass for probed.
        self._imported: list[list[types.CodeType]] = []

    def copy_of(self, code: types.CodeType) -> types.CodeType | None:
        return self.copies.get(code)

    def take(self) -> list[int]:
        """The lines hit since the last take, and the hits cleared."""
        lines, at = [], self.hits.find(1)
        while at != -1:
            lines.append(at)
            at = self.hits.find(1, at + 1)
        if lines:
            self.hits[:] = self.zero
        return lines

    def module_code(self, source: bytes) -> types.CodeType:
        """The whole module probed, its own statements too: imported (or reloaded) while a
        test runs, its import is that test's."""
        code = probed_code(source, self.filename, self.hits, module=True)
        tree = _code_tree(code)
        self._imported.append(tree)
        self.probed.update(map(id, tree))
        return code


class Spellings:
    """Which target file a code's file name is, answered without a system call.

    `known`: file name -> its target's real path, or None for a name that is no target's,
    filled before the tests run. A name not known is no target's unless its last component
    is a target's: then it is `maybe`, for `resolve` to settle after the run."""

    def __init__(self, targets: Iterable[str], known: dict[str, str | None]):
        self.known = dict(known)
        self.names = frozenset(_last_component(path) for path in targets)
        self.maybe: set[str] = set()

    def target(self, filename: str) -> str | None:
        found = self.known.get(filename, _UNKNOWN)
        if found is _UNKNOWN:
            found = self.known[filename] = None
            if _last_component(filename) in self.names:
                self.maybe.add(filename)
        return found

    @staticmethod
    def resolve(names: Iterable[str], targets: Iterable[str]) -> set[str]:
        """The targets that `names` turn out to be (after the run: this stats)."""
        wanted = set(targets)
        return {real for real in map(os.path.realpath, names) if real in wanted}


_UNKNOWN: Any = object()


def _last_component(filename: str) -> str:
    # A string method, not os.path.basename: a test can patch what os.path holds.
    return filename.rpartition(os.sep)[2]


class ProbeReach:
    """The lines of the target files that ran, by context, as coverage would record them.

    Duck-types the part of coverage.Coverage the Recorder uses (start, stop, switch_context),
    as monitor.LineMonitor does; `collection` is the coverage that traced the session's
    collection, whose "" context it reports beside its own."""

    def __init__(self, files: dict[str, ProbedFile], collection: Any, spellings: Spellings | None = None):
        self.files = files  # real path -> its probes
        self.collection = collection
        self.context = ""
        self.active = False
        self.lines: dict[str, dict[str, set[int]]] = {}
        self._unproven: set[str] = set()
        self._restore: Any = None
        self.spellings = spellings or Spellings(files, {path: path for path in files})
        self._maybe_unproven: set[str] = set()  # file names `contexts` resolves
        self.compiling = False  # its own compiles of a target, which the audit hook lets pass

    def audited(self, event: str, args: tuple[Any, ...]) -> None:
        """Code of a target file made or run behind the probes' back, while the tests run:
        code built field by field (cloudpickle) or replaced, a target's source compiled, or
        an unprobed code object of one executed. Its file's reach is then unproven (for a
        name that may be a target's, once `contexts` has resolved it)."""
        if self.compiling or event not in ("code.__new__", "compile", "exec"):
            return
        if event == "exec":
            code = args[0] if args else None
            if isinstance(code, types.CodeType):
                path = self.spellings.target(code.co_filename)
                if path is not None and id(code) not in self.files[path].probed:
                    self._unproven.add(path)
                elif code.co_filename in self.spellings.maybe and not self._probed(code):
                    self._maybe_unproven.add(code.co_filename)
            return
        filename = args[1] if len(args) > 1 else None
        if isinstance(filename, str):
            path = self.spellings.target(filename)
            if path is not None:
                self._unproven.add(path)
            elif filename in self.spellings.maybe:
                self._maybe_unproven.add(filename)

    def _probed(self, code: types.CodeType) -> bool:
        return any(id(code) in probed.probed for probed in self.files.values())

    def _harvest(self, keep: bool) -> None:
        for path, probed in self.files.items():
            lines = probed.take()
            if lines and keep:
                self.lines.setdefault(path, {}).setdefault(self.context, set()).update(lines)

    def start(self) -> None:
        self._harvest(keep=False)  # what ran while stopped is nobody's, as under the tracer
        self.active = True

    def stop(self) -> None:
        self._harvest(keep=self.active)
        self.active = False

    def switch_context(self, context: str) -> None:
        self._harvest(keep=self.active)
        self.context = context

    def close(self) -> None:
        if self._restore is not None:
            self._restore()
            self._restore = None
        if self in _watching:
            _watching.remove(self)

    def contexts(self) -> dict[str, dict[str, list[int]]]:
        """{real path: {context: sorted lines}}, with collection's; a file whose reach is
        unproven has only the UNPROVEN context (reach then selects every test for it)."""
        from killmap.engine.reach.tracing import coverage_contexts

        self.stop()
        self._unproven |= unprobed_files(self.files)
        self._unproven |= Spellings.resolve(self._maybe_unproven, self.files)
        merged = {path: {c: set(lines) for c, lines in found.items()} for path, found in self.lines.items()}
        if self.collection is not None:
            for path, found in coverage_contexts(self.collection).items():
                for context, lines in found.items():
                    merged.setdefault(path, {}).setdefault(context, set()).update(lines)
        for path in self._unproven:
            merged[path] = {UNPROVEN: set()}
        return {path: {c: sorted(lines) for c, lines in found.items()} for path, found in merged.items()}


def _real(cache: dict[str, str], filename: str) -> str:
    found = cache.get(filename)
    if found is None:
        found = cache[filename] = os.path.realpath(filename)
    return found


def _live_code(paths: Iterable[str], target: _Targets | None = None) -> tuple[list[types.FunctionType], bool]:
    """The functions whose code is in one of `paths`, and whether a generator, coroutine or
    async generator of theirs is yet to finish (its frame runs the code it was made with)."""
    functions, suspended = [], False
    target = target or _Targets(paths)
    function, made = types.FunctionType, _MADE
    # By exact type, not isinstance: a session holds some 30,000 objects, and neither kind can
    # be subclassed.
    for thing in every_object():
        kind = type(thing)
        if kind is function:
            if target(thing.__code__.co_filename):
                functions.append(thing)
        elif kind in made:
            code = _frame_code(thing)
            suspended = suspended or (code is not None and target(code.co_filename))
    return functions, suspended


class _Targets:
    """Whether a code's file is one of `paths`, answered once per file name: a session's code
    comes from hundreds of files, and resolving a name (a stat a path component) costs more
    than the rest of a scan."""

    def __init__(self, paths: Iterable[str]):
        self.paths = frozenset(paths)
        self.names = frozenset(os.path.basename(path) for path in self.paths)
        self.known: dict[str, bool] = {}

    def __call__(self, filename: str) -> bool:
        found = self.known.get(filename)
        if found is None:
            found = os.path.basename(filename) in self.names and os.path.realpath(filename) in self.paths
            self.known[filename] = found
        return found

    def spellings(self) -> Spellings:
        """Every file name asked of so far, with its target where it is one's."""
        known: dict[str, str | None] = {path: path for path in self.paths}
        for filename, found in self.known.items():
            known[filename] = os.path.realpath(filename) if found else None
        return Spellings(self.paths, known)


_MADE = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)


def _frame_code(made: Any) -> types.CodeType | None:
    """The code a generator, coroutine or async generator will run when next resumed (made
    and not yet started, or suspended), or None once it is finished."""
    for prefix in ("gi", "cr", "ag"):
        code = getattr(made, f"{prefix}_code", None)
        if code is not None:
            return code if getattr(made, f"{prefix}_frame", None) is not None else None
    return None


def _held_elsewhere(functions: list[types.FunctionType]) -> bool:
    """Whether some code object these functions run, or one nested in it, is referenced by
    more than them and its enclosing code: code kept aside (`KEPT = f.__code__`) can become
    a function during a test, unprobed, and be gone before the run's end could see it."""
    holders: dict[int, int] = {}
    codes: dict[int, types.CodeType] = {}
    pending = [function.__code__ for function in functions]
    code = const = None
    for function in functions:
        holders[id(function.__code__)] = holders.get(id(function.__code__), 0) + 1
    while pending:
        code = pending.pop()
        if id(code) in codes:
            continue
        codes[id(code)] = code
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                holders[id(const)] = holders.get(id(const), 0) + 1
                pending.append(const)
    code = const = None  # references of ours no more
    # Besides its holders: `codes`' own reference, and getrefcount's argument.
    return any(sys.getrefcount(codes[key]) - 2 > holders.get(key, 0) for key in codes)


def unprobed_files(files: dict[str, ProbedFile]) -> set[str]:
    """The target files some live function of which runs code without probes."""
    functions, _ = _live_code(files)
    real: dict[str, str] = {}
    found = set()
    for function in functions:
        path = _real(real, function.__code__.co_filename)
        if id(function.__code__) not in files[path].probed:
            found.add(path)
    return found


def probe_reach(include: Iterable[str], collection: Any) -> ProbeReach | None:
    """The targets' functions in this process swapped for probed copies, and imports of them
    probed from here on; None (nothing changed: coverage records the run) where that cannot
    be proven to record what the tracer would."""
    try:
        files = {path: ProbedFile(path, _source(path)) for path in map(os.path.realpath, include)}
    except (OSError, SyntaxError, ValueError, RecursionError):  # unreadable, or too deep to probe
        return None
    targets = _Targets(files)
    functions, suspended = _live_code(files, targets)
    if suspended or _held_elsewhere(functions):
        return None
    spellings = targets.spellings()
    swaps = []
    for function in functions:
        copy = files[spellings.known[function.__code__.co_filename] or ""].copy_of(function.__code__)
        if copy is None:
            return None
        swaps.append((function, copy))
    for function, copy in swaps:
        function.__code__ = copy
    reach = ProbeReach(files, collection, spellings)
    reach._restore = _probe_imports(reach, files)
    _watch(reach)
    return reach


# The audit hook a process can add but never remove: one per process, handing each event to
# the probes in force (a fork has one; the tests of this module make several in turn).
_watching: list[ProbeReach] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _watching:
        _watching[-1].audited(event, args)


def _watch(reach: ProbeReach) -> None:
    if not _watching and not getattr(_audit, "added", False):
        sys.addaudithook(_audit)
        _audit.added = True  # type: ignore[attr-defined]
    _watching.append(reach)


def _source(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _probe_imports(reach: ProbeReach, files: dict[str, ProbedFile]) -> Any:
    """The source loader, for the target files, compiles them probed (a fresh import or a
    reload during a test, cached bytecode or not); returns what puts it back."""
    loader = importlib.machinery.SourceFileLoader
    original = loader.get_code

    def get_code(self: Any, fullname: str) -> types.CodeType | None:
        # Only a spelling the session showed is probed: resolving a new one here would stat
        # inside the test's import. A target imported by another name runs unprobed, which
        # `contexts` finds (its reach is then unproven, and the tracer takes over).
        path = self.get_filename(fullname)
        real = reach.spellings.target(path) if path else None
        probed = files.get(real) if real else None
        if probed is None:
            return original(self, fullname)
        reach.compiling = True
        try:
            return probed.module_code(self.get_data(path))
        finally:
            reach.compiling = False

    loader.get_code = get_code  # type: ignore[method-assign]

    def restore() -> None:
        loader.get_code = original  # type: ignore[method-assign]

    return restore
