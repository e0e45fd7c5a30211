"""Reports: JSON (the contract, schema in the README), JUnit XML and Markdown.

Every report is rendered from the same `LabResult`; none is parsed back from another.
"""

from __future__ import annotations

import html
import json
import platform
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import killmap
from killmap.judge import EXPLANATIONS, VERDICTS, Verdict
from killmap.lab import LabResult

SCHEMA = "killmap-report/1"


def exit_code(result: LabResult) -> int:
    return 0 if result.all_held else 1


def to_json(result: LabResult, root: Path) -> dict[str, Any]:
    counts = Counter(v.verdict for v in result.verdicts)
    mutations = []
    for verdict in result.verdicts:
        mutant = result.mutants.get(verdict.name)
        mutation = mutant.mutation if mutant else None
        mutations.append({
            "name": verdict.name,
            "catalog": mutation.catalog if mutation else None,
            "op": mutation.op if mutation else None,
            "target": str(mutation.target) if mutation else None,
            "note": mutation.note if mutation else "",
            "verdict": verdict.verdict,
            "explanation": EXPLANATIONS[verdict.verdict],
            "detail": verdict.detail,
            "expected": list(verdict.expected),
            "may_kill": list(mutation.may_kill) if mutation else [],
            "invariant": mutation.invariant if mutation else False,
            "control": mutation.control if mutation else None,
            "require": mutation.require if mutation else None,
            "red": [dict(r.__dict__) for r in verdict.red],
            "missing": list(verdict.missing),
            "unexpected": list(verdict.unexpected),
            "reached_by": list(verdict.reached_by),
            "selected_tests": len(verdict.selected),
            "selection": verdict.selection,
            "duration_seconds": round(verdict.duration, 4),
            "timeout_seconds": verdict.timeout,
            "cached": verdict.cached,
            "sites": mutant.sites if mutant else None,
            "target_sha256": mutant.target_sha256 if mutant else None,
            "diff": mutant.diff if mutant else "",
        })
    return {
        "schema": SCHEMA,
        "killmap_version": killmap.__version__,
        "python": platform.python_version(),
        "pytest": pytest.__version__,
        "root": str(root),
        "jobs": result.jobs,
        "wall_seconds": round(result.wall, 4),
        "exit_code": exit_code(result),
        "summary": {"total": len(result.verdicts), **{k: counts.get(k, 0) for k in VERDICTS}},
        "baselines": [{"tests": list(b.settings.tests), "collected": len(b.collected), "runs": b.runs,
                       "wall_seconds": round(b.wall, 4)} for b in result.baselines],
        "mutations": mutations,
    }


def to_junit(result: LabResult) -> str:
    """One testcase per mutation; every verdict but held is a failure, so CI shows it red."""
    suite = ET.Element("testsuite", name="killmap", tests=str(len(result.verdicts)),
                       failures=str(sum(not v.held for v in result.verdicts)), errors="0",
                       time=f"{result.wall:.3f}")
    for verdict in result.verdicts:
        mutant = result.mutants.get(verdict.name)
        case = ET.SubElement(suite, "testcase", name=verdict.name,
                             classname=f"killmap.{mutant.mutation.catalog if mutant else 'catalog'}",
                             time=f"{verdict.duration:.3f}")
        if not verdict.held:
            failure = ET.SubElement(case, "failure", type=verdict.verdict,
                                    message=f"{verdict.verdict}: {verdict.detail}"[:1000])
            failure.text = _details(verdict, mutant.diff if mutant else "")
        else:
            out = ET.SubElement(case, "system-out")
            out.text = verdict.detail
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)


def _details(verdict: Verdict, diff: str) -> str:
    lines = [f"verdict: {verdict.verdict} - {EXPLANATIONS[verdict.verdict]}", f"detail: {verdict.detail}"]
    if verdict.expected:
        lines.append("expected red: " + ", ".join(verdict.expected))
    for red in verdict.red:
        lines.append(f"red: {red.id} [{red.cause}] {red.exception or ''} at {red.raised_at or '?'}")
    if diff:
        lines += ["", diff]
    return "\n".join(lines)


def to_markdown(result: LabResult) -> str:
    held = sum(v.held for v in result.verdicts)
    lines = [f"## killmap: {held}/{len(result.verdicts)} contracts held", "",
             "| mutation | verdict | red / expected | time |", "|---|---|---|---|"]
    for v in result.verdicts:
        mark = "✅" if v.held else "❌"
        lines.append(f"| `{v.name}` | {mark} {v.verdict} | {_red_vs_expected(v)} | {v.duration:.2f}s"
                     f"{' (cached)' if v.cached else ''} |")
    failing = [v for v in result.verdicts if not v.held]
    for v in failing:
        mutant = result.mutants.get(v.name)
        lines += ["", f"### `{v.name}`: {v.verdict}", "", f"{EXPLANATIONS[v.verdict]}.", "", f"**What differed:** {v.detail}"]
        if mutant and mutant.diff:
            lines += ["", "<details><summary>mutant diff</summary>", "", "```diff", mutant.diff.rstrip(), "```",
                      "", "</details>"]
    return "\n".join(lines) + "\n"


def _red_vs_expected(verdict: Verdict) -> str:
    if verdict.verdict in ("not-applied", "stale") or (not verdict.red and not verdict.selected and verdict.verdict == "broken"):
        return "not run"
    return f"{len(verdict.red)} / {len(verdict.expected)}"


