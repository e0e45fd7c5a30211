"""The pieces every report format shares: the document's type, what each verdict means in
words, how a contract's "red / expected" cell reads, how many contracts held, the Markdown
size limit, and how a report file is written (whole or not at all).

Kept apart from document.py, which renders every format: the renderers (Markdown, HTML, the
console) read these, and document.py imports the renderers, so the shared pieces sit below both.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from killmap.catalog.testids import matches, named_count
from killmap.verdict.judge import (
    BROKEN_VERDICT,
    ESCAPED,
    FLAKY,
    HELD,
    HUNG,
    INCONCLUSIVE,
    NOT_APPLIED,
    OVERREACH,
    RANDOMIZED,
    STALE,
    TIMEOUT,
    UNEVIDENCED,
    VACUOUS,
    VISIBLE,
    WRONG_CAUSE,
)

Document = dict[str, Any]

MARKDOWN_LIMIT = 65_536  # GitHub's limit on a comment body; counted here in UTF-8 bytes, stricter


EXPLANATIONS = {
    HELD: "the tests named in kills went red by a real failure, and nothing else did",
    VACUOUS: "a test named in kills did not go red: it does not guard against this defect",
    OVERREACH: "a test outside kills and may_kill went red: it is coupled to this code, or the contract is too narrow",
    VISIBLE: "an invariant mutation turned tests red: the change the catalog calls invisible is not",
    WRONG_CAUSE: "a kills test went red, but not by the cause require asks (an assertion, or a hang)",
    NOT_APPLIED: "the mutation matched the wrong number of sites or changed nothing: fix its target, operator or text",
    BROKEN_VERDICT: "the mutant does not compile cleanly or was not the code that ran: its reds prove nothing",
    TIMEOUT: "the mutant ran past its limit, which the unmutated tests meet: a loop or wait, caught; "
    "an entry declares it with require = 'timeout'",
    FLAKY: "a re-run of the same mutant disagreed with the first run: fix the flaky test first",
    RANDOMIZED: "a re-run disagreed on a test that draws random inputs: its search finds this defect by luck; "
    "keep the gate's fixed seed, or give the test more examples",
    STALE: "the target changed since it was pinned: review the mutation, then run 'killmap pin'",
    UNEVIDENCED: "nothing proves this verdict: no test reached the mutated code, or its control did not hold",
    INCONCLUSIVE: "the environment failed, not the mutant: re-run it",
    ESCAPED: "the mutant reached outside its sandbox: it wrote into the working tree (killmap restored the file "
    "byte for byte), or killed a process of the gate",
}

# A `require = "timeout"` entry's `held`: its kills test hung, which is no red (six, jsonschema,
# prettytable: "went red by a real failure" was said of a hang, beside "0 / 1" and no red).
HELD_BY_HANG = (
    "the kills test hung, as require = 'timeout' declares, and hung there again on a second run; "
    "any other kills test went red, and nothing outside kills and may_kill did"
)

# An invariant's `held` is the opposite observation: nothing went red, where it was reached.
INVARIANT_HELD = (
    "nothing went red although tests executed the change, and its control at the same "
    "site held: the change is invisible to this suite"
)


# A mutant that compiled but that the tests cannot load under: its detail names the
# exception, and "does not compile cleanly" would be false.
BROKEN_BY_CAUSE = {
    "import": "the mutant compiles, but the tests cannot load under it, so no test judged it",
    "collection": "the mutant compiles, but the tests cannot load under it, so no test judged it",
    # tinydb: a merged message that names a local bound further down compiles, and every red
    # under it is that NameError or UnboundLocalError, not a test catching the defect.
    "pyflakes": "the mutant compiles but cannot run as written (a name it uses is bound nowhere it can be "
    "read): a red under it would be that error, not a test catching the defect",
    "syntax": "the mutant does not parse, so no test can run it",
}


# Why nothing proves an `unevidenced` verdict, by the case the judge found: a mutation
# with no control never reads "its control did not hold", nor one whose red came from the
# order of the tests "no test reached the mutated code".
UNEVIDENCED_BY_CAUSE = {
    "unreached": "nothing proves this verdict: no test executed the mutated code",
    "control": "nothing proves this invariance: its control did not hold in this run",
    "order": "the red may have come from the test order, not from the defect: the test never executed "
    "the mutated code in its own process, and went red after a test that did (or ran it in a subprocess, "
    "which is not traced); a kills test must execute the change in its own process: name one that does, "
    "and this one in may_kill if it may go red so",
    "elsewhere": "nothing shows the red came from the defect: the test never executed the mutated code "
    "in its own process (line numbers, code it ran in a subprocess, a test the selection left out); "
    "a kills test must execute the change in its own process: name one that does, and this one in "
    "may_kill if it may go red so",
}


# An `inconclusive` whose tests pytest refused by id: no environment's fault, and a re-run
# gives the same (natsort: a regex's pattern is another test's parametrize id).
INCONCLUSIVE_BY_CAUSE = {
    "ids": "the mutant changed the ids of tests the baseline collected (a parametrize value taken "
    "from the mutated code): a re-run gives the same; put the contract's tests in other files, "
    "or list those tests in [gate] exclude",
    "limit": "the mutation's timeout is below what its tests take unmutated: a re-run gives the same; "
    "raise its `timeout` (or [gate]'s), or leave it to the gate's own, ten times what they take",
}


def cause_of(extras: dict[str, Any]) -> str:
    """What a broken, unevidenced or inconclusive verdict's explanation depends on, or "hang"
    for a verdict whose kills test hung as `require = "timeout"` declares."""
    cause = extras.get("broken_cause") or extras.get("unevidenced_cause") or extras.get("inconclusive_cause")
    return str(cause or ("hang" if extras.get(HUNG) else ""))


def raised_where(raised_at: str | None, tree_line: int | None) -> str:
    """Where a red test's failure came from: the mutant's file and line, as plain pytest on the
    mutant says it, and the line in the user's tree where the mutation moved it."""
    if not raised_at:
        return "?"
    return f"{raised_at} (line {tree_line} in your tree)" if tree_line else raised_at


