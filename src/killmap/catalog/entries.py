"""One catalog table validated into frozen data: a [[mutation]] entry (`entry_mutation`, which
`killmap try` uses too) and the [gate] table.

Every rule here exists so that a typo fails loudly as bad input (exit 2), naming the file,
the mutation and the field, instead of quietly reading as a verdict.
"""

from __future__ import annotations

import ast
import difflib
import posixpath
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from killmap.catalog.contract import (
    ARID_OFF_BY_DEFAULT,
    ARID_RULES,
    COMMON_FIELDS,
    EXPRESSION_FIELDS,
    GATE_FIELDS,
    MARKS,
    MAX_TIMEOUT,
    MAY_BE_EMPTY,
    NAME_PATTERN,
    OPERATORS,
    PATCH_PINS,
    PIN_PATTERN,
    REQUIREMENTS,
    SWEEP_FIELDS,
    TARGET_PIN_PATTERN,
    TIMEOUT_RULE,
    GateSettings,
    Mutation,
    SweepSettings,
    Target,
)
from killmap.catalog.pytestargs import read_pytest_args, refused
from killmap.catalog.testids import matches
from killmap.catalog.workspace import foreign_target_note
from killmap.errors import GateError

# How a field's error is raised: the message, and the field it names (with the file and mutation).
_Fail = Callable[[str, str], GateError]
_T = TypeVar("_T")


