"""The sweep's reports: one JSON document, and the terminal, HTML and Stryker views of it.

`killmap-sweep.json` (schema `killmap-sweep/1`) holds the run's header, like
`killmap.json`'s, and a `sweep` section; `killmap sweep --promote` reads it back. The HTML
page groups the mutants by function with each survivor's diff; the Stryker file
(mutation-testing-report-schema v2) carries every mutant with its real status, so
mutation-testing-elements renders it. They are written beside the gate's reports and never
over them.
"""

from __future__ import annotations

import dataclasses
import html
import json
import platform
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

import killmap
from killmap.catalog.shards import names_in_short, refuse_mixed_splits
from killmap.errors import GateError
from killmap.report.cells import schema_of, write_whole
from killmap.report.console import LiveProgress
from killmap.verdict.sweep import STATUSES, SweepEntry, SweepResult, score, status_of
from killmap.verdict.triage import FINDINGS, Finding, Gap, reported
from killmap.wording import counted

SCHEMA = "killmap-sweep/1"
FILES = {"json": "killmap-sweep.json", "html": "killmap-sweep.html", "stryker": "mutation-report.sweep.json"}
STYLE = {
    "survived": "bold red",
    "killed": "green",
    "unreached": "yellow",
    "broken": "magenta",
    "timeout": "cyan",
    "named": "blue",
    "flaky": "yellow",
    "inconclusive": "yellow",
    "escaped": "bold red",
}
_STRYKER = {
    "killed": "Killed",
    "survived": "Survived",
    "unreached": "NoCoverage",
    "broken": "CompileError",
    "timeout": "Timeout",
    "named": "Ignored",
    "flaky": "RuntimeError",
    "inconclusive": "RuntimeError",
    "escaped": "RuntimeError",
}
Document = dict[str, Any]


def one_line(diff: str) -> str:
    """The change in one line: the first line removed, and what replaced it."""

    def first(sign: str) -> str:
        lines = [
            line[1:].strip() for line in diff.splitlines() if line.startswith(sign) and not line.startswith(sign * 3)
        ]
        # A comment or a blank line goes with the statement it sits on; show the code.
        return next((line for line in lines if line and not line.startswith("#")), "")

    old, new = first("-"), first("+")
    old, new = _around_the_change(old, new)
    return f"{old or '(nothing)'}  ->  {new or '(deleted)'}"


