"""Static validity of a mutant: it parses, and pyflakes finds no name it cannot run with.

A mutant that did not build must never be read as a result: its reds prove nothing. In
Python the analogue of "did not build" is a mutant that does not parse, or that uses a name
nothing defines (undefined name, undefined local, 'return' outside a function): code that
cannot run as written. Those are `broken`. A format string that cannot format its
arguments is not: it raises only where it runs, and what it does there the tests judge.

Dead code a mutation leaves behind is not: deleting the only call of an imported
predicate leaves the import unused, and the mutant still builds, imports and runs exactly
the defect its name says. Those findings are *warnings*, reported on the mutation; a
project whose CI lints can ask for the literal -Werror with `werror = true`.
Import-time failures are caught later, in the run, where the module is really imported.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections import Counter
from dataclasses import dataclass

from killmap.mutate.validity import fragment, skeleton
from killmap.mutate.validity.flakes import check as flakes_check

# pyflakes findings that mean dead or suspicious code, not code that cannot run: a
# mutant that adds one still runs as written. Every other kind (undefined names,
# misplaced return/yield/break, and any kind a future pyflakes adds) is `broken`: when in
# doubt, a mutant is not read as a result.
DEAD_CODE_FINDINGS = frozenset(
    {
        "UnusedImport",
        "UnusedVariable",
        "UnusedAnnotation",
        "UnusedIndirectAssignment",
        "RedefinedWhileUnused",
        "ImportShadowedByLoopVar",
        "ImportStarUsed",
        "FStringMissingPlaceholders",
        "TStringMissingPlaceholders",
        "IsLiteral",
        "IfTuple",
        "AssertTuple",
        "RaiseNotImplemented",
        "MultiValueRepeatedKeyLiteral",
        "MultiValueRepeatedKeyVariable",
        "PercentFormatExtraNamedArguments",
        "StringDotFormatExtraNamedArguments",
        "StringDotFormatExtraPositionalArguments",
        "DoctestSyntaxError",
    }
) | frozenset(
    # A format string that cannot format its arguments raises ValueError, TypeError or
    # KeyError where it runs, and only there: the mutant runs as written up to that line, and
    # what it does there is behaviour the tests judge like any other. Read as `broken`, it hid
    # real results: jmespath's lexer catches the ValueError of "%S" in its own `except`, and
    # three tests go red; boltons' test of a refusal expects any ValueError, and survives it.
    {
        "PercentFormatExpectedMapping",
        "PercentFormatExpectedSequence",
        "PercentFormatInvalidFormat",
        "PercentFormatMissingArgument",
        "PercentFormatMixedPositionalAndNamed",
        "PercentFormatPositionalCountMismatch",
        "PercentFormatStarRequiresSequence",
        "PercentFormatUnsupportedFormatCharacter",
        "StringDotFormatInvalidFormat",
        "StringDotFormatMissingArgument",
        "StringDotFormatMixingAutomatic",
    }
)


# Findings about a name the module resolves some way pyflakes cannot see (a star import, a
# name injected into globals): one the original already has is the original's own way of
# getting that name, so a mutant that uses the name once more adds nothing that cannot run.
# pyparsing's core.py uses `line` from `from .exceptions import *`: a mutant merging two
# messages used it a third time and read as broken.
NAME_FINDINGS = frozenset({"UndefinedName", "ImportStarUsage"})


@dataclass(frozen=True)
class Validity:
    ok: bool
    problem: str = ""  # one line, for the report
    cause: str = ""  # "syntax" or "pyflakes"
    warnings: tuple[str, ...] = ()  # dead code the mutant left behind; it still runs


def _findings(source: str | ast.Module, filename: str, text: str | None = None) -> list[tuple[str, tuple, str, bool]]:
    """`text`: for a tree, a text holding every name in it (flakes.check); None binds every builtin.
    Each finding's last item: whether it is about a name inside a string (`QUOTED`)."""
    tree = ast.parse(source, filename=filename) if isinstance(source, str) else source
    flakes = flakes_check(tree, filename, source if isinstance(source, str) else text)
    named = any(type(m).__name__ in QUOTED for m in flakes.messages)  # the walk only where it can matter
    strings = (
        {(n.lineno, n.col_offset) for n in ast.walk(tree) if isinstance(n, ast.Constant) and type(n.value) is str}
        if named
        else set()
    )
    # Compare by kind and arguments, not line: a mutant shifts lines without adding findings.
    return [
        (
            type(m).__name__,
            fragment.line_free_args(m),
            f"line {m.lineno}: {m.message % m.message_args}",
            (m.lineno, getattr(m, "col", -1)) in strings,
        )
        for m in flakes.messages
    ]


# A name pyflakes reads inside a string, as a forward reference (an annotation written as a
# string, `typing.cast("Token", value)`), is never looked up when the code runs: a mutant that
# makes it undefined runs as written (cssselect's cast("XXTokenXX", ...) survived plain pytest,
# and read as broken). pyflakes puts such a finding at the string's own position.
QUOTED = frozenset({"UndefinedName"})


def _with_line(text: str, mutated: str) -> str:
    """'line 160: undefined name x' with the mutant's line 160 shown: the line is the
    catalog's text spliced in, which the user never sees whole otherwise."""
    number, _, message = text.partition(": ")
    lines = mutated.splitlines()
    try:
        index = int(number.removeprefix("line ")) - 1
        shown = lines[index].strip() if index >= 0 else ""
    except (ValueError, IndexError):
        return text
    return f"{number} `{shown}`: {message}" if shown else text