def relative_path(root: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _string_list(value: Any, where: GateError) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise where
    return tuple(value)


def parse_expression(text: str) -> ast.Expression:
    """An expression as written in a condition: `x := f()` (an `if` test, unparenthesized)
    parses only inside parentheses on its own (webcolors' `if hex_value := ...:`)."""
    try:
        return ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        if ":=" not in text:
            raise
        return ast.parse(f"({text.strip()})", mode="eval")


def did_you_mean(key: str, known) -> str:
    """ "; did you mean 'kills'?" for a key a letter or two off one of `known`, else ""."""
    near = nearest(key, known)
    return f"; did you mean {' or '.join(repr(name) for name in near)}?" if near else ""


def nearest(key: str, known, cutoff: float = 0.75) -> list[str]:
    """The names of `known` nearest to `key` (difflib's ratio, at least `cutoff`): every one
    of them where several are as near (tinydb: `__lte__` is one letter off `__lt__` and
    `__le__` alike, and naming one sent the reader to the wrong one)."""
    scored = [(_nearness(key, name, cutoff), name) for name in sorted(set(known))]
    best = max((ratio for ratio, _ in scored if ratio >= cutoff), default=None)
    return [name for ratio, name in scored if ratio == best] if best is not None else []


def _nearness(key: str, name: str, cutoff: float) -> float:
    """difflib's ratio, but at least `cutoff` for two neighbouring letters swapped: one slip of
    the fingers, which difflib counts as two letters off, and in a three-letter name that is a
    ratio of 0.67 (`nwe` was offered nothing, though `new` was the field meant)."""
    ratio = difflib.SequenceMatcher(None, key, name).ratio()
    return max(ratio, cutoff) if _swapped_pair(key, name) else ratio


def _swapped_pair(key: str, name: str) -> bool:
    """Whether `key` is `name` with one pair of neighbouring letters swapped."""
    i = next((i for i, (a, b) in enumerate(zip(key, name, strict=False)) if a != b), None)
    return i is not None and key == name[:i] + name[i + 1 : i + 2] + name[i] + name[i + 2 :]


def read_gate_settings(rel: str, table: Any) -> GateSettings:
    if not isinstance(table, dict):
        raise GateError("[gate] must be a table", file=rel, field="gate")
    unknown = set(table) - GATE_FIELDS
    if unknown:
        key = sorted(unknown)[0]
        raise GateError(
            f"unknown [gate] field{did_you_mean(key, GATE_FIELDS)} (known: {', '.join(sorted(GATE_FIELDS))})",
            file=rel,
            field=key,
        )
    kwargs: dict[str, Any] = {}
    for key in ("tests", "paths", "exclude"):
        if key in table:
            kwargs[key] = _string_list(
                table[key], GateError("must be a list of non-empty strings", file=rel, field=key)
            )
    if "tests" in kwargs and not kwargs["tests"]:
        raise GateError("must name at least one pytest target", file=rel, field="tests")
    for key in ("tests", "paths", "exclude"):
        for entry in kwargs.get(key, ()):
            problem = why_outside_project(entry)
            if problem:
                raise GateError(
                    f"{entry!r} {problem}: [gate] {key} entries are paths or node ids "
                    "inside the project, relative to its root",
                    file=rel,
                    field=key,
                )
    if "timeout" in table:
        kwargs["timeout"] = _timeout(
            table["timeout"], GateError(TIMEOUT_RULE + f", got {_shown(table['timeout'])}", file=rel, field="timeout")
        )
    for key in ("werror", "confine"):
        if key in table:
            if not isinstance(table[key], bool):
                raise GateError("must be true or false", file=rel, field=key)
            kwargs[key] = table[key]
    if "pytest_args" in table:
        kwargs["pytest_args"] = _pytest_args(rel, table["pytest_args"])
    return GateSettings(**kwargs)


def read_sweep_settings(rel: str, table: Any) -> SweepSettings:
    """[sweep]: `arid_RULE = true|false` for each arid rule, `equivalent` and `not_useful` lists
    of sweep mutant ids. Whether an id names a mutant is the sweep's to say (it enumerates)."""
    if not isinstance(table, dict):
        raise GateError("[sweep] must be a table", file=rel, field="sweep")
    unknown = set(table) - SWEEP_FIELDS
    if unknown:
        key = sorted(unknown)[0]
        raise GateError(
            f"unknown [sweep] field{did_you_mean(key, SWEEP_FIELDS)} (known: {', '.join(sorted(SWEEP_FIELDS))})",
            file=rel,
            field=key,
        )
    arid = set()
    for rule in ARID_RULES:
        value = table.get(f"arid_{rule}", rule not in ARID_OFF_BY_DEFAULT)
        if not isinstance(value, bool):
            raise GateError("must be true or false", file=rel, field=f"arid_{rule}")
        if value:
            arid.add(rule)
    marked: list[tuple[str, str]] = []
    for key, mark in MARKS.items():
        ids = _string_list(table.get(key, []), GateError("must be a list of sweep mutant ids", file=rel, field=key))
        marked += [(ident, mark) for ident in ids]
    return SweepSettings(frozenset(arid), tuple(marked))


def _pytest_args(rel: str, value: Any) -> tuple[str, ...]:
    """[gate] pytest_args: pytest's arguments as a string (split as `addopts` is) or a list,
    none of them one under which no test could judge a mutant (pytestargs.REFUSED)."""
    args = read_pytest_args(
        value,
        GateError(
            f"must be pytest arguments, as a string (as addopts) or a list of non-empty strings, got {_shown(value)}",
            file=rel,
            field="pytest_args",
        ),
    )
    bad = refused(args)
    if bad is not None:
        raise GateError(
            f"{bad[0]}: under it pytest {bad[1]}, so no test could judge a mutant; leave it out",
            file=rel,
            field="pytest_args",
        )
    return args


def missing_test_paths(root: Path, where: Iterable[tuple[str, GateSettings]]) -> list[GateError]:
    """Each `[gate] tests` entry (catalog, its [gate]) that names no file or folder of the
    project: pytest said it later, as a baseline that collected nothing, in two lines naming
    neither the catalog nor the field. Each catalog's entries looked at once: a sweep hands in
    one pair per mutant, thousands alike."""
    problems = []
    for catalog, settings in dict.fromkeys(where):
        tests = settings.tests
        for entry in tests:
            path = posixpath.normpath(entry.split("::", 1)[0])
            if not (root / path).exists():
                # A sweep's mutants have no catalog of their own: say where the setting comes from.
                whose = "" if catalog else " (the tests to run: a catalog's [gate] tests, or --tests)"
                if catalog and tuple(tests) == GateSettings().tests:
                    # natsort, a catalog of [[mutation]] only: the user never wrote 'tests'.
                    whose = " ([gate] tests' default: set [gate] tests to where the tests are)"
                problems.append(
                    GateError(f"{entry!r} is not a file or folder of the project{whose}", file=catalog, field="tests")
                )
    return problems


def missing_excluded_files(root: Path, where: Iterable[tuple[str, GateSettings]]) -> list[GateError]:
    """Each `exclude` entry (catalog, its [gate]) naming a test module that is not there: said
    even where the collection fails (pycodestyle: `tests/test_shel.py` left the module it meant
    failing to import, and only that failure was said)."""
    problems = []
    for catalog, entry in dict.fromkeys((c, e) for c, settings in where for e in settings.exclude):
        if not names_absent_module(root, entry):
            continue
        file = posixpath.normpath(entry.split("::", 1)[0])
        folder = (root / file).parent
        siblings = [p.relative_to(root).as_posix() for p in folder.glob("*.py")] if folder.is_dir() else []
        problems.append(
            GateError(
                f"{entry!r} names {file}, no file of the project{did_you_mean(file, siblings)}",
                file=catalog,
                field="exclude",
            )
        )
    return problems


def names_absent_module(root: Path, entry: str) -> bool:
    """Whether an entry's file part is a test module (`.py`) the project does not hold."""
    file = posixpath.normpath(entry.split("::", 1)[0])
    return file.endswith(".py") and not (root / file).exists()


def why_outside_project(entry: str) -> str | None:
    """Why a [gate] entry cannot be a path (or node id) inside the project, or None.

    These entries reach pytest's command line: one starting with '-' would be read as an
    option (`--junitxml=x` writes a file into the working tree), and an absolute path or
    one climbing out with '..' would run or import something outside the sandbox.
    """
    if entry.startswith("-"):
        return "starts with '-', so pytest would read it as an option"
    path = entry.split("::", 1)[0].split("[", 1)[0]
    normal = posixpath.normpath(path) if path else path
    if PurePosixPath(normal).is_absolute() or normal == ".." or normal.startswith("../"):
        return "is outside the project"
    return None


def _require_utf8(path: Path, fail) -> None:
    """Targets and patches are read as UTF-8 text everywhere in the gate: say so up front."""
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"is not UTF-8 text (byte {exc.start}); killmap reads sources and patches as UTF-8") from None
    except OSError as exc:
        raise fail(f"cannot be read: {exc.strerror}") from None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _timeout(value: Any, error: GateError) -> float:
    """Seconds, finite, above 0 and at most MAX_TIMEOUT. nan compares false with every
    bound and inf or 1e300 never arrives: either would let a looping mutant hang the gate."""
    if (
        isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 < value <= MAX_TIMEOUT)
    ):  # written so that nan fails it
        raise error
    return float(value)


