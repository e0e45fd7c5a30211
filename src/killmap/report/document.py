"""Reports: one JSON document (schema in the README), and every other format rendered from it.

JUnit XML, Markdown, HTML and the Stryker schema are all views of the same document, so
they cannot disagree, and `killmap merge` can join shard reports and render them again.
"""

from __future__ import annotations

import json
import os
import platform
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import killmap
from killmap import pytest_version
from killmap.catalog.shards import refuse_mixed_splits
from killmap.errors import GateError
from killmap.mutate.mutant import Mutant
from killmap.report.cells import MARKDOWN_LIMIT, Document, cause_of, explanation, held_count, raised_where, write_whole
from killmap.verdict.judge import HELD, VERDICTS, Verdict
from killmap.verdict.lab import LabResult
from killmap.wording import counted

SCHEMA = "killmap-report/1"


def to_json(result: LabResult, root: Path) -> Document:
    mutations = [_mutation_entry(verdict, result.mutants[verdict.name]) for verdict in result.verdicts]
    return _document(
        mutations,
        root=str(root),
        jobs=result.jobs,
        wall=result.wall,
        seed=seed_name(result.seed),
        baselines=[
            {
                "tests": list(b.settings.tests),
                "collected": len(b.collected),
                "runs": b.runs,
                "wall_seconds": round(b.wall, 4),
                "collect_seconds": round(b.collect_seconds, 4),
                "reach_recorded_by": b.tracer,
                **({"reach_note": b.recorder_note} if b.recorder_note else {}),
            }
            for b in result.baselines
        ],
    )


# Extras a run may record beyond the verdict: each is in the entry only when it was recorded.
_REPORTED_EXTRAS = (
    "run_seconds",
    "confirm_seconds",
    "selected_baseline_seconds",
    "broken_cause",
    # The kills test a `held` hung in (require = "timeout"): the "red / expected" cell says it.
    "hung",
    "path",
    "path_reason",
    "swap",
    "seeds",
)


def _mutation_entry(verdict: Verdict, mutant: Mutant) -> dict[str, Any]:
    """One mutation's entry: the catalog's words, the verdict, the run and the mutant, in that order."""
    mutation = mutant.mutation
    return {
        "name": verdict.name,
        "catalog": mutation.catalog,
        "op": mutation.op,
        "target": str(mutation.target),
        "file": mutant.file,
        "lines": list(mutant.changed_lines),
        "replacement": _replacement(mutant),
        "note": mutation.note,
        "verdict": verdict.verdict,
        "explanation": explanation(verdict.verdict, mutation.invariant, cause_of(verdict.extras)),
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
        **{k: verdict.extras[k] for k in _REPORTED_EXTRAS if k in verdict.extras},
        "warnings": list(verdict.extras.get("warnings", ())),
        "timeout_seconds": verdict.timeout,
        "cached": verdict.cached,
        "sites": mutant.sites,
        "target_sha256": mutant.target_sha256,
        "target_pin": mutant.target_pin,
        "diff": mutant.diff,
    }


def _document(
    mutations: list[dict[str, Any]],
    *,
    root: str,
    jobs: int,
    wall: float,
    baselines: list[dict[str, Any]],
    shard: str | None = None,
    seed: int | str | None = None,
) -> Document:
    counts = Counter(m["verdict"] for m in mutations)
    return {
        "schema": SCHEMA,
        "killmap_version": killmap.__version__,
        "python": platform.python_version(),
        "pytest": pytest_version(),
        "root": root,
        "shard": shard,
        "jobs": jobs,
        # What Hypothesis and pytest-randomly drew from (docs/randomized.md): "random" explored.
        "seed": seed,
        "wall_seconds": round(wall, 4),
        "exit_code": exit_code(mutations),
        "summary": {"total": len(mutations), **{k: counts.get(k, 0) for k in VERDICTS}},
        # Verdicts the cache answered: what a CI job gains by keeping the cache folder.
        "reused": sum(bool(m.get("cached")) for m in mutations),
        "baselines": baselines,
        "mutations": mutations,
    }