def explanation(verdict: str, invariant: bool, cause: str = "") -> str:
    """The one-line meaning of a verdict, for the mutation it was given to (a broken or an
    unevidenced one's by its case: `cause_of` its extras)."""
    if verdict == BROKEN_VERDICT and cause in BROKEN_BY_CAUSE:
        return BROKEN_BY_CAUSE[cause]
    if verdict == UNEVIDENCED and cause in UNEVIDENCED_BY_CAUSE:
        return UNEVIDENCED_BY_CAUSE[cause]
    if verdict == INCONCLUSIVE and cause in INCONCLUSIVE_BY_CAUSE:
        return INCONCLUSIVE_BY_CAUSE[cause]
    if verdict == HELD and cause == "hang":
        return HELD_BY_HANG
    return INVARIANT_HELD if invariant and verdict == HELD else EXPLANATIONS[verdict]


def schema_of(path: Path) -> str | None:
    """The `schema` a JSON report declares; None when the file is no JSON object (the reader
    of the report that was expected says what is wrong with it)."""
    import json

    try:
        return json.loads(path.read_text(encoding="utf-8")).get("schema")
    except (OSError, ValueError, AttributeError):
        return None


def write_whole(texts: dict[Path, str]) -> None:
    """Write each file whole or not at all: every text to a temporary name in its own folder,
    then each renamed into place (a rename is atomic within a file system).

    A CI step reads the report next and takes what it finds for the truth: a gate stopped by
    a signal while writing must leave no truncated file under a final name. Renamed only once
    every text is written, so a stop also rarely leaves one format new and another old."""
    written: list[tuple[Path, Path]] = []
    try:
        for path, text in texts.items():
            temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
            written.append((temporary, path))
            with open(temporary, "x", encoding="utf-8") as out:  # as the final file's mode would be
                out.write(text)
        for temporary, path in written:
            os.replace(temporary, path)
    finally:
        for temporary, _ in written:
            try:
                os.unlink(temporary)
            except OSError:
                pass  # renamed into place


