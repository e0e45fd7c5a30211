"""red-first's contract: each test classified in SWE-bench's terms, the rules, and the result.

Every test the change added or modified must be fail-to-pass (with --expect instead: the
fail-to-pass set must be exactly the one named, as `kills` is), nothing may be
pass-to-fail, and HEAD must be green. Each test that breaks a rule gets one sentence
saying which rule and why it matters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from killmap.catalog.reader import GateSettings
from killmap.catalog.testids import matches
from killmap.verdict.redfirst.change import Change, KeptNames
from killmap.verdict.tree_runs import ASSERTION

F2P, P2P, F2F, P2F = "fail-to-pass", "pass-to-pass", "fail-to-fail", "pass-to-fail"
SKIPPED, FLAKY = "skipped", "flaky"
ABSENCE = "absence"
# An exception the code under test raises on purpose (change.Purpose): the project's
# own exception class, or another than `pytest.raises` expected. It proves behaviour, as an
# assertion does: the code answered the test, with the wrong answer.
RAISED = "raised"
PROOF = (ASSERTION, RAISED)


@dataclass(frozen=True)
class Side:
    """One test in one tree."""

    outcome: str  # passed, failed, skipped, xfailed; uncollected; timeout
    cause: str | None = None  # assertion, raised, absence, crash, error, collection, timeout
    exception: str | None = None
    message: str = ""
    raised_at: str | None = None
    absent: str | None = None  # the missing name, for cause absence
    flaky: bool = False

    @property
    def red(self) -> bool:
        return self.outcome in ("failed", "uncollected", "timeout")

    @property
    def green(self) -> bool:
        return self.outcome == "passed"


@dataclass
class Row:
    id: str
    change: str  # added, modified, unchanged, changed-file
    why: str  # why it ran
    head: Side
    reverted: Side
    klass: str = ""
    problem: str | None = None
    kept: Side | None = None  # with the names the fix adds kept, when red-first ran it so


def rests_on_absence(rows: list[Row]) -> bool:
    """Whether the fail-to-pass tests show only that the fix's names exist: some are red by
    the absence of a name the fix adds, and none by an assertion or a raised exception."""
    causes = {r.reverted.cause for r in rows if classify(r.head, r.reverted) == F2P}
    return ABSENCE in causes and not causes & set(PROOF)


def proven_with_names_kept(rows: list[Row]) -> bool:
    """Whether some test red by absence is red by an assertion or a raised exception once
    the names the fix adds are kept: then the fail-to-pass rests on more than absence."""
    return any(r.kept is not None and classify(r.head, r.kept) == F2P and r.kept.cause in PROOF for r in rows)


def classify(head: Side, reverted: Side) -> str:
    if head.flaky or reverted.flaky:
        return FLAKY
    if not (head.red or head.green) or not (reverted.red or reverted.green):
        return SKIPPED
    return {(True, True): F2P, (False, True): P2P, (True, False): F2F, (False, False): P2F}[(reverted.red, head.green)]


def judge(rows: list[Row], expect: tuple[str, ...]) -> list[str]:
    """Classify every row; one sentence per test that breaks the contract."""
    problems = []
    for row in rows:
        row.klass = classify(row.head, row.reverted)
        row.problem = _problem(row, expect)
        if row.problem:
            problems.append(row.problem)
    if not expect and not any(r.change in ("added", "modified") for r in rows):
        problems.append(
            "this change adds or modifies no test, so nothing in it proves the fix (name the "
            "tests that should with --expect)"
        )
    return problems


def _problem(row: Row, expect: tuple[str, ...]) -> str | None:
    where = "at HEAD" if row.head.flaky else "with the fix reverted"
    if row.klass == FLAKY:
        return f"{row.id} is flaky {where}: it went red, then green when re-run"
    if row.klass == F2F:
        return f"{row.id} fails with the fix and without it: HEAD is not green"
    if row.klass == P2F:
        return f"{row.id} passes with the fix reverted but fails with it: the change breaks it"
    if row.head.outcome != "passed" and row.klass == SKIPPED and row.change in ("added", "modified"):
        return f"{row.id} was {row.change} by this change but is {row.head.outcome} at HEAD: it proves nothing"
    required = any(matches(e, row.id) for e in expect) if expect else row.change in ("added", "modified")
    if row.kept is not None and required and row.klass == F2P and classify(row.head, row.kept) != F2P:
        return (
            f"{row.id} fails with the fix reverted only because {row.reverted.absent or 'a name the fix adds'} "
            f"does not exist: with the names the fix adds kept it "
            f"{'passes' if row.kept.green else 'is ' + classify(row.head, row.kept)}, so it does not test "
            "what the fix changes"
        )
    if expect:
        expected = any(matches(e, row.id) for e in expect)
        if expected and row.klass != F2P:
            return f"{row.id} is in --expect but is {row.klass}: it does not fail with the fix reverted"
        if not expected and row.klass == F2P:
            return f"{row.id} is fail-to-pass but not in --expect"
        return None
    if row.change in ("added", "modified") and row.klass != F2P:
        return (
            (f"{row.id} was {row.change} by this change but passes with the fix reverted: it does not test the fix")
            if row.klass == P2P
            else f"{row.id} was {row.change} by this change but is {row.klass}: it does not test the fix"
        )
    return None


@dataclass(frozen=True)
class RedFirstOptions:
    base: str | None = None
    worktree: bool = False
    revert: tuple[str, ...] = ()
    all_tests: bool = False
    expect: tuple[str, ...] = ()
    catalogs: tuple[Path, ...] = ()
    timeout: float | None = None
    cwd: Path = field(default_factory=Path.cwd)


@dataclass
class RedFirstResult:
    change: Change
    options: RedFirstOptions
    settings: GateSettings
    rows: list[Row]
    problems: list[str]
    selection: str
    head_collected: int
    wall: float = 0.0
    names_kept: KeptNames | None = None  # the fix reverted in behaviour only, when the run rested on absence
    rests_on_absence: bool = False  # the fail-to-pass shows only that the fix's names exist, even so

    @property
    def exit_code(self) -> int:
        return 1 if self.problems else 0
