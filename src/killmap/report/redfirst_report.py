"""red-first's reports: one JSON document, and Markdown, JUnit and HTML rendered from it.

The same family as `killmap run`'s reports (schema name, versions, root, exit code, wall
time at the top; every other format a view of the JSON), so they cannot disagree. The
Markdown is the review comment: a verdict sentence, the table of the tests that matter,
the causes, each offending test's sentence, and the reverted diff folded.
"""

from __future__ import annotations

import html
import json
import platform
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

import killmap
from killmap.errors import GateError
from killmap.report.cells import write_whole
from killmap.verdict.redfirst import (
    ABSENCE,
    F2F,
    F2P,
    FLAKY,
    P2F,
    P2P,
    RAISED,
    SKIPPED,
    KeptNames,
    RedFirstResult,
    Side,
    classify,
)
from killmap.wording import counted

SCHEMA = "killmap-redfirst/1"
CLASSES = (F2P, P2P, F2F, P2F, SKIPPED, FLAKY)
REPORT_FILES = {
    "json": "red-first.json",
    "markdown": "red-first.md",
    "junit": "red-first.junit.xml",
    "html": "red-first.html",
}
Document = dict[str, Any]


def to_document(result: RedFirstResult, root: Path) -> Document:
    change = result.change
    tests = [
        {
            "id": r.id,
            "change": r.change,
            "why": r.why,
            "class": r.klass,
            "cause": r.reverted.cause if r.klass == F2P else None,
            "head": _side(r.head),
            "reverted": _side(r.reverted),
            "names_kept": _side(r.kept) if r.kept else None,
            "names_kept_class": classify(r.head, r.kept) if r.kept else None,
            "problem": r.problem,
        }
        for r in result.rows
    ]
    f2p = [t for t in tests if t["class"] == F2P]
    again = [t for t in tests if t["names_kept"]]
    return {
        "schema": SCHEMA,
        "killmap_version": killmap.__version__,
        "python": platform.python_version(),
        "pytest": pytest.__version__,
        "root": str(root),
        "base": change.base,
        "base_label": change.base_label,
        "head": change.head,
        "exit_code": result.exit_code,
        "wall_seconds": round(result.wall, 4),
        "reverted": [{"path": c.path, "status": c.status} for c in change.reverted],
        "kept": [{"path": c.path, "status": c.status} for c in change.kept],
        "test_files": [{"path": c.path, "status": c.status} for c in change.tests],
        "expect": list(result.options.expect),
        "selection": result.selection,
        "head_collected": result.head_collected,
        "summary": {
            **{k: sum(t["class"] == k for t in tests) for k in CLASSES},
            "fail-to-pass by cause": _count(t["cause"] for t in f2p),
        },
        "rests_on_absence": result.rests_on_absence,
        "names_kept": _names_kept(result.names_kept, again),
        "problems": result.problems,
        "tests": tests,
        "diff": change.reverted_diff(),
    }