def _unparsed(exc: SyntaxError, mutated: str) -> Validity:
    """A mutant that does not parse, said at its own line."""
    hint = ""
    if (exc.msg or "").startswith("f-string") and sys.version_info < (3, 12):
        # pluggy's f"{func.__name__}{inspect.signature(func)}" stubbed with '"()"': a value
        # that is valid on its own, spliced inside braces of an f-string of the same quotes.
        hint = (
            "; before Python 3.12 an f-string's braces may not hold its own quote character: "
            "write the value with the other quotes"
        )
    # The line from the mutant, not exc.text: Python reads that from the file on disk, when
    # the target's path exists there, and would show the original's line.
    where = _with_line(f"line {exc.lineno}: ", mutated).removesuffix(": ")
    return Validity(False, f"the mutant does not parse: {exc.msg} ({where}){hint}", "syntax")


def _unbound_hint(original: str, added: Counter) -> str:
    """Where an undefined name is one the original binds: the mutation removed its binding
    (decorator: `f = typemap[types]` made a raise left `f` read only in the try's `else`,
    which can no longer run; pyflakes cannot tell, and the user could not either)."""
    unbound = sorted(
        str(args[0])
        for kind, args in added
        if kind in ("UndefinedName", "UndefinedLocal") and args and _binds(original, str(args[0]))
    )
    if not unbound:
        return ""
    return (
        f"; the mutation removed what bound {', '.join(map(repr, unbound))}: if no line that reads it can "
        "run any more, bind it in `new` too"
    )


@functools.lru_cache(maxsize=32)
def _bound_names(original: str) -> frozenset[str]:
    """The names the original assigns anywhere (a target, a loop variable, an `as`)."""
    try:
        tree = ast.parse(original)
    except SyntaxError:
        return frozenset()
    return frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))


def _binds(original: str, name: str) -> bool:
    return name in _bound_names(original)


@functools.lru_cache(maxsize=32)
def _original_findings(original: str, filename: str) -> Counter:
    """Many mutations share one original file: check it once."""
    try:
        return Counter(f[:2] for f in _findings(original, filename))
    except SyntaxError:
        return Counter()


_REDUCED_ORIGINALS: dict[tuple[str, str, tuple[str, ...]], Counter] = {}


@functools.lru_cache(maxsize=32)
def _original_stubs(original: str, filename: str) -> list[skeleton.Stub] | None:
    try:
        return skeleton.stubs_of(ast.parse(original, filename=filename))
    except SyntaxError:
        return None


def _reduced_findings(original: str, mutated: str, filename: str):
    """(the original's findings, the mutant's parsed tree) with every function the change does
    not meet reduced in both (skeleton.py), or None when the two reductions do not match."""
    original_span, mutant_span = skeleton.changed_span(original, mutated)
    stubs = _original_stubs(original, filename)
    tree = ast.parse(mutated, filename=filename)
    reduced = tuple(skeleton.reduce_outside(tree, mutant_span, stubs))
    # Checked for every mutant, not only the first of a key: the same functions must be reduced
    # in the original, where the change's span is the original's own.
    if stubs is None or tuple(skeleton.reduced_by_stubs(stubs, original_span)) != reduced:
        return None
    key = (original, filename, reduced)
    if key not in _REDUCED_ORIGINALS:
        original_tree = ast.parse(original, filename=filename)
        skeleton.reduce_outside(original_tree, original_span, stubs)
        if len(_REDUCED_ORIGINALS) > 256:  # one sweep's files at a time; a gate's are few
            _REDUCED_ORIGINALS.clear()
        _REDUCED_ORIGINALS[key] = Counter(f[:2] for f in _findings(original_tree, filename, original))
    return _REDUCED_ORIGINALS[key], tree


def _once(findings) -> list[str]:
    """Each finding once, in order: pyflakes reports a name per use, and `c + escaped if k
    else escaped` read the same line twice (bracex)."""
    return list(dict.fromkeys(findings))


def check_mutant(original: str, mutated: str, filename: str, werror: bool = False, quick: bool = True) -> Validity:
    """`werror`: dead-code findings are broken too, for projects whose CI lints. `quick`: first
    ask the function the change lies in alone (fragment.py), which answers most mutants."""
    if quick and fragment.is_valid_quickly(original, mutated, filename):
        return Validity(True)  # not one finding added, dead code included: `werror` is met too
    try:
        # Parsed once: the tree, reduced outside the change, is compiled (the compiler's own
        # checks: a 'return' outside a function, a misplaced 'nonlocal') and given to pyflakes.
        reduced = _reduced_findings(original, mutated, filename)
        if reduced is None:
            tree, before = ast.parse(mutated, filename=filename), _original_findings(original, filename)
        else:
            before, tree = reduced
        compile(tree, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return _unparsed(exc, mutated)
    # The reduced mutant holds stubs made from the original's functions: both texts name it all.
    after = _findings(tree, filename, mutated + "\n" + original)
    added = Counter(f[:2] for f in after) - before
    for kind, args in list(added):
        if kind in NAME_FINDINGS and before[(kind, args)]:
            del added[(kind, args)]
    fatal = _once(
        _with_line(text, mutated)
        for kind, args, text, quoted in after
        if (kind, args) in added and kind not in DEAD_CODE_FINDINGS and not (quoted and kind in QUOTED)
    )
    dead = _once(
        text
        for kind, args, text, quoted in after
        if (kind, args) in added and (kind in DEAD_CODE_FINDINGS or quoted and kind in QUOTED)
    )
    if fatal:
        return Validity(
            False,
            "the mutant cannot run as written (pyflakes): " + "; ".join(fatal) + _unbound_hint(original, added),
            "pyflakes",
            tuple(dead),
        )
    if dead and werror:
        return Validity(
            False,
            "werror = true, and the mutant leaves dead code (pyflakes): " + "; ".join(dead),
            "pyflakes",
            tuple(dead),
        )
    return Validity(True, warnings=tuple(dead))