def _around_the_change(old: str, new: str, width: int = 72, context: int = 24) -> tuple[str, str]:
    """Two long lines cut to the same stretch around where they differ: cut at a fixed width,
    markdown's `register(AbbrBlockprocessor(md.parser, self...` read the same on both sides,
    hiding `'abbr'` -> `'XXabbrXX'` further on."""
    if len(old) <= width and len(new) <= width:
        return old, new
    head = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    start = max(0, head - context)

    def cut(text: str) -> str:
        end = max(start + width - 6, len(text) - tail + context // 2)
        return ("..." if start else "") + text[start:end] + ("..." if end < len(text) else "")

    return cut(old), cut(new)


# What a mutant's verdict may say about where its time went: its run, its confirmation, the
# test it stopped after (first red), and a retried timeout's first run.
_TIMINGS = ("run_seconds", "confirm_seconds", "stopped_after", "first_seconds")


def _entry(entry: SweepEntry) -> dict[str, Any]:
    m, v = entry.mutant, entry.verdict
    diff = m.mutant.diff
    return {
        "id": m.id,
        "file": m.file,
        "function": m.function,
        "inner": m.inner,
        "op": m.op,
        "line": m.line,
        "lines": list(m.mutant.changed_lines),
        "status": entry.status,
        "on_change": m.on_change,
        "reported": entry.reported,
        "gap": dataclasses.asdict(entry.gap) if entry.gap else None,
        "mark": entry.mark,
        "named": entry.named,
        "verdict": v.verdict if v else None,
        "detail": v.detail if v else f"the catalog's {entry.named!r} makes this change; `killmap run` judges it",
        "red": [dict(r.__dict__) for r in v.red] if v else [],
        "reached_by": list(v.reached_by) if v else [],
        "selected_tests": len(v.selected) if v else 0,
        "duration_seconds": round(v.duration, 4) if v else 0.0,
        **{k: v.extras[k] for k in _TIMINGS if v and k in v.extras},
        "cached": bool(v and v.cached),
        "retried": bool(v and v.extras.get("retried")),
        "warnings": list(v.extras.get("warnings", ())) if v else [],
        "mutmut_name": m.mutmut_name,
        "change": one_line(diff),
        "diff": diff,
        "hint": {"op": m.hint[0], "fields": dict(m.hint[1])} if m.hint else None,
        "gate": {"tests": list(m.mutant.mutation.settings.tests), "paths": list(m.mutant.mutation.settings.paths)},
    }


def _counts(entries: list[dict[str, Any]]) -> dict[str, Any]:
    counts = Counter(e["status"] for e in entries)
    found = {s: counts.get(s, 0) for s in STATUSES}
    return {"total": len(entries), **found, "score": score(found)}


def _per_function(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    functions: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for e in entries:
        functions.setdefault((e["file"], e["function"]), []).append(e)
    return [{"file": f, "function": fn, **_counts(group)} for (f, fn), group in functions.items()]


def _generated(entries: list[dict[str, Any]], enumeration: dict[str, Any]) -> dict[str, Any]:
    return {
        "total": len(entries),
        **{op: sum(e["op"].startswith(op + ":") for e in entries) for op in ("mutmut", "killmap")},
        **{k: enumeration[k] for k in ("identical", "duplicates", "pragma", "unlocated", "outside_not_run")},
        "arid": dict(sorted(enumeration.get("arid", {}).items())),
        "decorated": list(enumeration.get("decorated", [])),  # absent from older reports
        "left_alone": list(enumeration.get("left_alone", [])),
        "nested": list(enumeration.get("nested", [])),
    }


def _change(result: SweepResult) -> dict[str, Any] | None:
    """With --changed: the base, and what the change holds that no mutant meets."""
    if result.base is None:
        return None
    return {
        "base": result.base,
        "not_swept": [
            {"file": n.file, "lines": [n.first, n.last], "why": n.why, "statement": n.statement}
            for n in result.enumeration.not_swept
        ],
    }


def to_document(result: SweepResult, root: Path) -> Document:
    entries = [_entry(e) for e in result.entries]
    enumeration = result.enumeration
    lab = result.lab
    split = None
    if result.split is not None and result.shard is not None:
        # The whole split's mutants, so that merge can name one that no shard reported.
        split = {**result.split.describe(result.shard), "items": list(result.items)}
    return {
        "schema": SCHEMA,
        "killmap_version": killmap.__version__,
        "python": platform.python_version(),
        "pytest": killmap.pytest_version(),  # not pytest itself: a fifth of a second to import
        "mutmut": result.mutmut_version,
        "root": str(root),
        "jobs": lab.jobs if lab else 0,
        "wall_seconds": round(result.wall, 4),
        "shard": split["shard"] if split else None,
        "split": split,
        "sweep": {
            "targets": [str(t) for t in result.targets],
            "ops": list(result.ops),
            "change": _change(result),
            "generated": _generated(entries, enumeration.__dict__),
            "summary": _counts(entries),
            "functions": _per_function(entries),
            "baselines": [
                {
                    "tests": list(b.settings.tests),
                    "collected": len(b.collected),
                    "runs": b.runs,
                    "wall_seconds": round(b.wall, 4),
                }
                for b in (lab.baselines if lab else [])
            ],
            "mutants": entries,
        },
    }


def read_document(folder: Path) -> Document:
    return read_report(folder / FILES["json"])


def read_report(path: Path) -> Document:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        # six's trial: the sweep had written elsewhere (--report-dir), and this said only to sweep.
        raise GateError(
            "no sweep report here: run `killmap sweep` first, or give the --report-dir the sweep wrote to",
            file=str(path),
        ) from None
    except (OSError, ValueError) as exc:
        raise GateError(f"cannot read the sweep report: {exc}", file=str(path)) from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise GateError(f"not a {SCHEMA} report", file=str(path), field="schema")
    return doc


def is_sweep_report(path: Path) -> bool:
    """Whether `killmap merge` is given a sweep's report (else it is the gate's)."""
    return schema_of(path) == SCHEMA


def _reported_again(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Shards chose their reported findings apart: the whole sweep's are chosen again."""
    findings = [
        Finding(
            e["id"], e["file"], e["line"], e["op"], e.get("on_change", False), Gap(**e["gap"]) if e.get("gap") else None
        )
        for e in entries
        if e["status"] in FINDINGS and not e.get("mark")
    ]
    chosen = reported(findings)
    return [{**e, "reported": e["id"] in chosen} for e in entries]


def merge(paths: list[Path]) -> Document:
    """Sweep shard reports joined into the unsharded sweep's document: every mutant of the
    split once, in enumeration order; one lost or reported twice is an error naming it."""
    docs = [(path, read_report(path)) for path in paths]
    refuse_mixed_splits([(path, (doc.get("split") or {}).get("digest")) for path, doc in docs])
    by_id: dict[str, dict[str, Any]] = {}
    for path, doc in docs:
        for entry in doc["sweep"]["mutants"]:
            if entry["id"] in by_id:
                raise GateError("reported by two shards", file=str(path), mutation=entry["id"])
            by_id[entry["id"]] = entry
    split = docs[0][1].get("split")
    order = split["items"] if split else [e["id"] for _, doc in docs for e in doc["sweep"]["mutants"]]
    missing = [item for item in order if item not in by_id]
    if missing:
        raise GateError(f"no shard reported {names_in_short(missing)}: a shard is missing or failed", field="shards")
    entries = _reported_again([by_id[item] for item in order])
    first = docs[0][1]
    return {
        **{k: first[k] for k in ("schema", "killmap_version", "python", "pytest", "mutmut", "root")},
        "jobs": max(doc["jobs"] for _, doc in docs),
        "wall_seconds": max(doc["wall_seconds"] for _, doc in docs),
        "shard": f"merged from {counted(len(docs), 'report')}",
        "split": None,
        "sweep": {
            **{k: first["sweep"].get(k) for k in ("targets", "ops", "change")},
            "generated": _generated(entries, first["sweep"]["generated"]),
            "summary": _counts(entries),
            "functions": _per_function(entries),
            "baselines": [b for _, doc in docs for b in doc["sweep"]["baselines"]],
            "mutants": entries,
        },
    }


# --- the terminal ----------------------------------------------------------------------------


class SweepProgress(LiveProgress):
    """The gate's progress bar, with the sweep's statuses instead of contract verdicts. Off a
    terminal (a CI log) no line per mutant, but one every EVERY seconds: how many are done, of
    how many, since when (hyperlink's 1,471 mutants ran 15 minutes in a log with no line).
    `clock` is the one it reads (time.monotonic)."""

    EVERY = 30.0

    def __init__(self, console: Console, clock: Callable[[], float] = time.monotonic):
        super().__init__(console)
        self._clock = clock
        self._started = self._said = clock()
        self._done = self._total = self._named = 0

    def __call__(self, kind: str, data: Any) -> None:
        if kind == "named":  # mutants a catalog names: never run, but in the summary's count
            self._named = int(data)
        elif kind == "planned":
            self.task = self.progress.add_task("sweep mutants", total=data)
            self._total = int(data)
        elif kind == "done" and self.task is not None:
            self.progress.advance(self.task)
            self._done += 1
            if self.console.is_terminal:
                status = status_of(data)
                self.progress.console.print(f"[{STYLE.get(status, 'white')}]{status:>12}[/] {escape(data.name)}")
            elif self._clock() - self._said >= self.EVERY:
                self._said = self._clock()
                minutes, seconds = divmod(int(self._said - self._started), 60)
                named = f" (and {self._named} a catalog names, not run)" if self._named else ""
                self.console.print(
                    f"sweep: {self._done} of {self._total} mutants done{named}, {minutes}m{seconds:02d}s"
                )
        elif kind != "done":
            super().__call__(kind, data)


DETAIL_WIDTH = 320  # a timeout's detail (its limit, the wait for a CPU, the test, busy or idle) whole


def clipped(text: str, width: int) -> str:
    """`text`, or its first words up to `width` and an ellipsis: never cut inside a word (a
    timeout's "as a loop tha" on toposort's console). The reports keep it whole."""
    if len(text) <= width:
        return text
    cut = text[: width - 2]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + " …"


def render(console: Console, doc: Document) -> None:
    sweep = doc["sweep"]
    change = sweep.get("change")
    order = {s: i for i, s in enumerate(STATUSES)}
    # Survivors first; unreached and named are counted below and listed in the reports. Of a
    # change, only what sits on its lines: the rest is one line, below.
    shown, unlisted = _capped(
        sorted(
            (e for e in sweep["mutants"] if _listed(e, change is not None)),
            key=lambda e: (order[e["status"]], e["file"], e["line"]),
        )
    )
    for e in shown:
        style = STYLE.get(e["status"], "white")
        mark = "[bold]*[/] " if change is not None else ""
        console.print(
            f"[{style}]{e['status']:>9}[/] {mark}{escape(e['file'])}:{e['line']} [bold]{escape(e['function'])}[/] "
            f"{escape(e['op'])}  {escape(e['change'])}  [dim]{escape(e['id'])}[/]"
        )
        if e["status"] != "survived":
            console.print(f"          [dim]{escape(clipped(e['detail'], DETAIL_WIDTH))}[/]")
    for status, n in unlisted.items():
        console.print(f"[dim]{n} more {status}, listed in the reports[/]")
    _render_unreported(console, sweep["mutants"], change is not None)
    if change is not None:
        _render_change(console, change, sweep["mutants"], sweep["generated"].get("outside_not_run", 0))
    table = Table(title="killmap sweep, per function")
    for column in ("function", "killed", "survived", "unreached", "broken", "timeout", "named", "score"):
        table.add_column(column, justify="left" if column == "function" else "right")
    for f in sweep["functions"]:
        table.add_row(
            escape(f"{f['file']}::{f['function']}"),
            *(str(f[s]) for s in ("killed", "survived", "unreached", "broken", "timeout", "named")),
            _percent(f["score"]),
        )
    console.print(table)
    total, generated = sweep["summary"], sweep["generated"]
    others = ", ".join(f"{total[s]} {s}" for s in ("flaky", "inconclusive", "escaped") if total[s])
    console.print(
        f"{total['total']} mutants ({generated['mutmut']} mutmut, {generated['killmap']} killmap): "
        f"{total['killed']} killed, {total['survived']} survived, {total['unreached']} unreached, "
        f"{total['broken']} broken, {total['timeout']} timeout, {total['named']} named"
        + (f", {others}" if others else "")
        + f"; score {_percent(total['score'])} (broken and unreached left out) in {doc['wall_seconds']:.1f}s"
    )
    arid = generated.get("arid") or {}
    if arid:
        rules = ", ".join(f"{rule} {n}" for rule, n in arid.items())
        console.print(f"{sum(arid.values())} arid mutants suppressed: {rules} ({escape(arid_keys(arid))})")
    _render_left_out(console, sweep)
    if total["survived"]:
        console.print(SURVIVOR_ADVICE)


def _render_left_out(console: Console, sweep: dict[str, Any]) -> None:
    """What the score leaves out, and why: the broken mutants that made test files fail to
    load, and the decorated functions mutmut's operators leave alone."""
    at_load = sum(e["status"] == "broken" and "failed to load" in (e.get("detail") or "") for e in sweep["mutants"])
    if at_load:
        console.print(
            f"{counted(at_load, 'broken mutant')} made test files fail to load (the package's own import or "
            "collection runs the change): plain pytest fails them at collection, and `mutmut run` counts them "
            "killed; the score leaves them out (docs/sweep.md)"
        )
    ops = sweep.get("ops") or ()
    decorated = sweep["generated"].get("decorated") or []
    if decorated:
        console.print(_left_alone_line(counted(len(decorated), "decorated function"), decorated, ops))
    left_alone = sweep["generated"].get("left_alone") or []
    if left_alone:
        what = counted(len(left_alone), "function") + " mutmut's rules leave alone (a name such as `__new__`)"
        console.print(_left_alone_line(what, left_alone, ops))
    nested = sweep["generated"].get("nested") or []
    if nested:
        shown = ", ".join(nested[:3]) + (f" and {len(nested) - 3} more" if len(nested) > 3 else "")
        console.print(
            escape(
                f"{counted(len(nested), 'definition')} under a module-level `if`, `try` or `with` got no "
                f"mutant: {shown} (a sweep mutates top-level functions and methods, as `mutmut run` does; "
                "a catalog's named mutations reach them)"
            )
        )


def _left_alone_line(what: str, functions: list[str], ops) -> str:
    """Why these functions have no mutmut mutant, and what sweeps them."""
    shown = ", ".join(functions[:3]) + (f" and {len(functions) - 3} more" if len(functions) > 3 else "")
    covered = (
        "killmap's operators sweep them"
        if "killmap" in ops
        else "`--ops mutmut,killmap` sweeps their statements with killmap's operators"
    )
    return escape(
        f"{what} got no mutmut mutant, as under `mutmut run`: "
        f"{shown} ({covered}; a sweep of a change gives a touched one mutmut's too)"
    )


def arid_keys(arid: dict[str, int]) -> str:
    """The catalog keys that keep these rules' mutants, named one by one: a placeholder such as
    `arid_RULE` read as a template the tool forgot to fill."""
    keys = ", ".join(f"arid_{rule} = false" for rule in sorted(arid))
    return f"[sweep] {keys} {'keeps' if len(arid) == 1 else 'keep'} them"


# Of each status that is no finding (broken, timeout, flaky...), the console lists this many,
# each on two lines: a module whose import-time table every mutant breaks (inflection's
# `_irregular`) listed 69 broken mutants, 140 lines, above the findings' table.
LISTED_PER_STATUS = 10


def _capped(listed: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Counter[str]]:
    """The mutants to list (every finding; of each other status, the first LISTED_PER_STATUS)
    and how many of each other status are left to the reports."""
    shown: list[dict[str, Any]] = []
    seen: Counter[str] = Counter()
    unlisted: Counter[str] = Counter()
    for e in listed:
        status = e["status"]
        if status not in FINDINGS:
            seen[status] += 1
            if seen[status] > LISTED_PER_STATUS:
                unlisted[status] += 1
                continue
        shown.append(e)
    return shown, unlisted


def _listed(e: dict[str, Any], changed: bool) -> bool:
    """Listed one by one: the reported survivors, and what did not run to a kill or a survival
    (broken, flaky, ...); of a change, only on its lines, its reported unreached too."""
    if changed and not e["on_change"]:
        return False
    if e["status"] in FINDINGS:
        return e.get("reported", True) and (e["status"] == "survived" or changed)
    return e["status"] not in ("killed", "named")


def _render_unreported(console: Console, mutants: list[dict[str, Any]], changed: bool) -> None:
    """The survivors not listed above, counted: those sharing a line or a gap with one listed,
    and those a reviewer marked; and, of a whole sweep, the reported unreached mutants (one
    per line or gap of code no test runs: many, on a file whose tests reach a part of it)."""
    survivors = [e for e in mutants if e["status"] == "survived" and (not changed or e["on_change"])]
    alike = sum(1 for e in survivors if not e.get("reported", True) and not e.get("mark"))
    marked = Counter(e["mark"] for e in survivors if e.get("mark"))
    if alike:
        console.print(f"[dim]{counted(alike, 'more survivor')} on the lines or gaps of those above, in the reports[/]")
    if marked:
        console.print(
            "[dim]" + ", ".join(f"{n} marked {mark}" for mark, n in sorted(marked.items())) + " (not listed)[/]"
        )
    unreached = sum(1 for e in mutants if e["status"] == "unreached" and e.get("reported", True))
    if unreached and not changed:  # a change lists its own above
        console.print(f"[dim]{counted(unreached, 'unreached finding')}, code no test runs: listed in the reports[/]")


def change_counts(mutants: list[dict[str, Any]]) -> dict[str, Any]:
    """A change's verdict read from a sweep document's mutants, as triage.change_verdict reads
    it from the entries: named and broken mutants on the change are neither kills nor findings."""
    on = [e for e in mutants if e.get("on_change")]
    judged = [e for e in on if e["status"] not in ("named", "broken")]
    killed = sum(e["status"] in ("killed", "timeout") for e in judged)
    return {"on": on, "judged": len(judged), "killed": killed, "all_killed": bool(judged) and killed == len(judged)}


def _render_change(console: Console, change: dict[str, Any], mutants: list[dict[str, Any]], not_run: int) -> None:
    """A sweep of a change: its verdict on the changed lines, what lies outside them in one
    line, and what of it no mutant meets."""
    touched = sorted({f"{e['file']}::{e['function']}" for e in mutants})
    where = escape(", ".join(touched) or "none")
    console.print(f"--changed: {counted(len(mutants), 'mutant')} in the function(s) the change touched: {where}")
    verdict = change_counts(mutants)
    on = verdict["on"]
    if verdict["all_killed"]:
        console.print(f"[green]all {verdict['judged']} mutants on the changed lines were killed[/]")
    elif not on:
        console.print("no mutant sits on the changed lines")
    else:
        base = escape(change["base"][:12])
        console.print(f"* on the lines the change since {base} added or changed ({len(on)} mutants)")
    outside = Counter(e["status"] for e in mutants if not e["on_change"])
    if outside:
        counts = ", ".join(f"{n} {s}" for s, n in sorted(outside.items(), key=lambda kv: STATUSES.index(kv[0])))
        console.print(
            f"[dim]outside the diff, in the definitions it touched: {sum(outside.values())} mutants "
            f"({counts}), in the reports[/]"
        )
    if not_run:
        console.print(
            f"[dim]outside the diff, in the definitions it touched: {not_run} mutants not run (--lines-only)[/]"
        )
    for n in change["not_swept"]:
        first, last = n["lines"]
        where = f"{first}" if first == last else f"{first}-{last}"
        console.print(
            f"[yellow]changed, not swept[/] {escape(n['file'])}:{where} ({escape(n['why'])})  {escape(n['statement'])}"
        )


# What a survivor is, said once wherever survivors are listed. No test went red, which has two
# causes the sweep cannot tell apart: a gap in the tests, or a change no test could ever see
# (an equivalent mutant). Advice that assumes the first sends a user to write a useless test.
SURVIVOR_ADVICE = (
    "a survivor may be a gap in the tests, or an equivalent mutant (a change no caller can "
    "observe): find an input on which the two codes differ. If one exists, test it, sweep again, "
    "then `killmap sweep --promote ID --name NAME` keeps it as a named mutation; if none can, "
    'it is equivalent (docs/sweep.md, "Equivalent mutants")'
)


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


# --- HTML and Stryker -------------------------------------------------------------------------


def to_html(doc: Document) -> str:
    esc = html.escape
    sweep = doc["sweep"]
    parts = [
        f"<h1>killmap sweep: score {_percent(sweep['summary']['score'])}, "
        f"{sweep['summary']['survived']} survived of {sweep['summary']['total']}</h1>",
        f"<p>targets: {esc(', '.join(sweep['targets']))}; operators: {esc(', '.join(sweep['ops']))}</p>",
    ]
    if sweep["summary"]["survived"]:
        parts.append(f"<p class='advice'>{esc(SURVIVOR_ADVICE)}.</p>")
    for f in sweep["functions"]:
        group = [e for e in sweep["mutants"] if e["file"] == f["file"] and e["function"] == f["function"]]
        counts = ", ".join(f"{f[s]} {s}" for s in STATUSES if f[s])
        parts.append(
            f"<section><h2>{esc(f['file'])}::{esc(f['function'])}</h2>"
            f"<p>score {_percent(f['score'])}: {esc(counts)}</p><ul>"
        )
        for e in sorted(group, key=lambda e: (e["status"] != "survived", e["line"])):
            body = (
                f"<pre>{esc(e['diff'])}</pre>"
                if e["status"] == "survived"
                else f"<details><summary>diff</summary><pre>{esc(e['diff'])}</pre></details>"
            )
            reds = ", ".join(r["id"] for r in e["red"])
            labels = "".join(
                f" <i>{esc(label)}</i>"
                for label in (
                    "on the change" if e.get("on_change") else "",
                    "reported" if e.get("reported") else "",
                    f"marked {e['mark']}" if e.get("mark") else "",
                )
                if label
            )
            parts.append(
                f"<li class='{esc(e['status'])}'><b>{esc(e['status'])}</b>{labels} line {e['line']} "
                f"<code>{esc(e['op'])}</code> <code>{esc(e['change'])}</code> <small>{esc(e['id'])}</small>"
                + (f"<br><small>red: {esc(reds)}</small>" if reds else "")
                + (f"<br><small>{esc(e['detail'])}</small>" if e["status"] not in ("killed", "survived") else "")
                + f"{body}</li>"
            )
        parts.append("</ul></section>")
    return (
        "<!doctype html><meta charset='utf-8'><title>killmap sweep</title><style>"
        "body{font-family:sans-serif;margin:2em}pre{background:#f6f6f6;padding:.6em}"
        ".survived b{color:#b00}.killed b{color:#070}.unreached b,.timeout b{color:#a60}"
        ".broken b,.named b{color:#55a}</style>" + "".join(parts)
    )


def to_stryker(doc: Document) -> Document:
    root = Path(doc["root"])
    files: dict[str, Any] = {}
    tests: dict[str, set[str]] = {}
    for e in doc["sweep"]["mutants"]:
        if e["file"] not in files:
            path = root / e["file"]
            files[e["file"]] = {
                "language": "python",
                "mutants": [],
                "source": path.read_text(encoding="utf-8") if path.is_file() else "",
            }
        lines = files[e["file"]]["source"].split("\n")
        first, last = min(e["lines"] or [1]), min(max(e["lines"] or [1]), len(lines))
        killed_by = [r["id"] for r in e["red"]]
        for test in killed_by + e["reached_by"]:
            tests.setdefault(test.split("::")[0], set()).add(test)
        replacement = [
            line[1:] for line in e["diff"].splitlines() if line.startswith("+") and not line.startswith("+++")
        ]
        files[e["file"]]["mutants"].append(
            {
                "id": e["id"],
                "mutatorName": e["op"],
                "replacement": "\n".join(replacement),
                "location": {
                    "start": {"line": first, "column": 1},
                    "end": {"line": max(last, first), "column": len(lines[max(last, first) - 1]) + 1},
                },
                "status": _STRYKER[e["status"]],
                "statusReason": f"{e['status']}: {e['detail']}",
                "killedBy": killed_by,
                "coveredBy": e["reached_by"],
                "testsCompleted": e["selected_tests"],
                "duration": int(e["duration_seconds"] * 1000),
                "killmapStatus": e["status"],
            }
        )
    return {
        "schemaVersion": "2",
        "thresholds": {"high": 80, "low": 60},
        "projectRoot": str(root),
        "files": files,
        "testFiles": {
            f: {"tests": [{"id": t, "name": t.split("::", 1)[-1]} for t in sorted(ids)]}
            for f, ids in sorted(tests.items())
        },
        "framework": {"name": "killmap sweep", "version": killmap.__version__},
    }


def write(doc: Document, folder: Path) -> dict[str, Path]:
    paths = {kind: folder / name for kind, name in FILES.items()}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_whole(
            {
                paths["json"]: json.dumps(doc, indent=1) + "\n",
                paths["html"]: to_html(doc),
                paths["stryker"]: json.dumps(to_stryker(doc), indent=1) + "\n",
            }
        )
    except OSError as exc:
        raise GateError(f"cannot write the sweep reports: {exc}", field="--report-dir") from None
    return paths