def _names_kept(kept: KeptNames | None, again: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The second run, when the first rested on absence: which files held what, and how the
    tests red by absence came out with the names the fix adds kept."""
    if kept is None:
        return None
    return {
        "ran": kept.behaviour_reverted,
        "files": [{"path": path, "how": how, "kept": list(names)} for path, how, names in kept.files],
        "summary": {
            **{k: sum(t["names_kept_class"] == k for t in again) for k in CLASSES},
            "fail-to-pass by cause": _count(t["names_kept"]["cause"] for t in again if t["names_kept_class"] == F2P),
        },
    }


def _side(side: Side) -> dict[str, Any]:
    return {
        "outcome": side.outcome,
        "cause": side.cause,
        "exception": side.exception,
        "message": side.message,
        "raised_at": side.raised_at,
        "absent": side.absent,
        "flaky": side.flaky,
    }


def _count(values) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return dict(sorted(counts.items()))


# --- Markdown ----------------------------------------------------------------------------------


def headline(doc: Document) -> str:
    if doc["problems"]:
        n = len(doc["problems"])
        return f"❌ the contract does not hold: {n} problem{'s' if n > 1 else ''}"
    if doc.get("rests_on_absence"):
        return "⚠️ every fail-to-pass rests on the absence of what the fix adds, which proves only that it exists"
    return (
        "✅ every test the change added or modified fails with the fix reverted"
        if not doc["expect"]
        else "✅ exactly the expected tests fail with the fix reverted"
    )


def counts_sentence(doc: Document) -> str:
    s = doc["summary"]
    by = _by_cause(s["fail-to-pass by cause"])
    head_red = s[F2F] + s[P2F]
    return (
        f"**{s[F2P]} fail-to-pass**"
        + (f" ({'; '.join(by)})" if by else "")
        + f", {s[P2P]} pass-to-pass, {s[F2F]} fail-to-fail, {s[P2F]} pass-to-fail"
        + (f", {s[SKIPPED]} skipped" if s[SKIPPED] else "")
        + (f", {s[FLAKY]} flaky" if s[FLAKY] else "")
        + ("; HEAD is green." if not head_red else f"; {head_red} red at HEAD.")
    )


def _by_cause(causes: dict[str, int]) -> list[str]:
    by = []
    if causes.get("assertion"):
        by.append(f"{causes['assertion']} by an assertion, which proves the behaviour")
    if causes.get(RAISED):
        by.append(f"{causes[RAISED]} by an exception the code raises on purpose, which proves the behaviour too")
    if causes.get(ABSENCE):
        by.append(f"{causes[ABSENCE]} by the absence of what the fix adds, which proves only that it exists")
    by += [f"{n} by {cause}" for cause, n in causes.items() if cause not in ("assertion", RAISED, ABSENCE)]
    return by


def names_kept_lines(doc: Document, terminal: bool) -> list[str]:
    """The second result: the tests red by absence, with the names the fix adds kept."""
    kept = doc.get("names_kept")
    if kept is None:
        return []
    files = "; ".join(
        f"`{f['path']}` {f['how']}" + (f" (`{'`, `'.join(f['kept'])}`)" if f["kept"] else "") for f in kept["files"]
    )
    lines = ["", "### With the names the fix adds kept", ""]
    if not kept["ran"]:
        return lines + [
            "Every fail-to-pass rests on the absence of a name the fix adds. The fix only adds definitions"
            + (f" ({files})" if files else "")
            + ", so with its names kept nothing of it would be reverted: red-first cannot show that these "
            "tests fail for what the fix does."
        ]
    s = kept["summary"]
    by = _by_cause(s["fail-to-pass by cause"])
    lines += [
        "Every fail-to-pass above rests on the absence of a name the fix adds, which proves only that it "
        "exists. So the tests red by absence ran again with the fix reverted in behaviour only, its names "
        f"kept: {files or 'no file could keep them'}; every other file of the fix as at BASE.",
        "",
        f"**{s[F2P]} fail-to-pass**"
        + (f" ({'; '.join(by)})" if by else "")
        + f", {s[P2P]} pass-to-pass"
        + "".join(f", {s[k]} {k}" for k in (F2F, P2F, SKIPPED, FLAKY) if s[k])
        + (". The pass-to-pass ones fail before the fix only because a name is missing." if s[P2P] else "."),
        "",
    ]
    again = [t for t in doc["tests"] if t["names_kept"]]
    rows = [
        {
            **t,
            "class": t["names_kept_class"],
            "cause": t["names_kept"]["cause"] if t["names_kept_class"] == F2P else None,
            "reverted": t["names_kept"],
        }
        for t in again
    ]
    return lines + [
        line.replace("| with the fix reverted |", "| with the names kept |", 1)
        for line in _table(_entries(rows), terminal)
    ]


def cell(side: dict[str, Any]) -> str:
    flaky = " (flaky)" if side["flaky"] else ""
    if side["outcome"] == "passed":
        return "✅ passed" + flaky
    if side["outcome"] in ("skipped", "xfailed"):
        return f"⏭ {side['outcome']}" + flaky
    if side["cause"] == ABSENCE:
        what = f"`{side['absent']}` does not exist" if side["absent"] else "not collected"
        return f"❌ absence: {what}" + flaky
    if side["cause"] == "timeout":
        return f"❌ timeout: {side['message']}" + flaky
    where = f" at {side['raised_at']}" if side["raised_at"] else ""
    return f"❌ {side['cause']}: {side['exception'] or side['outcome']}{where}" + flaky


def _shown(test: dict[str, Any], doc: Document) -> bool:
    return test["change"] in ("added", "modified") or test["class"] != P2P or bool(test["problem"])


GROUP_AT = 3  # from three tests sharing a file and a cause, one line reads better than the rows


def _file_cell(side: dict[str, Any]) -> str:
    """The cell without the line it was raised at: tests failing alike fail on different lines."""
    raised_at = side["raised_at"].rsplit(":", 1)[0] if side["raised_at"] else None
    return cell({**side, "raised_at": raised_at})


def _group_key(test: dict[str, Any]) -> tuple[str, ...]:
    """The file, and all that the row says of the test but its name and line: one cause."""
    return (
        test["id"].split("::")[0],
        test["class"],
        test["change"],
        _file_cell(test["reverted"]),
        _file_cell(test["head"]),
    )


def _entries(tests: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The rows in order, one entry each, but GROUP_AT or more sharing a key make one entry."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for t in tests:
        groups.setdefault(_group_key(t), []).append(t)
    entries, placed = [], set()
    for t in tests:
        key = _group_key(t)
        if len(groups[key]) < GROUP_AT:
            entries.append([t])
        elif key not in placed:
            placed.add(key)
            entries.append(groups[key])
    return entries


def _group_name(entry: list[dict[str, Any]]) -> str:
    return f"{len(entry)} tests in `{entry[0]['id'].split('::')[0]}`"


def _table(entries: list[list[dict[str, Any]]], terminal: bool) -> list[str]:
    """A row per entry; in Markdown each group's tests listed in full below, folded."""
    if not entries:
        return []
    lines = ["| test | change | with the fix reverted | with the fix | class |", "|---|---|---|---|---|"]
    for entry in entries:
        t = entry[0]
        klass = f"**{t['class']}**" + (f" ({t['cause']})" if t["cause"] else "")
        name = f"`{t['id']}`" if len(entry) == 1 else _group_name(entry) + (" (listed in the report)" * terminal)
        show = cell if len(entry) == 1 else _file_cell
        lines.append(f"| {name} | {t['change']} | {show(t['reverted'])} | {show(t['head'])} | {klass} |")
    for entry in [] if terminal else [e for e in entries if len(e) > 1]:
        summary = f"{_group_name(entry)}: {entry[0]['class']}; with the fix reverted {_file_cell(entry[0]['reverted'])}"
        lines += ["", f"<details><summary>{summary}</summary>", ""]
        lines += [f"- `{t['id']}`" for t in entry] + ["", "</details>"]
    return lines


def _problem_lines(entries: list[list[dict[str, Any]]]) -> list[str]:
    """Each test's sentence; a group whose tests break the contract alike, one sentence."""
    lines = []
    for entry in entries:
        problems = [t["problem"] for t in entry if t["problem"]]
        rests = {p[len(t["id"]) :] for t in entry if (p := t["problem"]) and p.startswith(t["id"])}
        if len(entry) > 1 and len(problems) == len(entry) and len(rests) == 1:
            lines.append(f"{_group_name(entry)}: each{rests.pop()}")
        else:
            lines += problems
    return lines


def to_markdown(doc: Document, *, terminal: bool = False) -> str:
    lines = _preamble(doc)
    shown = [t for t in doc["tests"] if _shown(t, doc)]
    own = _entries([t for t in shown if t["class"] != F2F])
    environment = _entries([t for t in shown if t["class"] == F2F])
    lines += _table(own, terminal)
    lines += names_kept_lines(doc, terminal)
    row_problems = {t["problem"] for t in doc["tests"] if t["problem"]}
    general = [p for p in doc["problems"] if p not in row_problems]
    own_problems = _problem_lines(own) + general
    if own_problems:
        lines += ["", "**Why it does not hold:**", ""] + [f"- {p}" for p in own_problems]
    if environment:
        # Apart, so a reviewer sees at once whether the added tests prove the fix.
        lines += [
            "",
            "### Red with and without the fix: the environment, not the change",
            "",
            "These fail at HEAD too (HEAD is not green), so they say nothing about the fix.",
            "",
        ]
        lines += _table(environment, terminal) + [""] + [f"- {p}" for p in _problem_lines(environment)]
    return "\n".join(lines + _folded(doc, terminal)) + "\n"


def _preamble(doc: Document) -> list[str]:
    """The headline, what was reverted and kept, the counts, and what ran."""
    reverted = ", ".join(f"`{c['path']}` ({c['status']})" for c in doc["reverted"])
    head = "the working tree" if doc["head"] == "working tree" else f"HEAD `{doc['head'][:10]}`"
    lines = [
        f"## killmap red-first: {headline(doc)}",
        "",
        f"The fix reverted to BASE `{doc['base'][:10]}` ({doc['base_label']}): {reverted}; the tests "
        f"kept as at {head}."
        + (
            f" Kept at HEAD too (not code): {', '.join('`' + c['path'] + '`' for c in doc['kept'])}."
            if doc["kept"]
            else ""
        ),
        "",
        counts_sentence(doc),
        "",
        f"Ran {len(doc['tests'])} of the {doc['head_collected']} tests with the fix reverted: "
        f"{doc['selection']}."
        + (f" Expected fail-to-pass: {', '.join('`' + e + '`' for e in doc['expect'])}." if doc["expect"] else ""),
        "",
    ]
    return lines


def _folded(doc: Document, terminal: bool) -> list[str]:
    """The tests green with and without the fix, and the reverted diff: counted on the
    terminal, folded in Markdown."""
    lines: list[str] = []
    folded = [t for t in doc["tests"] if not _shown(t, doc)]
    if terminal:
        if folded:
            lines += [
                "",
                f"{counted(len(folded), 'other test')} green with and without the fix (listed in the report).",
            ]
        return lines
    if folded:
        lines += [
            "",
            f"<details><summary>{counted(len(folded), 'other test')} green with and without the fix</summary>",
            "",
        ]
        lines += [f"- `{t['id']}` ({t['why']})" for t in folded] + ["", "</details>"]
    if doc["diff"]:
        lines += [
            "",
            "<details><summary>the fix, reverted (HEAD → the sandbox the tests ran in)</summary>",
            "",
            "```diff",
            doc["diff"].rstrip(),
            "```",
            "",
            "</details>",
        ]
    return lines


# --- JUnit and HTML ----------------------------------------------------------------------------


def to_junit(doc: Document) -> str:
    """One test case per test run with the fix reverted; each one that breaks the contract
    fails, with its sentence. A problem of the whole change is one more failing case."""
    cases = doc["tests"]
    general = [p for p in doc["problems"] if not any(p == t["problem"] for t in cases)]
    failed = sum(1 for t in cases if t["problem"]) + (1 if general else 0)
    suite = ET.Element(
        "testsuite",
        name="killmap red-first",
        tests=str(len(cases) + (1 if general else 0)),
        failures=str(failed),
        errors="0",
        time=f"{doc['wall_seconds']:.3f}",
    )
    for t in cases:
        case = ET.SubElement(suite, "testcase", name=t["id"], classname=f"killmap.red-first.{t['class']}")
        text = f"with the fix reverted: {cell(t['reverted'])}; with the fix: {cell(t['head'])}"
        if t["problem"]:
            ET.SubElement(case, "failure", type=t["class"], message=t["problem"][:1000]).text = text
        else:
            ET.SubElement(case, "system-out").text = text
    if general:
        case = ET.SubElement(suite, "testcase", name="the change", classname="killmap.red-first")
        ET.SubElement(case, "failure", type="contract", message=general[0][:1000]).text = "\n".join(general)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)


