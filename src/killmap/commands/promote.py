"""`killmap sweep --promote ID --name NAME`: a killed sweep mutant becomes a named mutation.

The entry uses a named operator where the change is one (a deleted call, a constant
return, a negated condition, a dropped operand, merged strings) and `replace` otherwise;
whichever is chosen must rebuild the sweep's mutant byte for byte, or the next is tried.
Its `kills` are the red set the sweep observed (`require = "assertion"` when every one of
them failed by an assertion), and it is pinned. The entry is appended to the catalog, so
the file's comments and layout are kept; the catalog is read back afterwards, and put back
as it was if the new entry does not load as written.

Only a killed mutant can be promoted. A survivor would be vacuous by construction: a named
mutation that nothing kills. The command says so, and says what to do instead.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from killmap.wording import counted

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from killmap.catalog.contract import NAME_PATTERN
from killmap.catalog.entries import read_mutation
from killmap.catalog.reader import Catalog, GateSettings, Mutation, load_catalog
from killmap.errors import GateError
from killmap.mutate.mutants import build_mutant
from killmap.mutate.patching import equal_ends, split_lines
from killmap.mutate.splice import MODULE
from killmap.report.sweep_report import read_document
from killmap.verdict.changed import FileChange
from killmap.verdict.sweep import OPS, SweepMutant, SweepTarget, enumerate_mutants, load_optional_catalogs

_REFUSALS = {
    "survived": "it survived: no test went red under it, so a named mutation of it would be vacuous by "
    "construction. If some input tells `{change}` apart, write a test that runs {where} with it, "
    "sweep again and promote the killed mutant; if none can, it is an equivalent mutant: name it "
    'as an invariant instead (docs/sweep.md, "Equivalent mutants")',
    "unreached": "no test reaches it, so nothing could kill it by name: add a test that runs {where}, then sweep again",
    "broken": "it is broken (it cannot run as written), so its reds prove nothing: {detail}",
    "timeout": "it timed out, so its red set is not complete; only a killed mutant has a contract to keep",
    "named": "the catalog already holds it, as {named!r}",
}


def promote(root: Path, mutant_id: str, name: str, catalog: Path | None, report_dir: Path) -> str:
    """Append the entry; return a one-line account of what was written where."""
    if not NAME_PATTERN.match(name):
        raise GateError("must be a kebab-case name such as 'limit-check-deleted'", field="--name")
    entry = _killed_entry(report_dir, mutant_id)
    settings = GateSettings(tests=tuple(entry["gate"]["tests"]), paths=tuple(entry["gate"]["paths"]))
    current = _current(root, entry, settings)
    catalogs = load_optional_catalogs(root, (catalog,) if catalog is not None and catalog.is_file() else ())
    for known in (m for c in load_optional_catalogs(root, ()) + catalogs for m in c.mutations):
        if known.name == name:
            raise GateError(f"a mutation named {name!r} already exists in {known.catalog}", field="--name")
    path = _catalog_path(root, catalog, catalogs, entry["file"])
    rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    existing = path.read_text(encoding="utf-8") if path.is_file() else None
    gate = load_catalog(root, path).settings if existing is not None else settings
    if (gate.tests, gate.paths) != (settings.tests, settings.paths):
        raise GateError(
            f"the sweep ran this mutant under [gate] tests {list(settings.tests)}, paths "
            f"{list(settings.paths)}, but this catalog runs {list(gate.tests)}, {list(gate.paths)}: "
            "promote it into a catalog with the same [gate]",
            file=rel,
            field="--catalog",
        )
    contract = _observed_contract(entry, _whole_red_set(root, current))
    fields, pin = _operator(root, rel, path.parent, gate, name, current, contract)
    block = _toml_block({"name": name, "target": fields.pop("target"), "pin": pin, **fields, **contract})
    _write_checked(root, path, _catalog_text(existing, gate, block), existing, rel, name, current)
    return (
        f"{rel}: added {name!r} (op {fields['op']}, {counted(len(contract['kills']), 'kill')}, pinned); "
        f"hold it with `killmap run --only {name}`"
    )


def _killed_entry(report_dir: Path, mutant_id: str) -> dict[str, Any]:
    """The mutant's entry in the last sweep's report, refused unless it was killed."""
    doc = read_document(report_dir)
    entry = next((e for e in doc["sweep"]["mutants"] if e["id"] == mutant_id), None)
    if entry is None:
        raise GateError(
            f"no sweep mutant {mutant_id!r} in the last sweep's report ({report_dir / 'killmap-sweep.json'})",
            field="--promote",
        )
    if entry["status"] != "killed":
        why = _REFUSALS.get(entry["status"], "its run proved nothing ({status}: {detail}); sweep again")
        raise GateError(
            f"cannot promote {mutant_id}: "
            + why.format(
                where=f"{entry['file']}:{entry['line']}",
                change=entry["change"],
                detail=entry["detail"],
                named=entry["named"],
                status=entry["status"],
            ),
            field="--promote",
        )
    return entry


def _whole_red_set(root: Path, current: SweepMutant) -> list[dict[str, Any]]:
    """Every test the mutant turns red. The sweep's run of a mutant stops at its first red
    test (Mutation.first_red), and a contract of that one test would pass for a catalog entry
    whose mutant turns others red too (an overreach): so it runs again, whole."""
    from killmap.catalog.plan import LabOptions
    from killmap.verdict.judge import OVERREACH
    from killmap.verdict.lab import run_mutations

    mutation = current.mutant.mutation
    lab = run_mutations(root, [mutation], LabOptions(), mutants={mutation.name: current.mutant})
    verdict = lab.verdicts[0]
    if verdict.verdict != OVERREACH:
        raise GateError(
            f"cannot promote {current.id}: run again with its every test, it is not killed "
            f"({verdict.verdict}: {verdict.detail}); sweep again",
            field="--promote",
        )
    return [dict(r.__dict__) for r in verdict.red]


def _observed_contract(entry: dict[str, Any], reds: list[dict[str, Any]]) -> dict[str, Any]:
    """The red set observed, as `kills` (and `require`), with a note of where it came from."""
    contract: dict[str, Any] = {"kills": sorted(r["id"] for r in reds)}
    if all(r["cause"] == "assertion" for r in reds):
        contract["require"] = "assertion"
    contract["note"] = f"promoted from killmap sweep {entry['id']} ({entry['op']}): {entry['change']}"
    return contract


def _catalog_text(existing: str | None, gate: GateSettings, block: str) -> str:
    """The entry appended to the catalog as it is (comments and layout kept), or a new catalog."""
    if existing is None:
        return (
            f"# Named mutations promoted from `killmap sweep`.\n\n[gate]\ntests = {_toml(list(gate.tests))}\n"
            f"paths = {_toml(list(gate.paths))}\n\n{block}"
        )
    return existing + ("" if existing.endswith("\n\n") else "\n" if existing.endswith("\n") else "\n\n") + block


def _write_checked(
    root: Path, path: Path, text: str, existing: str | None, rel: str, name: str, current: SweepMutant
) -> None:
    """Write the catalog, read it back, and put it back as it was unless the entry rebuilds the mutant."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    try:
        written = [m for m in load_catalog(root, path).mutations if m.name == name]
        if len(written) != 1 or build_mutant(root, written[0]).mutated != current.mutant.mutated:
            raise GateError("the entry did not read back as written", file=rel, mutation=name)
    except BaseException:
        if existing is None:
            path.unlink()
        else:
            path.write_text(existing, encoding="utf-8")
        raise


