"""Reports: JSON (the contract, schema in the README), JUnit XML and Markdown.

Every report is rendered from the same `LabResult`; none is parsed back from another.
"""

from __future__ import annotations

import json
import platform
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import killmap
from killmap.judge import EXPLANATIONS, HELD, VERDICTS, Verdict
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


def write_reports(result: LabResult, root: Path, folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"json": folder / "killmap.json", "junit": folder / "killmap.junit.xml",
             "markdown": folder / "killmap.md"}
    paths["json"].write_text(json.dumps(to_json(result, root), indent=2) + "\n", encoding="utf-8")
    paths["junit"].write_text(to_junit(result), encoding="utf-8")
    paths["markdown"].write_text(to_markdown(result), encoding="utf-8")
    return paths


__all__ = ["write_reports", "to_json", "to_junit", "to_markdown", "exit_code", "HELD"]
