"""`killmap sweep`: anonymous mutants over the catalog's code, run on the gate's engine.

Named mutations prove what their author thought of; a sweep finds what nobody thought of.
Its mutants come from mutmut's operators (mutmut_adapter.py) and killmap's statement-level
ones (sweep_ops.py), each an ordinary killmap mutant: one definition changed and spliced
back (splice.py), a Mutation with no contract (`uncontracted`), run through
`lab.run_mutations` with everything a catalog mutation gets: sandbox, validity, the
baseline's coverage selecting the tests that reach it, the flake guard, kill causes,
timeouts, containment and the cache. A mutant no test reaches is never run.

With a change (`--changed BASE`), only the definitions it touched are enumerated, and the
module-level simple statements it touched with them; each mutant says whether its lines are
the change's (`on_change`), and what the change holds that no mutant meets is named
(changed.py). Arid mutants are never built (arid.py); of the findings, one per line and per
gap is reported, and none a reviewer marked (triage.py).

Status per mutant: `survived` (reached, nothing red: the finding), `killed`, `unreached`,
`broken`, `timeout`, and `named` when a catalog mutation already makes the same change at
the same site (the gate judges that one; the sweep does not run it again). `flaky`,
`inconclusive` and `escaped` keep the gate's meaning. The score leaves out everything but
killed, timeout and survived.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import itertools
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from killmap.catalog.contract import SweepSettings
from killmap.catalog.project import project_files
from killmap.catalog.reader import Catalog, GateSettings, Mutation, Target, discover_catalogs, load_catalogs
from killmap.catalog.shards import Split, split_items
from killmap.engine import limits_count_cpu_wait
from killmap.errors import GateError
from killmap.mutate import mutmut_adapter, sweep_ops
from killmap.mutate.arid import Arid
from killmap.mutate.mutants import Mutant, Sources, build_mutant
from killmap.mutate.patching import split_lines
from killmap.mutate.splice import MODULE, Definition, SplicedFile
from killmap.mutate.symbols import AmbiguousSymbol, SymbolError, resolve_symbol
from killmap.verdict import judge
from killmap.verdict.cache import VerdictCache
from killmap.verdict.changed import ChangeSince, FileChange, NotSwept, not_swept
from killmap.verdict.early_baseline import EarlyBaseline
from killmap.verdict.judge import Verdict
from killmap.verdict.lab import LabOptions, LabResult, Progress, run_mutations, start_early_baseline
from killmap.verdict.triage import Gap, reviewer_marks, triaged

if TYPE_CHECKING:
    from killmap.engine import Launch

OPS = ("mutmut", "killmap")
STATUSES = ("survived", "killed", "unreached", "broken", "timeout", "named", "flaky", "inconclusive", "escaped")
SCORED = ("killed", "timeout", "survived")
# A timeout is re-run with this many times its limit before it counts where a limit is clock
# time, or with --every-red (_as_swept says why).
RETRY_FACTOR = 2.0
EVERY_RED_RETRY_FACTOR = 4.0  # --every-red: a run that turns many tests red is slow without a loop
_STATUS_OF_VERDICT = {
    judge.OVERREACH: "killed",
    judge.VACUOUS: "survived",
    judge.BROKEN_VERDICT: "broken",
    judge.TIMEOUT: "timeout",
    judge.FLAKY: "flaky",
    judge.RANDOMIZED: "flaky",  # the sweep's statuses: a draw's luck is no survivor or kill either
    judge.ESCAPED: "escaped",
}


@dataclass(frozen=True)
class SweepTarget:
    path: str
    symbol: str | None
    settings: GateSettings
    sweep: SweepSettings = SweepSettings()  # the [sweep] of the catalog whose [gate] it runs under

    def __str__(self) -> str:
        return f"{self.path}::{self.symbol}" if self.symbol else self.path


@dataclass(frozen=True)
class SweepMutant:
    id: str
    file: str
    function: str  # the top-level function or method: the report's group
    inner: str  # the innermost function holding the change
    op: str  # "mutmut:swap_op", "killmap:negate", ...
    mutant: Mutant  # what the engine runs; its mutation has no contract
    hint: tuple[str, tuple[tuple[str, str], ...]] | None = None  # catalog op and fields
    mutmut_name: str | None = None  # what `mutmut run` calls the same mutant
    on_change: bool = False  # its changed lines hold a line the change since BASE added or changed

    @property
    def line(self) -> int:
        return self.mutant.changed_lines[0] if self.mutant.changed_lines else 0


@dataclass
class Enumeration:
    mutants: list[SweepMutant] = field(default_factory=list)
    identical: int = 0  # rendered to the original text
    duplicates: int = 0  # the same text as an earlier mutant (another operator)
    pragma: int = 0  # killmap candidates a `# pragma: no mutate` covers
    unlocated: list[str] = field(default_factory=list)
    not_swept: list[NotSwept] = field(default_factory=list)  # with a change: what of it no mutant can meet
    arid: Counter[str] = field(default_factory=Counter)  # mutants never built, by the arid rule (arid.py)
    outside_not_run: int = 0  # with Portion.lines_only: the change's definitions' other mutants
    # Without a change: the decorated functions mutmut's operators leave alone, as `mutmut run`
    # does ("file::qualname"), so that a sweep says why they have no mutmut mutant.
    decorated: list[str] = field(default_factory=list)
    # The same, for the functions mutmut's other rules leave alone: a name it never mutates
    # (`__new__`, `__setattr__`, `__getattribute__`), an enum's creation hooks.
    left_alone: list[str] = field(default_factory=list)
    # Functions and classes defined under a module-level `if`, `try` or `with` (hyperlink's
    # strategies, under `try: import hypothesis`): no sweep op reaches them, nor mutmut's.
    nested: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SweepEntry:
    mutant: SweepMutant
    status: str
    verdict: Verdict | None
    named: str | None = None
    reported: bool = False  # a finding a reviewer is shown: one per line and per gap (triage.py)
    gap: Gap | None = None  # a finding's: the check it shows missing
    mark: str | None = None  # a reviewer's: "equivalent" or "not-useful"


@dataclass(frozen=True)
class Portion:
    """Which of the enumerated mutants this sweep runs: those of the definitions the change
    since a base touched (`change`), and of them shard k of n (shards.py)."""

    shard: tuple[int, int] | None = None
    durations: Mapping[str, float] | None = None  # from an earlier sweep report, by mutant id
    change: ChangeSince | None = None
    # With a change: only the mutants on its lines run; the definitions' others are counted.
    # A review's findings are the change's own, and the others cost most of a sweep's time.
    lines_only: bool = False


@dataclass
class SweepResult:
    targets: list[SweepTarget]
    ops: tuple[str, ...]
    entries: list[SweepEntry]
    enumeration: Enumeration
    lab: LabResult | None
    wall: float
    mutmut_version: str
    split: Split | None = None
    shard: int | None = None  # 1-based, with split
    items: tuple[str, ...] = ()  # every shard's mutants, in enumeration order, with split
    base: str | None = None  # with --changed: the revision the change is read against


# --- targets -------------------------------------------------------------------------------


def load_optional_catalogs(root: Path, paths: tuple[Path, ...]) -> list[Catalog]:
    """The catalogs named, or found; none is fine when the targets are given."""
    try:
        found = list(paths) or discover_catalogs(root)
    except GateError:
        return []
    return load_catalogs(root, [p if p.is_absolute() else Path.cwd() / p for p in found])


def resolve_targets(root: Path, texts: list[str], catalogs: list[Catalog]) -> list[SweepTarget]:
    """TARGET arguments (files, folders, file::Qualified.name), or every catalog target."""
    mutations = [m for c in catalogs for m in c.mutations]
    if not texts:
        if not mutations:
            # A catalog of [gate] alone still gives the sweep its tests and paths, but no
            # target: the files to sweep are the user's to name.
            raise GateError(
                "nothing to sweep: name files or file::symbol targets (a catalog's [gate] "
                "tests and paths are used for them), or add [[mutation]] entries whose "
                "targets the sweep then covers",
                field="TARGET",
            )
        texts = list(dict.fromkeys(str(m.target) for m in mutations))
    files = project_files(root)
    targets: list[SweepTarget] = []
    for text in texts:
        path, _, symbol = text.partition("::")
        normal = PurePosixPath(path).as_posix().rstrip("/") if path not in ("", ".") else ""
        if normal.startswith("/") or normal == ".." or normal.startswith("../"):
            raise GateError(f"{text!r} is outside the project: targets are paths relative to its root", field="TARGET")
        if (root / normal).is_dir() and not symbol:
            chosen = [f for f in files if f.endswith(".py") and (not normal or f.startswith(normal + "/"))]
            if not chosen:
                raise GateError(f"{text!r} holds no Python file of the project", field="TARGET")
        elif (root / normal).is_file() and normal.endswith(".py"):
            chosen = [normal]
        else:
            raise GateError(f"{text!r} is not a Python file or folder of the project", field="TARGET")
        for rel in chosen:
            catalog = _catalog_for(rel, catalogs)
            targets.append(
                SweepTarget(rel, symbol or None, catalog.settings, catalog.sweep)
                if catalog is not None
                else SweepTarget(rel, symbol or None, GateSettings())
            )
    _refuse_unresolved(root, targets)
    return targets


def _refuse_unresolved(root: Path, targets: list[SweepTarget]) -> None:
    """Every `file::symbol` target names one definition, or the sweep stops here, before its
    baseline and its enumeration: typing_extensions' ambiguous `::type_repr` was refused
    14 s into a sweep, once mutmut had enumerated the file. Each file is read as the
    enumeration reads it (_only_what_is_swept), so that the answer, and the cost, are the
    enumeration's own: the other top-level definitions stood in for, never parsed."""
    by_file: dict[str, list[SweepTarget]] = {}
    for target in targets:
        if target.symbol is not None:
            by_file.setdefault(target.path, []).append(target)
    for path, file_targets in by_file.items():
        code = (root / path).read_text(encoding="utf-8")
        try:
            module = cst.parse_module(_only_what_is_swept(code, file_targets, None))
        except cst.ParserSyntaxError:
            continue  # the enumeration says where, as for a whole file
        for target in file_targets:
            assert target.symbol is not None  # only such targets were kept, above
            try:
                resolve_symbol(module, target.symbol, path)
            except SymbolError as error:
                raise _refused(error) from None


