"""killmap try: one ad-hoc mutation, no catalog needed; --save makes it a named one.

The mutation is built from the command line as a catalog entry and validated by the
catalog's own rules (catalog.entry_mutation), so bad input is one line and exit 2 naming
the option. It runs through the engine like any gate mutation (sandbox, validity,
baseline, coverage selection, flake guard, causes, containment), but it has no contract
yet, so no verdict is stated: the diff, the validity result, and every red test with its
cause and reach are. Options that apply nowhere are bad input (exit 2, naming the option, as
`check` names the field). A run whose reds cannot be read (broken, timeout, flaky,
inconclusive, escaped) says why, and exits 1.

`--save NAME` appends the mutation to a catalog with `kills` set to the observed red set
(each red confirmed by the flake guard's re-run), `require = "assertion"` when every red
was an assertion, and its pins. The file is only appended to, so its comments and layout
stay; the result is re-parsed to prove the old entries are unchanged. A mutation that
turned nothing red is refused: its entry would be vacuous.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from killmap.wording import counted

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from killmap.catalog.contract import OP_FIELDS, OPERATORS
from killmap.commands.shared import (
    REPORTS_ON_REQUEST_HELP,
    add_report_options,
    checked_report_dir,
    checked_timeout,
    project_root,
    usable_jobs,
    write_lab_reports,
)
from killmap.errors import GateError

if TYPE_CHECKING:  # the engine, the lab and the judge are imported when the command runs, not to parse
    import argparse

    from killmap.engine import Launch


def unreadable() -> dict[str, str]:
    """The verdicts whose reds say nothing of the mutant, each in the words a run says it."""
    from killmap.verdict import judge

    return {
        judge.BROKEN_VERDICT: "broken",
        judge.NOT_APPLIED: "not applied",
        judge.TIMEOUT: "timeout",
        judge.FLAKY: "flaky",
        judge.RANDOMIZED: "randomized",
        judge.INCONCLUSIVE: "inconclusive",
        judge.ESCAPED: "escaped",
        judge.STALE: "stale",
    }


SHOWN = 8  # green tests listed by name; the rest are counted
_OPTION_OF = {"name": "--save", "target": "TARGET", "op": "--op"}
Say = Callable[[str], None]


@dataclass(frozen=True)
class TryOptions:
    target: str
    op: str
    fields: dict[str, str] = field(default_factory=dict)
    count: int | None = None
    timeout: float | None = None
    werror: bool | None = None
    note: str | None = None
    save: str | None = None
    catalog: Path | None = None
    jobs: int = 2
    cwd: Path = field(default_factory=Path.cwd)
    reports: Path | None = None  # where the verdict's reports go: none written when None


def _catalog_path(root: Path, options: TryOptions) -> Path | None:
    if options.catalog is not None:
        return options.catalog if options.catalog.is_absolute() else options.cwd / options.catalog
    found = sorted((root / "mutations").glob("*.toml"))
    if len(found) > 1 and options.save:
        raise GateError(
            f"{len(found)} catalogs under mutations/: name the one to save into with --catalog", field="--catalog"
        )
    return found[0] if len(found) == 1 else None


def build_entry(root: Path, options: TryOptions, catalog: Path | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": options.save or "try", "target": options.target, "op": options.op}
    for key, value in options.fields.items():
        if key == "patch":  # given relative to where the command runs; a catalog's is relative to it
            folder = (catalog or root / "mutations").parent
            value = os.path.relpath(Path(value) if os.path.isabs(value) else options.cwd / value, folder)
        entry[key] = value
    for key in ("count", "timeout", "werror", "note"):
        if getattr(options, key) is not None:
            entry[key] = getattr(options, key)
    return entry


def prepare(root: Path, options: TryOptions):
    """The mutation, validated as a catalog entry; the catalog it would be saved to."""
    catalog = _catalog_path(root, options)
    from killmap.catalog.reader import GateSettings, entry_mutation, load_catalog

    settings = load_catalog(root, catalog).settings if catalog is not None and catalog.exists() else GateSettings()
    if options.save and catalog is not None and catalog.exists():
        if options.save in {m.name for m in load_catalog(root, catalog).mutations}:
            raise GateError(f"{options.save!r} is already a mutation of {catalog.name}", field="--save")
    _refuse_foreign_options(options)
    entry = build_entry(root, options, catalog)
    try:
        mutation = entry_mutation(root, catalog or root / "mutations" / "try.toml", settings, entry, adhoc=True)
    except GateError as exc:
        raise _as_option_error(exc) from None
    return mutation, entry, catalog


def _refuse_foreign_options(options: TryOptions) -> None:
    """An operator's option given to another operator, said in the command line's words: the
    catalog's "unknown field (allowed: ...)" listed fields `try` has no option for (kills, pin)."""
    if options.op not in OPERATORS:
        return  # the catalog's check names the operators there are
    required, optional = OPERATORS[options.op]
    for key in options.fields:
        if key not in required | optional:
            takes = ", ".join(f"--{k}" for k in sorted(required | optional)) or "none of its own"
            raise GateError(f"not an option of op {options.op!r} (its options: {takes})", field=f"--{key}")