def entry_mutation(
    root: Path, catalog: Path, settings: GateSettings, entry: dict[str, Any], *, adhoc: bool = False
) -> Mutation:
    """One [[mutation]] table, validated exactly as a catalog's own entries are.

    For entries built elsewhere (killmap try builds one from its command line), so a bad
    field is the same one line and exit 2 as in a catalog. `catalog` is the file the entry
    would live in (patch paths are relative to its folder). `adhoc`: an experiment with no
    contract yet, so `kills` may be empty; it is never judged against one.
    """
    return read_mutation(root, relative_path(root, catalog), catalog.parent, settings, 0, entry, adhoc=adhoc)


def read_mutation(
    root: Path, rel: str, folder: Path, settings: GateSettings, index: int, entry: Any, *, adhoc: bool = False
) -> Mutation:
    """One [[mutation]] entry, field group by field group, in the order its errors are reported:
    name and operator, the operator's own fields, the target, the contract, the pin and the
    run's settings, then the test ids the contract names."""
    if not isinstance(entry, dict):
        raise GateError(f"[[mutation]] #{index + 1} must be a table", file=rel)
    name = entry.get("name")
    label = name if isinstance(name, str) and name else f"#{index + 1}"

    def fail(message: str, field_name: str) -> GateError:
        return GateError(message, file=rel, mutation=label, field=field_name)

    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise fail("must be a kebab-case string such as 'identity-call-deleted'", "name")
    op = entry.get("op")
    if op is None:
        wanted = ("op", "target") if entry.get("invariant") else ("op", "target", "kills")
        missing = [key for key in wanted if key not in entry]
        also = f" (so are {' and '.join(missing[1:])})" if len(missing) > 1 else ""
        raise fail(f"required: the operator, one of {', '.join(OPERATORS)}{also}", "op")
    if op not in OPERATORS:
        raise fail(f"unknown operator {op!r}{did_you_mean(str(op), OPERATORS)} (known: {', '.join(OPERATORS)})", "op")
    # The groups below read independent fields: each is checked, so that one pass over the
    # catalog names every field of the entry to fix, not one per run.
    faults: list[GateError] = []
    params = _checked(faults, lambda: _operator_params(root, folder, op, entry, fail))
    target = _checked(faults, lambda: _target(root, entry.get("target"), fail))
    contract = _checked(faults, lambda: _contract_fields(entry, fail, adhoc=adhoc))
    run_fields = _checked(faults, lambda: _pin_and_run_fields(entry, fail))
    if contract is not None:
        _checked(faults, lambda: _refuse_loose_test_ids(root, contract["kills"], contract["may_kill"], fail))
        _checked(faults, lambda: _refuse_contradictions(contract["kills"], contract["may_kill"], fail))
    if faults:
        first = faults[0]
        first.also = tuple(faults[1:])
        raise first
    assert params is not None and target is not None and contract is not None and run_fields is not None
    return Mutation(
        name=name, target=target, op=op, params=tuple(params), **contract, **run_fields, catalog=rel, settings=settings
    )