def unsaid_gates(targets: list[SweepTarget], catalogs: list[Catalog]) -> tuple[str, ...]:
    """A line for each swept file whose [gate] the user could not tell: several catalogs, and
    none of them, or more than one, targets the file, so the sweep takes the first's tests
    (sortedcontainers: two catalogs, and a sweep ran one's gate without a word)."""
    if len(catalogs) < 2:
        return ()
    lines = []
    for path in dict.fromkeys(t.path for t in targets):
        chosen = _catalog_for(path, catalogs)
        claiming = [c.path for c in catalogs if any(m.target.path == path for m in c.mutations)]
        if chosen is None or len(claiming) == 1:
            continue
        if claiming:
            why = f"{' and '.join(claiming)} {'both' if len(claiming) == 2 else 'all'} target it"
        else:
            why = f"none of the {len(catalogs)} catalogs targets it"
        lines.append(
            f"{path}: swept under the [gate] of {chosen.path} ({why}); --catalog takes another's, --tests other tests"
        )
    return tuple(lines)


def _catalog_for(path: str, catalogs: list[Catalog]) -> Catalog | None:
    """The catalog that already targets the file, else the first: its [gate] and [sweep]."""
    for catalog in catalogs:
        if any(m.target.path == path for m in catalog.mutations):
            return catalog
    return catalogs[0] if catalogs else None


