"""killmap prove TEST ...: is this test non-vacuous? Which named defects does it catch?

Every catalog mutation whose changed statements the test executes in the baseline
(coverage, as the gate selects tests) runs with only the given tests (LabOptions.focus);
one named with --mutation is reported even when they never execute it. Each defect is then caught (a given test went
red, confirmed by a re-run, having executed the mutated code: the cause is reported),
missed (the test runs that code and stays green), not reached (named, but the test never
runs its code), or not measured (the mutant is broken, stale, flaky...: why is said). A test
still running at the gate's limit under the mutant caught it too: it never ends with the defect in.
Invariants are not defects and are left out. Exit 1 when a given test catches none.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from killmap.commands.shared import (
    REPORTS_ON_REQUEST_HELP,
    add_report_options,
    checked_report_dir,
    project_root,
    usable_jobs,
    write_lab_reports,
)
from killmap.commands.trying import unreadable
from killmap.errors import GateError

if TYPE_CHECKING:  # the engine and the lab are imported when the command runs, not to parse
    from killmap.engine import Launch
    from killmap.verdict.lab import LabResult

CAUGHT, MISSED, NOT_REACHED, NOT_MEASURED = "caught", "missed", "not reached", "not measured"
Say = Callable[[str], None]


@dataclass(frozen=True)
class ProveOptions:
    tests: tuple[str, ...]
    mutations: tuple[str, ...] = ()
    catalogs: tuple[Path, ...] = ()
    jobs: int = 2


@dataclass
class Finding:
    mutation: str
    target: str
    status: str
    cause: str = ""
    where: str = ""
    detail: str = ""


@dataclass
class Proof:
    test: str
    findings: list[Finding] = field(default_factory=list)

    def of(self, status: str) -> list[Finding]:
        return [f for f in self.findings if f.status == status]

    @property
    def caught_none(self) -> bool:
        return not self.of(CAUGHT)

    def sentence(self) -> str:
        caught, missed = self.of(CAUGHT), self.of(MISSED)
        measured = len(caught) + len(missed)

        def names(found: list[Finding]) -> str:
            return ", ".join(f"`{f.mutation}`" for f in found)

        if not measured:
            text = f"{self.test} runs none of the code the catalog's named defects change"
        elif not caught:
            text = f"{self.test} catches none of the {measured} named defects in the code it runs"
        elif not missed:
            text = (
                f"{self.test} catches all {measured} named defects in the code it runs"
                if measured > 1
                else f"{self.test} catches the 1 named defect in the code it runs"
            )
        else:
            text = f"{self.test} catches {len(caught)} of the {measured} named defects in the code it runs"
        if missed:
            text += f"; it misses {names(missed)}"
        unmeasured = self.of(NOT_MEASURED)
        if unmeasured:
            text += f" ({len(unmeasured)} more could not be measured: {names(unmeasured)})"
        return text


def add_parser(sub) -> None:
    prove = sub.add_parser("prove", help="which named defects does this test catch?")
    prove.add_argument("tests", nargs="+", metavar="TEST", help="pytest node ids (or a file)")
    prove.add_argument(
        "--mutation",
        action="append",
        default=[],
        metavar="NAME",
        help="also report this catalog mutation: 'not reached' when the tests never execute it",
    )
    prove.add_argument("--catalog", action="append", type=Path, default=[], dest="catalogs")
    add_report_options(prove, reports=REPORTS_ON_REQUEST_HELP)
    prove.set_defaults(main=main)


def main(args: argparse.Namespace) -> int:
    from killmap.engine import Launch
    from killmap.verdict.baseline import baseline_line

    root = project_root()
    args.jobs = usable_jobs(args.jobs)

    groups = 1

    def progress(kind, data) -> None:
        nonlocal groups
        if kind == "groups":
            groups = data
        elif kind == "baseline-done":
            line = baseline_line(data)
            if groups > 1:  # one baseline per [gate]: which tests each one ran
                line = line.replace("baseline:", f"baseline of {', '.join(data.settings.tests)}:", 1)
            print(line, flush=True)

    # The workers start now, while the command reads and builds (launch.py says why).
    with Launch(args.jobs) as launch:
        reports = checked_report_dir(args.report_dir, root)
        options = ProveOptions(
            tests=tuple(args.tests), mutations=tuple(args.mutation), catalogs=tuple(args.catalogs), jobs=args.jobs
        )
        proofs, result = run_prove(root, options, progress, launch)
    # The verdicts as the gate's reports, with what prove read from them per test.
    proved = [{"test": p.test, "sentence": p.sentence(), "findings": asdict(p)["findings"]} for p in proofs]
    written = write_lab_reports(result, root, reports, {"prove": proved}) if reports else None
    print()
    print(render(proofs), end="")
    if written:
        print(written)
    return 1 if any(p.caught_none for p in proofs) else 0


def run_prove(
    root: Path,
    options: ProveOptions,
    progress: Callable[[str, Any], None] = lambda k, d: None,
    launch: Launch | None = None,
) -> tuple[list[Proof], LabResult]:
    """Each given test's proof, and the verdicts they were read from (for the reports)."""
    from killmap.catalog.entries import did_you_mean
    from killmap.catalog.testids import matches
    from killmap.verdict.lab import LabOptions, load, run_mutations

    _, mutations = load(root, LabOptions(catalogs=options.catalogs))
    by_name = {m.name: m for m in mutations}
    for name in options.mutations:
        if name not in by_name:
            raise GateError(
                f"{name!r} names no mutation in the catalog(s){did_you_mean(name, by_name)}", field="--mutation"
            )
        if by_name[name].invariant:
            raise GateError(
                f"{name!r} is an invariant: it changes nothing a test may observe, so no test should catch it",
                field="--mutation",
            )
    candidates = [m for m in mutations if not m.invariant]
    progress("groups", len({m.settings for m in candidates}))
    result = run_mutations(
        root,
        candidates,
        LabOptions(
            catalogs=options.catalogs, jobs=options.jobs, use_cache=False, write_cache=False, focus=options.tests
        ),
        progress,
        launch=launch,
    )
    collected = {t for b in result.baselines for t in b.collected}
    for test in options.tests:
        if result.baselines and not any(matches(test, t) for t in collected):
            raise GateError(f"{test!r} matches no collected test", field="TEST")
    baselines = {b.settings: b for b in result.baselines}
    proofs = []
    for test in options.tests:
        proof = Proof(test)
        for mutation, verdict in zip(candidates, result.verdicts, strict=True):
            finding = _finding(
                test,
                mutation,
                verdict,
                result.mutants[mutation.name],
                baselines.get(mutation.settings),
                mutation.name in options.mutations,
            )
            if finding is not None:
                proof.findings.append(finding)
        proofs.append(proof)
    return proofs, result


