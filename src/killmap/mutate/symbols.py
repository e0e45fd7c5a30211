"""Where a target's symbol is defined: `path::Class.method` to the one libcst node it names.

One resolver for every command that reads a target (the operators, `--changed`, the sweep),
so that a symbol means the same thing everywhere. Real code defines things where a naive
top-level scan does not look, and each of these was met in a project nobody here wrote:
- inside a module-level `if`, `try` or `with` (dateutil's `enfold`, under
  `if hasattr(datetime, "fold"):`): a definition there is still the module's;
- a property and its setter share one name (dateutil's `relativedelta.weeks`): the name is the
  property (its getter), and `weeks.setter` / `weeks.deleter` name the accessors;
- `typing.overload` stubs share the name of the one implementation that runs: the name is the
  implementation;
- a name bound by assignment beside its `def` or `class` (typing_extensions:
  `if hasattr(typing, "override"): override = typing.override` / `else: def override(...)`):
  the name is the definition, as it already is beside an import of the same name.
Two real alternatives (an `if`/`else` defining one function twice) stay ambiguous: the error
says so, and how to aim at one of them anyway.
"""

from __future__ import annotations

import libcst as cst

from killmap.catalog.entries import nearest

ACCESSORS = ("setter", "deleter", "getter")


class SymbolError(Exception):
    """The symbol names no definition, or more than one."""


class AmbiguousSymbol(SymbolError):
    """The symbol names more than one definition: `count` of `name` in `scope` (a qualified
    name in `path`; "" for the module). Its message advises a catalog entry; a command
    with no op to narrow by (the sweep) words its own from these."""

    def __init__(self, name: str, count: int, path: str, scope: str):
        super().__init__(
            f"{name!r} is defined {count} times in {path}; the target is ambiguous "
            "(aim at the scope that holds them all and narrow with op 'replace')"
        )
        self.name, self.count, self.path, self.scope = name, count, path, scope


def resolve_symbol(module: cst.Module, symbol: str, path: str) -> cst.CSTNode:
    parts = symbol.split(".")
    body: list[cst.CSTNode] = list(module.body)
    node: cst.CSTNode | None = None
    depth = 0
    while depth < len(parts):
        part = parts[depth]
        accessor = parts[depth + 1] if depth + 1 < len(parts) and parts[depth + 1] in ACCESSORS else None
        found = _one_of(definitions(body, part), part, accessor)
        where = ".".join(parts[: depth + 1])
        if not found:
            near = [".".join([*parts[:depth], name]) for name in nearest(part, _names_in(body))]
            hint = f"; did you mean {' or '.join(repr(name) for name in near)}?" if near else ""
            missing = f" ({where!r} not found)" if where != symbol else ""
            raise SymbolError(f"no symbol {symbol!r} in {path}{missing}{hint}")
        if len(found) > 1:
            raise AmbiguousSymbol(part, len(found), path, ".".join(parts[:depth]))
        node = found[0]
        depth += 2 if accessor and _accessor_of(node, part) == accessor else 1
        inner = getattr(node, "body", None)
        body = list(getattr(inner, "body", ())) if isinstance(node, (cst.ClassDef, cst.FunctionDef)) else []
    assert node is not None
    return node


def definitions(body: list[cst.CSTNode], name: str) -> list[cst.CSTNode]:
    """Every statement of this scope that defines `name`, looking through the compound
    statements that do not open a scope of their own (if/elif/else, try, with)."""
    found: list[cst.CSTNode] = []
    for statement in body:
        if _defines(statement, name):
            found.append(statement)
        for block in _blocks(statement):
            found.extend(definitions(list(block.body), name))
    return found


def _blocks(statement: cst.CSTNode) -> list[cst.BaseSuite]:
    if isinstance(statement, cst.If):
        blocks = [statement.body]
        orelse = statement.orelse
        while orelse is not None:
            blocks.append(orelse.body)
            orelse = orelse.orelse if isinstance(orelse, cst.If) else None
        return blocks
    if isinstance(statement, (cst.Try, cst.TryStar)):
        return [
            statement.body,
            *(h.body for h in statement.handlers),
            *([statement.orelse.body] if statement.orelse else []),
            *([statement.finalbody.body] if statement.finalbody else []),
        ]
    if isinstance(statement, cst.With):
        return [statement.body]
    return []


def _one_of(found: list[cst.CSTNode], name: str, accessor: str | None) -> list[cst.CSTNode]:
    """Narrow same-named definitions to the one the name means (see the module's docstring):
    the defs and classes when there are any, of them the implementations, then the accessor
    named or the plain one."""
    if len(found) < 2:
        return found
    # An assignment has no body of its own to mutate: beside a def or class it is the other
    # way of getting the name (typing's own `override`, an alias), never a rival target. A
    # name only assignments bind keeps them all, and stays ambiguous when it has several.
    defined: list[cst.CSTNode] = [n for n in found if isinstance(n, (cst.FunctionDef, cst.ClassDef))]
    if defined:
        found = defined
    implementations = [n for n in found if not _decorated_by(n, "overload")]
    if implementations:
        found = implementations
    if accessor is not None:
        chosen = [n for n in found if _accessor_of(n, name) == accessor]
        if chosen:
            return chosen
    plain = [n for n in found if _accessor_of(n, name) is None]
    return plain if len(found) > len(plain) else found


def _accessor_of(node: cst.CSTNode, name: str) -> str | None:
    """ "setter" for a `@name.setter` function, and so on; None otherwise."""
    for decorator in getattr(node, "decorators", ()):
        target = decorator.decorator
        if (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == name
            and target.attr.value in ACCESSORS
        ):
            return target.attr.value
    return None


def _decorated_by(node: cst.CSTNode, name: str) -> bool:
    for decorator in getattr(node, "decorators", ()):
        target = decorator.decorator
        if (
            isinstance(target, cst.Name)
            and target.value == name
            or isinstance(target, cst.Attribute)
            and target.attr.value == name
        ):
            return True
    return False


def _names_in(body: list[cst.CSTNode]) -> set[str]:
    """Every name this scope defines, through the blocks `definitions` looks into."""
    names: set[str] = set()
    for statement in body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            names.add(statement.name.value)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign):
                    names.update(t.target.value for t in small.targets if isinstance(t.target, cst.Name))
                elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    names.add(small.target.value)
        for block in _blocks(statement):
            names |= _names_in(list(block.body))
    return names


def _defines(node: cst.CSTNode, name: str) -> bool:
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return node.name.value == name
    if isinstance(node, cst.SimpleStatementLine):
        for small in node.body:
            targets = (
                [t.target for t in small.targets]
                if isinstance(small, cst.Assign)
                else [small.target]
                if isinstance(small, cst.AnnAssign)
                else []
            )
            if any(isinstance(t, cst.Name) and t.value == name for t in targets):
                return True
    return False
