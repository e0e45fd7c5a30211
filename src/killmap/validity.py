"""Static validity of a mutant: it parses and adds no pyflakes finding.

This is Python's analogue of -Werror. Seed 004's first Gemma4 mutant did not compile
(an unused variable under -Werror) and a stale binary reported SUCCESS: a mutant that
leaves a name undefined or unused is a different program from the one the catalog
describes, so its red tests prove nothing. Import-time failures are caught later, in the
run, where the module is really imported.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass

from pyflakes import checker
import ast


@dataclass(frozen=True)
class Validity:
    ok: bool
    problem: str = ""      # one line, for the report
    cause: str = ""        # "syntax" or "pyflakes"


def _findings(source: str, filename: str) -> list[tuple[str, tuple, str]]:
    tree = ast.parse(source, filename=filename)
    flakes = checker.Checker(tree, filename=filename)
    # Compare by kind and arguments, not line: a mutant shifts lines without adding findings.
    return [(type(m).__name__, _line_free_args(m), f"line {m.lineno}: {m.message % m.message_args}")
            for m in flakes.messages]


def _line_free_args(message) -> tuple[str, ...]:
    """The message's arguments without the line numbers some of them carry.

    'redefinition of unused %r from line %r' (and the other 'from line'/'on line'
    messages) hold the earlier definition's line among their arguments; a mutant that
    deletes a line above it would otherwise read as adding a finding.
    """
    args = message.message_args if isinstance(message.message_args, tuple) else (message.message_args,)
    if "line %r" in message.message:
        args = tuple(a for a in args if not isinstance(a, int))
    return tuple(str(a) for a in args)


@functools.lru_cache(maxsize=32)
def _original_findings(original: str, filename: str) -> Counter:
    """Many mutations share one original file: check it once."""
    try:
        return Counter(f[:2] for f in _findings(original, filename))
    except SyntaxError:
        return Counter()


def check_mutant(original: str, mutated: str, filename: str) -> Validity:
    try:
        compile(mutated, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return Validity(False, f"the mutant does not parse: {exc.msg} (line {exc.lineno})", "syntax")
    before = _original_findings(original, filename)
    after = _findings(mutated, filename)
    added = Counter(f[:2] for f in after) - before
    if added:
        shown = [text for kind, args, text in after if (kind, args) in added]
        return Validity(False, "the mutant adds pyflakes findings: " + "; ".join(shown), "pyflakes")
    return Validity(True)