def _as_option_error(exc: GateError) -> GateError:
    """A catalog-shaped error, said of the command line: the ad-hoc mutation is in no catalog
    file, and "mutations/x.toml: mutation 'try'" would send the user to one."""
    return GateError(exc.message, field=_OPTION_OF.get(exc.field or "", f"--{exc.field}" if exc.field else None))


def add_parser(sub) -> None:
    trying = sub.add_parser("try", help="run one ad-hoc mutation and show what turns red")
    trying.add_argument("target", metavar="TARGET", help="path/to/file.py or path/to/file.py::Qualified.name")
    trying.add_argument("--op", required=True, help="the operator (see 'The catalog' in the README)")
    for name in OP_FIELDS:
        trying.add_argument(f"--{name}", default=None, metavar="TEXT", help=f"the operator's {name!r} field")
    trying.add_argument("--count", type=int, default=None, help="sites the operator must match (default 1)")
    trying.add_argument("--timeout", type=float, default=None, help="seconds for the mutant's run")
    trying.add_argument("--werror", action="store_true", default=None, help="dead code the mutant leaves is broken")
    trying.add_argument("--note", default=None, help="the saved entry's note")
    trying.add_argument(
        "--save",
        default=None,
        metavar="NAME",
        help="append it to the catalog as NAME, with kills = the observed red set, and a pin",
    )
    trying.add_argument(
        "--catalog",
        type=Path,
        default=None,
        help="the catalog to save into and take [gate] from (default: the only one)",
    )
    # One mutant and its baseline: a third sandbox would have nothing to run.
    add_report_options(trying, jobs=min(os.cpu_count() or 1, 2), reports=REPORTS_ON_REQUEST_HELP)
    trying.set_defaults(main=main)


def main(args: argparse.Namespace) -> int:
    from killmap.engine import Launch

    root = project_root()
    args.jobs = usable_jobs(args.jobs)
    checked_timeout(args.timeout)
    fields = {name: getattr(args, name) for name in OP_FIELDS if getattr(args, name) is not None}
    options = TryOptions(
        target=args.target,
        op=args.op,
        fields=fields,
        count=args.count,
        timeout=args.timeout,
        werror=args.werror,
        note=args.note,
        save=args.save,
        catalog=args.catalog,
        jobs=args.jobs,
        cwd=Path.cwd(),
        reports=checked_report_dir(args.report_dir, root),
    )
    # The workers start now, while the command reads and builds (launch.py says why).
    with Launch(args.jobs) as launch:
        return run_try(root, options, lambda line: print(line, flush=True), launch)