def _checked(faults: list[GateError], read: Callable[[], _T]) -> _T | None:
    """What `read` returns, or None with its error kept in `faults`."""
    try:
        return read()
    except GateError as exc:
        faults.extend((exc, *exc.also))  # a group may find several fields at fault at once
        exc.also = ()
        return None


def _operator_params(root: Path, folder: Path, op: str, entry: dict[str, Any], fail: _Fail) -> list[tuple[str, str]]:
    """The fields the operator takes (no other, every required one), each a valid string."""
    required, optional = OPERATORS[op]
    allowed = COMMON_FIELDS | required | optional
    missing = [fail(f"required by op {op!r}", key) for key in sorted(required) if key not in entry]
    for key in entry:
        if key not in allowed:
            hint = did_you_mean(key, allowed)
            error = fail(f"unknown field for op {op!r}{hint} (allowed: {', '.join(sorted(allowed))})", key)
            # The misspelt field is most often the required one it meant (`nwe` for `new`): both
            # are said, so fixing the spelling is not followed by a second run to learn the other.
            error.also = tuple(missing)
            raise error
    if missing:
        raise missing[0]
    params = []
    for key in sorted(required | optional):
        if key not in entry:
            continue
        value = entry[key]
        if not isinstance(value, str):
            raise fail("must be a string", key)
        if not value and (op, key) not in MAY_BE_EMPTY:
            raise fail("must be a non-empty string", key)
        if key in EXPRESSION_FIELDS:
            try:
                parse_expression(value)
            except SyntaxError as exc:
                raise fail(f"is not a Python expression: {exc.msg}", key) from None
        if key in PATCH_PINS and not PIN_PATTERN.match(value):
            raise fail("must look like 'sha256:<64 hex digits>'", key)
        params.append((key, value))
    if op == "replace" and entry["old"] == entry["new"]:
        raise fail("is identical to 'old': the mutant would be the original", "new")
    if op == "revert-patch":
        patch = folder / entry["patch"]
        if not patch.is_file():
            raise fail(f"patch file not found: {relative_path(root, patch)}", "patch")
        _require_utf8(patch, lambda why: fail(f"patch file {relative_path(root, patch)} {why}", "patch"))
        params = [(k, relative_path(root, patch) if k == "patch" else v) for k, v in params]
    return params


def _target(root: Path, target: Any, fail: _Fail) -> Target:
    """A Python file of the project, read as UTF-8, and the symbol after '::' if any."""
    if not isinstance(target, str) or not target:
        raise fail("must be 'path/to/file.py' or 'path/to/file.py::Qualified.name'", "target")
    file_part, separator, symbol = target.partition("::")
    if separator and not symbol.strip():  # 'mod.py::' was read as the whole file
        raise fail(
            f"{target!r} names no symbol after '::': write 'path.py::Qualified.name', or drop '::' for the whole file",
            "target",
        )
    # The mutant is written to sandbox/<target>: an absolute path or one climbing out with
    # '..' would land outside the sandbox, in a real file. './src/x.py' is normalized so it
    # names the same file as the coverage and the reports do.
    normal = posixpath.normpath(file_part) if file_part else file_part
    if PurePosixPath(normal).is_absolute() or normal == ".." or normal.startswith("../"):
        raise fail(
            foreign_target_note(root, normal)
            or f"target must be a path inside the project, relative to its root: {file_part}",
            "target",
        )
    file_part = normal
    if not (root / file_part).is_file():
        raise fail(f"target file not found: {file_part}", "target")
    # A symlink (or a symlinked folder on the way) resolving outside the project names a
    # file the gate does not own: the sandbox would get a copy, the tests might import
    # the real one, and a pin would bind someone else's code.
    resolved = (root / file_part).resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise fail(f"target {file_part} is a symlink to a file outside the project: {resolved}", "target")
    if not file_part.endswith(".py"):
        raise fail("target must be a Python source file", "target")
    _require_utf8(root / file_part, lambda why: fail(f"target file {file_part} {why}", "target"))
    return Target(file_part, symbol or None)


