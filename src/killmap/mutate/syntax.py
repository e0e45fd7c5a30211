"""What a pin binds: a target's syntax, with everything a formatter may change left out.

`pin = "ast1:sha256:..."` is the hash of the target's syntax tree (Python's own `ast`),
serialized here without positions, so comments, blank lines, whitespace, line wrapping,
parentheses, trailing commas and quote style (`'a'`, `"a"`, `"a" "b"` for `"ab"`) leave
it valid, while any change a program can observe (a name, a constant, a default, an
operator, a decorator, a statement) makes it stale.

The serialization is our own, not `ast.dump`: `ast.dump`'s text differs between Python
versions (3.12 added `type_params` to every function, 3.13 stopped printing empty
fields), and a pin written on one developer's Python must read the same on CI's. Fields
that are empty or None are left out, so a field a newer Python adds, empty in code that
does not use it, does not change the hash.

Docstrings count: a docstring is observable (`__doc__`, `help()`, doctests), so changing
its words makes the pin stale. Its layout does not: the docstring is hashed as
`inspect.cleandoc` reads it (common indentation and surrounding blank lines removed, as
Python 3.13 itself does when compiling) with trailing spaces stripped, because that is
exactly what formatters such as black rewrite in a docstring (re-indenting it with the
code, dropping trailing whitespace), and the same function nested one class deeper has a
differently indented raw docstring.

The version prefix (`ast1`) names this serialization. Any change to what is hashed
must get a new prefix, so that existing pins keep meaning what they meant.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
from typing import Any

PREFIX = "ast1:"
BYTES_PREFIX = "sha256:"
# Leave out: `kind` is the 'u' of u"text" (spelling, not value); type comments are comments.
_SKIPPED_FIELDS = frozenset({"kind", "type_comment"})
_DOC_HOLDERS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def syntax_pin(text: str) -> str:
    """`ast1:sha256:<hex>` of the normalized syntax of `text` (a module or one statement)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        # libcst parsed it but this Python's parser does not: nothing can be normalized,
        # so the exact text is bound (any change at all reads stale), under a marker that
        # can never equal a tree's serialization.
        payload = json.dumps(["unparsed", text])
    else:
        payload = json.dumps(_canonical(tree), separators=(",", ":"))
    return PREFIX + BYTES_PREFIX + hashlib.sha256(payload.encode("utf-8")).hexdigest()


def is_syntax_pin(pin: str) -> bool:
    return pin.startswith(PREFIX)


def _canonical(node: Any) -> Any:
    if isinstance(node, ast.AST):
        fields = []
        docstring = _docstring_node(node)
        for name, value in ast.iter_fields(node):
            if name in _SKIPPED_FIELDS or value is None or (isinstance(value, list) and not value):
                continue
            fields.append([name, _canonical(value)])
        if docstring is not None:
            # The docstring constant was serialized as written; put back its normalized words.
            assert isinstance(docstring.value, str)  # _docstring_node takes str constants only
            fields.append(["docstring", _normal_docstring(docstring.value)])
        return [type(node).__name__, fields]
    if isinstance(node, list):
        return [_canonical(item) for item in node]
    # A constant's value: its type keeps 1, 1.0, True and "1" apart; repr is exact and stable.
    return [type(node).__name__, repr(node)]


def _docstring_node(node: ast.AST) -> ast.Constant | None:
    """The docstring constant of a module, class or function, blanked in place for hashing."""
    if not isinstance(node, _DOC_HOLDERS) or not node.body:
        return None
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        doc = ast.Constant(value=first.value.value)
        first.value.value = ""  # the tree is ours (parsed just now); the words go in separately
        return doc
    return None


def _normal_docstring(text: str) -> str:
    return "\n".join(line.rstrip() for line in inspect.cleandoc(text).split("\n"))