def _current(root: Path, entry: dict[str, Any], settings: GateSettings) -> SweepMutant:
    """The sweep mutant as the code stands now: it must be the one the report describes."""
    found = enumerate_mutants(root, [SweepTarget(entry["file"], None, settings)], OPS, _whole(root, entry))
    current = next((m for m in found.mutants if m.id == entry["id"]), None)
    if current is None or current.mutant.diff != entry["diff"]:
        raise GateError(
            f"{entry['file']} changed since the sweep, so {entry['id']} is not the mutant it reported: sweep again",
            field="--promote",
        )
    return current


class _WholeFile:
    """A module-level mutant is made only of a change: one that holds every line of its file."""

    def __init__(self, root: Path, path: str):
        self.lines = len((root / path).read_text(encoding="utf-8").splitlines())

    def file(self, path: str) -> FileChange:
        return FileChange(path, frozenset(range(1, self.lines + 1)), frozenset())


def _whole(root: Path, entry: dict[str, Any]) -> Any:
    return _WholeFile(root, entry["file"]) if entry["function"] == MODULE else None


def _catalog_path(root: Path, given: Path | None, catalogs: list[Catalog], file: str) -> Path:
    if given is not None:
        return given if given.is_absolute() else Path.cwd() / given
    everything = load_optional_catalogs(root, ())
    holding = [c for c in everything if any(m.target.path == file for m in c.mutations)]
    if holding:
        return root / holding[0].path
    if len(everything) == 1:
        return root / everything[0].path
    if not everything:
        return root / "mutations" / "sweep.toml"
    raise GateError(
        f"no catalog targets {file} and there are {len(everything)}: say which with --catalog", field="--catalog"
    )


