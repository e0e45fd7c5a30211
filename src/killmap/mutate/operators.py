"""The operators: each turns a catalog entry into a mutant text, inside its target.

Each returns the mutant text and the sites it matched (the nodes it changed, or the text
offsets where it changed the text); `build_mutant` (mutants.py) compares their number with
the entry's `count`, and names their lines when they differ. An operator that cannot apply at all
raises `NotApplicable`, which is a "not applied" verdict, never a result.
"""

from __future__ import annotations

import difflib
import re
import string
from textwrap import shorten

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import ExpressionContext
from pyflakes.checker import parse_percent_format

from killmap.mutate.blame import near_miss
from killmap.mutate.cst_tree import (
    ATOMS,
    call_matches,
    expression_contexts,
    line_offsets,
    nodes_within,
    parents_of,
    same_expression,
    statement_positions,
    string_value,
    transform_statements,
)
from killmap.mutate.patching import PatchError, parse_patch, reverse_apply
from killmap.wording import counted


class _NotApplicable(Exception):
    def __init__(self, message: str, sites: int = 0):
        super().__init__(message)
        self.sites = sites


def _op_replace(root, wrapper, scope, mutation, original):
    old, new = mutation.param("old"), mutation.param("new")
    if scope is None:
        start, end = 0, len(original)
    else:
        positions, offset = statement_positions(wrapper, mutation, original)
        position = positions[scope]
        # libcst starts a def or class at the keyword; its decorators belong to the target
        # too (the tree operators and the pin see them), so the region starts at the first.
        first = positions[scope.decorators[0]].start if getattr(scope, "decorators", None) else position.start
        offsets = line_offsets(original[offset:])
        start = offset + offsets[first.line - 1] + first.column
        end = offset + offsets[position.end.line - 1] + position.end.column
    region = original[start:end]
    sites, at = [], region.find(old) if old else -1
    while at >= 0:
        sites.append(start + at)
        at = region.find(old, at + len(old))
    if not sites and old:
        raise _NotApplicable(_matched_nowhere(mutation, original, start, region))
    return original[:start] + region.replace(old, new) + original[end:], sites


def _matched_nowhere(mutation, original: str, start: int, region: str) -> str:
    """The not-applied reason of an `old` found nowhere, with its near-miss when there is one:
    an `old` copied with the target's last line and its newline matches nothing, since the
    target's text ends before that newline."""
    said = f"op 'replace' matched 0 sites in {mutation.target}, expected {mutation.count}"
    near = near_miss(mutation.param("old"), region)
    if near is None:
        return said
    at, differs = near
    return f"{said}; nearly at line {original.count(chr(10), 0, start + at) + 1}: {differs}"


def _calls_named(wrapper, scope, mutation, name: str) -> list:
    """The calls of `name` in the target; none is not applied, with the nearest call there."""
    within = list(nodes_within(wrapper, scope))
    calls = [n for n in within if call_matches(n, name)]
    if not calls:
        fulls = {full for n in within if isinstance(n, cst.Call) and (full := get_full_name_for_node(n.func))}
        there = fulls | {full.rsplit(".", 1)[-1] for full in fulls}  # `call` matches a dotted name's end
        near = difflib.get_close_matches(name, sorted(there), n=1, cutoff=0.75)
        said = f"op {mutation.op!r} matched 0 sites in {mutation.target}, expected {mutation.count}"
        raise _NotApplicable(said + (f"; did you mean call = {near[0]!r}?" if near else ""))
    return calls


def _op_delete_call(root, wrapper, scope, mutation, original):
    name = mutation.param("call")
    parents = parents_of(wrapper, mutation)
    calls = _calls_named(wrapper, scope, mutation, name)
    replacements: dict[int, object] = {}
    for call in calls:
        statement = _statement_holding(call, parents)
        if statement is None:
            raise _NotApplicable(f"the call {name!r} is not inside a statement that can be deleted")
        replacements[id(statement)] = _removal_for(statement, parents)
    return transform_statements(wrapper, replacements, parents_of(wrapper, mutation)), calls


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
            if isinstance(child, (cst.BaseSuite, cst.Else, cst.Finally, cst.ExceptHandler)) or child is getattr(
                parent, "orelse", None
            ):
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
    calls = _calls_named(wrapper, scope, mutation, name)
    # The value takes the place of a call, which binds tighter than any operator: without
    # parentheses `validate(x) * 2` stubbed with `a + b` would read `a + b * 2`. (lpar is a
    # tuple on parsed nodes, so it is tested for emptiness, never compared with [].)
    if not value.lpar and not isinstance(value, ATOMS):
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return transform_statements(wrapper, {id(c): value for c in calls}, parents_of(wrapper, mutation)), calls


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
    statements = keep + [cst.SimpleStatementLine([cst.Return(value=value)])]
    # The block's own header (a comment after the def's colon, `# noqa: PLR0911`) and footer
    # are kept: dropping the comment changed the def line, which runs at import, and every
    # test read as reaching the mutant (marshmallow's merge_errors).
    if isinstance(scope.body, cst.IndentedBlock):
        new_body = scope.body.with_changes(body=statements)
    else:
        new_body = cst.IndentedBlock(body=statements)
    replacements = {id(scope): scope.with_changes(body=new_body)}
    return transform_statements(wrapper, replacements, parents_of(wrapper, mutation)), [scope]


