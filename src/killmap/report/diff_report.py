"""What a change did to the contracts: two killmap reports (a base's and a head's) compared.

The comparison is a document of its own (schema `killmap-diff/1`), rendered for the terminal,
as Markdown (the top of the job summary and of the pull-request comment) and as JSON. A gate
report is compared contract by contract, by mutation name; a sweep report mutant by mutant,
by where and what it changes (file, function, operator, the changed line), not by line number,
which moves when code above it does.

A regression is a contract that held on the base and does not on the head, or a sweep mutant
the base killed that survives on the head: what a team that tolerates old failures blocks on.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from killmap.errors import GateError
from killmap.report.cells import MARKDOWN_LIMIT, Document
from killmap.verdict.judge import HELD
from killmap.wording import counted

SCHEMA = "killmap-diff/1"
GATE_SCHEMA = "killmap-report/1"
SWEEP_SCHEMA = "killmap-sweep/1"
MARKER = "<!-- killmap -->"  # finds the pull request's one comment again


def read_report(path: Path) -> Document:
    """A gate or sweep report, or one line saying why not (GateError, exit 2)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GateError(f"cannot read a killmap report: {exc}", file=str(path)) from None
    if not isinstance(doc, dict) or doc.get("schema") not in (GATE_SCHEMA, SWEEP_SCHEMA):
        raise GateError(f"not a {GATE_SCHEMA} or {SWEEP_SCHEMA} report", file=str(path), field="schema")
    entries = doc.get("mutations") if doc["schema"] == GATE_SCHEMA else (doc.get("sweep") or {}).get("mutants")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise GateError("the report lists no mutations", file=str(path), field="mutations")
    return doc


def compare(base: Document, head: Document) -> Document:
    if base["schema"] != head["schema"]:
        raise GateError(f"cannot compare a {base['schema']} report with a {head['schema']} one", field="schema")
    if base["schema"] == SWEEP_SCHEMA:
        return _compare_sweeps(base, head)
    before = {m["name"]: m for m in base["mutations"]}
    after = {m["name"]: m for m in head["mutations"]}
    changes = []
    for name in [*after, *(n for n in before if n not in after)]:
        old, new = before.get(name), after.get(name)
        change = _change(old and old["verdict"], new and new["verdict"])
        if change:
            entry: dict[str, Any] = new or old or {}
            changes.append(
                {
                    "name": name,
                    "change": change,
                    "base": old and old["verdict"],
                    "head": new and new["verdict"],
                    "detail": entry["detail"],
                    "file": entry["file"],
                    # A mutant no longer built (not-applied) has no lines: where it applied on the base.
                    "lines": (new and new["lines"]) or (old and old["lines"]) or [],
                }
            )
    return {
        "schema": SCHEMA,
        "kind": "gate",
        "base": _totals(base),
        "head": _totals(head),
        "changes": changes,
        "regressions": [c["name"] for c in changes if c["change"] == "regressed"],
        "root": head.get("root", ""),
    }


def _change(old: str | None, new: str | None) -> str:
    if old is None:
        return "added"
    if new is None:
        return "removed"
    if old == new:
        return ""
    if old == HELD:
        return "regressed"
    return "fixed" if new == HELD else "changed"


def _totals(doc: Document) -> dict[str, int]:
    if doc["schema"] == SWEEP_SCHEMA:
        mutants = doc["sweep"]["mutants"]
        return {"total": len(mutants), "survived": sum(m["status"] == "survived" for m in mutants)}
    return {"total": len(doc["mutations"]), "held": sum(m["verdict"] == HELD for m in doc["mutations"])}


def _sweep_key(mutant: dict[str, Any]) -> tuple[str, str, str, str]:
    return (mutant["file"], mutant["function"], mutant["op"], mutant.get("change", ""))