def _contract_fields(entry: dict[str, Any], fail: _Fail, *, adhoc: bool) -> dict[str, Any]:
    """What must go red (kills), what may (may_kill), or nothing with its control (invariant),
    and the cause required: the Mutation's fields of those names."""
    invariant = entry.get("invariant", False)
    if not isinstance(invariant, bool):
        raise fail("must be true or false", "invariant")
    kills = _string_list(entry.get("kills", []), fail("must be a list of pytest node ids", "kills"))
    may_kill = _string_list(entry.get("may_kill", []), fail("must be a list of pytest node ids", "may_kill"))
    if invariant and kills:
        raise fail("an invariant mutation must turn nothing red, so it cannot list kills", "kills")
    if not invariant and not kills and not adhoc:
        raise fail("must name at least one test (or set invariant = true)", "kills")
    control = entry.get("control")
    if invariant and control is None:
        raise fail(
            "an invariant needs a positive control: a mutation of this catalog at the same "
            "site that turns tests red; without it 'nothing went red' proves nothing",
            "control",
        )
    if control is not None and (not invariant or not isinstance(control, str)):
        raise fail("only an invariant mutation names a control, as a mutation name", "control")
    require = entry.get("require")
    if require is not None and require not in REQUIREMENTS:
        raise fail(f"must be one of {', '.join(REQUIREMENTS)}{did_you_mean(str(require), REQUIREMENTS)}", "require")
    if require is not None and invariant:
        raise fail("an invariant turns nothing red, so it cannot require a kill cause", "require")
    return {"invariant": invariant, "kills": kills, "may_kill": may_kill, "control": control, "require": require}


def _pin_and_run_fields(entry: dict[str, Any], fail: _Fail) -> dict[str, Any]:
    """The pin, and how the mutant is built and run (count, werror, timeout), and its note:
    the Mutation's fields of those names."""
    pin = entry.get("pin")
    if pin is not None and (not isinstance(pin, str) or not TARGET_PIN_PATTERN.match(pin)):
        raise fail(
            "must look like 'ast1:sha256:<64 hex digits>' (or an older 'sha256:<64 hex digits>'); "
            "'killmap pin' writes it",
            "pin",
        )
    count = entry.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise fail("must be a positive integer", "count")
    werror = entry.get("werror")
    if werror is not None and not isinstance(werror, bool):
        raise fail("must be true or false", "werror")
    note = entry.get("note", "")
    if not isinstance(note, str):
        raise fail("must be a string", "note")
    timeout = entry.get("timeout")
    if timeout is not None:
        timeout = _timeout(timeout, fail(TIMEOUT_RULE + f", got {_shown(timeout)}", "timeout"))
    return {"pin": pin, "count": count, "werror": werror, "note": note, "timeout": timeout}


def _refuse_loose_test_ids(root: Path, kills: tuple[str, ...], may_kill: tuple[str, ...], fail: _Fail) -> None:
    for entry_list, key in ((kills, "kills"), (may_kill, "may_kill")):
        for test_id in entry_list:
            # A folder may be named with or without its slash ("tests" is "tests/"), and a
            # file of the project by its name (README.md, which pytest collects by
            # --doctest-glob); any other entry without '::', '.py' or '/' is a loose word.
            if (
                "::" not in test_id
                and not test_id.endswith(".py")
                and "/" not in test_id
                and not (root / test_id).exists()
            ):
                raise fail(
                    f"{test_id!r} is not a pytest node id (path.py::name), a test file or a folder of the project", key
                )


def _refuse_contradictions(kills: tuple[str, ...], may_kill: tuple[str, ...], fail) -> None:
    """A contract says one thing per test: no id twice, none both required and optional.

    Entries are compared as `matches` reads them (a trailing '/' does not count), and an
    entry already covered by a `kills` prefix counts as listed twice: `kills = ["t.py"]`
    with `may_kill = ["t.py::a"]` says a must go red and also that it need not.
    """
    for key, entries in (("kills", kills), ("may_kill", may_kill)):
        seen: dict[str, str] = {}
        for entry in entries:
            normal = entry.rstrip("/")
            if normal in seen:
                raise fail(f"{entry!r} is listed twice in {key}", key)
            seen[normal] = entry
    for entry in kills:  # no two entries are equal now: a match is a strictly wider prefix
        wider = next(
            (other for other in kills if other.rstrip("/") != entry.rstrip("/") and matches(other, entry.rstrip("/"))),
            None,
        )
        if wider is not None:
            raise fail(f"{entry!r} is listed twice in kills: {wider!r} already covers it", "kills")
    for entry in may_kill:
        required = next((k for k in kills if matches(k, entry.rstrip("/"))), None)
        if required is not None:
            same = required.rstrip("/") == entry.rstrip("/")
            raise fail(
                f"{entry!r} is in both kills and may_kill"
                + ("" if same else f" (kills {required!r} covers it)")
                + ": a test cannot be both required and allowed to go red",
                "may_kill",
            )
