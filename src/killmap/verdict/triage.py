"""Which of a sweep's findings a reviewer is shown: at most one per line and one per gap.

A finding is a survivor or an unreached mutant. Mutants of one line almost always share one
fate, and several survivors often show one missing check (`x > 0` read as `x >= 0`, as
`x > 1`, negated, dropped from its `and`: nothing checks `x > 0`). So each is given its
*gap*: the expression whose check is missing, found by comparing the original statement
with the mutant's, narrowed to the condition that holds the change (a comparison, an
operand of `and`/`or`, the test of an `if`, `while`, `assert` or conditional expression),
else the smallest expression or statement that differs. Two findings share a gap when
their gaps are the same expression at the same place in the same file.

Of each line and each gap one finding is *reported*, chosen by how productive its operator
has been (RANK: killmap's statement-level operators first, the defects the catalogs name,
then mutmut's, message text last); a finding on the change before one outside it. The
others stay in the report, `reported: false`. A finding a reviewer marked (a pragma on its
line, or its id in the catalog's `[sweep]`) is never reported.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from killmap.catalog.contract import MARKS, Catalog
from killmap.errors import GateError
from killmap.mutate.patching import split_lines

if TYPE_CHECKING:
    from killmap.verdict.sweep import SweepEntry, SweepMutant

FINDINGS = ("survived", "unreached")
RANK = (
    "killmap:delete-call",
    "killmap:constant-return",
    "killmap:negate",
    "killmap:drop-operand",
    "killmap:merge-strings",
    "mutmut:swap_op",
    "mutmut:remove_unary_ops",
    "mutmut:arg_removal",
    "mutmut:if_exp",
    "mutmut:name",
    "mutmut:number",
    "mutmut:keywords",
    "mutmut:string_methods_swap",
    "mutmut:match",
    "mutmut:lambda",
    "mutmut:augmented_assignment",
    "mutmut:assignment",
    "mutmut:dict_arguments",
    "mutmut:string",
)
_CONDITIONS = (ast.If, ast.While, ast.IfExp, ast.Assert)
PRAGMA = re.compile(r"#\s*killmap:\s*(equivalent|not-useful)\b")  # a reviewer's mark, on the mutant's line


@dataclass(frozen=True)
class Gap:
    """Where the check a finding shows missing stands: the expression's start and its text."""

    line: int
    column: int
    text: str


@dataclass(frozen=True)
class Finding:
    """What the choice of the reported findings reads of one mutant."""

    id: str
    file: str
    line: int
    op: str
    on_change: bool
    gap: Gap | None


def rank(op: str) -> int:
    return RANK.index(op) if op in RANK else len(RANK)


def reported(findings: Iterable[Finding]) -> set[str]:
    """The ids reported: in order of (on the change, operator rank, line, id), each finding
    whose line and gap no earlier one has taken."""
    lines: set[tuple[str, int]] = set()
    gaps: set[tuple[str, int, int, str]] = set()
    chosen: set[str] = set()
    for f in sorted(findings, key=lambda f: (not f.on_change, rank(f.op), f.file, f.line, f.id)):
        gap = (f.file, f.gap.line, f.gap.column, f.gap.text) if f.gap is not None else None
        if (f.file, f.line) in lines or gap in gaps:
            continue
        chosen.add(f.id)
        lines.add((f.file, f.line))
        if gap is not None:
            gaps.add(gap)
    return chosen


def gap_of(original: str, mutated: str, lines: tuple[int, ...], tree: ast.Module | None = None) -> Gap | None:
    """The gap a mutant of `original` shows, its changed lines `lines`: see the module's
    docstring. None where the statement cannot be read (the finding then has its line alone)."""
    tree = tree if tree is not None else _parsed(original)
    if tree is None or not lines:
        return None
    statement = _innermost(tree.body, min(lines), max(lines))
    if statement is None:
        return None
    first, last = statement.lineno, statement.end_lineno or statement.lineno
    before, after = split_lines(original), split_lines(mutated)
    shift = len(after) - len(before)
    old_text, new_text = "".join(before[first - 1 : last]), "".join(after[first - 1 : last + shift])
    indent = len(old_text) - len(old_text.lstrip(" \t"))
    old_tree, new_tree = _parsed(textwrap.dedent(old_text)), _parsed(textwrap.dedent(new_text))
    if old_tree is None or new_tree is None:
        return Gap(first, statement.col_offset, before[first - 1].strip())
    path = _differing(old_tree, new_tree, [])
    subject = _subject(path, new_tree) if path else None
    if subject is None:
        return Gap(first, statement.col_offset, before[first - 1].strip())
    text = ast.get_source_segment(textwrap.dedent(old_text), subject) or ast.unparse(subject)
    return Gap(subject.lineno + first - 1, subject.col_offset + indent, " ".join(text.split()))