def _op_merge_strings(root, wrapper, scope, mutation, original):
    drop, keep = mutation.param("drop"), mutation.param("keep")
    parents = parents_of(wrapper, mutation)
    # f-strings too: most error messages in modern code are f-strings (attrs' validators'
    # "must be <= {bound}"). One is matched by its source text, placeholders and all. A string
    # that is a statement of its own (a docstring) says nothing at run time: never a message
    # (inflection's ordinal: its docstring holds "nd" as its suffix literal does).
    literals = [
        n
        for n in nodes_within(wrapper, scope)
        if isinstance(n, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
        and not isinstance(parents.get(n), (cst.ConcatenatedString, cst.Expr))
    ]
    valued = [(n, string_value(n) or wrapper.module.code_for_node(n)) for n in literals]
    keepers = [n for n, text in valued if keep in text]
    if len(keepers) > 1:
        # One message may sit inside another ("quote_char cannot be empty" inside
        # "end_quote_char cannot be empty"): the literal that is exactly `keep` is meant.
        keepers = [n for n, text in valued if text == keep] or keepers
    if len(keepers) > 1 and len({wrapper.module.code_for_node(n) for n in keepers}) == 1:
        # One message written twice (itsdangerous' "Malformed timestamp"): whichever copy
        # is kept, the mutant is the same.
        keepers = keepers[:1]
    if len(keepers) != 1:
        raise _NotApplicable(f"'keep' text matched {counted(len(keepers), 'string literal')}, expected exactly 1")
    keeper = keepers[0]
    dropped = [n for n, text in valued if drop in text and n is not keeper]
    if not dropped and drop in next(text for n, text in valued if n is keeper):
        # tomlkit's ("not allowed in " f"{t}, use X instead"): one literal, implicitly joined.
        raise _NotApplicable(
            "'drop' and 'keep' are in the same string literal (one message, or parts "
            "joined implicitly): merge-strings puts the literal holding 'keep' where "
            "another literal holds 'drop'; for a change inside one literal use replace"
        )
    replacements, sites = {}, []
    for node in dropped:
        site = _formatted_site(node, keeper, parents, wrapper)
        replacements[id(site)] = keeper.deep_clone()
        sites.append(site)
    return transform_statements(wrapper, replacements, parents_of(wrapper, mutation)), sites


def _formatted_site(dropped, keeper, parents, wrapper):
    """What the kept literal replaces where `dropped` stands: the literal itself, or, where the
    literal is formatted in place (`"... %s" % value`, `"... {}".format(value)`) and the kept
    message has no placeholder, the whole formatting expression. parse's refusal formatted
    with `% expression`, given a kept message without `%s`, raised TypeError ("not all
    arguments converted") instead of showing the other message, and a test that expects the
    refusal's type read that crash as the merged message caught. Placeholders that differ
    otherwise make no message at all: not applied, said."""
    expression, style = _formatting(dropped, parents)
    if expression is None:
        return dropped
    kept = _placeholders(string_value(keeper) or wrapper.module.code_for_node(keeper), style)
    if kept == _placeholders(string_value(dropped) or wrapper.module.code_for_node(dropped), style):
        return dropped
    if not kept:
        return expression
    shown = " ".join(wrapper.module.code_for_node(expression).split())
    raise _NotApplicable(
        f"the message holding 'drop' is formatted where it stands (`{shorten(shown, 60, placeholder=' ...')}`), "
        "and the literal holding 'keep' has other placeholders: formatting it there fails instead of "
        "showing it; merge messages formatted alike, or use replace"
    )


def _formatting(node, parents):
    """The expression that formats a literal where it stands, and how: `literal % args` ("%")
    or `literal.format(...)` ("str.format"); (None, None) where it is not formatted there."""
    parent = parents.get(node)
    if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Modulo) and parent.left is node:
        return parent, "%"
    if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value == "format":
        call = parents.get(parent)
        if isinstance(call, cst.Call) and call.func is parent:
            return call, "str.format"
    return None, None