def to_html(doc: Document) -> str:
    esc = html.escape
    rows = "".join(
        f"<tr class='{esc(t['class'])}{' problem' if t['problem'] else ''}'><td><code>{esc(t['id'])}</code>"
        f"</td><td>{esc(t['change'])}</td><td>{esc(cell(t['reverted']))}</td><td>{esc(cell(t['head']))}"
        f"</td><td>{esc(t['class'])}{' (' + esc(t['cause']) + ')' if t['cause'] else ''}</td>"
        + (f"<td>{esc(cell(t['names_kept']) + ' → ' + t['names_kept_class'])}</td>" if t["names_kept"] else "")
        + "</tr>"
        for t in doc["tests"]
    )
    kept = [line.replace("**", "") for line in names_kept_lines(doc, True) if line and line[0] not in "#|"]
    problems = "".join(f"<li>{esc(p)}</li>" for p in doc["problems"])
    return (
        "<!doctype html><meta charset='utf-8'><title>killmap red-first</title><style>"
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.3em .6em}.problem td{background:#fee}"
        "pre{background:#f6f6f6;padding:1em}</style>"
        f"<h1>killmap red-first: {esc(headline(doc))}</h1>"
        f"<p>BASE <code>{esc(doc['base'][:10])}</code> ({esc(doc['base_label'])}), fix reverted in "
        f"{esc(', '.join(c['path'] for c in doc['reverted']))}; tests as at {esc(doc['head'][:10])}.</p>"
        f"<p>{esc(counts_sentence(doc).replace('**', ''))}</p>"
        + (f"<h2>Why it does not hold</h2><ul>{problems}</ul>" if problems else "")
        + "".join(f"<p>{esc(line)}</p>" for line in kept)
        + "<table><tr><th>test</th><th>change</th><th>with the fix reverted</th><th>with the fix</th>"
        + "<th>class</th>"
        + ("<th>with the names the fix adds kept</th>" if any(t["names_kept"] for t in doc["tests"]) else "")
        + f"</tr>{rows}</table><h2>The fix, reverted</h2><pre>{esc(doc['diff'])}</pre>"
    )


def write_reports(doc: Document, folder: Path) -> dict[str, Path]:
    paths = {kind: folder / name for kind, name in REPORT_FILES.items()}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_whole(
            {
                paths["json"]: json.dumps(doc, indent=2, ensure_ascii=False) + "\n",
                paths["markdown"]: to_markdown(doc),
                paths["junit"]: to_junit(doc),
                paths["html"]: to_html(doc),
            }
        )
    except OSError as exc:
        raise GateError(f"cannot write the reports: {exc}", field="--report-dir") from None
    return paths
