"""The pieces every report format shares: the document's type, how a contract's "red / expected"
cell reads, how many contracts held, the Markdown size limit, and how a report file is written
(whole or not at all).

Kept apart from document.py, which renders every format: the renderers (Markdown, HTML, the
console) read these, and document.py imports the renderers, so the shared pieces sit below both.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from killmap.catalog.testids import named_count
from killmap.verdict.judge import HELD

Document = dict[str, Any]

MARKDOWN_LIMIT = 65_536  # GitHub's limit on a comment body; counted here in UTF-8 bytes, stricter


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
