"""The terminal: a progress bar while mutants run, then one table and what differed."""

from __future__ import annotations

import os
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from killmap.catalog.testids import named_count
from killmap.report.cells import (
    cause_of,
    contract_cell,
    explanation,
    hung_count,
    raised_where,
    red_allowed,
    red_outside,
    reused_line,
)
from killmap.verdict.baseline import baseline_line
from killmap.verdict.judge import Verdict
from killmap.verdict.lab import LabResult
from killmap.wording import counted

STYLE = {
    "held": "green",
    "vacuous": "red",
    "overreach": "yellow",
    "visible": "red",
    "not-applied": "magenta",
    "broken": "magenta",
    "timeout": "yellow",
    "flaky": "yellow",
    "randomized": "yellow",
    "stale": "cyan",
    "unevidenced": "yellow",
    "wrong-cause": "red",
    "inconclusive": "yellow",
    "escaped": "bold red",
}


class LiveProgress:
    """Receives lab events; draws a bar on a terminal, stays quiet elsewhere."""

    def __init__(self, console: Console):
        self.console = console
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            disable=not console.is_terminal,
        )
        self.task: TaskID | None = None

    def __enter__(self) -> LiveProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def __call__(self, kind: str, data: Any) -> None:
        if kind == "planned":
            self.task = self.progress.add_task("mutations", total=data)
        elif kind == "baseline":
            self.progress.console.print(f"baseline: running {', '.join(data.tests)} unmutated", markup=False)
        elif kind == "baseline-done":
            self.progress.console.print(baseline_line(data), markup=False)
        elif kind == "done" and self.task is not None:
            self.progress.advance(self.task)
            verdict: Verdict = data
            style = STYLE.get(verdict.verdict, "white")
            self.progress.console.print(
                f"[{style}]{verdict.verdict:>12}[/] {escape(verdict.name)}{' (cached)' if verdict.cached else ''}"
            )


# Red tests listed under a verdict: sqlparse's mutant of a shared helper printed 230 lines of
# them; the reports keep them all.
RED_SHOWN = 10


def make_console() -> Console:
    """Wide output when not on a terminal, so CI logs keep one verdict per line."""
    console = Console()
    if not console.is_terminal:
        console = Console(width=160, soft_wrap=True)
    return console


def render(console: Console, result: LabResult, named: int) -> None:
    """The verdicts as one table, then what differed; `named`: how many mutations the catalogs
    name, for the line that says why none ran."""
    if not result.verdicts:
        console.print(nothing_to_gate(named), markup=False)
        return
    table = Table(title="killmap verdicts", show_lines=False)
    table.add_column("mutation")
    table.add_column("verdict")
    table.add_column("red / expected", justify="right")
    table.add_column("time", justify="right")
    for v in result.verdicts:
        style = STYLE.get(v.verdict, "white")
        mutant = result.mutants.get(v.name)
        cell = contract_cell(
            ran=bool(v.selected or v.red),
            red=len(v.red),
            expected=named_count(v.expected, v.selected),
            invariant=bool(mutant and mutant.mutation.invariant),
            reached_by=len(v.reached_by),
            held=v.held,
            other=red_outside(v.expected, [r.id for r in v.red]),
            allowed=red_allowed(v.expected, mutant.mutation.may_kill if mutant else (), [r.id for r in v.red]),
            hung=hung_count(v.verdict, v.extras),
        )
        table.add_row(
            escape(v.name), f"[{style}]{v.verdict}[/]", escape(cell), ("cached" if v.cached else f"{v.duration:.2f}s")
        )
    console.print(table)
    for v in result.verdicts:
        if v.held:
            continue
        style = STYLE.get(v.verdict, "white")
        console.print(f"[{style}]{v.verdict}[/] [bold]{escape(v.name)}[/]: {escape(v.detail)}")
        mutant = result.mutants.get(v.name)
        invariant = bool(mutant and mutant.mutation.invariant)
        # Our own wording names "[gate] exclude" and "[sweep] ...": markup would eat them.
        console.print(f"  [dim]{escape(explanation(v.verdict, invariant, cause_of(v.extras)))}[/]")
        for red in v.red[:RED_SHOWN]:
            where = f" at {escape(raised_where(red.raised_at, red.tree_line))}" if red.raised_at else ""
            caught = escape(f"{red.cause}: {red.exception}")
            console.print(f"  [dim]red: {escape(red.id)} ({caught}){where}[/]")
        if len(v.red) > RED_SHOWN:
            console.print(f"  [dim]and {len(v.red) - RED_SHOWN} more red: every one is in the reports[/]")
    for v in result.verdicts:
        for warning in v.extras.get("warnings", ()):
            console.print(f"[dim]warning {escape(v.name)}: {escape(warning)}[/]")
    held = sum(v.held for v in result.verdicts)
    ran = f"{counted(result.jobs, 'job')}" if result.jobs else "no mutant run: cached or decided statically"
    ran += f", seed {'random' if result.seed is None else result.seed}"  # docs/randomized.md
    if "PYTHONHASHSEED" in os.environ:  # the tests ran under it, not the gate's (launch.py)
        ran += f", PYTHONHASHSEED={os.environ['PYTHONHASHSEED']} from the environment"
    reused = sum(v.cached for v in result.verdicts)
    console.print(
        f"{held}/{len(result.verdicts)} contracts held in {result.wall:.1f}s ({ran})"
        + (f"; {reused_line(reused, len(result.verdicts))}" if reused else ""),
        markup=False,  # PYTHONHASHSEED is the environment's text
    )


def nothing_to_gate(named: int) -> str:
    """Why no mutation ran: a catalog of [gate] alone names none (a new user's first file,
    written to sweep before naming anything), or the selection left none."""
    if named:
        return f"nothing to gate: none of the {counted(named, 'mutation')} is selected"
    return (
        "nothing to gate: the catalog(s) name no [[mutation]] yet; "
        "'killmap sweep PATH' finds defects worth naming, with their [gate] settings"
    )