def run_try(root: Path, options: TryOptions, say: Say = print, launch: Launch | None = None) -> int:
    """`launch`: workers the command started at its first line (launch.py), which run the
    mutant's tests while this builds it."""
    from killmap.verdict.baseline import baseline_line
    from killmap.verdict.lab import LabOptions, run_mutations

    if options.save and catalog_missing(root, options):
        raise GateError("--save needs a catalog: name one with --catalog (a new file is created)", field="--catalog")
    mutation, entry, catalog = prepare(root, options)
    mutant = _built(root, mutation)
    # Said once the run is under way (or decided without one): a refusal found on the way (a
    # target pytest itself imports) is then all the user sees, as for any bad input.
    header = [
        f"try: {mutation.op} on {mutation.target}",
        *_gate_unnamed(root, catalog, mutation),
        mutant.diff.rstrip("\n"),
    ]

    def say_header() -> None:
        while header:
            say(header.pop(0))

    def progress(kind: str, data: Any) -> None:
        if kind == "baseline-done":
            say_header()
            say(baseline_line(data))

    try:
        result = run_mutations(
            root,
            [mutation],
            LabOptions(jobs=options.jobs, use_cache=False, write_cache=False),
            progress,
            {mutation.name: mutant},
            launch=launch,
        )
    except GateError as exc:
        raise (_as_option_error(exc) if exc.mutation == mutation.name else exc) from None
    say_header()
    if options.reports is not None:
        say(write_lab_reports(result, root, options.reports))
    verdict = result.verdicts[0]
    if not _readable(verdict, mutation, say):
        return 1
    if not options.save:
        return 0
    collected = result.baselines[0].collected if result.baselines else ()
    return save(root, mutation, mutant, entry, catalog, verdict, say, collected)


def _gate_unnamed(root: Path, catalog: Path | None, mutation) -> list[str]:
    """The line that says whose [gate] a try runs under, where the user could not tell: no
    --catalog and several catalogs (sortedcontainers: two catalogs, and try ran killmap's
    defaults, 300 tests, neither catalog's gate, without a word)."""
    found = sorted((root / "mutations").glob("*.toml"))
    if catalog is not None or len(found) < 2:
        return []
    return [
        f"gate: killmap's defaults (tests: {', '.join(mutation.settings.tests)}), not the [gate] of any of "
        f"the {len(found)} catalogs under mutations/: --catalog takes one's"
    ]


def _built(root: Path, mutation):
    """The mutant, applied: options that match nothing are bad input, as the same entry in a
    catalog is to `check` (exit 2, naming the field), not a run's outcome: nothing is run."""
    from killmap.mutate.blame import not_applied_field
    from killmap.mutate.mutants import build_mutant  # libcst: only when a mutant is built

    try:
        mutant = build_mutant(root, mutation)
    except GateError as exc:
        raise _as_option_error(exc) from None
    if not mutant.applied:
        field = not_applied_field(mutation, mutant.reason)
        raise _as_option_error(GateError(f"not applied: {mutant.reason}", field=field))
    return mutant


def _readable(verdict, mutation, say: Say) -> bool:
    """Says what the run showed: why its reds cannot be read (False), or the mutant's validity
    and every red test with its cause and reach (True)."""
    words = unreadable()
    if verdict.verdict in words:
        from killmap.report.cells import cause_of, explanation

        say(f"{words[verdict.verdict]}: {verdict.detail}")
        say(f"  {explanation(verdict.verdict, mutation.invariant, cause_of(verdict.extras))}")
        return False
    warnings = verdict.extras.get("warnings", ())
    say(
        "valid: it parses, imports, and adds nothing pyflakes says cannot run"
        + (f"; warnings: {'; '.join(warnings)}" if warnings else "")
    )
    _show_reds(verdict, say)
    return True


def catalog_missing(root: Path, options: TryOptions) -> bool:
    return options.catalog is None and not sorted((root / "mutations").glob("*.toml"))