def _parsed(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def _innermost(body: list[ast.stmt], first: int, last: int) -> ast.stmt | None:
    """The deepest statement that holds the lines first..last."""
    for statement in body:
        if statement.lineno <= first and last <= (statement.end_lineno or statement.lineno):
            inner = [
                _innermost(value, first, last)
                for _, value in ast.iter_fields(statement)
                if isinstance(value, list) and value and isinstance(value[0], ast.stmt)
            ]
            return next((s for s in inner if s is not None), statement)
    return None


def _differing(old: ast.AST, new: ast.AST, path: list[ast.AST]) -> list[ast.AST]:
    """The original's nodes from the top down to the smallest one the mutant differs in
    (empty when they are alike)."""
    if ast.dump(old) == ast.dump(new):
        return []
    here = [*path, old]
    if type(old) is not type(new):
        return here
    differing = []
    for (_, a), (_, b) in zip(ast.iter_fields(old), ast.iter_fields(new), strict=True):
        if isinstance(a, list) and isinstance(b, list):
            if len(a) != len(b):
                return here
            differing += [(x, y) for x, y in zip(a, b, strict=True) if _dump(x) != _dump(y)]
        elif _dump(a) != _dump(b):
            differing.append((a, b))
    if len(differing) != 1 or not isinstance(differing[0][0], ast.AST) or not isinstance(differing[0][1], ast.AST):
        return here
    return _differing(differing[0][0], differing[0][1], here)


def _dump(value: object) -> object:
    return ast.dump(value) if isinstance(value, ast.AST) else value


def _subject(path: list[ast.AST], new: ast.AST) -> ast.expr | None:
    """The condition that holds the change, else the smallest expression that differs; an
    operand dropped from `and`/`or` is its own subject. None: the statement is."""
    changed = path[-1]
    if isinstance(changed, ast.BoolOp):
        kept = {ast.dump(n) for n in ast.walk(new) if isinstance(n, ast.expr)}
        dropped = [v for v in changed.values if ast.dump(v) not in kept]
        if len(dropped) == 1:
            return dropped[0]
    for node, parent in zip(reversed(path), reversed([None, *path[:-1]]), strict=True):
        if isinstance(node, ast.expr) and (
            isinstance(node, ast.Compare)
            or isinstance(parent, ast.BoolOp)
            or isinstance(parent, _CONDITIONS)
            and node is parent.test
        ):
            return node
    return changed if isinstance(changed, ast.expr) else None


def triaged(entries: list[SweepEntry], marks: Mapping[str, str]) -> list[SweepEntry]:
    """The entries with their gap (findings only), whether each is reported, and a
    reviewer's mark (`marks`: mutant id -> "equivalent" or "not-useful"). Each file is
    parsed once; only findings are compared with their original, so the cost is theirs."""
    trees: dict[str, ast.Module | None] = {}
    gaps: dict[str, Gap | None] = {}
    findings: list[Finding] = []
    for entry in entries:
        m = entry.mutant
        if entry.status not in FINDINGS or m.mutant.mutated is None:
            continue
        if m.file not in trees:
            trees[m.file] = _parsed(m.mutant.original)
        gaps[m.id] = gap_of(m.mutant.original, m.mutant.mutated, m.mutant.changed_lines, trees[m.file])
        if m.id not in marks:
            findings.append(Finding(m.id, m.file, m.line, m.op, m.on_change, gaps[m.id]))
    chosen = reported(findings)
    return [
        dataclasses.replace(e, reported=e.mutant.id in chosen, gap=gaps.get(e.mutant.id), mark=marks.get(e.mutant.id))
        for e in entries
    ]


def reviewer_marks(mutants: list[SweepMutant], catalogs: list[Catalog]) -> dict[str, str]:
    """Mutant id -> "equivalent" or "not-useful": the ids the catalogs' `[sweep]` lists, and
    the mutants whose line carries `# killmap: equivalent` or `# killmap: not-useful`.

    An id whose `file-stem.Qualified.name.` prefix names a definition these mutants are of,
    but which names none of them, is one line and exit 2 (the code changed since it was
    marked); an id of a definition not enumerated here is another sweep's to check."""
    known = {m.id for m in mutants}
    scopes = {m.id.rsplit(".", 1)[0] for m in mutants}
    marks: dict[str, str] = {}
    for catalog in catalogs:
        for ident, mark in catalog.sweep.marked:
            if ident in known:
                marks[ident] = mark
            elif ident.rsplit(".", 1)[0] in scopes:
                raise GateError(
                    f"{ident!r} names no mutant of {ident.rsplit('.', 1)[0]} as the code stands: it changed "
                    "since the mark was made; sweep again and mark the survivor by its new id, or remove it",
                    file=catalog.path,
                    field=next(f for f, m in MARKS.items() if m == mark),
                )
    lines: dict[str, list[str]] = {}
    for m in mutants:
        if m.id in marks:
            continue
        if m.file not in lines:
            lines[m.file] = m.mutant.original.splitlines()
        text = lines[m.file][m.line - 1] if 0 < m.line <= len(lines[m.file]) else ""
        found = PRAGMA.search(text) if "killmap" in text else None
        if found:
            marks[m.id] = found.group(1)
    return marks


@dataclass(frozen=True)
class ChangeVerdict:
    """What a sweep of a change says about it: the mutants on its lines, the findings among
    them a reviewer is shown, whether every one that ran was killed, and what lies outside."""

    on_change: tuple[SweepEntry, ...]  # every mutant whose lines are the change's
    findings: tuple[SweepEntry, ...]  # of those, the reported survivors and unreached
    all_killed: bool  # every one that ran to a verdict about the tests was killed (or timed out)
    killed: int  # how many that is: the N of "all N mutants on the changed lines were killed"
    outside: Mapping[str, int]  # status -> count, of the mutants outside the diff
    marked: int  # survivors on the change a reviewer marked


def change_verdict(entries: Iterable[SweepEntry]) -> ChangeVerdict:
    """Named and broken mutants on the change are neither killed nor findings: the gate
    judges the first, the second never ran as written."""
    entries = list(entries)
    on = tuple(e for e in entries if e.mutant.on_change)
    judged = [e for e in on if e.status not in ("named", "broken")]
    killed = sum(e.status in ("killed", "timeout") for e in judged)
    outside: dict[str, int] = {}
    for e in entries:
        if not e.mutant.on_change:
            outside[e.status] = outside.get(e.status, 0) + 1
    return ChangeVerdict(
        on,
        tuple(e for e in on if e.reported),
        bool(judged) and killed == len(judged),
        killed,
        outside,
        sum(1 for e in on if e.mark is not None and e.status == "survived"),
    )
