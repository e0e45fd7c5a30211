"""Operators: turn a catalog entry into a mutant text, with libcst, scoped to its target.

Each operator counts the sites it matched inside the target symbol. Anything other than
exactly `count` sites, or a mutant byte-identical to the original, is "not applied": a
mutation that silently did nothing must never be reported as a survivor or a kill.
"""

from __future__ import annotations

import ast
import difflib

from pathlib import Path

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import (ExpressionContext, ExpressionContextProvider, MetadataWrapper,
                             ParentNodeProvider, PositionProvider)

from killmap.catalog import Mutation
from killmap.mutant import Mutant, sha256_text  # noqa: F401 - re-exported: the record of a mutant
from killmap.patching import PatchError, equal_ends, parse_patch, reverse_apply, split_lines
from killmap.symbols import SymbolError, definitions, resolve_symbol
from killmap.syntax import syntax_pin


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
                raise mutation.fail(f"target file does not parse: {exc.message} (line {exc.raw_line})",
                                    "target") from None
            self._parsed[rel] = (original, _Wrapper(module, unsafe_skip_copy=True, text=original))
        return self._parsed[rel]


class _Wrapper(MetadataWrapper):
    """A MetadataWrapper that also remembers parents per top-level statement (`_parents`)
    and the text it was parsed from (`text`): libcst renders a module back byte for byte,
    so the text is what `module.code` would render, at no cost (a render of a whole file
    took 40 ms, once per mutant)."""

    __slots__ = ("parents_by_top", "text")

    def __init__(self, module: cst.Module, unsafe_skip_copy: bool = False, text: str | None = None):
        super().__init__(module, unsafe_skip_copy=unsafe_skip_copy)
        self.parents_by_top: dict[int, dict[cst.CSTNode, cst.CSTNode]] = {}
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


def _parents(wrapper: MetadataWrapper, mutation: Mutation) -> dict[cst.CSTNode, cst.CSTNode]:
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


def _positions(wrapper: MetadataWrapper, mutation: Mutation, original: str):
    """(positions, offset): libcst's positions for the nodes of the target's top-level
    statement, and where that statement's text starts in the file.

    libcst computes positions by rendering the whole module, which was most of the cost
    of a `replace` mutant; the statement alone, rendered as a module of its own with the
    file's indentation and newline, has the same positions relative to its first line.
    Where its text is not found once in the file, the whole module's positions are used.
    """
    top = _top_statement(wrapper, mutation)
    if top is not None:
        alone = wrapper.module.with_changes(header=(), body=[top], footer=())
        text = alone.code
        if original.count(text) == 1:
            return MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider), original.index(text)
    return wrapper.resolve(PositionProvider), 0


def build_mutant(root: Path, mutation: Mutation, sources: Sources | None = None) -> Mutant:
    original, wrapper = (sources or Sources(root)).parsed(mutation)
    scope = _resolve_symbol(wrapper.module, mutation)
    # The symbol's own text: libcst hands a statement the blank lines and comments above it
    # (leading_lines); a formatter changing the spacing between functions must not make
    # a pinned mutation stale, so they are left out.
    target_text = wrapper.module.code_for_node(scope.with_changes(leading_lines=())) \
        if scope is not None else original
    target_hash = sha256_text(target_text)
    target_pin = syntax_pin(target_text)

    def not_applied(sites: int, reason: str) -> Mutant:
        return Mutant(mutation, mutation.target.path, original, None, sites, reason, target_hash,
                      target_pin=target_pin)

    try:
        mutated, sites = _OPERATORS[mutation.op](root, wrapper, scope, mutation, original)
    except _NotApplicable as exc:
        return not_applied(exc.sites, str(exc))
    if sites != mutation.count:
        return not_applied(sites, f"op {mutation.op!r} matched {sites} site(s) in {mutation.target}, "
                                  f"expected {mutation.count}")
    if mutated == original:
        return not_applied(sites, "the mutant is byte-identical to the original")
    old_lines, new_lines = _changed_lines(original, mutated)
    return Mutant(mutation, mutation.target.path, original, mutated, sites, "", target_hash,
                  old_lines, new_lines, target_pin=target_pin)


class _NotApplicable(Exception):
    def __init__(self, message: str, sites: int = 0):
        super().__init__(message)
        self.sites = sites


