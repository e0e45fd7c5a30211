"""Reports: one JSON document (schema in the README), and every other format rendered from it.

JUnit XML, Markdown, HTML and the Stryker schema are all views of the same document, so
they cannot disagree, and `killmap merge` can join shard reports and render them again.
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
from killmap.errors import GateError
from killmap.judge import EXPLANATIONS, HELD, VERDICTS
from killmap.lab import LabResult

SCHEMA = "killmap-report/1"
Document = dict[str, Any]


def to_json(result: LabResult, root: Path) -> Document:
    mutations = []
    for verdict in result.verdicts:
        mutant = result.mutants[verdict.name]
        mutation = mutant.mutation
        mutations.append({
            "name": verdict.name,
            "catalog": mutation.catalog,
            "op": mutation.op,
            "target": str(mutation.target),
            "file": mutant.file,
            "lines": list(mutant.changed_lines),
            "replacement": _replacement(mutant),
            "note": mutation.note,
            "verdict": verdict.verdict,
            "explanation": EXPLANATIONS[verdict.verdict],
            "detail": verdict.detail,
            "expected": list(verdict.expected),
            "may_kill": list(mutation.may_kill),
            "invariant": mutation.invariant,
            "control": mutation.control,
            "require": mutation.require,
            "red": [dict(r.__dict__) for r in verdict.red],
            "missing": list(verdict.missing),
            "unexpected": list(verdict.unexpected),
            "reached_by": list(verdict.reached_by),
            "selected_tests": len(verdict.selected),
            "selected": list(verdict.selected),
            "selection": verdict.selection,
            "duration_seconds": round(verdict.duration, 4),
            **{k: verdict.extras[k] for k in ("run_seconds", "confirm_seconds", "selected_baseline_seconds",
                                               "broken_cause") if k in verdict.extras},
            "timeout_seconds": verdict.timeout,
            "cached": verdict.cached,
            "sites": mutant.sites,
            "target_sha256": mutant.target_sha256,
            "diff": mutant.diff,
        })
    return _document(mutations, root=str(root), jobs=result.jobs, wall=result.wall,
                     baselines=[{"tests": list(b.settings.tests), "collected": len(b.collected),
                                 "runs": b.runs, "wall_seconds": round(b.wall, 4),
                                 "ignored": list(b.ignored)}
                                for b in result.baselines])


def _document(mutations: list[dict[str, Any]], *, root: str, jobs: int, wall: float,
              baselines: list[dict[str, Any]], shard: str | None = None) -> Document:
    counts = Counter(m["verdict"] for m in mutations)
    return {
        "schema": SCHEMA,
        "killmap_version": killmap.__version__,
        "python": platform.python_version(),
        "pytest": pytest.__version__,
        "root": root,
        "shard": shard,
        "jobs": jobs,
        "wall_seconds": round(wall, 4),
        "exit_code": exit_code(mutations),
        "summary": {"total": len(mutations), **{k: counts.get(k, 0) for k in VERDICTS}},
        "baselines": baselines,
        "mutations": mutations,
    }


def exit_code(mutations: list[dict[str, Any]]) -> int:
    return 0 if all(m["verdict"] == HELD for m in mutations) else 1


def _replacement(mutant) -> str:
    if not mutant.applied:
        return ""
    new = (mutant.mutated or "").split("\n")
    return "\n".join(new[i - 1] for i in mutant.mutant_changed_lines if 0 < i <= len(new))


def _held(doc: Document) -> int:
    return sum(m["verdict"] == HELD for m in doc["mutations"])


def _red_vs_expected(entry: dict[str, Any]) -> str:
    if not entry["selected_tests"] and not entry["red"]:
        return "not run"
    return f"{len(entry['red'])} / {len(entry['expected'])}"


def _details(entry: dict[str, Any]) -> str:
    lines = [f"verdict: {entry['verdict']} - {entry['explanation']}", f"detail: {entry['detail']}"]
    if entry["expected"]:
        lines.append("expected red: " + ", ".join(entry["expected"]))
    for red in entry["red"]:
        lines.append(f"red: {red['id']} [{red['cause']}] {red['exception'] or ''} at {red['raised_at'] or '?'}")
    if entry["diff"]:
        lines += ["", entry["diff"]]
    return "\n".join(lines)


def to_junit(doc: Document) -> str:
    """One testcase per mutation; every verdict but held is a failure, so CI shows it red."""
    mutations = doc["mutations"]
    suite = ET.Element("testsuite", name="killmap", tests=str(len(mutations)),
                       failures=str(len(mutations) - _held(doc)), errors="0",
                       time=f"{doc['wall_seconds']:.3f}")
    for entry in mutations:
        case = ET.SubElement(suite, "testcase", name=entry["name"],
                             classname=f"killmap.{entry['catalog']}",
                             time=f"{entry['duration_seconds']:.3f}")
        if entry["verdict"] != HELD:
            failure = ET.SubElement(case, "failure", type=entry["verdict"],
                                    message=f"{entry['verdict']}: {entry['detail']}"[:1000])
            failure.text = _details(entry)
        else:
            ET.SubElement(case, "system-out").text = entry["detail"]
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)


def to_markdown(doc: Document) -> str:
    lines = [f"## killmap: {_held(doc)}/{len(doc['mutations'])} contracts held", "",
             "| mutation | verdict | red / expected | time |", "|---|---|---|---|"]
    for entry in doc["mutations"]:
        mark = "✅" if entry["verdict"] == HELD else "❌"
        lines.append(f"| `{entry['name']}` | {mark} {entry['verdict']} | {_red_vs_expected(entry)} | "
                     f"{entry['duration_seconds']:.2f}s{' (cached)' if entry['cached'] else ''} |")
    for entry in doc["mutations"]:
        if entry["verdict"] == HELD:
            continue
        lines += ["", f"### `{entry['name']}`: {entry['verdict']}", "", f"{entry['explanation']}.", "",
                  f"**What differed:** {entry['detail']}"]
        if entry["diff"]:
            lines += ["", "<details><summary>mutant diff</summary>", "", "```diff",
                      entry["diff"].rstrip(), "```", "", "</details>"]
    return "\n".join(lines) + "\n"


def to_html(doc: Document) -> str:
    """One self-contained page: the table, and for each mutation what happened."""
    esc = html.escape
    rows = "".join(
        f"<tr class='{esc(m['verdict'])}'><td><a href='#{esc(m['name'])}'>{esc(m['name'])}</a></td>"
        f"<td>{esc(m['verdict'])}</td><td>{_red_vs_expected(m)}</td><td>{m['duration_seconds']:.2f}s</td></tr>"
        for m in doc["mutations"])
    sections = []
    for m in doc["mutations"]:
        reds = "".join(f"<li><code>{esc(r['id'])}</code> {esc(r['cause'])} {esc(r['exception'] or '')} "
                       f"at {esc(r['raised_at'] or '?')}</li>" for r in m["red"])
        sections.append(
            f"<section id='{esc(m['name'])}'><h2>{esc(m['name'])}: <span class='{esc(m['verdict'])}'>"
            f"{esc(m['verdict'])}</span></h2><p>{esc(m['explanation'])}.</p>"
            f"<p><b>Detail:</b> {esc(m['detail'])}</p>"
            f"<p><b>Expected red:</b> {esc(', '.join(m['expected']) or 'nothing (invariant)')}</p>"
            f"<ul>{reds}</ul><pre>{esc(m['diff'])}</pre></section>")
    return ("<!doctype html><meta charset='utf-8'><title>killmap report</title><style>"
            "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:.3em .6em}.held{color:#070}"
            "tr:not(.held) td:nth-child(2),span:not(.held){color:#b00}pre{background:#f6f6f6;padding:1em}"
            f"</style><h1>killmap: {_held(doc)}/{len(doc['mutations'])} contracts held</h1>"
            "<table><tr><th>mutation</th><th>verdict</th><th>red / expected</th><th>time</th></tr>"
            f"{rows}</table>{''.join(sections)}")


# Stryker's mutation-testing-report-schema has no contract verdicts; each maps to the status
# whose meaning is closest, and the exact verdict rides along in an extra field.
_STRYKER_STATUS = {
    "held": "Killed", "vacuous": "Survived", "overreach": "Killed", "visible": "Killed",
    "wrong-cause": "Killed", "unevidenced": "NoCoverage", "broken": "CompileError",
    "timeout": "Timeout", "not-applied": "RuntimeError", "stale": "RuntimeError",
    "flaky": "RuntimeError", "inconclusive": "RuntimeError",
}


def to_stryker(doc: Document) -> Document:
    """The mutation-testing-report-schema (v2), so mutation-testing-elements can render it."""
    root = Path(doc["root"])
    files: dict[str, Any] = {}
    tests: dict[str, set[str]] = {}
    for m in doc["mutations"]:
        if m["file"] not in files:
            path = root / m["file"]
            source = path.read_text(encoding="utf-8") if path.is_file() else ""
            files[m["file"]] = {"language": "python", "source": source, "mutants": []}
        source_lines = files[m["file"]]["source"].split("\n") or [""]
        # Clamped to the source at hand: a report merged where its root does not exist has none.
        first = min(max(min(m["lines"] or [1]), 1), len(source_lines))
        last = min(max(m["lines"] or [1]), len(source_lines))
        status = _STRYKER_STATUS[m["verdict"]]
        if m["invariant"] and m["verdict"] in ("held", "unevidenced"):
            status = "Ignored"  # an invariance is not a survivor; statusReason says why
        killed_by = [r["id"] for r in m["red"]]
        for test_id in killed_by + m["reached_by"]:
            tests.setdefault(test_id.split("::")[0], set()).add(test_id)
        files[m["file"]]["mutants"].append({
            "id": m["name"], "mutatorName": m["op"], "description": m["note"] or m["name"],
            "replacement": m["replacement"],
            "location": {"start": {"line": first, "column": 1},
                         "end": {"line": max(last, first), "column": len(source_lines[max(last, first) - 1]) + 1}},
            "status": status, "statusReason": f"{m['verdict']}: {m['detail']}",
            "killedBy": killed_by, "coveredBy": m["reached_by"], "testsCompleted": m["selected_tests"],
            "duration": int(m["duration_seconds"] * 1000),
            "killmapVerdict": m["verdict"], "killmapExpected": m["expected"],
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


def write_reports(doc: Document, folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"json": folder / "killmap.json", "junit": folder / "killmap.junit.xml",
             "markdown": folder / "killmap.md", "html": folder / "killmap.html",
             "stryker": folder / "mutation-report.json"}
    paths["json"].write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    paths["junit"].write_text(to_junit(doc), encoding="utf-8")
    paths["markdown"].write_text(to_markdown(doc), encoding="utf-8")
    paths["html"].write_text(to_html(doc), encoding="utf-8")
    paths["stryker"].write_text(json.dumps(to_stryker(doc), indent=1) + "\n", encoding="utf-8")
    return paths


def merge(paths: list[Path], expected_names: list[str] | None = None) -> Document:
    """Join shard reports into one, in catalog order; a lost or doubled mutation is an error."""
    docs = []
    for path in paths:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise GateError(f"cannot read a killmap report: {exc}", file=str(path)) from None
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
            raise GateError(f"not a {SCHEMA} report", file=str(path), field="schema")
        docs.append((path, doc))
    by_name: dict[str, dict[str, Any]] = {}
    for path, doc in docs:
        for entry in doc["mutations"]:
            if entry["name"] in by_name:
                raise GateError("reported by two shards", file=str(path), mutation=entry["name"])
            by_name[entry["name"]] = entry
    order = expected_names or [m["name"] for _, doc in docs for m in doc["mutations"]]
    missing = [name for name in order if name not in by_name]
    if missing:
        raise GateError(f"no shard reported {', '.join(missing)}: a shard is missing or failed",
                        field="shards")
    extra = [name for name in by_name if name not in order]
    if extra:
        raise GateError(f"shards report mutations the catalog does not have: {', '.join(extra)}",
                        field="shards")
    return _document([by_name[name] for name in order], root=docs[0][1]["root"],
                     jobs=max(doc["jobs"] for _, doc in docs),
                     wall=max(doc["wall_seconds"] for _, doc in docs),
                     baselines=[b for _, doc in docs for b in doc["baselines"]],
                     shard=f"merged from {len(docs)} report(s)")