# Stryker's mutation-testing-report-schema has no contract verdicts; each maps to the status
# whose meaning is closest, and the exact verdict rides along in an extra field.
_STRYKER_STATUS = {
    "held": "Killed", "vacuous": "Survived", "overreach": "Killed", "visible": "Killed",
    "wrong-cause": "Killed", "unevidenced": "NoCoverage", "broken": "CompileError",
    "timeout": "Timeout", "not-applied": "RuntimeError", "stale": "RuntimeError",
    "flaky": "RuntimeError", "inconclusive": "RuntimeError",
}


def to_stryker(result: LabResult, root: Path) -> dict[str, Any]:
    """The mutation-testing-report-schema (v2), so mutation-testing-elements can render it."""
    files: dict[str, Any] = {}
    tests: dict[str, set[str]] = {}
    for verdict in result.verdicts:
        mutant = result.mutants.get(verdict.name)
        if mutant is None:
            continue
        entry = files.setdefault(mutant.file, {"language": "python", "source": mutant.original,
                                               "mutants": []})
        lines = mutant.changed_lines or (1,)
        source_lines = mutant.original.splitlines() or [""]
        last = min(max(lines), len(source_lines))
        status = _STRYKER_STATUS[verdict.verdict]
        if mutant.mutation.invariant and verdict.verdict in ("held", "unevidenced"):
            status = "Ignored"  # an invariance is not a survivor; say why instead
        killed_by = [r.id for r in verdict.red]
        for test_id in killed_by + list(verdict.reached_by):
            tests.setdefault(test_id.split("::")[0], set()).add(test_id)
        entry["mutants"].append({
            "id": verdict.name,
            "mutatorName": mutant.mutation.op,
            "description": mutant.mutation.note or verdict.name,
            "replacement": _replacement(mutant),
            "location": {"start": {"line": min(lines), "column": 1},
                         "end": {"line": last, "column": len(source_lines[last - 1]) + 1}},
            "status": status,
            "statusReason": f"{verdict.verdict}: {verdict.detail}",
            "killedBy": killed_by,
            "coveredBy": list(verdict.reached_by),
            "testsCompleted": len(verdict.selected),
            "duration": int(verdict.duration * 1000),
            "killmapVerdict": verdict.verdict,
            "killmapExpected": list(verdict.expected),
        })
    return {
        "schemaVersion": "2",
        "thresholds": {"high": 100, "low": 100},
        "projectRoot": str(root),
        "files": files,
        "testFiles": {f: {"tests": [{"id": t, "name": t.split("::", 1)[-1]} for t in sorted(ids)]}
                      for f, ids in sorted(tests.items())},
        "framework": {"name": "killmap", "version": killmap.__version__},
    }


def _replacement(mutant) -> str:
    if not mutant.applied:
        return ""
    new = (mutant.mutated or "").splitlines()
    return "\n".join(new[i - 1] for i in mutant.mutant_changed_lines if 0 < i <= len(new))


def to_html(result: LabResult) -> str:
    """One self-contained page: the table, and for each failed contract what differed."""
    esc = html.escape
    rows = "".join(
        f"<tr class='{esc(v.verdict)}'><td><a href='#{esc(v.name)}'>{esc(v.name)}</a></td>"
        f"<td>{esc(v.verdict)}</td><td>{_red_vs_expected(v)}</td><td>{v.duration:.2f}s</td></tr>"
        for v in result.verdicts)
    sections = []
    for v in result.verdicts:
        mutant = result.mutants.get(v.name)
        reds = "".join(f"<li><code>{esc(r.id)}</code> {esc(r.cause)} {esc(r.exception or '')} "
                       f"at {esc(r.raised_at or '?')}</li>" for r in v.red)
        sections.append(
            f"<section id='{esc(v.name)}'><h2>{esc(v.name)}: <span class='{esc(v.verdict)}'>"
            f"{esc(v.verdict)}</span></h2><p>{esc(EXPLANATIONS[v.verdict])}.</p>"
            f"<p><b>Detail:</b> {esc(v.detail)}</p>"
            f"<p><b>Expected red:</b> {esc(', '.join(v.expected) or 'nothing (invariant)')}</p>"
            f"<ul>{reds}</ul><pre>{esc(mutant.diff if mutant else '')}</pre></section>")
    held = sum(v.held for v in result.verdicts)
    return ("<!doctype html><meta charset='utf-8'><title>killmap report</title><style>"
            "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:.3em .6em}.held{color:#070}"
            "tr:not(.held) td:nth-child(2),span:not(.held){color:#b00}pre{background:#f6f6f6;padding:1em}"
            f"</style><h1>killmap: {held}/{len(result.verdicts)} contracts held</h1>"
            "<table><tr><th>mutation</th><th>verdict</th><th>red / expected</th><th>time</th></tr>"
            f"{rows}</table>{''.join(sections)}")


def write_reports(result: LabResult, root: Path, folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"json": folder / "killmap.json", "junit": folder / "killmap.junit.xml",
             "markdown": folder / "killmap.md", "stryker": folder / "mutation-report.json",
             "html": folder / "killmap.html"}
    paths["json"].write_text(json.dumps(to_json(result, root), indent=2) + "\n", encoding="utf-8")
    paths["junit"].write_text(to_junit(result), encoding="utf-8")
    paths["markdown"].write_text(to_markdown(result), encoding="utf-8")
    paths["stryker"].write_text(json.dumps(to_stryker(result, root), indent=1) + "\n", encoding="utf-8")
    paths["html"].write_text(to_html(result), encoding="utf-8")
    return paths