def _operator(
    root: Path, rel: str, folder: Path, gate: GateSettings, name: str, current: SweepMutant, contract: dict[str, Any]
) -> tuple[dict[str, str], str]:
    """The first operator (and fields) that rebuilds the mutant exactly, and its pin."""
    candidates: list[dict[str, str]] = []
    if current.hint is not None:
        op, fields = current.hint
        candidates.append({"target": f"{current.file}::{current.inner}", "op": op, **dict(fields)})
        if current.inner != current.function:
            candidates.append({"target": f"{current.file}::{current.function}", "op": op, **dict(fields)})
    target = current.file if current.function == MODULE else f"{current.file}::{current.function}"
    candidates += [
        {"target": target, "op": "replace", "old": old, "new": new}
        for old, new in _replacements(current.mutant.original, current.mutant.mutated or "")
    ]
    for candidate in candidates:
        entry = {"name": name, **candidate, **contract}
        try:
            mutation: Mutation = read_mutation(root, rel, folder, gate, 0, entry)
            built = build_mutant(root, mutation)
        except GateError:
            continue
        if built.applied and built.mutated == current.mutant.mutated:
            return dict(candidate), built.target_pin
    raise GateError(
        f"no catalog operator rebuilds {current.id} exactly; write its entry by hand from `killmap-sweep.json`'s diff",
        field="--promote",
    )


def _replacements(original: str, mutated: str):
    """`replace` pairs for the change: the changed lines, then with more context around them,
    so that one of them occurs exactly once in the target."""
    a, b = split_lines(original), split_lines(mutated)
    prefix, suffix = equal_ends(a, b)
    for context in range(0, 6):
        start = max(prefix - context, 0)
        old, new = "".join(a[start : len(a) - suffix + context]), "".join(b[start : len(b) - suffix + context])
        if old and old != new:
            yield old, new
            if old.endswith("\n") and new.endswith("\n"):
                # The target's text ends before its last line's newline: a change on a
                # function's last line matches only without it.
                yield old[:-1], new[:-1]


def _toml(value: Any) -> str:
    if isinstance(value, list):
        return "[\n" + "".join(f"    {_toml(v)},\n" for v in value) + "]" if value else "[]"
    # A JSON string is a TOML basic string, once DEL (which TOML wants escaped) is escaped.
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_block(fields: dict[str, Any]) -> str:
    text = "[[mutation]]\n" + "".join(f"{key} = {_toml(value)}\n" for key, value in fields.items())
    assert tomllib.loads(text)["mutation"][0] == fields, "the entry must read back as written"
    return text
