"""killmap red-first: the fix reverted, the tests kept. Do the change's tests prove the fix?

Two whole trees, run on the lab's road (lab.open_trees): HEAD, and HEAD with the fix put
back as it was at BASE (change.py says what counts as the fix). HEAD runs the whole suite
once, with per-test coverage of the fix's files; the tests the change added or modified, every
test in a changed test file, and every test that executed a changed statement (all of
them with --all) then run in the fix-reverted tree. Each red is re-run once in its own
tree (the flake guard). Each test is then classified in SWE-bench's terms:

| with the fix reverted | with the fix | class |
|---|---|---|
| red | green | fail-to-pass: the test proves the fix |
| green | green | pass-to-pass |
| red | red | fail-to-fail |
| green | red | pass-to-fail: the change breaks it |

A red is an assertion about the missing behaviour, an exception the code raises on purpose
(`raised`: the project's own exception class, or another than `pytest.raises` expected),
the absence of a name the fix introduced (an ImportError or AttributeError of a name
defined at HEAD and not with the fix reverted: the test "did not compile because it did
not exist"), or a crash. The
contract: every test the change added or modified is fail-to-pass (or, with --expect,
the fail-to-pass set is exactly the one named), nothing is pass-to-fail, and HEAD is
green. Otherwise exit 1, with one sentence per offending test.

A fail-to-pass that rests on absence alone (no test red by an assertion or a raised
exception) proves only that the fix's names exist. Then the tests red by absence run
once more, in a third tree: the fix reverted in behaviour only, the definitions it adds
kept (change.names_kept). A test the contract asks for that passes there fails
before the fix only because a name is missing: it breaks the contract. A fix that only
adds definitions leaves nothing to revert so; the result then says it rests on absence.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from killmap.catalog.project import project_files
from killmap.catalog.reader import GateSettings, load_catalogs
from killmap.catalog.testids import matches
from killmap.errors import GateError
from killmap.mutate.mutants import changed_lines
from killmap.verdict.lab import open_trees
from killmap.verdict.redfirst.change import (
    Change,
    KeptNames,
    NewNames,
    Purpose,
    compute_change,
    module_names,
    names_kept,
    new_names,
    purpose_of,
    test_changes,
)
from killmap.verdict.redfirst.contract import (
    ABSENCE,
    F2P,
    RAISED,
    RedFirstOptions,
    RedFirstResult,
    Row,
    Side,
    classify,
    judge,
    proven_with_names_kept,
    rests_on_absence,
)
from killmap.verdict.tree_runs import ASSERTION, CRASH, Launch, TestResult, TreeAsk, TreeRun, Trees
from killmap.verdict.trial import MIN_TIMEOUT, TIMEOUT_FACTOR, tests_reaching
from killmap.wording import counted

HEAD_TIMEOUT = 900.0
HEAD, REVERTED = 0, 1  # the trees, in the order open_trees is given them


Say = Callable[[str], None]


def gate_settings(root: Path, catalogs: tuple[Path, ...], cwd: Path) -> GateSettings:
    """The [gate] the project's catalogs declare (the defaults when it has none)."""
    paths = [p if p.is_absolute() else cwd / p for p in catalogs] or sorted((root / "mutations").glob("*.toml"))
    if not paths:
        return GateSettings()
    distinct = {c.settings for c in load_catalogs(root, paths)}
    if len(distinct) > 1:
        raise GateError(
            "the catalogs' [gate] tables differ, so which tests to run is ambiguous; name one with --catalog",
            field="--catalog",
        )
    return distinct.pop()


def run_red_first(
    root: Path, options: RedFirstOptions, say: Say = lambda line: None, launch: Launch | None = None
) -> RedFirstResult:
    """`launch`: the two workers the command started at its first line (launch.py), which
    import pytest while this reads the change out of git."""
    started = time.perf_counter()
    settings, change = _read_change(root, options, say)
    traced = tuple(c.path for c in change.reverted if c.path.endswith(".py") and c.path in change.head_tree)
    # What red-first reads of the project, read once: the files a sandbox copies, and the
    # module every Python file of either tree imports as.
    project, module_of = project_files(root), module_names(change, settings.paths)
    with open_trees(root, project, [change.head_tree, change.reverted_tree], settings, launch) as trees:
        say(f"HEAD: running {', '.join(settings.tests)} with the fix")
        head = trees.run(TreeAsk(HEAD, "head", settings.tests, options.timeout or HEAD_TIMEOUT, coverage=traced))
        _refuse_unusable_head(head, options.expect)
        changes = test_changes(change, head.collected)
        chosen, selection = _select(change, settings, options, head, changes)
        limit = options.timeout or max(MIN_TIMEOUT, TIMEOUT_FACTOR * head.wall)
        say(f"fix reverted: running {counted(len(chosen), 'test')} ({selection})")
        files = tuple(dict.fromkeys(t.split("::", 1)[0] for t in chosen))
        reverted = trees.run(TreeAsk(REVERTED, "reverted", files, limit, frozenset(chosen)))
        if reverted.stuck and not reverted.collected:
            raise GateError(f"with the fix reverted: {reverted.stuck}", field="BASE")
        reading = Reading(new_names(change, module_of), purpose_of(change, settings, module_of))
        head_sides = {t: _side(head, t, reading) for t in chosen}
        reverted_sides = {t: _side(reverted, t, reading) for t in chosen}
        _flake_guard(
            trees,
            ("head-again", HEAD, head_sides, options.timeout or HEAD_TIMEOUT),
            ("reverted-again", REVERTED, reverted_sides, limit),
            reading=reading,
            say=say,
        )
    rows = [Row(t, changes.get(t, "unchanged"), chosen[t], head_sides[t], reverted_sides[t]) for t in chosen]
    kept = (
        _with_names_kept(root, project, module_of, change, settings, rows, limit, say)
        if rests_on_absence(rows)
        else None
    )
    problems = _problems(head, rows, options.expect)
    resting = rests_on_absence(rows) and not proven_with_names_kept(rows)
    wall = time.perf_counter() - started
    return RedFirstResult(
        change, options, settings, rows, problems, selection, len(head.collected), wall, kept, resting
    )


