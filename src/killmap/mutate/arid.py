"""Arid mutants: changes no reviewer acts on, never built, each counted by its rule.

A mutant is arid when every change it makes lies in code of a kind tests rightly do not
pin down. Each rule is named, and switched off by `arid_RULE = false` in a catalog's
`[sweep]` table:

- `logging`: a call of a logger's method (`log.debug(...)`, `logger.warning(...)`,
  `logging.info(...)`: a receiver named log, logger or logging, or ending in `_log` or
  `_logger`), its arguments, and the statement that is only that call;
- `messages`: the message of `warnings.warn` (its first argument or `message=`) and of
  `assert cond, message`;
- `stacklevel`: a `stacklevel=` argument, wherever it is passed;
- `docstrings`: a function's or class's docstring;
- `annotations`: a type annotation, and the type `typing.cast` is given (its first
  argument, or `typ=`: `cast` returns its value unchanged, whatever the type; called as
  `cast`, `typing.cast`, `typing_extensions.cast` or `t.cast`, `import typing as t`);
- `repr`: the body of a `__repr__`;
- `exceptions` (off unless `arid_exceptions = true`): the literal message of a raised
  exception (`raise Error("...")`, `raise Error(f"...")`: its first argument, a string
  literal), and in the `__init__` of an exception class (a base named `...Error`,
  `...Exception`, `...Warning` or `BaseException`) a statement that only calls
  `super().__init__(...)`, which sets nothing but the exception's `args`. The exception is
  still raised where it was; only its wording changes. Merging two raised messages into one
  (`merge-strings`) is never arid: that makes two refusals one;
- `truth`: a literal bound to a local name (`name = 1`, a parameter's default) that is only
  ever read for its truth (an `if`, `while`, `assert` or conditional test, `not`, an operand
  of `and`/`or` that is itself read for its truth, `bool(name)`), changed to a literal of the
  same truth. Every other occurrence of the name in the function (another binding, a
  `global`, a read for its value, a nested definition of it) makes it not arid. What it
  cannot see: `locals()`, `eval` or a debugger reading the name.

A change to a call is arid when every argument it changes is (mutmut's argument removals).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

import libcst as cst
from libcst.helpers import get_full_name_for_node

from killmap.catalog.contract import ARID_RULES

_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"})
_LOGGER = re.compile(r"^_*(log|logger|logging)$|_(log|logger)$", re.IGNORECASE)
_WARN = frozenset({"warnings.warn", "warn"})
_EMPTY = cst.Module(body=[])
_TOKENS = ("log", "warn", "stacklevel", "assert", "cast")  # a definition without them has no arid call
# typing.cast's names: a receiver of another `.cast` (memoryview.cast("B")) uses its argument.
_CASTS = frozenset({"cast", "typing.cast", "typing_extensions.cast", "t.cast"})
_LITERAL_BINDING = re.compile(r"\b\w+\s*=\s*[-+]?(?:\d|\.\d|[rbuRBU]{0,2}['\"])")

__all__ = ["ARID_RULES", "Arid"]


class Arid:
    """The arid nodes of the definitions a sweep mutates, found in one walk of each, by
    identity with the rule that makes them arid; and whether a mutation is."""

    def __init__(
        self,
        rules: frozenset[str],
        definitions: Iterable[tuple[cst.FunctionDef, str]],
        module: cst.Module | None = None,
    ):
        """`definitions`: each with its text, which says whether it needs a walk at all;
        `module`: theirs, where exception classes are looked for."""
        self.rules = rules
        self.nodes: dict[int, str] = {}
        self.truth_only: set[int] = set()
        self.raised: set[int] = set()  # a raised exception's message, and what it is made of
        self.required: set[int] = set()  # arguments arid to change, not to remove (cast's type)
        self.tokens = (*_TOKENS, "raise") if "exceptions" in rules else _TOKENS
        if rules:
            for definition, text in definitions:
                _find(self, definition, text)
            if module is not None and "exceptions" in rules:
                for init in _exception_inits(module.body):
                    _super_init_statements(self, init)

    def mark(self, node: cst.CSTNode, rule: str) -> None:
        if rule not in self.rules:
            return
        stack = [node]
        while stack:
            current = stack.pop()
            self.nodes.setdefault(id(current), rule)
            stack.extend(current.children)

    def mark_one(self, node: cst.CSTNode, rule: str) -> None:
        if rule in self.rules:
            self.nodes.setdefault(id(node), rule)

    def rule_of(
        self, original: cst.CSTNode, replacement: cst.CSTNode | cst.RemovalSentinel, op: str = ""
    ) -> str | None:
        """The rule that makes this change arid, or None. Merging two raised messages into one
        (`merge-strings`) is never arid: it makes two refusals one, which callers tell apart."""
        if not self.nodes and not self.truth_only:
            return None
        rule = self.nodes.get(id(original))
        if rule is not None:
            return None if op.endswith("merge-strings") and id(original) in self.raised else rule
        if isinstance(original, cst.Call) and isinstance(replacement, cst.Call):
            return self._changed_arguments(original, replacement)
        if id(original) in self.truth_only and isinstance(replacement, cst.CSTNode):
            return "truth" if _truth(original) is not None and _truth(original) == _truth(replacement) else None
        return None

    def _changed_arguments(self, original: cst.Call, replacement: cst.Call) -> str | None:
        """The rule of the arguments a change of a call changes, when they all have one."""
        old, new = list(original.args), list(replacement.args)
        if not original.func.deep_equals(replacement.func):
            return None
        if len(new) == len(old):
            changed = [a for a, b in zip(old, new, strict=True) if not a.deep_equals(b)]
        elif len(new) == len(old) - 1:  # one removed: those after it moved up by one
            at = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if not a.deep_equals(b)), len(new))
            after = all(a.deep_equals(b) for a, b in zip(old[at + 1 :], new[at:], strict=True))
            changed = [old[at]] if after else old
            if any(id(a) in self.required for a in changed):
                return None  # `cast(value)` raises TypeError: no longer the call it was
        else:
            return None
        rules = {self.nodes.get(id(a)) for a in changed}
        return rules.pop() if changed and len(rules) == 1 and None not in rules else None


def _truth(node: cst.CSTNode) -> bool | None:
    try:
        return bool(ast.literal_eval(_EMPTY.code_for_node(node).strip()))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _receiver(call: cst.Call) -> str | None:
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in _LOG_METHODS:
        name = get_full_name_for_node(call.func.value)
        return name.rsplit(".", 1)[-1] if name else None
    return None


def _find(arid: Arid, definition: cst.FunctionDef, text: str) -> None:
    """A walk of a definition, each node asked whether it opens an arid subtree; only where
    its text holds what an arid node is made of. A walk of libcst's nodes costs as much as a
    tenth of the file's enumeration, and most definitions have none."""
    nested = text.count("def ") > 1 or "class " in text
    truth = "truth" in arid.rules and _LITERAL_BINDING.search(text) is not None
    if not nested and not any(token in text for token in arid.tokens):
        _docstring(arid, definition)
        if definition.name.value == "__repr__":
            arid.mark(definition.body, "repr")
        if truth:
            arid.truth_only.update(_truth_only(definition))
        return
    stack: list[cst.CSTNode] = [definition]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.SimpleStatementLine):
            _logging_statement(arid, node)
        elif isinstance(node, cst.Call):
            _call(arid, node)
        elif isinstance(node, cst.Assert) and node.msg is not None:
            arid.mark(node.msg, "messages")
        elif isinstance(node, cst.Raise) and isinstance(node.exc, cst.Call) and "exceptions" in arid.rules:
            _raised_message(arid, node.exc)
        elif isinstance(node, cst.Annotation):
            arid.mark(node, "annotations")
            continue
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            _docstring(arid, node)
            if isinstance(node, cst.FunctionDef) and node.name.value == "__repr__":
                arid.mark(node.body, "repr")
            if isinstance(node, cst.FunctionDef) and "truth" in arid.rules:
                arid.truth_only.update(_truth_only(node))
        stack.extend(node.children)