def seed_name(seed: int | None) -> int | str:
    """The seed as reports say it: the number, or "random" for `--seed random`."""
    return "random" if seed is None else seed


def exit_code(mutations: list[dict[str, Any]]) -> int:
    return 0 if all(m["verdict"] == HELD for m in mutations) else 1


def _replacement(mutant) -> str:
    """What the mutant puts in place of the changed lines, as its diff adds it (the sweep's
    report reads it so too): nothing for a pure deletion, where the mutant's changed lines
    mark the line after it (a deleted call read as a second copy of the next line)."""
    if not mutant.applied:
        return ""
    added = (line[1:] for line in mutant.diff.splitlines() if line.startswith("+") and not line.startswith("+++"))
    return "\n".join(added)


def _details(entry: dict[str, Any]) -> str:
    lines = [f"verdict: {entry['verdict']} - {entry['explanation']}", f"detail: {entry['detail']}"]
    if entry["expected"]:
        lines.append("expected red: " + ", ".join(entry["expected"]))
    for red in entry["red"]:
        where = raised_where(red["raised_at"], red.get("tree_line"))
        lines.append(f"red: {red['id']} [{red['cause']}] {red['exception'] or ''} at {where}")
    for warning in entry.get("warnings", ()):
        lines.append(f"warning: {warning}")
    if entry["diff"]:
        lines += ["", entry["diff"]]
    return "\n".join(lines)


def to_junit(doc: Document) -> str:
    """One testcase per mutation; every verdict but held is a failure, so CI shows it red."""
    mutations = doc["mutations"]
    suite = ET.Element(
        "testsuite",
        name="killmap",
        tests=str(len(mutations)),
        failures=str(len(mutations) - held_count(doc)),
        errors="0",
        time=f"{doc['wall_seconds']:.3f}",
    )
    if doc.get("seed") is not None:  # what randomized suites drew from (docs/randomized.md)
        ET.SubElement(ET.SubElement(suite, "properties"), "property", name="seed", value=str(doc["seed"]))
    for entry in mutations:
        case = ET.SubElement(
            suite,
            "testcase",
            name=entry["name"],
            classname=f"killmap.{entry['catalog']}",
            time=f"{entry['duration_seconds']:.3f}",
        )
        if entry["verdict"] != HELD:
            failure = ET.SubElement(
                case, "failure", type=entry["verdict"], message=f"{entry['verdict']}: {entry['detail']}"[:1000]
            )
            failure.text = _details(entry)
        else:
            ET.SubElement(case, "system-out").text = _details(entry)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True)


def to_markdown(doc: Document, limit: int = MARKDOWN_LIMIT) -> str:
    """A review comment: a summary table and what differed per failed contract (markdown_report.py)."""
    from killmap.report.markdown_report import to_markdown as render

    return render(doc, limit)


def to_html(doc: Document) -> str:
    """One self-contained page with the kill matrix (html_report.py)."""
    from killmap.report.html_report import to_html as render

    return render(doc)