def _show_reds(verdict, say: Say) -> None:
    if not verdict.selected:
        say("no test executes the mutated code: nothing can turn red under it")
        return
    # The gate's wording adds "plus the contract"; an experiment has none.
    say(f"ran {counted(len(verdict.selected), 'test')}: {verdict.selection.replace(', plus the contract', '')}")
    if verdict.red:
        from killmap.report.cells import raised_where

        each = "each " if len(verdict.red) > 1 else ""
        say(f"{len(verdict.red)} red ({each}confirmed by a re-run):")
        for red in verdict.red:
            reach = "reached the change" if red.reached else "did NOT reach the change"
            where = raised_where(red.raised_at, red.tree_line)
            say(f"  {red.id}  [{red.cause}] {red.exception or ''} at {where}; {reach}")
    else:
        say("nothing went red")
    red_ids = {r.id for r in verdict.red}
    missed = [t for t in verdict.reached_by if t not in red_ids]
    if missed:
        say(f"{counted(len(missed), 'test')} executed the mutated code and stayed green:")
        for test in missed[:SHOWN]:
            say(f"  {test}")
        if len(missed) > SHOWN:
            say(f"  ... and {len(missed) - SHOWN} more")


def save(root: Path, mutation, mutant, entry: dict[str, Any], catalog: Path, verdict, say: Say, collected=()) -> int:
    reds = list(verdict.red)
    if not reds:
        say(f"not saved: nothing went red, so an entry for {mutation.name!r} would be vacuous")
        return 1
    unreached = [r.id for r in reds if r.reached is False]
    if unreached:
        say("not saved: red without executing the mutated code (red for another reason): " + ", ".join(unreached))
        return 1
    from killmap.mutate.pins import pins_for

    saved = {"name": entry["name"], "target": entry["target"], **pins_for(root, mutation, mutant)}
    saved.update({k: v for k, v in entry.items() if k not in saved})
    from killmap.catalog.testids import compacted

    saved["kills"] = compacted((r.id for r in reds), collected)
    if all(r.cause == "assertion" for r in reds):
        saved["require"] = "assertion"
    saved.setdefault("note", "saved by killmap try")
    append_entry(root, catalog, saved)
    rel = os.path.relpath(catalog, root)
    say(
        f"saved {mutation.name!r} to {rel}: kills {counted(len(reds), 'test')}"
        + (', require = "assertion"' if "require" in saved else "")
        + f"; pinned. Check it with "
        f"'killmap run --only {mutation.name}'"
    )
    return 0


def toml_string(value: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's, and DEL must be escaped too."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def render_entry(entry: dict[str, Any]) -> str:
    lines = ["[[mutation]]"]
    for key, value in entry.items():
        if isinstance(value, bool):
            lines.append(f"{key} = {'true' if value else 'false'}")
        elif isinstance(value, (int, float)):
            lines.append(f"{key} = {value!r}")
        elif isinstance(value, list):
            lines.append(f"{key} = [")
            lines += [f"    {toml_string(v)}," for v in value]
            lines.append("]")
        else:
            lines.append(f"{key} = {toml_string(value)}")
    return "\n".join(lines) + "\n"


def append_entry(root: Path, catalog: Path, entry: dict[str, Any]) -> None:
    """Append one [[mutation]] table; prove by re-parsing that nothing else changed."""
    from killmap.catalog.reader import load_catalog

    before = catalog.read_text(encoding="utf-8") if catalog.exists() else ""
    glue = "" if not before or before.endswith("\n\n") else "\n" if before.endswith("\n") else "\n\n"
    after = before + glue + render_entry(entry)
    old = tomllib.loads(before) if before else {}
    new = tomllib.loads(after)
    if (
        new.get("gate") != old.get("gate")
        or new.get("mutation", [])[:-1] != old.get("mutation", [])
        or new["mutation"][-1] != entry
    ):
        raise GateError(
            "could not append the entry without changing the rest of the catalog; add it by hand", file=str(catalog)
        )
    catalog.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=f".{catalog.stem}.", suffix=".toml", dir=catalog.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(after)
        load_catalog(root, Path(tmp))  # it must load as a catalog, as the gate will read it
        if catalog.exists():
            os.chmod(tmp, catalog.stat().st_mode & 0o7777)
        os.replace(tmp, catalog)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