def _logging_statement(arid: Arid, node: cst.SimpleStatementLine) -> None:
    for small in node.body:
        value = small.value if isinstance(small, cst.Expr) else None
        if isinstance(value, cst.Call) and _LOGGER.search(_receiver(value) or ""):
            arid.mark(small, "logging")
            if len(node.body) == 1:  # delete-call removes the whole line
                arid.mark_one(node, "logging")


def _call(arid: Arid, node: cst.Call) -> None:
    if _LOGGER.search(_receiver(node) or ""):
        arid.mark(node, "logging")
    elif node.args and get_full_name_for_node(node.func) in _WARN:
        named = [a for a in node.args if a.keyword is not None and a.keyword.value == "message"]
        first = node.args[0]
        message = named[0] if named else (first if first.keyword is None and not first.star else None)
        if message is not None:
            arid.mark(message, "messages")
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "stacklevel":
            arid.mark(arg, "stacklevel")
    if get_full_name_for_node(node.func) in _CASTS and node.args:
        typed = [a for a in node.args if a.keyword is not None and a.keyword.value == "typ"]
        first = node.args[0]
        cast_to = typed[0] if typed else (first if first.keyword is None and not first.star else None)
        if cast_to is not None:
            arid.mark(cast_to, "annotations")
            arid.required.add(id(cast_to))


