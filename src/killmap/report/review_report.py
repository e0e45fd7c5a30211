"""`killmap review`'s report: one document built from red-first's and the sweep's, and the
Markdown a reviewer reads first.

The order is the reviewer's: the pull request's tests proven (red-first), then the survivors
and unreached mutants on the lines the change touched, one per line or gap (the sweep's
`reported`), then the gate's contract changes against the base's report where one is kept,
then a single folded line counting what lies outside the diff. Nothing outside the diff is
listed among the findings: an older gap in an untouched line is not this change's to fix.

Built from the two documents only (never from terminal text); its exit code is red-first's,
or 1 for a reported survivor on the change when the command was asked to fail on them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import killmap
from killmap.errors import GateError
from killmap.report import redfirst_report
from killmap.report.cells import MARKDOWN_LIMIT, schema_of, write_whole
from killmap.report.sweep_report import arid_keys, change_counts
from killmap.wording import counted

SCHEMA = "killmap-review/1"
FILES = {"json": "review.json", "markdown": "review.md"}
FINDINGS = ("survived", "unreached")  # what the sweep leaves that a test should catch
Document = dict[str, Any]


def to_document(
    red_first: Document, sweep: Document, contract_changes: Document | None, *, fail_on_survivors: bool
) -> Document:
    part = sweep["sweep"]
    mutants = part["mutants"]
    counts = change_counts(mutants)
    on_change = counts["on"]
    findings = [m for m in on_change if m["status"] in FINDINGS]
    reported = [_finding(m) for m in findings if m.get("reported")]
    outside = [m for m in mutants if not m.get("on_change") and m["status"] in FINDINGS]
    exit_code = red_first["exit_code"]
    if fail_on_survivors and reported and exit_code == 0:
        exit_code = 1
    change = part.get("change") or {}
    return {
        "schema": SCHEMA,
        "killmap_version": killmap.__version__,
        "base": red_first["base"],
        "head": red_first["head"],
        "exit_code": exit_code,
        "red_first": red_first,
        "changed_lines": {
            "mutants": len(on_change),
            "judged": counts["judged"],
            "killed": counts["killed"],
            "all_killed": counts["all_killed"],
            "reported": reported,
            "alike": sum(
                1 for m in on_change if m["status"] in FINDINGS and not m.get("reported") and not m.get("mark")
            ),
            "marked": sum(1 for m in findings if m.get("mark")),
            "not_swept": list(change.get("not_swept", [])),
            "arid": dict((part.get("generated") or {}).get("arid", {})),
        },
        "contract_changes": contract_changes,
        "outside_the_diff": {
            "not_run": (part.get("generated") or {}).get("outside_not_run", 0),
            "mutants": len(mutants) - len(on_change),
            "findings": len(outside),
            "functions": sorted({f"{m['file']}::{m['function']}" for m in outside}),
        },
    }


def _finding(mutant: Document) -> Document:
    # A name the catalog accepts (lowercase words joined by hyphens): the function and the
    # operator, for the reviewer to rename.
    words = f"{mutant['function']}-{mutant['op'].rpartition(':')[2]}"
    name = re.sub(r"[^a-z0-9]+", "-", words.lower()).strip("-")
    return {
        "id": mutant["id"],
        "file": mutant["file"],
        "line": mutant["line"],
        "function": mutant["function"],
        "op": mutant["op"],
        "status": mutant["status"],
        "change": mutant["change"],
        "keep": f"killmap sweep --promote {mutant['id']} --name {name}",
    }


def headline(doc: Document) -> str:
    lines = doc["changed_lines"]
    proven = redfirst_report.headline(doc["red_first"])
    if not lines["mutants"]:
        return f"{proven}; no mutant on the changed lines"
    if lines["all_killed"]:
        return f"{proven}; all {lines['killed']} mutants on the changed lines killed"
    if not lines["reported"]:
        return f"{proven}; no finding on the changed lines"
    return f"{proven}; {counted(len(lines['reported']), 'finding')} on the changed lines"


def to_markdown(doc: Document, *, terminal: bool = False) -> str:
    lines = [f"# killmap review: {headline(doc)}", ""]
    lines += _demoted(redfirst_report.to_markdown(doc["red_first"], terminal=terminal))
    lines += ["", "## The changed lines, mutated", ""] + _changed_lines(doc["changed_lines"])
    if doc["contract_changes"] is not None:
        from killmap.report import diff_report

        lines += ["", "## The gate's contracts against the base", ""]
        lines += _demoted(diff_report.to_markdown(doc["contract_changes"]))
    lines += ["", _outside_line(doc["outside_the_diff"], terminal)]
    return "\n".join(lines).rstrip() + "\n"


def _demoted(markdown: str) -> list[str]:
    """A report's own headings one level down, under the review's."""
    return [f"#{line}" if line.startswith("#") else line for line in markdown.rstrip().splitlines()]


def _changed_lines(part: Document) -> list[str]:
    lines: list[str] = []
    if not part["mutants"]:
        lines.append("No mutant sits on the changed lines.")
    elif part["all_killed"]:
        lines.append(f"All {part['killed']} mutants on the changed lines were killed.")
    elif not part["reported"]:
        lines.append(
            f"{part['killed']} of the {part['judged']} mutants on the changed lines were killed; none to report."
        )
    else:
        lines += [
            f"{counted(len(part['reported']), 'finding')} on the changed lines ({part['killed']} of the "
            f"{part['judged']} mutants there were killed; one finding per line or gap):",
            "",
            "| where | mutant | status | keep it, once a test kills it |",
            "|---|---|---|---|",
        ]
        for f in part["reported"]:
            change = f["change"].replace("|", "\\|")
            lines.append(f"| `{f['file']}:{f['line']}` | `{change}` ({f['op']}) | {f['status']} | `{f['keep']}` |")
    quieter = [
        f"{part['alike']} more on the same lines or gaps" if part["alike"] else "",
        f"{part['marked']} marked equivalent or not useful" if part["marked"] else "",
    ]
    if any(quieter):
        lines += ["", "Not listed: " + "; ".join(q for q in quieter if q) + " (in the sweep's reports)."]
    if part["not_swept"]:
        lines += ["", "Changed, not swept (no mutant the gate can judge meets these lines):", ""]
        lines += [f"- {_not_swept(item)}" for item in part["not_swept"]]
    if part["arid"]:
        counts = ", ".join(f"{rule} {n}" for rule, n in sorted(part["arid"].items()))
        lines += ["", f"Arid mutants not made: {counts} (`{arid_keys(part['arid'])}`)."]
    return lines


def _not_swept(item: Document) -> str:
    first, last = item["lines"]
    where = f"{first}" if first == last else f"{first}-{last}"
    return f"`{item['file']}:{where}` {item['why']}: `{item['statement']}`"


def _outside_line(outside: Document, terminal: bool) -> str:
    if outside["not_run"]:
        return (
            f"{outside['not_run']} mutants outside the diff, in the definitions the change touched, "
            "were not run (`--outside-the-diff` runs them)."
        )
    text = (
        f"{counted(outside['findings'], 'older survivor')} outside the diff, in the functions the change touched "
        f"({outside['mutants']} mutants there)"
    )
    if terminal or not outside["functions"]:
        return text + "."
    named = "".join(f"\n- `{f}`" for f in outside["functions"])
    return f"<details><summary>{text}</summary>\n{named}\n\n</details>"


def write(doc: Document, folder: Path) -> dict[str, Path]:
    paths = {kind: folder / name for kind, name in FILES.items()}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_whole(
            {paths["json"]: json.dumps(doc, indent=2, ensure_ascii=False) + "\n", paths["markdown"]: to_markdown(doc)}
        )
    except OSError as exc:
        raise GateError(f"cannot write the reports: {exc}", field="--report-dir") from None
    return paths


def is_review(path: Path) -> bool:
    return schema_of(path) == SCHEMA


def read(path: Path) -> Document:
    return json.loads(path.read_text(encoding="utf-8"))


def comment_body(doc: Document, limit: int = MARKDOWN_LIMIT) -> str:
    """The pull request's one comment: the marker and the review, cut at a line within
    GitHub's limit, the reports artifact named for the rest."""
    from killmap.report.diff_report import MARKER

    text = MARKER + "\n" + to_markdown(doc)
    if len(text.encode("utf-8")) <= limit:
        return text
    cut = "\n_The comment is full: the rest is in the reports artifact (review.md, review.json)._\n"
    kept = text.encode("utf-8")[: limit - len(cut.encode("utf-8"))].decode("utf-8", "ignore")
    return kept[: kept.rfind("\n") + 1] + cut


def workflow_commands(doc: Document, workspace: str | None = None) -> list[str]:
    """One warning annotation per reported finding on the change, at its line."""
    from killmap.report.annotations import MAX_ANNOTATIONS, escape_data, escape_property, workspace_path

    commands = []
    for f in doc["changed_lines"]["reported"][:MAX_ANNOTATIONS]:
        path = workspace_path(doc["red_first"]["root"], f["file"], workspace)
        title = escape_property(f"killmap review: {f['status']} mutant")
        message = escape_data(f"{f['change']} ({f['op']}) {f['status']}: no test fails. Keep it: {f['keep']}")
        commands.append(f"::warning file={escape_property(path)},line={f['line']},title={title}::{message}")
    return commands