def _finding(test: str, mutation, verdict, mutant, baseline, named: bool) -> Finding | None:
    base = {"mutation": mutation.name, "target": str(mutation.target)}
    if not mutant.applied or baseline is None:
        # Nothing ran (not applied, or every verdict decided before a baseline): no reach to read.
        return Finding(status=NOT_MEASURED, detail=f"{verdict.verdict}: {verdict.detail}", **base) if named else None
    from killmap.catalog.testids import matches
    from killmap.verdict import judge
    from killmap.verdict.trial import reaching_tests

    reaching, every_test, region = reaching_tests(mutant, baseline)
    if region.cached:  # every test runs under it; the lines still say which ran the function
        reaching, every_test = region.reached_by(baseline.coverage.get(mutant.file)), None
    reached = [t for t in reaching if matches(test, t)]
    if not reached:
        return Finding(status=NOT_REACHED, detail="the test never executes the mutated code", **base) if named else None
    if verdict.verdict == judge.TIMEOUT and matches(test, verdict.extras.get(judge.STUCK_IN) or ""):
        # The test never ends with the defect in: any CI's limit turns it red, as Stryker and
        # PIT count a timeout detected. A hang in another test says nothing of this one.
        return Finding(
            status=CAUGHT,
            cause="timeout",
            where=f"still running after {verdict.timeout:.1f}s" if verdict.timeout else "timed out",
            detail=verdict.detail,
            **base,
        )
    if verdict.verdict in unreadable():
        return Finding(status=NOT_MEASURED, detail=f"{verdict.verdict}: {verdict.detail}", **base)
    reds = [r for r in verdict.red if matches(test, r.id)]
    if any(r.reached is False for r in reds):
        return Finding(status=NOT_MEASURED, detail="red without executing the mutated code", **base)
    if reds:
        from killmap.report.cells import raised_where

        return Finding(
            status=CAUGHT,
            cause=", ".join(sorted({r.cause for r in reds})),
            where=", ".join(sorted({raised_where(r.raised_at, r.tree_line) for r in reds})),
            detail="; ".join(f"{r.id}: {r.exception}" for r in reds),
            **base,
        )
    if verdict.verdict == judge.UNEVIDENCED and not verdict.selected:
        return Finding(status=NOT_REACHED, detail=verdict.detail, **base)
    if every_test is not None:
        # Code that runs at import (or while collecting) runs before every test: a green test
        # there need never have used it, and "misses" would blame it (natsort, marshmallow).
        return Finding(status=NOT_MEASURED, detail=f"{every_test}: reach cannot say this test uses it", **base)
    return Finding(status=MISSED, detail="executes the mutated code and stays green", **base)


def render(proofs: list[Proof]) -> str:
    lines = []
    for proof in proofs:
        lines += [proof.sentence() + ".", ""]
        if proof.findings:
            # The last column: where a catch was raised, or why a defect was not measured.
            header = "| named defect | target | result | cause | raised at, or the reason |"
            lines += [header, "|---|---|---|---|---|"]
            order = {CAUGHT: 0, MISSED: 1, NOT_MEASURED: 2, NOT_REACHED: 3}
            for f in sorted(proof.findings, key=lambda f: order[f.status]):
                mark = {CAUGHT: "✅ caught", MISSED: "❌ missed"}.get(f.status, f"⚠️ {f.status}")
                lines.append(
                    f"| `{f.mutation}` | `{f.target}` | {mark} | {f.cause or '-'} | "
                    f"{f.where or (f.detail if f.status != MISSED else '-')} |"
                )
            lines.append("")
    return "\n".join(lines)