_STRINGS = (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)
_EXCEPTION_BASE = re.compile(r"(Error|Exception|Warning)$|^BaseException$")


def _exception_inits(body) -> list[cst.FunctionDef]:
    """The `__init__` of every class (nested in classes too) with a base named as an exception."""
    found: list[cst.FunctionDef] = []
    for node in body:
        if not isinstance(node, cst.ClassDef):
            continue
        inner = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        found += _exception_inits(inner)
        names = [get_full_name_for_node(base.value) or "" for base in node.bases]
        if any(_EXCEPTION_BASE.search(name.rsplit(".", 1)[-1]) for name in names):
            found += [f for f in inner if isinstance(f, cst.FunctionDef) and f.name.value == "__init__"]
    return found


def _super_init_statements(arid: Arid, init: cst.FunctionDef) -> None:
    body = init.body.body if isinstance(init.body, cst.IndentedBlock) else ()
    for line in body:
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            continue
        call = line.body[0].value if isinstance(line.body[0], cst.Expr) else None
        func = call.func if isinstance(call, cst.Call) else None
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "__init__"
            and isinstance(func.value, cst.Call)
            and get_full_name_for_node(func.value.func) == "super"
        ):
            arid.mark(line, "exceptions")


def _raised_message(arid: Arid, exc: cst.Call) -> None:
    """`raise Error("text")`: the text, when it is a string literal passed first."""
    first = exc.args[0] if exc.args else None
    if first is not None and first.keyword is None and not first.star and isinstance(first.value, _STRINGS):
        arid.mark(first, "exceptions")
        stack: list[cst.CSTNode] = [first]
        while stack:
            node = stack.pop()
            arid.raised.add(id(node))
            stack.extend(node.children)


def _docstring(arid: Arid, node: cst.FunctionDef | cst.ClassDef) -> None:
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    first = body[0] if body else None
    if isinstance(first, cst.SimpleStatementLine) and len(first.body) == 1:
        small = first.body[0]
        if isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
            arid.mark(first, "docstrings")


def _truth_only(function: cst.FunctionDef) -> set[int]:
    """The literals bound to this function's names that are only ever read for their truth."""
    bound: dict[str, list[cst.CSTNode]] = {}  # name -> the literals bound to it
    spoilt: set[str] = set()
    for param in (*function.params.params, *function.params.kwonly_params, *function.params.posonly_params):
        if param.default is not None and _truth(param.default) is not None:
            bound.setdefault(param.name.value, []).append(param.default)
        else:
            spoilt.add(param.name.value)
    body = function.body
    for node, truthy, binding in _names(body, False):
        if isinstance(binding, cst.Assign) and _truth(binding.value) is not None:
            bound.setdefault(node.value, []).append(binding.value)
        elif not truthy:
            spoilt.add(node.value)
    return {id(literal) for name, literals in bound.items() if name not in spoilt for literal in literals}


def _names(node: cst.CSTNode, truthy: bool, binding: cst.CSTNode | None = None):
    """Every Name that stands for a variable, with whether it is read only for its truth, and
    the `name = value` statement it is the single target of (else None)."""
    if isinstance(node, cst.Name):
        yield node, truthy and binding is None, binding
        return
    if isinstance(node, cst.Attribute):
        yield from _names(node.value, False)
        return
    if isinstance(node, cst.Arg):
        yield from _names(node.value, _is_bool_call_arg(node) and truthy)
        return
    if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
        yield from _names(node.targets[0].target, False, node)
        yield from _names(node.value, False)
        return
    for child in node.children:
        yield from _names(child, _child_truthy(node, child, truthy))


def _child_truthy(parent: cst.CSTNode, child: cst.CSTNode, truthy: bool) -> bool:
    if isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.Assert)) and child is parent.test:
        return True
    if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
        return True
    if isinstance(parent, cst.BooleanOperation):
        return truthy and child is not parent.operator
    if isinstance(parent, cst.Call) and get_full_name_for_node(parent.func) == "bool" and len(parent.args) == 1:
        return True
    return False


def _is_bool_call_arg(arg: cst.Arg) -> bool:
    return arg.keyword is None and not arg.star
