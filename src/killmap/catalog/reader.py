"""The catalog: named mutations read from mutations/*.toml, validated into frozen data.

A catalog is data and is never executed. Every rule here exists so that a typo fails
loudly as bad input (exit 2) instead of quietly reading as a verdict: an unknown field,
a test id matching nothing or a missing target must never look like a vacuous test.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from killmap.catalog.contract import (
    COMMON_FIELDS,
    EXPRESSION_FIELDS,
    GATE_FIELDS,
    MAX_TIMEOUT,
    MAY_BE_EMPTY,
    OP_FIELDS,
    OPERATORS,
    REQUIREMENTS,
    TIMEOUT_RULE,
    Catalog,
    GateSettings,
    Mutation,
    Target,
)
from killmap.catalog.entries import (
    did_you_mean,
    entry_mutation,
    parse_expression,
    read_gate_settings,
    read_mutation,
    read_sweep_settings,
    relative_path,
)
from killmap.catalog.pytestargs import environment_args
from killmap.errors import GateError

# The catalog's names, for the modules that read catalogs (its types live in contract.py).
__all__ = [
    "COMMON_FIELDS",
    "EXPRESSION_FIELDS",
    "GATE_FIELDS",
    "MAX_TIMEOUT",
    "MAY_BE_EMPTY",
    "OP_FIELDS",
    "OPERATORS",
    "REQUIREMENTS",
    "TIMEOUT_RULE",
    "Catalog",
    "GateSettings",
    "Mutation",
    "Target",
    "discover_catalogs",
    "entry_mutation",
    "load_catalog",
    "load_catalogs",
    "parse_expression",
]


def discover_catalogs(root: Path) -> list[Path]:
    found = sorted((root / "mutations").glob("*.toml"))
    if not found:
        raise GateError(f"no catalog found: {root / 'mutations'}/*.toml matches nothing", file=str(root / "mutations"))
    return found


def load_catalogs(root: Path, paths: list[Path], entry_errors: list[GateError] | None = None) -> list[Catalog]:
    """`entry_errors`: where a [[mutation]] entry's error goes, the entry left out, instead of
    stopping at the first (`check` says every one it finds); an error of a whole file
    (its TOML, its [gate]) still stops."""
    environment_args()  # PYTEST_ADDOPTS refused before anything runs, once, when it must be
    catalogs = [load_catalog(root, p, entry_errors) for p in paths]
    seen: dict[str, str] = {}
    for catalog in catalogs:
        for mutation in catalog.mutations:
            if mutation.name in seen:
                raise mutation.fail(f"duplicate name; also defined in {seen[mutation.name]}", "name")
            seen[mutation.name] = catalog.path
    return catalogs


def load_catalog(root: Path, path: Path, entry_errors: list[GateError] | None = None) -> Catalog:
    rel = relative_path(root, path)
    if not path.is_file():
        # `--only a b` reads b as a catalog: say how to name a second mutation.
        hint = (
            ""
            if path.suffix == ".toml" or "/" in str(rel)
            else f" (if {path.name!r} is a mutation, repeat the flag: --only A --only B)"
        )
        raise GateError("catalog file not found" + hint, file=rel)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise GateError("not UTF-8 text", file=rel) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _not_toml(rel, text, str(exc)) from None
    except RecursionError:
        # The TOML parser recurses once per nested array or inline table: a few hundred
        # levels exhaust Python's stack. No catalog field is nested at all.
        raise GateError("not a catalog: arrays or tables nested too deeply to parse", file=rel) from None
    unknown = set(data) - {"gate", "mutation", "sweep"}
    if unknown:
        first = sorted(unknown)[0]
        raise GateError(
            f"unknown top-level table(s) {sorted(unknown)}{did_you_mean(first, ('gate', 'sweep', 'mutation'))}; "
            "expected [gate], [sweep] and [[mutation]]",
            file=rel,
            field=first,
        )
    settings = read_gate_settings(rel, data.get("gate", {}))
    sweep = read_sweep_settings(rel, data.get("sweep", {}))
    entries = data.get("mutation", [])
    # A catalog of [gate] alone is how a new user sets `tests` and `paths` to sweep before
    # naming anything. A file with neither is a mistake (an empty or misnamed file): it
    # would gate nothing and set nothing, so it is refused rather than pass as "all held".
    if not isinstance(entries, list) or (not entries and "gate" not in data and "sweep" not in data):
        raise GateError("no [[mutation]] entries", file=rel, field="mutation")
    read: list[Mutation] = []
    unread: set[str] = set()
    for i, entry in enumerate(entries):
        try:
            read.append(read_mutation(root, rel, path.parent, settings, i, entry))
        except GateError as exc:
            if entry_errors is None:
                raise
            entry_errors.append(exc)
            unread.add(str(entry.get("name")) if isinstance(entry, dict) else "")
    mutations = tuple(read)
    for error in _control_errors(mutations, unread):
        if entry_errors is None:
            raise error
        entry_errors.append(error)
    return Catalog(rel, settings, mutations, sweep)


def _control_errors(
    mutations: tuple[Mutation, ...], unread: set[str] | frozenset[str] = frozenset()
) -> list[GateError]:
    """Each invariant whose control is no mutation of its catalog, or is an invariant itself.
    `unread`: the entries that could not be read (check says each and goes on): a control
    among them is said to be, not to be missing (xmltodict: "is not a mutation of this
    catalog" sent the reader looking for a typo that was not there)."""
    by_name = {m.name: m for m in mutations}
    errors = []
    for mutation in mutations:
        control = by_name.get(mutation.control) if mutation.control is not None else None
        if mutation.control is None or control is not None and not control.invariant:
            continue
        if mutation.control in unread:
            errors.append(
                mutation.fail(f"control {mutation.control!r} could not be read: its own error is said above", "control")
            )
        elif control is None:
            errors.append(mutation.fail(f"control {mutation.control!r} is not a mutation of this catalog", "control"))
        else:
            errors.append(
                mutation.fail(
                    f"control {mutation.control!r} is itself an invariant; a control "
                    "must be a mutation that turns tests red",
                    "control",
                )
            )
    return errors


_ERROR_LINE = re.compile(r"\s*\(at line (\d+), column (\d+)\)")
_NAME_LINE = re.compile(r"""^\s*name\s*=\s*["']([^"'\n]*)["']""")


def _not_toml(rel: str, text: str, message: str) -> GateError:
    """A file that does not parse, said by its line and column and the [[mutation]] it is in,
    never by a field: the parser stops where the text stops making sense, which is not the
    field at fault (an unclosed string in `name` was said as "field 'name'", an unclosed array
    was blamed on the key after it)."""
    found = _ERROR_LINE.search(message)
    if not found:
        return GateError(f"not valid TOML: {message}", file=rel)
    line, column = int(found.group(1)), int(found.group(2))
    said = (message[: found.start()] + message[found.end() :]).strip()
    where = f"line {line}, column {column}"
    return GateError(f"not valid TOML at {where}: {said}", file=rel, mutation=_mutation_at(text, line))


def _mutation_at(text: str, line: int) -> str | None:
    """Best effort: the name of the [[mutation]] whose block holds `line` (1-based). The file
    did not parse, so this reads lines: the table header above the line, and the block's
    `name = "..."` line."""
    lines = text.split("\n")
    at = min(line, len(lines)) - 1
    start = next((i for i in range(at, -1, -1) if lines[i].lstrip().startswith("[")), None)
    if start is None or not lines[start].lstrip().startswith("[[mutation]]"):
        return None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
    names = [m.group(1) for m in map(_NAME_LINE.match, lines[start + 1 : end]) if m]
    return names[0] if names else None
