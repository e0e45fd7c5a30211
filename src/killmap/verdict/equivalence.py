"""Kinds of change that are often equivalent: a vacuous verdict says so as a possibility.

A mutant that no test catches may be one no test can catch: `re.match` -> `re.fullmatch` on
a pattern anchored with `$`, "GET" -> "get" where the code lowercases it, `a + b` -> `b + a`.
"It does not guard against this defect" is then the wrong advice. Only `replace` says what
it changes in words the judge can compare (old, new); the other operators change behaviour
by construction (a body returns a constant, a condition is negated, a call goes away).
"""

from __future__ import annotations

import ast
import io
import tokenize

from killmap.catalog.reader import Mutation

# Calls that differ only at the edges of their input: often the same on the inputs a program
# gives them (an anchored pattern, a string without surrounding blanks).
NEAR_SYNONYMS = (
    frozenset({"match", "fullmatch", "search"}),
    frozenset({"strip", "lstrip", "rstrip"}),
    frozenset({"find", "index"}),
    frozenset({"split", "rsplit"}),
)
COMMUTATIVE = (ast.Add, ast.Mult, ast.BitOr, ast.BitAnd, ast.BitXor, ast.Eq, ast.NotEq, ast.And, ast.Or)


def maybe_equivalent(mutation: Mutation) -> str | None:
    """Why the mutation's change may leave behaviour as it was, or None when it is not of
    a kind that often does (or its texts cannot be compared)."""
    if mutation.op != "replace":
        return None
    old, new = str(mutation.param("old", "")), str(mutation.param("new", ""))
    return _synonym_or_constant(old, new) or _commuted(old, new)


def _tokens(text: str) -> list[tokenize.TokenInfo] | None:
    try:
        found = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    skip = (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER, tokenize.COMMENT)
    return [t for t in found if t.type not in skip]


def _synonym_or_constant(old: str, new: str) -> str | None:
    """One token differs: a near-synonym name, or a string that differs only in case or in
    surrounding blanks (which the code may normalise: .lower(), .strip())."""
    before, after = _tokens(old), _tokens(new)
    if before is None or after is None or len(before) != len(after):
        return None
    differ = [(a, b) for a, b in zip(before, after, strict=True) if (a.type, a.string) != (b.type, b.string)]
    if len(differ) != 1:
        return None
    a, b = differ[0]
    if a.type == b.type == tokenize.NAME and any({a.string, b.string} <= group for group in NEAR_SYNONYMS):
        return (
            f"{a.string} and {b.string} are near-synonyms that often behave the same "
            "(on an anchored pattern, on input without blanks at its edges)"
        )
    if a.type == b.type == tokenize.STRING:
        try:
            first, second = ast.literal_eval(a.string), ast.literal_eval(b.string)
        except (ValueError, SyntaxError):
            return None
        if isinstance(first, str) and isinstance(second, str) and first.strip().lower() == second.strip().lower():
            return "the constant changes only in case or in surrounding blanks, which the code may normalise"
    return None


def _commuted(old: str, new: str) -> str | None:
    """The same expression with the operands of a commutative operator in another order."""
    try:
        before, after = ast.parse(old.strip()), ast.parse(new.strip())
    except SyntaxError:
        return None
    if ast.dump(before) == ast.dump(after) or _canonical(before) != _canonical(after):
        return None
    return "it only swaps the operands of a commutative operator"


def _canonical(tree: ast.AST) -> str:
    """ast.dump with the operands of every commutative operator in one order."""

    class Sort(ast.NodeTransformer):
        def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
            self.generic_visit(node)
            # `+` on strings concatenates: swapping a literal text's place is a real change.
            texts = any(
                isinstance(n, ast.JoinedStr) or isinstance(n, ast.Constant) and isinstance(n.value, str)
                for n in (node.left, node.right)
            )
            if isinstance(node.op, COMMUTATIVE) and not (isinstance(node.op, ast.Add) and texts):
                node.left, node.right = sorted((node.left, node.right), key=ast.dump)
            return node

        def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
            self.generic_visit(node)
            node.values = sorted(node.values, key=ast.dump)
            return node

        def visit_Compare(self, node: ast.Compare) -> ast.AST:
            self.generic_visit(node)
            if len(node.ops) == 1 and isinstance(node.ops[0], COMMUTATIVE):
                node.left, node.comparators[0] = sorted((node.left, node.comparators[0]), key=ast.dump)
            return node

    return ast.dump(Sort().visit(tree))