def _read_change(root: Path, options: RedFirstOptions, say: Say) -> tuple[GateSettings, Change]:
    """The [gate] and the change out of git, said in one line."""
    settings = gate_settings(root, options.catalogs, options.cwd)
    change = compute_change(
        root, settings, options.base, worktree=options.worktree, revert=options.revert, cwd=options.cwd
    )
    say(
        f"red-first: {change.base_label} ({change.base[:10]}) -> {_short(change.head)}; fix reverted in "
        f"{counted(len(change.reverted), 'file')}: {', '.join(c.path for c in change.reverted)}"
    )
    return settings, change


def _with_names_kept(
    root: Path,
    project: list[str],
    module_of: dict[str, str],
    change: Change,
    settings: GateSettings,
    rows: list[Row],
    limit: float,
    say: Say,
) -> KeptNames:
    """The tests red by absence, run again with the fix reverted in behaviour only
    (change.KeptNames): each row's `kept` side. A fix that changes no definition
    leaves nothing to revert so: nothing runs."""
    keeping = names_kept(change)
    absent = [r.id for r in rows if classify(r.head, r.reverted) == F2P and r.reverted.cause == ABSENCE]
    if not keeping.behaviour_reverted:
        say("every fail-to-pass rests on absence, and the fix only adds definitions: nothing to run again")
        return keeping
    say(
        f"every fail-to-pass rests on absence: running {counted(len(absent), 'test')} again "
        "with the names the fix adds kept"
    )
    kept_change = replace(change, reverted_tree=keeping.tree)
    reading = Reading(new_names(kept_change, module_of), purpose_of(kept_change, settings, module_of))
    with open_trees(root, project, [keeping.tree], settings) as trees:
        files = tuple(dict.fromkeys(t.split("::", 1)[0] for t in absent))
        run = trees.run(TreeAsk(0, "kept", files, limit, frozenset(absent)))
        if run.stuck and not run.collected:
            raise GateError(f"with the names the fix adds kept: {run.stuck}", field="BASE")
        sides = {t: _side(run, t, reading) for t in absent}
        _flake_guard(trees, ("kept-again", 0, sides, limit), reading=reading, say=say)
    for row in rows:
        row.kept = sides.get(row.id)
    return keeping


def _refuse_unusable_head(head: TreeRun, expect: tuple[str, ...]) -> None:
    """Bad input, not a finding: a HEAD that did not finish or collected nothing gives the
    reverted tree nothing to be compared with, and an --expect must name a test HEAD has."""
    if head.stuck:
        raise GateError(f"HEAD: {head.stuck}", field="HEAD")
    if not head.collected:
        why = (head.conftest or {}).get("error") or (
            f"{head.collect_errors[0][0]}: {_first_line(head.collect_errors[0][1])}" if head.collect_errors else None
        )
        raise GateError("HEAD: no tests collected" + (f" ({why})" if why else ""), field="HEAD")
    for entry in expect:
        if not any(matches(entry, t) for t in head.collected):
            raise GateError(f"{entry!r} matches no test collected at HEAD", field="--expect")


def _problems(head: TreeRun, rows: list[Row], expect: tuple[str, ...]) -> list[str]:
    """HEAD's collection errors first (a module HEAD cannot import hides its tests), then
    one sentence per test that breaks the contract."""
    return [
        f"HEAD does not collect {node or 'the session'}: "
        f"{head.absence.get(node, {}).get('error') or _first_line(message)}"
        for node, message in head.collect_errors
    ] + judge(rows, expect)


@dataclass(frozen=True)
class Reading:
    """What a red test's records are read against for its cause: the names the fix adds, and
    the exceptions the code under test raises on purpose."""

    names: NewNames
    purpose: Purpose

    def cause(self, test_id: str, result: TestResult, record: dict | None, absent: str | None) -> str:
        if result.cause == ASSERTION:
            return ASSERTION
        if absent:
            return ABSENCE
        lines = (record or {}).get("test_lines")
        if result.cause == CRASH and not result.interrupted and self.purpose.raised(result.exc_module, test_id, lines):
            return RAISED
        return result.cause or CRASH