# --- enumeration ---------------------------------------------------------------------------


def enumerate_mutants(
    root: Path, targets: list[SweepTarget], ops: tuple[str, ...], change: ChangeSince | None = None
) -> Enumeration:
    """Every mutant of the targets; with `change`, only of the definitions it touched (the
    rest are never built), and what it changed that no mutant meets, named."""
    found = Enumeration()
    by_file: dict[str, list[SweepTarget]] = {}
    for target in targets:
        by_file.setdefault(target.path, []).append(target)
    seen: set[str] = set()
    for path, file_targets in by_file.items():
        file_change = change.file(path) if change is not None else None
        if change is None or file_change is not None:
            _enumerate_file(root, path, file_targets, ops, found, seen, file_change)
    return found


def _enumerate_file(
    root: Path,
    path: str,
    targets: list[SweepTarget],
    ops,
    found: Enumeration,
    seen: set[str],
    change: FileChange | None,
) -> None:
    code = (root / path).read_text(encoding="utf-8")
    read = _only_what_is_swept(code, targets, change)
    parsed = mutmut_adapter.mutations(path, read)
    spliced = SplicedFile(parsed.module, code, located_in=read)
    found.unlocated += [f"{path}: {what}" for what in spliced.unlocated]
    wrapper = MetadataWrapper(parsed.module, unsafe_skip_copy=True)
    positions = _Positions(wrapper)
    ranges = _target_ranges(parsed.module, positions, targets)
    touched = None
    statements: list[Definition] = []
    if change is not None:
        spans = {id(d.node): (positions[d.node].start.line, positions[d.node].end.line) for d in spliced.definitions}
        touched = frozenset(key for key, span in spans.items() if change.touches(*span))
        statements = _changed_statements(spliced, positions, change) if "mutmut" in ops else []
        swept_spans = [*spans.values(), *(_span(positions, s.node) for s in statements)]
        found.not_swept += not_swept(change, code, swept_spans, ranges)
    swept = [
        (d.node, d.text)
        for d in spliced.definitions
        if isinstance(d.node, cst.FunctionDef) and (touched is None or id(d.node) in touched)
    ]
    arid = Arid(targets[0].sweep.arid, swept, parsed.module)
    sweep = _FileSweep(path, code, spliced, positions, ranges, targets[0].settings, found, seen, arid, change, touched)
    if change is None:
        found.nested += [
            f"{path}::{node.name.value}" for node in _nested_definitions(parsed.module) if sweep.wanted(node)
        ]
    if "mutmut" in ops:
        _add_mutmut_mutants(sweep, parsed)
        _add_statement_mutants(sweep, parsed, statements)
    if "killmap" in ops:  # only they ask for parents: another walk of the module
        _add_killmap_mutants(sweep, root, parsed, wrapper.resolve(ParentNodeProvider))


def _only_what_is_swept(code: str, targets: list[SweepTarget], change: FileChange | None) -> str:
    """The file as mutmut and libcst read it for the sweep: each top-level function or class
    no target names (and, with a change, that the change does not touch) stood in for by an
    empty tuple of the same length, `(` ... `)` over whitespace, every offset and line kept.
    Enumerating a whole file to sweep one of its functions cost pycodestyle's 2,717-line
    module 8 s before any mutant ran (mutmut's create_mutations, then libcst's positions);
    the mutants, their ids and their lines are those of the whole file's enumeration, since
    what is kept reads as it does in the file (SplicedFile locates it in both texts)."""
    whole = any(target.symbol is None for target in targets)
    if whole and change is None:
        return code
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code  # mutmut says why, on the file itself
    named = {target.symbol.split(".")[0] for target in targets if target.symbol}
    starts = [0, *(i + 1 for i, char in enumerate(code) if char == "\n")]
    text = list(code)
    for node in tree.body:
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or node.end_lineno is None:
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        if (whole or node.name in named) and (change is None or change.touches(first, node.end_lineno)):
            continue
        begin = starts[first - 1]
        end = starts[node.end_lineno] - 1 if node.end_lineno < len(starts) else len(code)
        while end > begin and code[end - 1] in "\r\n":
            end -= 1
        if end - begin < 2:
            continue
        for i in range(begin, end):
            if text[i] not in "\r\n":
                text[i] = " "
        # One string token where its quotes fit on the first and the last line (libcst reads
        # an empty tuple's lines of whitespace one by one, a third of the cost again).
        first_line_end, last_line_start = code.find("\n", begin), starts[node.end_lineno - 1]
        if first_line_end - begin >= 3 and end - last_line_start >= 3 and end - begin >= 6:
            text[begin : begin + 3] = text[end - 3 : end] = '"""'
        else:
            text[begin], text[end - 1] = "(", ")"
    return "".join(text)


