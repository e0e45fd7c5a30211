"""Regions: which statements a mutation changed, and which tests executed them.

Coverage.py records, per test (a "context"), the lines each test executed. A mutation's
region is the set of lines of the innermost statements it changed. A region inside a
function body is reached only by tests that run that function's changed statements; a
region outside any function body (module or class level, a def line, a decorator, a
default argument) runs at import, so every test that imports the module reaches it.

The same idea makes test selection sound for overreach: a test that never executes the
mutated statements in the original executes the same code, in the same order, with the
same values, under the mutant: the only statements that differ are ones it never runs.
(A change of line numbers alone is invisible to it too, unless a test inspects its own
tracebacks or source; the gate accepts that blind spot and documents it.)

But for state an earlier test left: a memo (`if key not in CACHE: ... CACHE[key] = built`)
runs its block for the first test that asks and serves every later one from the module's
state, so the tests that read what the mutant built never run the changed statements.
A changed statement under a condition that reads module state a function writes (`CACHE`,
a `global`), or in a handler of a `try` whose body reads it, is also reached by every test
that evaluated that condition or body: `Region.entry_lines`. (isodate's regex cache: one
test per worker ran the mutated pattern, and the gate said `held` where three went red.)
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@dataclass(frozen=True)
class Region:
    lines: frozenset[int]  # lines whose execution means "this test ran the change"
    import_time: bool  # True when the change runs at import (module or class level)
    # Lines a test runs on its way to the change without running its statements: a memo's
    # condition over it (the test may read what the change built for an earlier one), the
    # `try` body whose exceptions a changed `except` clause is asked about.
    entry_lines: frozenset[int] = frozenset()
    # The change is in a function whose results a decorator caches (functools.lru_cache): a
    # call it answers from the cache runs no line of it, so no line says who read the mutant's.
    cached: bool = False
    # The change is in a function that writes state other tests share (a module's global, a
    # class's attribute, `sys.modules`): a test may read what it wrote by another way than
    # the function (six: `from six.moves.queue import Queue` met the module an earlier test's
    # call stored, and ran no line of it).
    writes_state: bool = False

    @property
    def reach_lines(self) -> frozenset[int]:
        """The lines whose execution means a test ran the change or may read what it built."""
        return self.lines | self.entry_lines

    def reached_by(self, coverage_of_file: dict[str, list[int]] | None) -> tuple[str, ...]:
        """Test ids (coverage contexts) that executed the region; "" is import time."""
        if not coverage_of_file:
            return ()
        # isdisjoint walks the context's lines without building a set of what they share: a
        # sweep asks this for every mutant against every test's lines.
        lines = self.reach_lines
        return tuple(sorted(ctx for ctx, ran in coverage_of_file.items() if ctx and not lines.isdisjoint(ran)))

    def executed_at_all(self, coverage_of_file: dict[str, list[int]] | None) -> bool:
        lines = self.reach_lines
        return any(not lines.isdisjoint(ran) for ran in (coverage_of_file or {}).values())


@functools.lru_cache(maxsize=16)
def _parsed(source: str) -> ast.Module | None:
    """One parse per text: a sweep asks about hundreds of mutants of the same file."""
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


@functools.lru_cache(maxsize=16)
def _statements_of(source: str) -> tuple[tuple[ast.stmt, bool], ...] | None:
    tree = _parsed(source)
    return None if tree is None else tuple(_statements(tree))


def region_of(source: str, changed_lines: tuple[int, ...]) -> Region:
    statements = _statements_of(source)
    if statements is None:
        return Region(frozenset(changed_lines), True)
    lines: set[int] = set()
    state: set[int] = set()
    import_time = cached = writes = False
    text = _lines_of(source)
    for line in _code_lines(changed_lines, text):
        header = _handler_header(statements, line)
        if header is not None:
            # `except (KeyError, TypeError):` is evaluated whenever the body raises, matched or
            # not: a test whose exception it did not catch ran it (funcy's get_in: the handler's
            # body alone selected the two tests it caught, not the one it let through). The
            # header runs no statement of its own, which the probes record; every test that
            # entered the `try` ran its body's first one.
            header_lines, entered, in_function = header
            lines.update(header_lines)
            state.add(entered)
            import_time = import_time or not in_function
            continue
        found = _innermost(statements, line, text)
        if found is None:
            import_time = True
            lines.add(line)
            continue
        statement, in_function = found
        if not in_function:
            import_time = True
        lines.update(_own_lines(statement))
        if in_function:
            state.update(_state_guard_lines(source, statement))
            cached = cached or _in_cached_function(source, statement)
            writes = writes or _in_spans(_state_writer_spans(source), statement)
    return Region(frozenset(lines), import_time, frozenset(state - lines), cached, writes)


def _handler_header(statements: tuple[tuple[ast.stmt, bool], ...], line: int) -> tuple[set[int], int, bool] | None:
    """The lines of the `except` clause's header holding `line` (its types and name, up to
    its body), the first line of its `try` body, and whether it sits in a function; None
    when the line is in no such header."""
    for statement, in_function in statements:
        for handler in getattr(statement, "handlers", ()) if isinstance(statement, _TRIES) else ():
            last = max(handler.lineno, getattr(handler.type, "end_lineno", None) or handler.lineno)
            if handler.lineno <= line <= last:
                body = getattr(statement, "body", None) or [handler]
                return set(range(handler.lineno, last + 1)), body[0].lineno, in_function
    return None


_TRIES = tuple(t for t in (ast.Try, getattr(ast, "TryStar", None)) if t is not None)


# Decorators that answer a call from what an earlier call returned: functools' and cachetools'.
_CACHING = frozenset({"lru_cache", "cache", "cached", "memoize", "memoized"})


@functools.lru_cache(maxsize=16)
def _cached_spans(source: str) -> tuple[tuple[int, int], ...]:
    """(first body line, last line) of every function a caching decorator wraps."""
    tree = _parsed(source)
    if tree is None:
        return ()
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            for decorator in node.decorator_list:
                called = decorator.func if isinstance(decorator, ast.Call) else decorator
                name = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", "")
                if name in _CACHING:
                    spans.append((node.body[0].lineno, node.end_lineno or node.lineno))
    return tuple(spans)


def _in_cached_function(source: str, statement: ast.stmt) -> bool:
    return _in_spans(_cached_spans(source), statement)


def _in_spans(spans: tuple[tuple[int, int], ...], statement: ast.stmt) -> bool:
    return any(first <= statement.lineno <= last for first, last in spans)


@functools.lru_cache(maxsize=16)
def _state_writer_spans(source: str) -> tuple[tuple[int, int], ...]:
    """(first body line, last line) of every function that writes shared state: a name the
    module binds (an item, an attribute, a mutating method, a `global` rebound), a class's
    shared attribute, or anything reached through an imported module (`sys.modules[k] = m`,
    `os.environ.update(...)`, `module.attr = v`)."""
    tree = _parsed(source)
    if tree is None:
        return ()
    _, state = _guards(source)
    imported = {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    return tuple(
        (node.body[0].lineno, node.end_lineno or node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and _writes_shared(node, state, frozenset(imported))
    )


def _writes_shared(
    function: ast.FunctionDef | ast.AsyncFunctionDef, state: frozenset[str], imported: frozenset[str]
) -> bool:
    declared = {name for n in ast.walk(function) if isinstance(n, ast.Global) for name in n.names}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in declared:
            return True
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
            written = node.value
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            written = node
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATING:
            written = node.func.value
        else:
            continue
        if isinstance(written, ast.Name) and written.id in state:
            return True
        if isinstance(written, ast.Attribute) and "." + written.attr in state:
            return True
        root = written
        while isinstance(root, ast.Attribute):
            root = root.value
        if root is not written and isinstance(root, ast.Name) and root.id in imported:
            return True
    return False


# What a function does to a module-level name that makes it state: a method call that changes
# a container in place.
_MUTATING = frozenset(
    {"append", "add", "update", "setdefault", "pop", "popitem", "clear", "extend", "insert", "remove", "discard"}
)


@functools.lru_cache(maxsize=16)
def _guards(source: str) -> tuple[dict[tuple[int, ...], list[ast.stmt]], frozenset[str]]:
    """Per statement (by `_place`: another parse of the text has other objects), the
    statements it sits under in its function, innermost first, as `if`/`while` bodies or
    `try` handlers and else blocks; and the module's state: the names bound at module level
    that a function writes (an item, an attribute, a mutating method, or a `global` it
    rebinds)."""
    tree = _parsed(source)
    under: dict[tuple[int, ...], list[ast.stmt]] = {}
    if tree is None:
        return under, frozenset()

    def visit(node: ast.AST, chain: list[ast.stmt]) -> None:
        for name, value in ast.iter_fields(node):
            guarded = isinstance(node, (ast.If, ast.While)) or (
                isinstance(node, ast.Try) and name in ("handlers", "orelse")
            )
            inner = [node, *chain] if guarded and isinstance(node, ast.stmt) else chain
            if isinstance(node, _FUNCTIONS) and name == "body":
                inner = []
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.stmt):
                    under[_place(child)] = inner
                if isinstance(child, ast.AST):
                    visit(child, inner)

    visit(tree, [])
    return under, _module_state(tree)


def _place(statement: ast.stmt) -> tuple[int, ...]:
    return (statement.lineno, statement.col_offset, statement.end_lineno or 0, statement.end_col_offset or 0)


def _module_state(tree: ast.Module) -> frozenset[str]:
    bound = {
        target.id
        for node in tree.body
        for target in (node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)])
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(target, ast.Name)
    }
    written: set[str] = set()
    for function in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        declared = {name for n in ast.walk(function) if isinstance(n, ast.Global) for name in n.names}
        for node in ast.walk(function):
            if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, (ast.Store, ast.Del)):
                if isinstance(node.value, ast.Name):
                    written.add(node.value.id)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATING:
                if isinstance(node.func.value, ast.Name):
                    written.add(node.func.value.id)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in declared:
                written.add(node.id)
    return frozenset(bound & written) | _class_state(tree)


def _class_state(tree: ast.Module) -> frozenset[str]:
    """A class's attributes its methods write, shared by every instance (".attr"): bound in
    the class body, written through `cls`, the class's name, or an item or mutating method
    of `self.attr`, and never rebound on `self` (which would make it each instance's own)."""
    found: set[str] = set()
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        attrs = {
            target.id
            for node in cls.body
            if isinstance(node, (ast.Assign, ast.AnnAssign))
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Name)
        }
        methods = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
        nodes = [node for method in methods for node in ast.walk(method)]
        stores = [n for n in nodes if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)]
        own = {n.attr for n in stores if _on(n, {"self"})}
        for node in nodes:
            written: ast.expr
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and _on(node, {"cls", cls.name}):
                written = node
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
                written = node.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATING:
                written = node.func.value
            else:
                continue
            if isinstance(written, ast.Attribute) and _on(written, {"self", "cls", cls.name}):
                if written.attr in attrs and written.attr not in own:
                    found.add("." + written.attr)
    return frozenset(found)