def _changed_lines(original: str, mutated: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Lines that differ, on each side. A pure deletion marks the line that follows it."""
    a = [line.rstrip("\r\n") for line in split_lines(original)]
    b = [line.rstrip("\r\n") for line in split_lines(mutated)]
    # A mutant differs from its original in one small stretch: the lines before and after
    # it are equal on both sides, so only the stretch is diffed. On a 3,000-line file the
    # whole-file diff was most of a mutant's build.
    head, tail = equal_ends(a, b)
    middle = difflib.SequenceMatcher(None, a[head:len(a) - tail], b[head:len(b) - tail], autojunk=False)
    old: set[int] = set()
    new: set[int] = set()
    for tag, i1, i2, j1, j2 in middle.get_opcodes():
        if tag == "equal":
            continue
        i1, i2, j1, j2 = i1 + head, i2 + head, j1 + head, j2 + head
        old.update(range(i1 + 1, i2 + 1) if i2 > i1 else [min(i1 + 1, len(a))])
        new.update(range(j1 + 1, j2 + 1) if j2 > j1 else [max(min(j1 + 1, len(b)), 1)])
    return tuple(sorted(old)), tuple(sorted(new))


# --- target resolution -------------------------------------------------------------------

def _resolve_symbol(module: cst.Module, mutation: Mutation) -> cst.CSTNode | None:
    symbol = mutation.target.symbol
    if not symbol:
        return None
    try:
        return resolve_symbol(module, symbol, mutation.target.path)
    except SymbolError as error:
        raise mutation.fail(str(error), "target") from None


# --- helpers shared by operators ---------------------------------------------------------

def _within(wrapper: MetadataWrapper, scope: cst.CSTNode | None) -> list[cst.CSTNode]:
    """Every node inside the scope (or the whole module), in source order."""
    nodes: list[cst.CSTNode] = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nodes.append(node)
            return True

    (scope or wrapper.module).visit(Collect())
    return nodes


def _call_matches(node: cst.CSTNode, name: str) -> bool:
    if not isinstance(node, cst.Call):
        return False
    full = get_full_name_for_node(node.func)
    return full is not None and (full == name or full.endswith("." + name))


def _same_expression(code: str, wanted: str) -> bool:
    try:
        return ast.dump(ast.parse(code.strip(), mode="eval")) == ast.dump(ast.parse(wanted.strip(), mode="eval"))
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
        return _fill_empty_block(updated_node)


def _fill_empty_block(node):
    if isinstance(node, cst.IndentedBlock) and not node.body:
        return node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
    return node


def _transform(wrapper: MetadataWrapper, replacements, parents=None) -> str:
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
        after_text = "" if isinstance(after, cst.RemovalSentinel) else module.code_for_node(after)
        text = text.replace(before, after_text, 1)
    return text


# --- the operators -----------------------------------------------------------------------

def _op_replace(root, wrapper, scope, mutation, original):
    old, new = mutation.param("old"), mutation.param("new")
    if scope is None:
        start, end = 0, len(original)
    else:
        positions, offset = _positions(wrapper, mutation, original)
        position = positions[scope]
        # libcst starts a def or class at the keyword; its decorators belong to the target
        # too (the tree operators and the pin see them), so the region starts at the first.
        first = positions[scope.decorators[0]].start if getattr(scope, "decorators", None) else position.start
        offsets = _line_offsets(original[offset:])
        start = offset + offsets[first.line - 1] + first.column
        end = offset + offsets[position.end.line - 1] + position.end.column
    region = original[start:end]
    sites = region.count(old)
    return original[:start] + region.replace(old, new) + original[end:], sites


def _line_offsets(text: str) -> list[int]:
    offsets, total = [], 0
    for line in split_lines(text):
        offsets.append(total)
        total += len(line)
    offsets.append(total)
    return offsets


def _op_delete_call(root, wrapper, scope, mutation, original):
    name = mutation.param("call")
    parents = _parents(wrapper, mutation)
    calls = [n for n in _within(wrapper, scope) if _call_matches(n, name)]
    replacements: dict[int, object] = {}
    for call in calls:
        statement = _statement_holding(call, parents)
        if statement is None:
            raise _NotApplicable(f"the call {name!r} is not inside a statement that can be deleted")
        replacements[id(statement)] = _removal_for(statement, parents)
    return _transform(wrapper, replacements, _parents(wrapper, mutation)), len(calls)


def _statement_holding(node, parents):
    """The innermost statement whose own text (not its nested block) holds the node."""
    child, parent = node, parents.get(node)
    while parent is not None:
        # `@app.route("/")` with the call deleted loses the decorator, not the function.
        if isinstance(parent, cst.Decorator):
            return parent
        # A call in a def's defaults or annotations, or in a class's bases, is not a
        # statement of its own: deleting the whole definition would be a different defect.
        if isinstance(parent, (cst.FunctionDef, cst.ClassDef)) and child is not parent.body:
            return None
        if isinstance(parent, (cst.BaseSmallStatement,)):
            line = parents.get(parent)
            if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
                return line
            return parent
        if isinstance(parent, cst.BaseCompoundStatement):
            if isinstance(child, (cst.BaseSuite, cst.Else, cst.Finally, cst.ExceptHandler)) or child is getattr(parent, "orelse", None):
                return None  # reached through a block: the inner statement should have matched
            return parent
        child, parent = parent, parents.get(parent)
    return None


def _removal_for(statement, parents):
    parent = parents.get(statement)
    # An `elif` lives in its parent's orelse: deleting it keeps the branches after it.
    if isinstance(statement, cst.If) and isinstance(parent, cst.If) and parent.orelse is statement:
        return statement.orelse if statement.orelse is not None else cst.RemoveFromParent()
    return cst.RemoveFromParent()


def _op_stub_call(root, wrapper, scope, mutation, original):
    name = mutation.param("call")
    value = cst.parse_expression(mutation.param("value").strip())
    calls = [n for n in _within(wrapper, scope) if _call_matches(n, name)]
    # The value takes the place of a call, which binds tighter than any operator: without
    # parentheses `validate(x) * 2` stubbed with `a + b` would read `a + b * 2`. (lpar is a
    # tuple on parsed nodes, so it is tested for emptiness, never compared with [].)
    if not value.lpar and not isinstance(value, _ATOMS):
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return _transform(wrapper, {id(c): value for c in calls}, _parents(wrapper, mutation)), len(calls)


# Expressions that bind at least as tightly as a call: safe in any operand position.
_ATOMS = (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.SimpleString, cst.ConcatenatedString,
          cst.FormattedString, cst.Integer, cst.Float, cst.Imaginary, cst.Ellipsis, cst.List, cst.Tuple,
          cst.Set, cst.Dict, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def _op_constant_return(root, wrapper, scope, mutation, original):
    if not isinstance(scope, cst.FunctionDef):
        raise mutation.fail("constant-return needs a function target (path.py::function)", "target")
    value = cst.parse_expression(mutation.param("value").strip())
    body = list(scope.body.body) if isinstance(scope.body, cst.IndentedBlock) else []
    keep = []
    if body and isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1:
        first = body[0].body[0]
        if isinstance(first, cst.Expr) and isinstance(first.value, (cst.SimpleString, cst.ConcatenatedString)):
            keep.append(body[0])
    new_body = cst.IndentedBlock(body=keep + [cst.SimpleStatementLine([cst.Return(value=value)])])
    replacements = {id(scope): scope.with_changes(body=new_body)}
    return _transform(wrapper, replacements, _parents(wrapper, mutation)), 1


def _string_value(node) -> str | None:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        try:
            value = node.evaluated_value
        except Exception:  # noqa: BLE001 - an unusual literal: fall back to its source
            value = None
        return value if isinstance(value, str) else None
    return None


def _op_merge_strings(root, wrapper, scope, mutation, original):
    drop, keep = mutation.param("drop"), mutation.param("keep")
    parents = _parents(wrapper, mutation)
    # f-strings too: most error messages in modern code are f-strings (attrs' validators'
    # "must be <= {bound}"). One is matched by its source text, placeholders and all.
    literals = [n for n in _within(wrapper, scope)
                if isinstance(n, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
                and not isinstance(parents.get(n), cst.ConcatenatedString)]
    valued = [(n, _string_value(n) or wrapper.module.code_for_node(n)) for n in literals]
    keepers = [n for n, text in valued if keep in text]
    if len(keepers) > 1:
        # One message may sit inside another ("quote_char cannot be empty" inside
        # "end_quote_char cannot be empty"): the literal that is exactly `keep` is meant.
        keepers = [n for n, text in valued if text == keep] or keepers
    if len(keepers) != 1:
        raise _NotApplicable(f"'keep' text matched {len(keepers)} string literal(s), expected exactly 1")
    keeper = keepers[0]
    dropped = [n for n, text in valued if drop in text and n is not keeper]
    replacements = {id(n): keeper.deep_clone() for n in dropped}
    return _transform(wrapper, replacements, _parents(wrapper, mutation)), len(dropped)


def _op_drop_operand(root, wrapper, scope, mutation, original):
    wanted = mutation.param("operand")
    code = wrapper.module.code_for_node
    replacements = {}
    sites = 0
    for node in _within(wrapper, scope):
        if not isinstance(node, cst.BooleanOperation):
            continue
        for side, other in ((node.left, node.right), (node.right, node.left)):
            if _same_expression(code(side), wanted):
                sites += 1
                kept = other
                if node.lpar and not kept.lpar:
                    kept = kept.with_changes(lpar=node.lpar, rpar=node.rpar)
                replacements[id(node)] = kept
    return _transform(wrapper, replacements, _parents(wrapper, mutation)), sites


def _op_negate(root, wrapper, scope, mutation, original):
    wanted = mutation.param("condition")
    code = wrapper.module.code_for_node
    parents = _parents(wrapper, mutation)
    contexts = wrapper.resolve(ExpressionContextProvider)
    replacements = {}
    for node in _within(wrapper, scope):
        if not isinstance(node, cst.BaseExpression) or _is_binding_name(node, parents):
            continue
        # `ready = check()` or `for ready in ...` binds the name; only a read can be negated
        # (counting the binding would make `negate ready` match sites it cannot change).
        if contexts.get(node) in (ExpressionContext.STORE, ExpressionContext.DEL):
            continue
        if _same_expression(code(node), wanted):
            if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
                inverted = node.expression
                # `(not a == b) in c` must not become the chain `a == b in c`.
                if node.lpar and not inverted.lpar:
                    inverted = inverted.with_changes(lpar=node.lpar, rpar=node.rpar)
            else:
                inner = node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) \
                    if not node.lpar and not isinstance(node, _ATOMS) else node
                inverted = cst.UnaryOperation(operator=cst.Not(), expression=inner)
                # `not` binds looser than comparisons and arithmetic: `flag in items` with
                # `flag` negated must read `(not flag) in items`, not `not flag in items`.
                if _binds_tighter_than_not(parents.get(node)):
                    inverted = inverted.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            replacements[id(node)] = inverted
    return _transform(wrapper, replacements, _parents(wrapper, mutation)), len(replacements)


def _binds_tighter_than_not(parent) -> bool:
    """Whether an operand in this parent must be parenthesized when it is a `not` expression."""
    if isinstance(parent, cst.UnaryOperation):
        return not isinstance(parent.operator, cst.Not)
    if isinstance(parent, (cst.Arg, cst.Element)):
        return bool(getattr(parent, "star", ""))
    return isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.BinaryOperation, cst.Attribute,
                               cst.Subscript, cst.Call, cst.Await, cst.StarredElement))


def _is_binding_name(node, parents) -> bool:
    """A Name that spells a definition or attribute, not a value that could be negated."""
    if not isinstance(node, cst.Name):
        return False
    parent = parents.get(node)
    if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Param, cst.Arg, cst.ImportAlias)):
        return parent.value is not node if isinstance(parent, cst.Arg) else True
    return isinstance(parent, cst.Attribute) and parent.attr is node


def _op_revert_patch(root, wrapper, scope, mutation, original):
    patch_path = root / mutation.param("patch")
    try:
        patches = parse_patch(patch_path.read_text(encoding="utf-8"))
    except PatchError as exc:
        raise mutation.fail(f"{mutation.param('patch')}: {exc}", "patch") from None
    mine = [p for p in patches if mutation.target.path in (p.new_path, p.old_path)]
    if len(patches) != 1 or not mine:
        raise mutation.fail(f"the patch must change exactly the target file {mutation.target.path} "
                            f"(it names {[p.new_path for p in patches]})", "patch")
    try:
        preimage = reverse_apply(original, mine[0])
    except PatchError as exc:
        raise _NotApplicable(f"revert-patch refused: {exc}", 0) from None
    return preimage, 1


_OPERATORS = {
    "replace": _op_replace,
    "delete-call": _op_delete_call,
    "stub-call": _op_stub_call,
    "constant-return": _op_constant_return,
    "merge-strings": _op_merge_strings,
    "drop-operand": _op_drop_operand,
    "negate": _op_negate,
    "revert-patch": _op_revert_patch,
}