def _nested_definitions(module: cst.Module) -> list[cst.FunctionDef | cst.ClassDef]:
    """The functions and classes a module-level compound statement (`if`, `try`, `with`,
    a loop) holds, outermost only, in source order: the sweep locates top-level ones and
    methods alone."""
    found: list[cst.FunctionDef | cst.ClassDef] = []

    def visit(node: cst.CSTNode) -> None:
        for child in node.children:
            if isinstance(child, (cst.FunctionDef, cst.ClassDef)):
                found.append(child)
            else:
                visit(child)

    for statement in module.body:
        if not isinstance(statement, (cst.FunctionDef, cst.ClassDef, cst.SimpleStatementLine)):
            visit(statement)
    return found


def _span(positions, node: cst.CSTNode) -> tuple[int, int]:
    return positions[node].start.line, positions[node].end.line


def _changed_statements(spliced: SplicedFile, positions, change: FileChange) -> list[Definition]:
    """The simple statements of the module and of its classes' bodies a change added or
    changed a line of, but imports: they run at import, and the gate judges a change to them
    as it judges any (every test that imports the module reaches it, each run in a fresh
    session). mutmut's operators make their mutants; an import has none worth making, and
    is named changed, not swept."""
    return [
        s
        for s in spliced.statements
        if change.on(tuple(range(_span(positions, s.node)[0], _span(positions, s.node)[1] + 1)))
        and isinstance(s.node, cst.SimpleStatementLine)
        and not any(isinstance(small, (cst.Import, cst.ImportFrom)) for small in s.node.body)
    ]


def _add_statement_mutants(sweep: _FileSweep, parsed, statements: list[Definition]) -> None:
    """mutmut's operators over the module- and class-level statements a change touched
    (`mutmut run` mutates neither: a sweep without a change makes none either)."""
    for statement in statements:
        for original, mutated, operator in mutmut_adapter.operator_mutations([statement.node]):
            if sweep.wanted(original) and sweep.positions[original].start.line not in parsed.pragma_lines:
                sweep.add(statement, original, mutated, f"mutmut:{operator}", statement.qualname)


class _Positions:
    """The module's positions, worked out at the first node asked about. Working them out is a
    rendering of the whole module (12 ms of packaging's utils.py, 50 ms of its specifiers.py,
    before the first mutant can run), and a sweep of a whole file with mutmut's operators
    never asks: only a target narrowed to a function, or killmap's own operators, do."""

    def __init__(self, wrapper: MetadataWrapper):
        self._wrapper = wrapper
        self._found: Any = None

    def __getitem__(self, node: cst.CSTNode) -> Any:
        if self._found is None:
            self._found = self._wrapper.resolve(PositionProvider)
        return self._found[node]


@dataclass(frozen=True)
class _FileSweep:
    """One file being enumerated: which of its nodes the targets cover, and how a change to
    one becomes a mutant (once per text, counted otherwise)."""

    path: str
    code: str
    spliced: SplicedFile
    positions: _Positions
    ranges: list[tuple[int, int]] | None
    settings: GateSettings
    found: Enumeration
    seen: set[str]
    arid: Arid
    change: FileChange | None = None
    touched: frozenset[int] | None = None  # with a change: the definitions it touched, by node identity

    def swept(self, definition) -> bool:
        return self.touched is None or id(definition.node) in self.touched

    def wanted(self, node: cst.CSTNode) -> bool:
        if self.ranges is None:
            return True
        line = self.positions[node].start.line
        return any(start <= line <= end for start, end in self.ranges)

    def add(self, definition, original, replacement, op, inner, hint=None, mutmut_name=None) -> None:
        path, code, found = self.path, self.code, self.found
        rule = self.arid.rule_of(original, replacement, op)
        if rule is not None:
            found.arid[rule] += 1
            return
        made = self.spliced.mutant(definition, original, replacement)
        if made is None:
            found.identical += 1
            return
        text, function_text, old_lines, new_lines = made
        old_lines, new_lines = _code_lines(code, old_lines), _code_lines(text, new_lines)
        same = hashlib.sha256(f"{path}\0{definition.qualname}\0{function_text}".encode()).hexdigest()
        if same in self.seen:
            found.duplicates += 1
            return
        self.seen.add(same)
        ident = self._stable_id(definition, function_text, old_lines, new_lines)
        mutation = Mutation(
            name=ident,
            target=Target(path, None if definition.qualname == MODULE else definition.qualname),
            op=op,
            params=(("sweep", ident),),
            kills=(),
            settings=self.settings,
            uncontracted=True,
            note=f"sweep mutant ({op}) of {path}::{inner}",
        )
        mutant = Mutant(mutation, path, code, text, 1, "", "", old_lines, new_lines)
        on_change = self.change is not None and self.change.on(old_lines)
        found.mutants.append(
            SweepMutant(ident, path, definition.qualname, inner, op, mutant, hint, mutmut_name, on_change)
        )

    def _stable_id(self, definition, function_text: str, old: tuple[int, ...], new: tuple[int, ...]) -> str:
        """`file-stem.Qualified.name.digest`, the digest of what the mutant changes: the lines
        it changes, as they read before and after, with their indentation. An edit elsewhere
        in the function keeps it; a second change alike in the same definition gets the next
        digest of a counted series. (The texts of two mutants are never alike: `seen`.)"""
        before = _lines_at(definition.text, old, definition.first_line)
        after = _lines_at(function_text, new, definition.first_line)
        key = f"{self.path}\0{definition.qualname}\0{before}\0{after}"
        for ordinal in itertools.count():
            digest = hashlib.sha256(f"{key}\0{ordinal}".encode()).hexdigest()[:8]
            ident = f"{PurePosixPath(self.path).stem}.{definition.qualname}.{digest}"
            if ident not in self.seen:
                self.seen.add(ident)
                return ident
        raise AssertionError("unreachable: itertools.count() never ends")