def held_count(doc: Document) -> int:
    return sum(m["verdict"] == HELD for m in doc["mutations"])


def reused_line(reused: int, total: int) -> str:
    """How much of the gate the verdict cache answered (a CI job restores it between runs)."""
    return f"{reused} of {total} verdicts reused from the cache"


def reused_count(doc: Document) -> int:
    return sum(bool(m.get("cached")) for m in doc["mutations"])


def red_vs_expected(entry: dict[str, Any]) -> str:
    return contract_cell(
        ran=bool(entry["selected_tests"] or entry["red"]),
        red=len(entry["red"]),
        expected=named_count(entry["expected"], entry.get("selected", ())),
        invariant=entry["invariant"],
        reached_by=len(entry["reached_by"]),
        held=entry["verdict"] == HELD,
        other=red_outside(entry["expected"], [r["id"] for r in entry["red"]]),
        allowed=red_allowed(entry["expected"], entry.get("may_kill", ()), [r["id"] for r in entry["red"]]),
        hung=hung_count(entry["verdict"], entry),
    )


def hung_count(verdict: str, extras: dict[str, Any]) -> int:
    """1 where a `held` verdict's kills test hung as `require = "timeout"` declares (its `hung`,
    in the verdict's extras and in the report's entry alike), else 0. Only a `held` one: a
    `flaky` keeps the second run's extras, and its hang, if any, is not the contract's."""
    return int(verdict == HELD and bool(extras.get(HUNG)))


def red_outside(kills: Sequence[str], red_ids: Sequence[str]) -> int:
    """How many red tests no `kills` entry names."""
    return sum(not any(matches(entry, test) for entry in kills) for test in red_ids)


def red_allowed(kills: Sequence[str], may_kill: Sequence[str], red_ids: Sequence[str]) -> int:
    """How many red tests no `kills` entry names and a `may_kill` entry does."""
    return sum(
        not any(matches(entry, test) for entry in kills) and any(matches(entry, test) for entry in may_kill)
        for test in red_ids
    )


def contract_cell(
    *,
    ran: bool,
    red: int,
    expected: int,
    invariant: bool,
    reached_by: int,
    held: bool,
    other: int = 0,
    allowed: int = 0,
    hung: int = 0,
) -> str:
    """The "red / expected" cell of every table (terminal, Markdown, HTML): the red tests the
    contract's `kills` names against how many it names, then the red it does not name, apart
    (`other`), of which `allowed` are named by `may_kill`. "7 / 1" read as seven reds of one
    expected where none of the seven was it; "+8 other red" under `held` read as an overreach
    when `may_kill` allowed all eight.

    A kills test that hung as `require = "timeout"` declares (`hung`) is no red, and is counted
    apart from them: "0 / 1" of a held hang read as a contract whose test stayed green.

    An invariant expects nothing, like no other contract: "0 / 0" would read as a contract
    with nothing in it, so it says that the zero was measured, and by how many tests.
    """
    if not ran:
        return "not run"
    if not invariant:
        apart = [f"+{allowed} may_kill red"] if allowed else []
        apart += [f"+{other - allowed} other red"] if other > allowed else []
        named = f"{red - other}"
        if hung:
            named = f"{named} red + {hung} hung" if red > other else f"{hung} hung"
        return f"{named} / {expected}" + (f" ({', '.join(apart)})" if apart else "")
    if red:
        return f"invariant: {red} red, 0 allowed"
    if not reached_by and held:  # held needs the change executed: by code run at import
        return "invariant: 0 red, reached at import"
    return f"invariant: 0 red, reached by {reached_by}"