def _side(run: TreeRun, test_id: str, reading: Reading) -> Side:
    names = reading.names
    result = run.tests.get(test_id)
    if result is not None:
        if not result.red:
            return Side(result.outcome)
        record = run.absence.get(test_id)
        absent = names.explains(record) if record else None
        cause = reading.cause(test_id, result, record, absent)
        return Side(
            "failed",
            cause,
            result.exc_type,
            result.message,
            f"{result.raised_at[0]}:{result.raised_at[1]}" if result.raised_at else None,
            absent,
        )
    if test_id in run.timeouts:
        return Side("timeout", "timeout", "Timeout", f"still running after {run.limit:.0f}s, the time limit")
    for node, message in run.collect_errors:
        if node == "" or matches(node, test_id):
            record = run.absence.get(node)
            absent = names.explains(record) if record else None
            return Side(
                "uncollected",
                ABSENCE if absent else "collection",
                record.get("type") if record else None,
                (record or {}).get("error") or _first_line(message),
                node or None,
                absent,
            )
    if run.conftest is not None:
        absent = names.explains(run.conftest)
        return Side(
            "uncollected",
            ABSENCE if absent else "collection",
            run.conftest.get("type"),
            run.conftest.get("error", ""),
            run.conftest.get("path"),
            absent,
        )
    if run.stuck:
        return Side("uncollected", "collection", message=run.stuck)
    return Side(
        "uncollected",
        ABSENCE,
        message="not collected: the test (or this parametrization) does not exist without the fix",
    )


def _select(
    change: Change, settings: GateSettings, options: RedFirstOptions, head: TreeRun, changes: dict[str, str]
) -> tuple[dict[str, str], str]:
    """Which tests run with the fix reverted, and why each."""
    if options.all_tests:
        return {t: "--all" for t in head.collected}, "--all"
    chosen: dict[str, str] = {}
    changed_files = {c.path for c in change.tests}
    everything: str | None = None
    reaching: set[str] = set()
    for item in change.reverted:
        now = change.text(change.head_tree, item.path)
        if not item.path.endswith(".py") or now is None:
            everything = (
                f"all tests: {item.path} is {'deleted at HEAD' if now is None else 'not Python'}, "
                "so its reach cannot be traced"
            )
            continue
        then = change.text(change.base_tree, item.path) or ""
        lines = changed_lines(then, now)[1] if item.status != "added" else tuple(range(1, now.count("\n") + 2))
        tests, why, _ = tests_reaching(now, lines, head.coverage.get(item.path), head.collected)
        if why is not None:
            everything = f"{why.replace('the target file', item.path)} ({item.path})"
        reaching.update(tests)
    for test_id in head.collected:
        if changes.get(test_id) in ("added", "modified"):
            chosen[test_id] = changes[test_id]
        elif test_id.split("::", 1)[0] in changed_files:
            chosen[test_id] = "in a changed test file"
        elif everything is not None:
            chosen[test_id] = "the change runs at import"
        elif test_id in reaching:
            chosen[test_id] = "reaching the changed source"
        elif any(matches(e, test_id) for e in options.expect):
            chosen[test_id] = "--expect"
    counts: dict[str, int] = {}
    for why in chosen.values():
        counts[why] = counts.get(why, 0) + 1
    summary = ", ".join(f"{n} {why}" for why, n in counts.items())
    return chosen, (everything + "; " if everything else "") + summary


# --- the flake guard ------------------------------------------------------------------------


def _flake_guard(trees: Trees, *asked, reading: Reading, say: Say = lambda line: None) -> None:
    """Every red once more, in its own tree: a failed or timed-out test by its id, one that
    was not collected by its file. A red the re-run does not repeat is flaky. Each of `asked`
    is (label, the tree, its tests' sides, the time limit)."""
    jobs = []
    for label, tree, sides, limit in asked:
        reds = [t for t, s in sides.items() if s.red]
        if reds:
            files = [t.split("::", 1)[0] for t in reds if sides[t].outcome == "uncollected"]
            ids = [t for t in reds if sides[t].outcome != "uncollected"]
            targets = tuple(dict.fromkeys(files)) + tuple(ids)
            jobs.append((TreeAsk(tree, label, targets, limit, frozenset(reds)), sides, reds))
    if not jobs:
        return
    say("flake guard: re-running " + ", ".join(f"{len(r)} red in {ask.label.split('-')[0]}" for ask, _, r in jobs))
    again = trees.run_each([ask for ask, _, _ in jobs])
    for ask, sides, reds in jobs:
        for test_id in reds:
            now = _side(again[ask.label], test_id, reading)
            if not now.red or (sides[test_id].outcome == "uncollected") != (now.outcome == "uncollected"):
                sides[test_id] = replace(sides[test_id], flaky=True)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("E ")]
    return (errors[-1][1:].strip() if errors else lines[-1] if lines else "")[:300]


def _short(head: str) -> str:
    return head if head == "working tree" else f"HEAD ({head[:10]})"