def _lines_at(text: str, lines: tuple[int, ...], first_line: int) -> str:
    """The lines of a definition's text at these line numbers of its file."""
    own = text.splitlines()
    return "\n".join(own[n - first_line] for n in lines if 0 <= n - first_line < len(own))


def _add_mutmut_mutants(sweep: _FileSweep, parsed) -> None:
    """mutmut's mutations of the file, inside the targets; a removed `not` keeps its
    condition as the hint that names the catalog's `negate`."""
    spliced = sweep.spliced
    definitions = {id(d.node): d for d in spliced.definitions}
    for m in parsed.mutations:
        definition = definitions.get(id(m.function))
        if definition is None or not sweep.swept(definition) or not sweep.wanted(m.original):
            continue
        hint = (
            ("negate", (("condition", spliced.module.code_for_node(m.original).strip()),))
            if m.operator == "remove_unary_ops" and isinstance(m.original.operator, cst.Not)
            else None
        )
        sweep.add(definition, m.original, m.mutated, f"mutmut:{m.operator}", definition.qualname, hint, m.mutmut_name)
    if sweep.change is not None:
        _add_decorated_mutants(sweep, parsed)
        return
    named = [
        f"{sweep.path}::{d.qualname}"
        for d in spliced.definitions
        if isinstance(d.node, cst.FunctionDef)
        and mutmut_adapter.skipped_by_mutmut(d.node)
        and not _an_overload(d.node)
        and sweep.wanted(d.node)
    ]
    sweep.found.decorated += dict.fromkeys(named)  # a property's getter and setter share a name
    sweep.found.left_alone += [f"{sweep.path}::{d.qualname}" for d in _left_alone(sweep, parsed)]


def _left_alone(sweep: _FileSweep, parsed) -> list[Definition]:
    """The undecorated functions inside the targets that got no mutmut mutant though its
    operators apply to their body: mutmut's own rules left them alone (blinker's
    `Symbol.__new__`, which `mutmut run` never mutates, read as swept). Not one a `# pragma: no
    mutate` on its `def` line covers: that is the project's choice, said in its code."""
    with_mutants = {id(m.function) for m in parsed.mutations}
    found = []
    for definition in sweep.spliced.definitions:
        node = definition.node
        if (
            not isinstance(node, cst.FunctionDef)
            or id(node) in with_mutants
            or mutmut_adapter.skipped_by_mutmut(node)
            or not sweep.wanted(node)
            or sweep.positions[node].start.line in parsed.pragma_lines
        ):
            continue
        candidates = mutmut_adapter.operator_mutations([node.params, node.body])
        if any(sweep.positions[original].start.line not in parsed.pragma_lines for original, _, _ in candidates):
            found.append(definition)
    return found


def _an_overload(function: cst.FunctionDef) -> bool:
    """A `typing.overload` stub: a signature for type checkers, never run, whose function's
    own definition follows it (cssselect's `Attrib.__init__` read as left alone, twice, though
    its real definition got five mutants)."""
    return any(
        (d.decorator.attr.value if isinstance(d.decorator, cst.Attribute) else getattr(d.decorator, "value", ""))
        == "overload"
        for d in function.decorators
    )


def _add_decorated_mutants(sweep: _FileSweep, parsed) -> None:
    """With a change: mutmut's operators over the touched functions mutmut itself skips (a
    property's getter and setter, any decorated function, `__new__`: _left_alone), so that a change to one gets the
    token-level mutants any other function gets. `mutmut run` makes none of them, so a sweep
    without a change makes none either (it makes exactly mutmut's)."""
    left_alone = {id(d.node) for d in _left_alone(sweep, parsed)}
    for definition in filter(sweep.swept, sweep.spliced.definitions):
        node = definition.node
        if not isinstance(node, cst.FunctionDef):
            continue
        if not mutmut_adapter.skipped_by_mutmut(node) and id(node) not in left_alone:
            continue
        for original, mutated, operator in mutmut_adapter.operator_mutations([node.params, node.body]):
            if sweep.wanted(original) and sweep.positions[original].start.line not in parsed.pragma_lines:
                sweep.add(definition, original, mutated, f"mutmut:{operator}", definition.qualname)


