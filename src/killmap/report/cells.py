"""The pieces every report format shares: the document's type, how a contract's "red / expected"
cell reads, how many contracts held, and the Markdown size limit.

Kept apart from document.py, which renders every format: the renderers (Markdown, HTML, the
console) read these, and document.py imports the renderers, so the shared pieces sit below both.
"""

from __future__ import annotations

from typing import Any

from killmap.catalog.testids import named_count
from killmap.verdict.judge import HELD

Document = dict[str, Any]

MARKDOWN_LIMIT = 65_536  # GitHub's limit on a comment body; counted here in UTF-8 bytes, stricter


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
    )


def contract_cell(*, ran: bool, red: int, expected: int, invariant: bool, reached_by: int, held: bool) -> str:
    """The "red / expected" cell of every table (terminal, Markdown, HTML).

    An invariant expects nothing, like no other contract: "0 / 0" would read as a contract
    with nothing in it, so it says that the zero was measured, and by how many tests.
    """
    if not ran:
        return "not run"
    if not invariant:
        return f"{red} / {expected}"
    if red:
        return f"invariant: {red} red, 0 allowed"
    if not reached_by and held:  # held needs the change executed: by code run at import
        return "invariant: 0 red, reached at import"
    return f"invariant: 0 red, reached by {reached_by}"
