"""The Markdown report: a summary table and, per failed contract, what differed and the diff,
folded to fit GitHub's comment limit when the catalog is large. A view of the JSON document
(report.py), like every other format.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from killmap.report.cells import MARKDOWN_LIMIT, Document, held_count, red_vs_expected, reused_count, reused_line
from killmap.verdict.judge import HELD
from killmap.wording import counted


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _row(entry: dict[str, Any]) -> str:
    mark = "✅" if entry["verdict"] == HELD else "❌"
    return (
        f"| `{entry['name']}` | {mark} {entry['verdict']} | {red_vs_expected(entry)} | "
        f"{entry['duration_seconds']:.2f}s{' (cached)' if entry['cached'] else ''} |"
    )


def _failure(entry: dict[str, Any], fold: bool, diff_limit: int | None = None) -> list[str]:
    diff = entry["diff"].rstrip()
    if diff_limit is not None and len(diff) > diff_limit:
        diff = diff[:diff_limit].rsplit("\n", 1)[0] + "\n… (diff cut here: the whole diff is in killmap.json)"
    reds = ", ".join(f"`{r['id']}` ({r['cause']})" for r in entry["red"]) or "none"
    body = [f"{entry['explanation']}.", "", f"**What differed:** {entry['detail']}", "", f"**Red:** {reds}"]
    if diff:
        body += ["", "<details><summary>mutant diff</summary>", "", "```diff", diff, "```", "", "</details>"]
    if fold:
        return [
            "",
            f"<details><summary><code>{entry['name']}</code>: {entry['verdict']}</summary>",
            "",
            *body,
            "",
            "</details>",
        ]
    return ["", f"### `{entry['name']}`: {entry['verdict']}", "", *body]


def _warnings(doc: Document) -> list[str]:
    warned = [entry for entry in doc["mutations"] if entry.get("warnings")]
    if not warned:
        return []
    return [
        "",
        "**Warnings** (the mutant still ran and was judged; `werror = true` makes dead-code findings broken):",
        "",
        *(f"- `{entry['name']}`: {'; '.join(entry['warnings'])}" for entry in warned),
    ]


def _reused(doc: Document) -> list[str]:
    reused = reused_count(doc)
    return [f"_{reused_line(reused, len(doc['mutations']))}._", ""] if reused else []


def to_markdown(doc: Document, limit: int = MARKDOWN_LIMIT) -> str:
    """A summary table and, per failed contract, what differed and the diff: a review comment.

    A large catalog would pass GitHub's comment limit: then the failed contracts come first
    (worst first), every detail is folded, and what does not fit is counted, with a pointer
    to the full reports (killmap.html, killmap.json) in the reports artifact.
    """
    lines = [
        f"## killmap: {held_count(doc)}/{len(doc['mutations'])} contracts held",
        "",
        *_reused(doc),
        "| mutation | verdict | red / expected | time |",
        "|---|---|---|---|",
    ]
    lines += [_row(entry) for entry in doc["mutations"]]
    lines += _warnings(doc)
    for entry in doc["mutations"]:
        if entry["verdict"] != HELD:
            lines += _failure(entry, fold=False)
    text = "\n".join(lines) + "\n"
    return text if _size(text) <= limit else _folded_markdown(doc, limit)


def _folded_markdown(doc: Document, limit: int) -> str:
    from killmap.report.annotations import failed_in_order

    failed = failed_in_order(doc)
    held = [m for m in doc["mutations"] if m["verdict"] == HELD]
    tail_room = 600  # for the closing count and pointer
    budget = limit - tail_room
    out = _folded_head(doc, failed, held)
    out, rows_shown = _failed_rows(out, failed, budget)
    out, details_shown = _failed_details(out, failed[:rows_shown], budget)
    warned = "\n".join(_warnings(doc)) + "\n" if _warnings(doc) else ""
    warnings_listed = bool(warned) and _fits(out, warned, budget)
    if warnings_listed:
        out += warned
    held_block = _held_block(held)
    held_listed = bool(held_block) and _fits(out, held_block, budget)
    if held_listed:
        out += held_block
    missing = []
    if rows_shown < len(failed):
        missing.append(f"{counted(len(failed) - rows_shown, 'more failed contract')}")
    if details_shown < rows_shown:
        missing.append(f"the details of {rows_shown - details_shown} shown above")
    if warned and not warnings_listed:
        missing.append(f"the warnings of {counted(sum(bool(m.get('warnings')) for m in doc['mutations']), 'mutation')}")
    if held and not held_listed:
        missing.append(f"the names of the {len(held)} held")
    if missing:
        out += (
            f"\n**Not shown here** (GitHub's {limit:,}-character limit): {'; '.join(missing)}. "
            "Every contract, with its red tests and diff, is in `killmap.html` and `killmap.json` "
            "in the reports artifact.\n"
        )
    return out


# The folded report is built piece by piece: each piece goes in only if the text so far
# plus the piece stays within its budget, and what is left out is counted at the end.
def _fits(out: str, piece: str, within: int) -> bool:
    return _size(out) + _size(piece) <= within


def _folded_head(doc: Document, failed: list[dict[str, Any]], held: list[dict[str, Any]]) -> str:
    counts = Counter(m["verdict"] for m in failed)
    head = [
        f"## killmap: {len(held)}/{len(doc['mutations'])} contracts held",
        "",
        *_reused(doc),
        f"**{len(failed)} failed:** " + ", ".join(f"{n} {v}" for v, n in counts.items()) + ".",
        "",
        "_A large catalog: failed contracts first, worst first, details folded. The full report is "
        "`killmap.html` (the kill matrix) and `killmap.json` in the reports artifact._",
        "",
    ]
    return "\n".join(head) + "\n"


def _failed_rows(out: str, failed: list[dict[str, Any]], budget: int) -> tuple[str, int]:
    """The table of failed contracts, worst first, and how many rows fitted."""
    # The rows take at most two thirds, so the worst failures keep room for their details.
    table = "| mutation | verdict | red / expected | time |\n|---|---|---|---|\n"
    rows_shown = 0
    if failed and _fits(out, table, budget):
        out += table
        for entry in failed:
            row = _row(entry) + "\n"
            if not _fits(out, row, budget * 2 // 3):
                break
            out += row
            rows_shown += 1
    return out, rows_shown


def _failed_details(out: str, shown: list[dict[str, Any]], budget: int) -> tuple[str, int]:
    """The folded details of the contracts whose rows are shown, while they fit."""
    details_shown = 0
    for entry in shown:
        piece = "\n".join(_failure(entry, fold=True, diff_limit=3000)) + "\n"
        if not _fits(out, piece, budget):
            break
        out += piece
        details_shown += 1
    return out, details_shown


def _held_block(held: list[dict[str, Any]]) -> str:
    if not held:
        return ""
    return (
        "\n<details><summary>"
        + f"{len(held)} held</summary>\n\n"
        + ", ".join(f"`{m['name']}`" for m in held)
        + "\n\n</details>\n"
    )