def _add_killmap_mutants(sweep: _FileSweep, root: Path, parsed, parents) -> None:
    """killmap's statement-level candidates (sweep_ops.py) of each definition, inside the
    targets, except those a `# pragma: no mutate` covers."""
    raising = _never_returning(root, sweep.path, sweep.code, sweep.settings)
    for definition in filter(sweep.swept, sweep.spliced.definitions):
        assert isinstance(definition.node, cst.FunctionDef)  # `definitions` holds functions; `statements` the rest
        for candidate in sweep_ops.candidates(
            definition.node, definition.qualname, parents, parsed.module.code_for_node, raising
        ):
            if not sweep.wanted(candidate.original):
                continue
            span = sweep.positions[candidate.original]
            if any(line in parsed.pragma_lines for line in range(span.start.line, span.end.line + 1)):
                sweep.found.pragma += 1
                continue
            sweep.add(
                definition,
                candidate.original,
                candidate.replacement,
                f"killmap:{candidate.op}",
                candidate.function,
                (candidate.op, candidate.hint) if candidate.hint else None,
            )


def _code_lines(text: str, lines: tuple[int, ...]) -> tuple[int, ...]:
    """The changed lines that hold code. A comment or blank line a mutant takes with its
    statement (libcst keeps comments with the statement below them) is no statement: the
    engine would read it as code outside any function, run at import by every test, and so
    call a mutant no test executes reached. Kept as they are when nothing else is left
    (a deletion marks the line after it, which may be blank)."""
    source = split_lines(text)
    code = tuple(
        n
        for n in lines
        if 0 < n <= len(source) and source[n - 1].strip() and not source[n - 1].lstrip().startswith("#")
    )
    return code or lines


def _target_ranges(module: cst.Module, positions, targets: list[SweepTarget]) -> list[tuple[int, int]] | None:
    """The line ranges the targets cover in the file; None for the whole file."""
    if any(t.symbol is None for t in targets):
        return None
    ranges = []
    for target in targets:
        assert target.symbol is not None  # a target without one made the range the whole file, above
        try:
            node = resolve_symbol(module, target.symbol, target.path)
        except SymbolError as error:
            raise _refused(error) from None
        decorators = getattr(node, "decorators", None)
        start = positions[decorators[0]].start.line if decorators else positions[node].start.line
        ranges.append((start, positions[node].end.line))
    return ranges


def _refused(error: SymbolError) -> GateError:
    """A target the sweep cannot take. An ambiguous one is told to sweep the scope that holds
    every definition of the name: a sweep has no op to narrow with, which the resolver's
    advice (for a catalog entry) suggests."""
    if not isinstance(error, AmbiguousSymbol):
        return GateError(str(error), field="TARGET")
    scope = f"scope that holds them all: {error.path}::{error.scope}" if error.scope else f"file: {error.path}"
    return GateError(
        f"{error.name!r} is defined {error.count} times in {error.path}; the target is ambiguous (sweep the {scope})",
        field="TARGET",
    )


def _never_returning(root: Path, path: str, code: str, settings: GateSettings) -> frozenset[str]:
    """Functions that never return, defined here or imported from the project by name:
    what they are passed counts as raised (draftroute raises through `refuse(arm, ...)`)."""
    names = set(sweep_ops.never_returning(code))
    here = PurePosixPath(path).parent
    for module, level, name in sweep_ops.imported_names(code):
        bases = [here.joinpath(*[".."] * (level - 1))] if level else [PurePosixPath(p) for p in settings.paths]
        for base in bases:
            stem = base.joinpath(*module.split(".")) if module else base
            # `from . import name` in a module at the root: the folder itself, no `.py` beside it.
            module_file = (stem.with_suffix(".py"),) if stem.name else ()
            for candidate in (*module_file, stem / "__init__.py"):
                file = root / candidate
                if file.is_file() and name in sweep_ops.never_returning(file.read_text(encoding="utf-8")):
                    names.add(name)
    return frozenset(names)


# --- named mutants, the run, the statuses ----------------------------------------------------


def named_mutants(root: Path, mutants: list[SweepMutant], catalogs: list[Catalog]) -> dict[str, str]:
    """Sweep mutant id -> the catalog mutation that makes the same change at the same site:
    overlapping changed lines of the original, and the same syntax (formatting aside) in
    the top-level statement that holds them."""
    files = {m.file for m in mutants}
    sources = Sources(root)
    known: dict[str, list[tuple[str, tuple[int, ...], str]]] = {}
    sites: dict[str, _Sites] = {}
    for mutation in (m for c in catalogs for m in c.mutations if m.target.path in files):
        try:
            built = build_mutant(root, mutation, sources)
        except GateError:
            continue  # `killmap run` reports it; the sweep only compares
        if built.applied:
            site = sites.setdefault(built.file, _Sites(built.original))
            known.setdefault(built.file, []).append(
                (mutation.name, built.changed_lines, site.key(built.mutated or "", built.changed_lines))
            )
    named: dict[str, str] = {}
    for sweep_mutant in mutants:
        mutant = sweep_mutant.mutant
        for name, lines, key in known.get(sweep_mutant.file, ()):
            if (
                set(lines) & set(mutant.changed_lines)
                and sites[mutant.file].key(mutant.mutated or "", mutant.changed_lines) == key
            ):
                named[sweep_mutant.id] = name
                break
    return named


