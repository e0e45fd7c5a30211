"""The libcst plumbing every operator shares: each target file parsed once (`Sources`),
parents and positions for the target's own top-level statement only, the nodes inside a
scope, and `transform_statements`, which replaces nodes by identity and splices back only the
top-level statements that changed.

The sweep (splice.py, sweep_ops.py) builds its mutants with the same pieces.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import ExpressionContextProvider, MetadataWrapper, ParentNodeProvider, PositionProvider

from killmap.catalog.reader import Mutation, parse_expression
from killmap.mutate.patching import split_lines
from killmap.mutate.symbols import definitions


class Sources:
    """Each target file read and parsed once per gate run, shared by its mutations.

    libcst trees are immutable and a MetadataWrapper memoizes what it resolves, so every
    mutation of one file can start from the same parse.
    """

    def __init__(self, root: Path):
        self.root = root
        self._parsed: dict[str, tuple[str, MetadataWrapper]] = {}

    def parsed(self, mutation: Mutation) -> tuple[str, MetadataWrapper]:
        rel = mutation.target.path
        if rel not in self._parsed:
            original = (self.root / rel).read_text(encoding="utf-8")
            try:
                module = cst.parse_module(original)
            except cst.ParserSyntaxError as exc:
                raise mutation.fail(
                    f"target file does not parse: {exc.message} (line {exc.raw_line})", "target"
                ) from None
            self._parsed[rel] = (original, _Wrapper(module, unsafe_skip_copy=True, text=original))
        return self._parsed[rel]


class _Wrapper(MetadataWrapper):
    """A MetadataWrapper that also remembers, per top-level statement, its parents
    (`parents_of`) and the statement as a module of its own (`_alone`), and the text it was
    parsed from (`text`): libcst renders a module back byte for byte, so the text is what
    `module.code` would render, at no cost (a render of a whole file took 40 ms, once per
    mutant)."""

    __slots__ = ("alone_by_top", "parents_by_top", "text")

    def __init__(self, module: cst.Module, unsafe_skip_copy: bool = False, text: str | None = None):
        super().__init__(module, unsafe_skip_copy=unsafe_skip_copy)
        self.parents_by_top: dict[int, dict[cst.CSTNode, cst.CSTNode]] = {}
        self.alone_by_top: dict[int, tuple[str, MetadataWrapper]] = {}
        self.text = text


class _ParentCollector(cst.CSTVisitor):
    def __init__(self, top: cst.CSTNode, module: cst.Module):
        super().__init__()
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {top: module}
        self.stack: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.stack:
            self.parents[node] = self.stack[-1]
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()


def parents_of(wrapper: MetadataWrapper, mutation: Mutation) -> Mapping[cst.CSTNode, cst.CSTNode]:
    """Each node's parent, for the top-level statement holding the target symbol.

    libcst's ParentNodeProvider walks the whole module; an operator only ever looks up
    from a node inside its target, and no higher than the module, so the target's own
    top-level statement (its parent: the module) is all it needs. A whole-file target,
    or a wrapper without the memo, gets the whole module's.
    """
    top = _top_statement(wrapper, mutation)
    if top is None or not isinstance(wrapper, _Wrapper):
        return wrapper.resolve(ParentNodeProvider)
    if id(top) not in wrapper.parents_by_top:
        collector = _ParentCollector(top, wrapper.module)
        top.visit(collector)
        wrapper.parents_by_top[id(top)] = collector.parents
    return wrapper.parents_by_top[id(top)]


def _top_statement(wrapper: MetadataWrapper, mutation: Mutation) -> cst.CSTNode | None:
    """The one top-level statement that defines the target symbol, or None."""
    symbol = mutation.target.symbol
    if not symbol:
        return None
    tops = [n for n in wrapper.module.body if definitions([n], symbol.split(".")[0])]
    return tops[0] if len(tops) == 1 else None


def statement_positions(wrapper: MetadataWrapper, mutation: Mutation, original: str):
    """(positions, offset): libcst's positions for the nodes of the target's top-level
    statement, and where that statement's text starts in the file.

    libcst computes positions by rendering the whole module, which was most of the cost
    of a `replace` mutant; the statement alone, rendered as a module of its own with the
    file's indentation and newline, has the same positions relative to its first line.
    Where its text is not found once in the file, the whole module's positions are used.
    """
    alone = _alone(wrapper, mutation)
    if alone is not None and original.count(alone[0]) == 1:
        return alone[1].resolve(PositionProvider), original.index(alone[0])
    return wrapper.resolve(PositionProvider), 0


def expression_contexts(wrapper: MetadataWrapper, mutation: Mutation) -> Mapping[cst.CSTNode, object]:
    """libcst's expression context (load, store, del) of each node of the target's top-level
    statement: a context is decided within the statement that holds the node, so the
    statement alone gives every one of its nodes the context the whole module gives it."""
    alone = _alone(wrapper, mutation)
    return (alone[1] if alone is not None else wrapper).resolve(ExpressionContextProvider)


def _alone(wrapper: MetadataWrapper, mutation: Mutation) -> tuple[str, MetadataWrapper] | None:
    """The target's top-level statement as a module of its own (its text, and a wrapper
    that keeps its nodes: what is resolved on it is keyed by the file's own nodes), made
    once per statement per run and shared by every mutation of it: rendering and resolving
    a class of hundreds of lines costs a tenth of a second each time."""
    top = _top_statement(wrapper, mutation)
    if top is None:
        return None
    memo = wrapper.alone_by_top if isinstance(wrapper, _Wrapper) else {}
    if id(top) not in memo:
        module = wrapper.module.with_changes(header=(), body=[top], footer=())
        memo[id(top)] = (module.code, MetadataWrapper(module, unsafe_skip_copy=True))
    return memo[id(top)]


def line_offsets(text: str) -> list[int]:
    offsets, total = [], 0
    for line in split_lines(text):
        offsets.append(total)
        total += len(line)
    offsets.append(total)
    return offsets


def nodes_within(wrapper: MetadataWrapper, scope: cst.CSTNode | None) -> list[cst.CSTNode]:
    """Every node inside the scope (or the whole module), in source order."""
    nodes: list[cst.CSTNode] = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nodes.append(node)
            return True

    (scope or wrapper.module).visit(Collect())
    return nodes


def call_matches(node: cst.CSTNode, name: str) -> bool:
    if not isinstance(node, cst.Call):
        return False
    full = get_full_name_for_node(node.func)
    return full is not None and (full == name or full.endswith("." + name))


def same_expression(code: str, wanted: str) -> bool:
    try:
        return ast.dump(parse_expression(code)) == ast.dump(parse_expression(wanted))
    except SyntaxError:
        return False


class _Replace(cst.CSTTransformer):
    """Swap nodes by identity: the one mechanism every tree operator uses."""

    def __init__(self, replacements: dict[int, cst.CSTNode | cst.RemovalSentinel]):
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        if id(original_node) in self.replacements:
            return self.replacements[id(original_node)]
        updated_node = super().on_leave(original_node, updated_node)
        return fill_empty_block(updated_node)


def fill_empty_block(node):
    if isinstance(node, cst.IndentedBlock) and not node.body:
        return node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
    return node


def transform_statements(wrapper: MetadataWrapper, replacements, parents=None) -> str:
    """The module's text with the replacements made.

    Only the top-level statements that hold a replaced node are transformed; each is
    spliced back where its exact text stands (libcst round-trips text byte for byte), so
    a large file costs what its changed definitions cost.
    """
    module = wrapper.module
    text = getattr(wrapper, "text", None) or module.code
    if not replacements:
        return text
    parents = parents if parents is not None else wrapper.resolve(ParentNodeProvider)
    nodes = {id(node): node for node in parents}
    tops: dict[int, cst.CSTNode] = {}
    for key in replacements:
        node = nodes.get(key)
        if node is None:
            return module.visit(_Replace(replacements)).code
        while parents.get(node) is not None and parents.get(node) is not module:
            node = parents[node]
        if node is module:
            return module.visit(_Replace(replacements)).code
        tops[id(node)] = node
    for top in tops.values():
        before = module.code_for_node(top)
        if text.count(before) != 1:
            return module.visit(_Replace(replacements)).code
        after = top.visit(_Replace(replacements))
        assert not isinstance(after, cst.FlattenSentinel)  # _Replace puts in a node or a removal only
        after_text = "" if isinstance(after, cst.RemovalSentinel) else module.code_for_node(after)
        text = text.replace(before, after_text, 1)
    return text


# Expressions that bind at least as tightly as a call: safe in any operand position.
ATOMS = (
    cst.Name,
    cst.Attribute,
    cst.Subscript,
    cst.Call,
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
    cst.Integer,
    cst.Float,
    cst.Imaginary,
    cst.Ellipsis,
    cst.List,
    cst.Tuple,
    cst.Set,
    cst.Dict,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
)


def string_value(node) -> str | None:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 - an unusual literal: fall back to its source
            value = None
        return value if isinstance(value, str) else None
    return None