def _placeholders(text: str, style: str) -> tuple:
    """What formatting `text` in `style` takes: the mapping keys and the positional arguments of
    its `%` conversions (pyflakes' own parser; `%%` takes none, a `*` width or precision one
    more), or the fields of its `{}` (string.Formatter's parser, each by the argument it
    reads). Empty: none."""
    if style == "%":
        keys, positional = [], 0
        for _, spec in parse_percent_format(text):
            if spec is None or spec[4] == "%":
                continue
            key, _, width, precision, _ = spec
            if key is not None:
                keys.append(key)
            else:
                positional += 1
            positional += (width == "*") + (precision == ".*")
        return (tuple(sorted(keys)), positional) if keys or positional else ()
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(text) if field is not None]
    except ValueError:
        return ("unparsable",)
    return tuple(sorted(re.split(r"[.\[]", field, maxsplit=1)[0] for field in fields))


def _op_drop_operand(root, wrapper, scope, mutation, original):
    wanted = mutation.param("operand")
    code = wrapper.module.code_for_node
    replacements = {}
    sites = []
    for node in nodes_within(wrapper, scope):
        if not isinstance(node, cst.BooleanOperation):
            continue
        for side, other in ((node.left, node.right), (node.right, node.left)):
            if same_expression(code(side), wanted):
                sites.append(side)
                kept = other
                if node.lpar and not kept.lpar:
                    kept = kept.with_changes(lpar=node.lpar, rpar=node.rpar)
                replacements[id(node)] = kept
    return transform_statements(wrapper, replacements, parents_of(wrapper, mutation)), sites


def _op_negate(root, wrapper, scope, mutation, original):
    wanted = mutation.param("condition")
    code = wrapper.module.code_for_node
    parents = parents_of(wrapper, mutation)
    contexts = expression_contexts(wrapper, mutation)
    replacements, nodes = {}, {}
    for node in nodes_within(wrapper, scope):
        if not isinstance(node, cst.BaseExpression) or _is_binding_name(node, parents):
            continue
        # `ready = check()` or `for ready in ...` binds the name; only a read can be negated
        # (counting the binding would make `negate ready` match sites it cannot change).
        if contexts.get(node) in (ExpressionContext.STORE, ExpressionContext.DEL):
            continue
        if _object_not_truth(node, parents.get(node)):
            continue
        if same_expression(code(node), wanted):
            if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
                inverted = node.expression
                # `(not a == b) in c` must not become the chain `a == b in c`.
                if node.lpar and not inverted.lpar:
                    inverted = inverted.with_changes(lpar=node.lpar, rpar=node.rpar)
            else:
                inner = (
                    node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
                    if not node.lpar and not isinstance(node, ATOMS)
                    else node
                )
                inverted = cst.UnaryOperation(operator=cst.Not(), expression=inner)
                # `not` binds looser than comparisons and arithmetic: `flag in items` with
                # `flag` negated must read `(not flag) in items`, not `not flag in items`.
                if _binds_tighter_than_not(parents.get(node)):
                    inverted = inverted.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            replacements[id(node)] = inverted
            nodes[id(node)] = node
    return transform_statements(wrapper, replacements, parents_of(wrapper, mutation)), [
        nodes[key] for key in replacements
    ]


def _object_not_truth(node, parent) -> bool:
    """Whether the expression is used as an object, never as a truth value: the base of an
    attribute or a subscript, or the function called. `(not kwargs).items()` is no negated
    condition, only a crash (cachetools' hashkey: `condition = "kwargs"` matched its reads in
    `kwargs.items()` as well)."""
    return (
        isinstance(parent, (cst.Attribute, cst.Subscript))
        and parent.value is node
        or isinstance(parent, cst.Call)
        and parent.func is node
    )


def _binds_tighter_than_not(parent) -> bool:
    """Whether an operand in this parent must be parenthesized when it is a `not` expression."""
    if isinstance(parent, cst.UnaryOperation):
        return not isinstance(parent.operator, cst.Not)
    if isinstance(parent, (cst.Arg, cst.Element)):
        return bool(getattr(parent, "star", ""))
    return isinstance(
        parent,
        (
            cst.Comparison,
            cst.ComparisonTarget,
            cst.BinaryOperation,
            cst.Attribute,
            cst.Subscript,
            cst.Call,
            cst.Await,
            cst.StarredElement,
        ),
    )


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
        raise mutation.fail(
            f"the patch must change exactly the target file {mutation.target.path} "
            f"(it names {[p.new_path for p in patches]})",
            "patch",
        )
    try:
        preimage = reverse_apply(original, mine[0])
    except PatchError as exc:
        raise _NotApplicable(f"revert-patch refused: {exc}", 0) from None
    return preimage, [None]  # the whole patch is one site, on no single line


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