class _Sites:
    """The syntax of the top-level statement a change falls in, as one mutant reads it: two
    mutants that change the same lines are the same change when those agree."""

    def __init__(self, original: str):
        self.lines = split_lines(original)
        self.tops = [
            (min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", ())]), n.end_lineno or n.lineno)
            for n in ast.parse(original).body
        ]
        self._memo: dict[tuple[int, str], str] = {}

    def key(self, text: str, changed: tuple[int, ...]) -> str:
        top = next(((s, e) for s, e in self.tops if changed and s <= min(changed) and max(changed) <= e), None)
        lines = split_lines(text)
        if top is not None:
            start, end = top
            tail = len(self.lines) - end
            if lines[: start - 1] == self.lines[: start - 1] and lines[len(lines) - tail :] == self.lines[end:]:
                return self._dump(start, "".join(lines[start - 1 : len(lines) - tail]))
        return self._dump(0, text)

    def _dump(self, start: int, text: str) -> str:
        if (start, text) not in self._memo:
            try:
                self._memo[(start, text)] = f"{start}:" + ast.dump(ast.parse(text))
            except SyntaxError:
                self._memo[(start, text)] = f"{start}:unparsable:{text}"
        return self._memo[(start, text)]


def status_of(verdict: Verdict) -> str:
    if verdict.verdict == judge.UNEVIDENCED:
        # Nothing reached it, or it went red only in tests that never ran it: no evidence.
        return "inconclusive" if verdict.red else "unreached"
    return _STATUS_OF_VERDICT.get(verdict.verdict, "inconclusive")


def score(counts: dict[str, int]) -> float | None:
    """Killed (and timed out) over everything that ran to a verdict about the tests."""
    total = sum(counts.get(s, 0) for s in SCORED)
    return None if total == 0 else (counts.get("killed", 0) + counts.get("timeout", 0)) / total


def run_sweep(
    root: Path,
    targets: list[SweepTarget],
    ops: tuple[str, ...],
    options: LabOptions,
    catalogs: list[Catalog],
    progress: Progress = lambda kind, data: None,
    portion: Portion = Portion(),
    *,
    every_red: bool = False,
    launch: Launch | None = None,
) -> SweepResult:
    """`every_red`: run each killed mutant's whole selection, for its whole red set; by default
    its run stops at its first red test (Mutation.first_red), as mutmut's does. `launch`: the
    workers the command started at its first line (engine/workers/launch.py)."""
    started = time.perf_counter()
    version = mutmut_adapter.version()
    early_baseline = _baseline_while_enumerating(root, targets, options, launch)
    try:
        return _swept(
            root,
            targets,
            ops,
            options,
            catalogs,
            progress,
            portion,
            every_red,
            launch,
            early_baseline,
            started,
            version,
        )
    except BaseException:
        if early_baseline is not None:
            early_baseline.cancel()  # no worker outlives the sweep (run_mutations stops it once handed it)
        raise


def _baseline_while_enumerating(
    root: Path, targets: list[SweepTarget], options: LabOptions, launch: Launch | None
) -> EarlyBaseline | None:
    """The baseline of the targets' files, begun before their mutants are enumerated (libcst
    and mutmut's operators: over a second for draftroute's files, while the workers would
    wait). Not when the cache holds verdicts of mutants of these files: a sweep run again
    may have nothing left to run, and the baseline would only slow its enumeration."""
    if options.use_cache and _swept_before(root, targets, options):
        return None
    first = [t for t in targets if t.settings == targets[0].settings]
    plan = [
        Mutation(
            name=f"sweep of {path}",
            target=Target(path),
            op="sweep",
            params=(),
            kills=(),
            settings=first[0].settings,
            uncontracted=True,
        )
        for path in dict.fromkeys(t.path for t in first)
    ]
    return start_early_baseline(root, plan, options, launch)


def _swept_before(root: Path, targets: list[SweepTarget], options: LabOptions) -> bool:
    stems = tuple(f"{PurePosixPath(t.path).stem}." for t in targets)
    return any(name.startswith(stems) for name in VerdictCache(root, options.cache_dir).entries)


def _swept(
    root: Path,
    targets: list[SweepTarget],
    ops: tuple[str, ...],
    options: LabOptions,
    catalogs: list[Catalog],
    progress: Progress,
    portion: Portion,
    every_red: bool,
    launch: Launch | None,
    early_baseline: EarlyBaseline | None,
    started: float,
    version: str,
) -> SweepResult:
    enumeration = enumerate_mutants(root, targets, ops, portion.change)
    if portion.lines_only and portion.change is not None:
        enumeration.outside_not_run = sum(not m.on_change for m in enumeration.mutants)
        enumeration.mutants = [m for m in enumeration.mutants if m.on_change]
    marks = reviewer_marks(enumeration.mutants, catalogs)  # every shard checks every mark
    split, items = _sharded(enumeration, portion)
    named = named_mutants(root, enumeration.mutants, catalogs)
    to_run = [_as_swept(m, every_red) for m in enumeration.mutants if m.id not in named]
    if named:
        progress("named", len(named))
    lab, verdicts = _run_swept(root, to_run, options, progress, portion, launch, early_baseline)
    # A run mutant's entry holds the very mutant the lab ran (with its run settings), whose
    # diff the lab has worked out already: the report asks for it again.
    ran = {m.id: m for m in to_run}
    entries = [
        SweepEntry(m, "named", None, named[m.id])
        if m.id in named
        else SweepEntry(ran.get(m.id, m), status_of(verdicts[m.id]), verdicts[m.id])
        for m in enumeration.mutants
    ]
    entries = triaged(entries, marks)
    wall = time.perf_counter() - started
    base = portion.change.base if portion.change is not None else None
    if split is None:
        return SweepResult(targets, ops, entries, enumeration, lab, wall, version, base=base)
    assert portion.shard is not None  # split is made only for a shard
    return SweepResult(targets, ops, entries, enumeration, lab, wall, version, split, portion.shard[0], items, base)


def _sharded(enumeration: Enumeration, portion: Portion) -> tuple[Split | None, tuple[str, ...]]:
    """The enumeration narrowed to a shard's share, when the portion is one: the split and
    every shard's mutants, for the shard's report."""
    split, items = None, tuple(m.id for m in enumeration.mutants)
    if portion.shard is not None:
        # Every shard enumerates every mutant and keeps its own: the split is the same on each.
        split = split_items([[item] for item in items], portion.shard[1], portion.durations)
        mine = split.members(portion.shard[0])
        enumeration.mutants = [m for m in enumeration.mutants if m.id in mine]
    return split, items


def _run_swept(
    root: Path,
    to_run: list[SweepMutant],
    options: LabOptions,
    progress: Progress,
    portion: Portion,
    launch: Launch | None,
    early_baseline: EarlyBaseline | None,
) -> tuple[Any, dict[str, Verdict]]:
    """The lab's run of the mutants no catalog names, longest first, and their verdicts."""
    if not to_run:
        if early_baseline is not None:
            early_baseline.cancel()  # every mutant is named: nothing runs
        return None, {}
    to_run[:] = longest_first(to_run, portion.durations)
    mutations, prebuilt = [m.mutant.mutation for m in to_run], {m.id: m.mutant for m in to_run}
    lab = run_mutations(
        root,
        mutations,
        options,
        progress,
        mutants=prebuilt,
        launch=launch,
        recorded=portion.durations,
        early_baseline=early_baseline,
    )
    return lab, {v.name: v for v in lab.verdicts}


def _as_swept(sweep_mutant: SweepMutant, every_red: bool) -> SweepMutant:
    """A sweep mutant's run stops at its first red test (unless `every_red`). A timeout is a
    timeout at the gate's own limit, as in `killmap run`, where that limit is time the run
    could run; elsewhere it is confirmed with RETRY_FACTOR times its limit first, and with
    `every_red` with EVERY_RED_RETRY_FACTOR times it.

    The gate's limit is 10 x what the selected tests took green (5 s at least). Two things
    made a mutant that ends run past it, and were why every timeout was re-run at 4 x: a
    mutant that turns most of its tests red (each red is reported, traced and re-run by the
    flake guard), and a loaded machine (64 of draftroute's 560 mutants timed out so under
    load 5). A run stopped at its first red has one red, and on Linux a loaded machine's wait
    for a CPU moves the deadline on (engine: limits_count_cpu_wait). There a loop costs its
    limit once (5 s for a fast selection; `mutmut run` gives a 0.2 s one (0.2 + 1) x 15 = 18 s),
    not five times it: on more-itertools' recipes.py, fourteen loops cost 25 s each."""
    mutant = sweep_mutant.mutant
    factor = retry_factor(every_red=every_red, waits_counted=limits_count_cpu_wait())
    mutation = dataclasses.replace(mutant.mutation, first_red=not every_red, retry_timeout=factor)
    return dataclasses.replace(sweep_mutant, mutant=dataclasses.replace(mutant, mutation=mutation))


def retry_factor(*, every_red: bool, waits_counted: bool) -> float | None:
    """How many times its limit a sweep's timeout is re-run with before it counts; None: not
    re-run (_as_swept says why)."""
    if every_red:
        return EVERY_RED_RETRY_FACTOR
    return None if waits_counted else RETRY_FACTOR


def longest_first(mutants: list[SweepMutant], durations: Mapping[str, float] | None) -> list[SweepMutant]:
    """The mutants an earlier report (--durations) knows to be long, first: the workers then
    end together, instead of one of them starting a long mutant when the rest are done. The
    order of a run changes no verdict (each mutant runs alone in its sandbox), and without
    durations it is the enumeration's."""
    if not durations:
        return mutants
    return sorted(mutants, key=lambda m: -durations.get(m.id, 0.0))
