"""GitHub: one workflow-command annotation per failed contract, and the job summary.

Built from the JSON report document only (never from terminal text), so `run` and
`merge` publish the same thing. `--annotations github` turns it on; `auto` (the default)
turns it on when GITHUB_ACTIONS=true.

GitHub's limits shape it: a step shows at most 10 error annotations (50 per job) and a
job summary holds at most 1 MiB. The failed contracts are annotated in SEVERITY order,
the first 10 only; the summary (killmap.md, which stays under 64 KiB) counts and names
the rest.

Severity: first the verdicts that say the tests are weaker than the catalog claims,
since those are the findings the gate exists for: vacuous (a kill that does not happen)
and overreach (a red nobody declared), then wrong-cause (a kill for the wrong reason),
visible (an invariance that is not), unevidenced (nothing proves the verdict) and timeout
(the mutant loops). Then the verdicts that say the mutation itself needs work: escaped
(it wrote into the working tree, which was restored), broken, not-applied, stale. Last,
those that say the run itself could not decide: flaky, inconclusive. Within a verdict,
catalog order.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from killmap.wording import counted

SEVERITY = (
    "vacuous",
    "overreach",
    "wrong-cause",
    "visible",
    "unevidenced",
    "timeout",
    "escaped",
    "broken",
    "not-applied",
    "stale",
    "flaky",
    "randomized",
    "inconclusive",
)
MAX_ANNOTATIONS = 10  # GitHub shows at most 10 error annotations per step
SUMMARY_LIMIT = 1024 * 1024  # and at most 1 MiB of job summary per step


def escape_data(text: str) -> str:
    """A workflow command's message: %, CR and LF are percent-encoded."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: also ':' and ','."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def failed_in_order(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    failed = [(i, m) for i, m in enumerate(doc["mutations"]) if m["verdict"] != "held"]
    rank = {verdict: n for n, verdict in enumerate(SEVERITY)}
    failed.sort(key=lambda pair: (rank.get(pair[1]["verdict"], len(SEVERITY)), pair[0]))
    return [m for _, m in failed]


def annotation(entry: Mapping[str, Any], path: str) -> str:
    """`::error file=…,line=…,title=…::message` at the mutated lines of the target."""
    props = [("file", path)]
    lines = entry.get("lines") or []
    if lines:  # a mutant that was never built (not-applied, stale) has no lines: the file
        props.append(("line", str(min(lines))))
        if max(lines) != min(lines):
            props.append(("endLine", str(max(lines))))
    props.append(("title", f"killmap {entry['verdict']}: {entry['name']}"))
    message = f"{entry['verdict']}: {entry['detail']}\n{entry['explanation']}."
    rendered = ",".join(f"{key}={escape_property(value)}" for key, value in props)
    return f"::error {rendered}::{escape_data(message)}"


def _path(root: str, rel: str, workspace: str | None) -> str:
    """GitHub resolves annotation paths from the workspace, which may hold the project in a
    subfolder; the report's paths are relative to the project root."""
    if workspace:
        try:
            return (Path(root) / rel).resolve().relative_to(Path(workspace).resolve()).as_posix()
        except ValueError:
            pass
    return rel


def workspace_path(root: str, rel: str, workspace: str | None) -> str:
    """A report's file as GitHub names it in an annotation (see _path)."""
    return _path(root, rel, workspace)


def workflow_commands(doc: Mapping[str, Any], workspace: str | None = None) -> tuple[list[str], list[dict[str, Any]]]:
    """The annotation lines to print, and the failed contracts left over past the cap."""
    failed = failed_in_order(doc)
    shown, rest = failed[:MAX_ANNOTATIONS], failed[MAX_ANNOTATIONS:]
    return [annotation(m, _path(doc["root"], m["file"], workspace)) for m in shown], rest


def overflow_note(rest: list[dict[str, Any]]) -> str:
    names = ", ".join(f"`{m['name']}` ({m['verdict']})" for m in rest)
    return (
        f"**Not annotated:** GitHub shows at most {MAX_ANNOTATIONS} annotations per step, so "
        f"{counted(len(rest), 'more failed contract')} listed here only: {names}.\n"
    )


def summary_text(markdown: str, rest: list[dict[str, Any]], room: int = SUMMARY_LIMIT) -> str:
    """killmap.md plus the overflow note, cut at a line so the whole stays within `room` bytes."""
    note = overflow_note(rest) if rest else ""
    text = markdown.rstrip("\n") + "\n" + ("\n" + note if note else "")
    if len(text.encode("utf-8")) <= room:
        return text
    cut = "\n_The job summary is full: the rest is in the reports artifact (killmap.md, killmap.html, killmap.json)._\n"
    budget = room - len(cut.encode("utf-8")) - len(note.encode("utf-8")) - 1
    kept = markdown.encode("utf-8")[: max(budget, 0)].decode("utf-8", "ignore")
    kept = kept[: kept.rfind("\n") + 1] if "\n" in kept else ""
    text = kept + cut + ("\n" + note if note else "")
    return text if len(text.encode("utf-8")) <= room else ""


def enabled(mode: str, env: Mapping[str, str]) -> bool:
    return mode == "github" or (mode == "auto" and env.get("GITHUB_ACTIONS") == "true")


def publish(
    doc: Mapping[str, Any],
    markdown_path: Path,
    mode: str,
    env: Mapping[str, str] | None = None,
    out: TextIO | None = None,
) -> None:
    """Annotations and the job summary, after everything the command printed itself."""
    sys.stdout.flush()
    env = os.environ if env is None else env
    out = out or sys.stdout
    if not enabled(mode, env):
        return
    commands, rest = workflow_commands(doc, env.get("GITHUB_WORKSPACE"))
    for line in commands:
        out.write(line + "\n")
    if rest:
        out.write(
            f"killmap: {counted(len(rest), 'more failed contract')} not annotated (GitHub shows "
            f"{MAX_ANNOTATIONS} per step); the job summary names them\n"
        )
    out.flush()
    append_job_summary(markdown_path, rest, env)


def append_job_summary(markdown_path: Path, rest: list[dict[str, Any]], env: Mapping[str, str]) -> None:
    """The Markdown report appended to GITHUB_STEP_SUMMARY, within what room earlier steps left."""
    summary = env.get("GITHUB_STEP_SUMMARY")
    if summary:
        path = Path(summary)
        used = path.stat().st_size if path.exists() else 0
        gap = "\n" if used else ""  # a blank line after what earlier steps wrote
        text = summary_text(markdown_path.read_text(encoding="utf-8"), rest, SUMMARY_LIMIT - used - len(gap))
        if text:
            text = gap + text
            with path.open("a", encoding="utf-8") as handle:
                handle.write(text)