def _on(node: ast.Attribute, owners: set[str]) -> bool:
    return isinstance(node.value, ast.Name) and node.value.id in owners


def _state_guard_lines(source: str, statement: ast.stmt) -> set[int]:
    """The lines of each condition (an `if`'s or `while`'s header, a `try`'s body) over the
    statement in its function that reads the module's state."""
    under, state = _guards(source)
    if not state:
        return set()
    found: set[int] = set()
    for guard in under.get(_place(statement), ()):
        read = guard.body if isinstance(guard, ast.Try) else [guard.test]  # type: ignore[attr-defined]
        if any(_reads(n, state) for part in read for n in ast.walk(part)):
            found.update(line for part in read for line in range(part.lineno, (part.end_lineno or part.lineno) + 1))
    return found


def _reads(node: ast.AST, state: frozenset[str]) -> bool:
    """Whether a node names module state (a name) or a class's shared attribute (".attr")."""
    if isinstance(node, ast.Name):
        return node.id in state
    return isinstance(node, ast.Attribute) and "." + node.attr in state


def _statements(tree: ast.AST) -> list[tuple[ast.stmt, bool]]:
    """Every statement with whether it sits inside a function body. A function's docstring
    runs when its `def` does (it becomes `__doc__`, which doctest collects): it is where the
    def is, not in the body (toolz's flip: a doctest edit swapped into the running function
    changed nothing, and a fresh import of the mutant turned the doctest red)."""
    found: list[tuple[ast.stmt, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for field_name, value in ast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            for child in children:
                if not isinstance(child, ast.AST):
                    continue
                inside = in_function or (isinstance(node, _FUNCTIONS) and field_name == "body")
                if isinstance(child, ast.stmt):
                    found.append((child, in_function if _docstring_of(node, child) else inside))
                visit(child, inside)

    visit(tree, False)
    return found


def _docstring_of(node: ast.AST, statement: ast.stmt) -> bool:
    """Whether the statement is the function's docstring: its body's first statement, a string."""
    return (
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body[0] is statement
        and isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _innermost(
    statements: tuple[tuple[ast.stmt, bool], ...], line: int, text: tuple[str, ...]
) -> tuple[ast.stmt, bool] | None:
    best: tuple[ast.stmt, bool] | None = None
    for statement, in_function in statements:
        end = statement.end_lineno or statement.lineno
        if statement.lineno <= line <= end:
            if best is None or statement.lineno >= best[0].lineno and end <= (best[0].end_lineno or 0):
                best = (statement, in_function)
    if best is None:
        return None
    statement, in_function = best
    body = _body_statements(statement)
    if body and (line >= body[0].lineno or _atop_the_block(statement, line, text)):
        # The line is inside a compound statement's block but in no child statement (a
        # blank or comment line left by a deletion): the nearest following statement is
        # what runs in the deleted one's place.
        later = [s for s in body if s.lineno > line]
        nearest = later[0] if later else body[-1]
        inner = isinstance(statement, _FUNCTIONS) or in_function
        return nearest, inner
    return best


@functools.lru_cache(maxsize=16)
def _code_lines(changed_lines: tuple[int, ...], text: tuple[str, ...]) -> tuple[int, ...]:
    """The changed lines but blank or comment ones: a blank line a mutation took along runs
    nothing, and, lying between two functions, read as module level, so that every test
    "reached" a call deleted from the end of idna's check_label. Every line, if none is
    left (a change to blank lines or comments alone). A line of a multi-line string is
    left out only when other lines changed too, which then place the change."""

    def code(n: int) -> bool:
        line = text[n - 1].strip() if 0 < n <= len(text) else ""
        return bool(line) and not line.startswith("#")

    return tuple(n for n in changed_lines if code(n)) or changed_lines


def _lines_of(source: str) -> tuple[str, ...]:
    return tuple(source.splitlines())


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _atop_the_block(statement: ast.stmt, line: int, text: tuple[str, ...]) -> bool:
    """A blank or comment line after everything in a compound statement's header (its
    signature, its condition) and before its first statement: a comment a fix put atop a
    function's body belongs to the body, and runs nothing at import. A line of the header
    itself (a closing `):`, a line of a string default) is never one: only lines after the
    header's last node are asked, and only blank or comment ones count."""
    last = statement.lineno
    for name, value in ast.iter_fields(statement):
        if name in _BLOCKS:
            continue
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.AST):
                last = max([last, *(getattr(node, "end_lineno", 0) or 0 for node in ast.walk(child))])
    written = text[line - 1].strip() if 0 < line <= len(text) else ""
    return line > last and (not written or written.startswith("#"))


def _body_statements(statement: ast.stmt) -> list[ast.stmt]:
    body: list[ast.stmt] = []
    for field_name in ("body", "orelse", "finalbody", "handlers"):
        for child in getattr(statement, field_name, []) or []:
            if isinstance(child, ast.stmt):
                body.append(child)
            elif isinstance(child, ast.ExceptHandler):
                body.extend(child.body)
    return sorted(body, key=lambda s: s.lineno)


def _own_lines(statement: ast.stmt) -> set[int]:
    """A simple statement's lines, or a compound statement's header lines."""
    body = _body_statements(statement)
    end = (body[0].lineno - 1) if body else (statement.end_lineno or statement.lineno)
    decorators = [d.lineno for d in getattr(statement, "decorator_list", [])]
    start = min([statement.lineno, *decorators])
    return set(range(start, max(end, statement.lineno) + 1))


def headed_classes(source: str, changed_lines: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """(first line, last line) of each class whose header (its decorators, bases and
    keywords) holds a changed line: a change there acts on every method of the class, as
    a change to a def's signature acts on its body."""
    tree = _parsed(source)
    if tree is None:
        return ()
    spans = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef) or not node.body:
            continue
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        if any(first <= line < node.body[0].lineno for line in changed_lines):
            spans.append((first, node.end_lineno or node.lineno))
    return tuple(spans)


def enclosing_functions(source: str, changed_lines: tuple[int, ...]) -> frozenset[int]:
    """The def lines of the innermost function or method holding each changed line in
    its body; a line at module or class level holds none."""
    tree = _parsed(source)
    if tree is None:
        return frozenset()
    functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    found: set[int] = set()
    for line in changed_lines:
        holding = [f for f in functions if f.body and f.body[0].lineno <= line <= (f.end_lineno or f.lineno)]
        if holding:
            found.add(max(holding, key=lambda f: f.lineno).lineno)
    return frozenset(found)


def rebound_names(
    original: str, mutated: str, original_lines: tuple[int, ...], mutated_lines: tuple[int, ...]
) -> frozenset[str] | None:
    """Names bound on a line the mutation changed, on either side (assigned, deleted, moved
    under a condition, a parameter, an import, a def): a NameError or UnboundLocalError for
    one of them may be the mutant's own doing. Any other name is bound exactly where the
    original binds it. None when either text does not parse."""
    names: set[str] = set()
    for text, lines in ((original, set(original_lines)), (mutated, set(mutated_lines))):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return None
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) not in lines:
                continue
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
            elif isinstance(node, ast.ExceptHandler) and node.name:
                names.add(node.name)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                names.update(node.names)
    return frozenset(names)


@functools.lru_cache(maxsize=8192)  # asked of every left-out test before each red, of every mutant
def writes_shared_state(root: Path, test_id: str) -> bool:
    """Whether a test writes state a later test of its file may read: in its own body, an
    attribute of its class (`self.__class__.x = `, `type(self).x = `, `cls.x = `, or the
    class by name), a module-level name it declares `global`, or an item or attribute of a
    module-level name. Read from the test file's source; False when it cannot be read."""
    path, _, rest = test_id.partition("::")
    names = [part.split("[", 1)[0] for part in rest.split("::") if part]
    function = _test_function(str(root / path), tuple(names))
    return function is not None and _writes_state(function, _module_names(str(root / path)))


@functools.lru_cache(maxsize=64)
def _test_tree(path: str) -> ast.Module | None:
    try:
        return ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None


def _test_function(path: str, names: tuple[str, ...]) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The test's function in its file: `Class::method` or `function`, nested classes too."""
    node: ast.AST | None = _test_tree(path)
    for name in names:
        body = getattr(node, "body", [])
        node = next((n for n in body if getattr(n, "name", None) == name), None)
        if node is None:
            return None
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


@functools.lru_cache(maxsize=64)
def _module_names(path: str) -> frozenset[str]:
    """The names a test module binds at its top level: its classes and its variables."""
    tree = _test_tree(path)
    found: set[str] = set()
    for node in tree.body if tree is not None else ():
        if isinstance(node, ast.ClassDef):
            found.add(node.name)
        for target in node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]:
            if isinstance(target, ast.Name):
                found.add(target.id)
    return frozenset(found)


def _writes_state(function: ast.FunctionDef | ast.AsyncFunctionDef, module: frozenset[str]) -> bool:
    declared = {name for n in ast.walk(function) if isinstance(n, ast.Global) for name in n.names}

    def shared(owner: ast.expr) -> bool:
        if isinstance(owner, ast.Name):
            return owner.id in module or owner.id == "cls"
        if isinstance(owner, ast.Attribute):  # self.__class__
            return owner.attr == "__class__"
        if isinstance(owner, ast.Call):  # type(self)
            return isinstance(owner.func, ast.Name) and owner.func.id == "type"
        return False

    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in declared:
            return True
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Store) and shared(node.value):
            return True
    return False