# Stryker's mutation-testing-report-schema has no contract verdicts; each maps to the status
# whose meaning is closest, and the exact verdict rides along in an extra field.
_STRYKER_STATUS = {
    "held": "Killed",
    "vacuous": "Survived",
    "overreach": "Killed",
    "visible": "Killed",
    "wrong-cause": "Killed",
    "unevidenced": "NoCoverage",
    "broken": "CompileError",
    "timeout": "Timeout",
    "not-applied": "RuntimeError",
    "stale": "RuntimeError",
    "flaky": "RuntimeError",
    "randomized": "RuntimeError",
    "inconclusive": "RuntimeError",
    "escaped": "RuntimeError",
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
        files[m["file"]]["mutants"].append(
            {
                "id": m["name"],
                "mutatorName": m["op"],
                "description": m["note"] or m["name"],
                "replacement": m["replacement"],
                "location": {
                    "start": {"line": first, "column": 1},
                    "end": {"line": max(last, first), "column": len(source_lines[max(last, first) - 1]) + 1},
                },
                "status": status,
                "statusReason": f"{m['verdict']}: {m['detail']}"
                + "".join(f"; warning: {w}" for w in m.get("warnings", ())),
                "killedBy": killed_by,
                "coveredBy": m["reached_by"],
                "testsCompleted": m["selected_tests"],
                "duration": int(m["duration_seconds"] * 1000),
                "killmapVerdict": m["verdict"],
                "killmapExpected": m["expected"],
            }
        )
    return {
        "schemaVersion": "2",
        "thresholds": {"high": 100, "low": 100},
        "projectRoot": str(root),
        "files": files,
        "testFiles": {
            f: {"tests": [{"id": t, "name": t.split("::", 1)[-1]} for t in sorted(ids)]}
            for f, ids in sorted(tests.items())
        },
        "framework": {"name": "killmap", "version": killmap.__version__},
    }


REPORT_FILES = {
    "json": "killmap.json",
    "junit": "killmap.junit.xml",
    "markdown": "killmap.md",
    "html": "killmap.html",
    "stryker": "mutation-report.json",
}


def check_report_dir(folder: Path, names: Iterable[str] | None = None) -> None:
    """Refuse, before anything runs, a report folder that cannot be written: a gate that
    runs for minutes and then cannot say what it found has wasted them. `names`: the files
    the command will write there (the gate's by default; red-first writes its own)."""
    for path in (folder, *folder.parents):
        if path.exists() or path.is_symlink():
            if not path.is_dir():
                what = "names" if path == folder else f"is inside {path}, which is"
                raise GateError(f"--report-dir {what} an existing file, not a folder: {path}", field="--report-dir")
            if not os.access(path, os.W_OK | os.X_OK):
                raise GateError(f"--report-dir: cannot write in {path}", field="--report-dir")
            break
    for name in REPORT_FILES.values() if names is None else names:
        if (folder / name).is_dir():
            raise GateError(
                f"--report-dir: {folder / name} is a folder, so the report cannot be written there",
                field="--report-dir",
            )


def write_reports(doc: Document, folder: Path) -> dict[str, Path]:
    paths = {kind: folder / name for kind, name in REPORT_FILES.items()}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        texts = {
            paths["json"]: json.dumps(doc, indent=2) + "\n",
            paths["junit"]: to_junit(doc),
            paths["markdown"]: to_markdown(doc),
            paths["html"]: to_html(doc),
            # Machine-read (mutation-testing-elements): compact, which is the C encoder's fast path.
            paths["stryker"]: json.dumps(to_stryker(doc)) + "\n",
        }
        write_whole(texts)
    except OSError as exc:  # checked up front; this is what changed since
        raise GateError(f"cannot write the reports: {exc}", field="--report-dir") from None
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
    refuse_mixed_splits([(path, (doc.get("split") or {}).get("digest")) for path, doc in docs])
    by_name: dict[str, dict[str, Any]] = {}
    for path, doc in docs:
        for entry in doc["mutations"]:
            if entry["name"] in by_name:
                raise GateError("reported by two shards", file=str(path), mutation=entry["name"])
            by_name[entry["name"]] = entry
    order = expected_names or [m["name"] for _, doc in docs for m in doc["mutations"]]
    missing = [name for name in order if name not in by_name]
    if missing:
        raise GateError(f"no shard reported {', '.join(missing)}: a shard is missing or failed", field="shards")
    extra = [name for name in by_name if name not in order]
    if extra:
        raise GateError(f"shards report mutations the catalog does not have: {', '.join(extra)}", field="shards")
    return _document(
        [by_name[name] for name in order],
        root=docs[0][1]["root"],
        jobs=max(doc["jobs"] for _, doc in docs),
        wall=max(doc["wall_seconds"] for _, doc in docs),
        baselines=[b for _, doc in docs for b in doc["baselines"]],
        shard=f"merged from {counted(len(docs), 'report')}",
        seed=docs[0][1].get("seed"),
    )
