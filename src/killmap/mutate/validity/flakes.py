"""pyflakes' Checker, binding only the builtins the checked text can name.

A Checker binds every builtin (some 160 names) in the module scope before it walks the tree:
a quarter of checking one sweep mutant's function (fragment.py), paid for every mutant. A
binding matters only to a lookup of its own name, and every name pyflakes looks up comes from
the text: an identifier, or a string it reads as code (an annotation, `cast("T", x)`, an entry
of `__all__`). So binding only the builtins whose names occur in the text as words changes no
finding. A text with a non-ASCII character may spell an ASCII name another way (Python reads
`ｌｅｎ` as `len`): it gets every builtin, as before.
"""

from __future__ import annotations

import ast
import re

from pyflakes import checker

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Checker(checker.Checker):
    """A Checker whose builtins are cut down to `names` (see the module's docstring)."""

    def __init__(self, tree: ast.AST, filename: str, names: frozenset[str]):
        self._names = names
        self._kept: frozenset[str] | None = None
        super().__init__(tree, filename=filename)

    # pyflakes 4 assigns its builtins in __init__ (the setter); before 4 they are a class
    # attribute that __init__ only reads (the getter's first call).
    @property  # type: ignore[override]
    def builtIns(self) -> frozenset[str]:
        if self._kept is None:
            self._kept = frozenset(checker.Checker.__dict__.get("builtIns", ())) & self._names
        return self._kept

    @builtIns.setter
    def builtIns(self, every) -> None:
        self._kept = frozenset(every) & self._names


def check(tree: ast.AST, filename: str, text: str | None) -> checker.Checker:
    """pyflakes run on `tree`, every name of which occurs in `text` (the text it was parsed
    from, or more); None: not known, every builtin is bound."""
    if text is None or not text.isascii():
        return checker.Checker(tree, filename=filename)
    return _Checker(tree, filename, frozenset(_WORD.findall(text)))