def _compare_sweeps(base: Document, head: Document) -> Document:
    """Survivors added and survivors killed, mutant by mutant; the same change made twice in
    one function is paired in order."""
    before: dict[tuple[str, str, str, str], list[str]] = {}
    for m in base["sweep"]["mutants"]:
        before.setdefault(_sweep_key(m), []).append(m["status"])
    seen: Counter[tuple[str, str, str, str]] = Counter()
    changes = []
    for m in head["sweep"]["mutants"]:
        key = _sweep_key(m)
        earlier = before.get(key, [])
        old = earlier[seen[key]] if seen[key] < len(earlier) else None
        seen[key] += 1
        change = _sweep_change(old, m["status"])
        if change:
            changes.append(
                {
                    "name": m["id"],
                    "change": change,
                    "base": old,
                    "head": m["status"],
                    "detail": f"{m['function']}: {m['op']}  {m.get('change', '')}",
                    "file": m["file"],
                    "lines": m.get("lines") or [m.get("line", 1)],
                }
            )
    return {
        "schema": SCHEMA,
        "kind": "sweep",
        "base": _totals(base),
        "head": _totals(head),
        "changes": changes,
        "regressions": [c["name"] for c in changes if c["change"] == "regressed"],
        "root": head.get("root", ""),
    }


def _sweep_change(old: str | None, new: str) -> str:
    if new == "survived" and old != "survived":
        return "regressed" if old == "killed" else "new survivor"
    if old == "survived" and new == "killed":
        return "survivor killed"
    return ""


# --- rendering ---------------------------------------------------------------------------------

_ORDER = ("regressed", "new survivor", "changed", "added", "removed", "fixed", "survivor killed")
_MARK = {"regressed": "❌", "new survivor": "❌", "fixed": "✅", "survivor killed": "✅"}


def _ordered(diff: Document) -> list[dict[str, Any]]:
    return sorted(diff["changes"], key=lambda c: _ORDER.index(c["change"]))


def headline(diff: Document) -> str:
    base, head = diff["base"], diff["head"]
    if diff["kind"] == "sweep":
        counts = f"survivors {base['survived']} -> {head['survived']} of {head['total']} mutants"
    else:
        counts = f"held {base['held']}/{base['total']} -> {head['held']}/{head['total']}"
    regressions = len(diff["regressions"])
    verdict = f"{counted(regressions, 'regression')}" if regressions else "no regression"
    return f"killmap diff: {verdict}; {counted(len(diff['changes']), 'change')}; {counts}"


def to_text(diff: Document) -> str:
    lines = [headline(diff)]
    for c in _ordered(diff):
        lines.append(f"  {c['change']:>15}  {c['name']}: {c['base'] or '-'} -> {c['head'] or '-'}  ({c['detail']})")
    return "\n".join(lines) + "\n"


def to_markdown(diff: Document, limit: int = MARKDOWN_LIMIT) -> str:
    """The changes as a table, worst first, cut (and counted) to stay within `limit` bytes."""
    out = f"### {headline(diff)}\n\n"
    if not diff["changes"]:
        return out + "_Every contract has the verdict it had on the base._\n"
    out += "| change | mutation | base | head | what |\n|---|---|---|---|---|\n"
    rows = _ordered(diff)
    for shown, c in enumerate(rows):
        row = (
            f"| {_MARK.get(c['change'], '•')} {c['change']} | `{c['name']}` | {c['base'] or '-'} | "
            f"{c['head'] or '-'} | {_cell(c['detail'])} |\n"
        )
        if len((out + row).encode("utf-8")) > limit - 200:
            return out + f"\n_{counted(len(rows) - shown, 'more change')} not shown: see the diff's JSON._\n"
        out += row
    return out


def _cell(text: str) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= 160 else text[:157] + "..."


def comment_body(diff: Document | None, report_markdown: str, limit: int = MARKDOWN_LIMIT) -> str:
    """One pull-request comment: the marker, the diff, and the full report folded under it,
    within GitHub's limit (the report was rendered to fit what the diff leaves)."""
    head = MARKER + "\n" + (to_markdown(diff, limit // 2) + "\n" if diff else "")
    fold = ("<details><summary>the full killmap report</summary>\n\n", "\n</details>\n")
    body = head + fold[0] + report_markdown + fold[1]
    if len(body.encode("utf-8")) > limit:
        raise ValueError("the report was not rendered within the room the diff leaves")
    return body


def room_for_report(diff: Document | None, limit: int = MARKDOWN_LIMIT) -> int:
    """How many bytes the folded report may take in the comment, after the diff."""
    head = MARKER + "\n" + (to_markdown(diff, limit // 2) + "\n" if diff else "")
    return limit - len(head.encode("utf-8")) - 100
