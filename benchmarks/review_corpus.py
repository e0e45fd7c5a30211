"""The review corpus: killmap's review of real pull requests, measured against hand labels.

    python3 benchmarks/review_corpus.py [--only N ...] [--repo GITDIR] [--jobs 1|2]
                                        [--work DIR] [--killmap-root DIR] [--write]

For each pull request of benchmarks/review_corpus/prs.toml (werkzeug's routing), this
clones the project's repository (shared objects, never written) at the PR's head, copies
in the catalog benchmarks/review_corpus/werkzeug.toml as mutations/werkzeug.toml, and runs,
one PR at a time:

- `killmap red-first BASE` (the PR's tests, the fix reverted), compared with what plain
  pytest showed (redfirst_truth.toml, observed by benchmarks/review_corpus/observe.py);
- `killmap sweep --changed BASE <target>`: every survivor with its file, line, operator,
  and whether the line is one the PR added or changed (`on_change`, from `git diff -U0`);
  each survivor on the change is looked up in labels.toml (actionable, equivalent, arid);
- `killmap review BASE` when the installed killmap has that command (else a message).

It prints a table per PR and writes .work/results.json (--write: also
benchmarks/review_corpus/results.json, the numbers the README quotes). Exit 1 when a
survivor on the change (or one the review reports) has no label, red-first disagrees with
the observed truth, the review leaves out a line holding an actionable survivor on the
change, or killmap left a change in a PR's tree.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the venv has tomli (a killmap dependency there)
    import tomli as tomllib  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent  # benchmarks/
REPO = HERE.parent
CORPUS = HERE / "review_corpus"
DEFAULT_WORK = CORPUS / ".work"
# Where the `fetch` tool of this workplace leaves werkzeug's repository; anywhere else,
# `git clone --mirror` it and pass --repo (refs/pull/N/head must be there: a mirror has them).
DEFAULT_REPO = Path("/work/.mirror/pallets+werkzeug/repo")

# The test tools, pinned: the truth was observed with exactly these. werkzeug's
# tests/conftest.py imports ephemeral_port_reserve (and, before 2025, xprocess) at top level.
TEST_TOOLS = ("pytest==8.3.4", "ephemeral-port-reserve==1.1.4", "pytest-xprocess==1.0.2", "markupsafe==3.0.4")

# The ranking item 3 of the issue asks for, used to pick the one survivor a line shows in
# the emulation of `review` below: the catalog operators first, then mutmut's.
KILLMAP_OPS = ("delete-call", "constant-return", "negate", "drop-operand", "merge-strings")
LABELS = ("actionable", "equivalent", "arid")


@dataclass(frozen=True)
class PR:
    number: int
    title: str
    note: str
    base: str
    head: str
    fix: tuple[str, ...]  # the behaviour change: what red-first reverts
    tests: tuple[str, ...]
    behaviour: tuple[str, ...]  # the fix files that change behaviour, where some only add names


def load_prs(path: Path = CORPUS / "prs.toml") -> tuple[dict[str, Any], tuple[PR, ...]]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    prs = tuple(
        PR(
            number=p["number"],
            title=p["title"],
            note=p.get("note", ""),
            base=p["base"],
            head=p["head"],
            fix=tuple(p["fix"]),
            tests=tuple(p["tests"]),
            behaviour=tuple(p.get("behaviour", p["fix"])),
        )
        for p in data["pr"]
    )
    return data["project"], prs


# --- the trees ------------------------------------------------------------------------------


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def materialise(repo: Path, pr: PR, dest: Path, catalog: Path | None = CORPUS / "werkzeug.toml") -> Path:
    """A fresh clone of `repo` at the PR's head (detached), its objects shared with `repo`
    (which is only read), with the catalog copied in untracked: it is no part of the PR."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(repo), str(dest)], check=True)
    git(dest, "fetch", "-q", "origin", f"refs/pull/{pr.number}/head")
    fetched = git(dest, "rev-parse", "FETCH_HEAD").strip()
    if fetched != pr.head:
        raise SystemExit(f"PR #{pr.number}: refs/pull/{pr.number}/head is {fetched}, prs.toml says {pr.head}")
    git(dest, "checkout", "-q", "--detach", pr.head)
    if git(dest, "rev-parse", f"{pr.head}^").strip() != pr.base:
        raise SystemExit(f"PR #{pr.number}: the head's parent is not the base prs.toml names")
    if catalog is not None:
        (dest / "mutations").mkdir()
        shutil.copy(catalog, dest / "mutations" / "werkzeug.toml")
    return dest


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def changed_lines(root: Path, base: str, head: str) -> dict[str, set[int]]:
    """Per file, the lines of `head` that the change since `base` added or rewrote.

    A hunk that only deletes has no line in `head`: it marks none (what a deletion broke
    shows on the lines around it, which the PR did not write)."""
    names = git(root, "diff", "--name-only", base, head).split()
    lines: dict[str, set[int]] = {}
    for name in names:
        diff = git(root, "diff", "-U0", base, head, "--", name)
        found = set()
        for match in _HUNK.finditer(diff):
            start, count = int(match.group(1)), int(match.group(2) or 1)
            found.update(range(start, start + count))
        lines[name] = found
    return lines


def on_change(mutant: dict[str, Any], lines: dict[str, set[int]]) -> bool:
    """Whether a sweep mutant changes a line the PR added or rewrote."""
    return bool(lines.get(mutant["file"], set()) & set(mutant["lines"] or [mutant["line"]]))


def code_spans(source: str) -> list[set[int]]:
    """The statements of a module a mutant can change, each as the set of its lines: a
    simple statement (an assignment, a call, a return, an import, ...) whole, and the header
    of an `if`/`while`/`for`/`with`/`try`; not a `def` or `class`, a decorator, a docstring,
    and no comment or blank line."""
    text = source.splitlines()
    spans = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.stmt) or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue  # a docstring, or a bare string
        body = getattr(node, "body", None)
        last = body[0].lineno - 1 if isinstance(body, list) and body else (node.end_lineno or node.lineno)
        span = {n for n in range(node.lineno, last + 1) if text[n - 1].strip()[:1] not in ("", "#")}
        if span:
            spans.append(span)
    return spans


def unswept(root: Path, lines: dict[str, set[int]], mutants: list[dict[str, Any]]) -> dict[str, list[int]]:
    """Per changed source file, the changed lines of the statements the change touched that
    no sweep mutant changes: what a sweep of the change left out without saying (a setter, a
    module-level statement). A statement one mutant changes on any of its lines is swept."""
    mutated: dict[str, set[int]] = {}
    for m in mutants:
        mutated.setdefault(m["file"], set()).update(m["lines"] or [m["line"]])
    out = {}
    for name, changed in sorted(lines.items()):
        path = root / name
        if not name.endswith(".py") or not name.startswith("src/") or not path.is_file():
            continue
        spans = code_spans(path.read_text(encoding="utf-8"))
        left = sorted({n for span in spans if not span & mutated.get(name, set()) for n in span & changed})
        if left:
            out[name] = left
    return out


def label_key(pr: int, mutant: dict[str, Any]) -> tuple[int, str, int, str, str]:
    """A survivor's key in labels.toml: its PR, file, line, operator and one-line change,
    all of which stay the same from one sweep of the same tree to the next."""
    return (pr, mutant["file"], mutant["line"], mutant["op"], mutant["change"])


def load_labels(path: Path = CORPUS / "labels.toml") -> dict[tuple[int, str, int, str, str], dict[str, str]]:
    if not path.is_file():
        return {}
    labels = {}
    for entry in tomllib.loads(path.read_text(encoding="utf-8")).get("label", []):
        if entry["label"] not in LABELS:
            raise SystemExit(f"{path}: label {entry['label']!r} is not one of {', '.join(LABELS)}")
        labels[(entry["pr"], entry["file"], entry["line"], entry["op"], entry["change"])] = entry
    return labels


def op_rank(op: str) -> tuple[int, str]:
    family, _, name = op.partition(":")
    if family == "killmap" and name in KILLMAP_OPS:
        return (KILLMAP_OPS.index(name), op)
    return (len(KILLMAP_OPS) + (family != "killmap"), op)


def emulated_review(survivors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a review that keeps survivors on the change, drops the ones labelled arid, and
    shows one per line (the best-ranked operator) would report: the target the issue sets,
    computed from the hand labels, until `killmap review` exists to be measured."""
    per_line: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for s in survivors:
        if s["on_change"] and s.get("label") != "arid":
            per_line.setdefault((s["file"], s["line"]), []).append(s)
    return [min(group, key=lambda s: (op_rank(s["op"]), s["id"])) for _, group in sorted(per_line.items())]


# --- the environment ------------------------------------------------------------------------


def prepare_venv(work: Path, killmap_root: Path) -> Path:
    """The venv killmap and werkzeug's tests run in, made and filled on first use; its python."""
    sys.path.insert(0, str(HERE))
    from venvs import for_this_python

    venv = for_this_python(work / "venv")
    stamp = venv / "review-corpus-stamp.json"
    # The checkout's pyproject.toml is in the stamp: a dependency added there since the venv
    # was made must be installed before that killmap can run.
    pyproject = hashlib.sha256((killmap_root / "pyproject.toml").read_bytes()).hexdigest()
    wanted = {"killmap_root": str(killmap_root), "tools": list(TEST_TOOLS), "pyproject": pyproject}
    if stamp.is_file() and json.loads(stamp.read_text()) == wanted and (venv / "bin" / "killmap").exists():
        return venv / "bin" / "python"
    work.mkdir(parents=True, exist_ok=True)
    print(f"creating {venv} (killmap[sweep] -e {killmap_root}, {', '.join(TEST_TOOLS)}) ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, "-e", f"{killmap_root}[sweep]", *TEST_TOOLS], check=True)
    stamp.write_text(json.dumps(wanted))
    return venv / "bin" / "python"


def clean_env(work: Path) -> dict[str, str]:
    """The environment every tool runs in: nothing inherited that could steer pytest."""
    env = dict(os.environ)
    for key in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "COVERAGE_PROCESS_START", "PYTHONPATH", "VIRTUAL_ENV"):
        env.pop(key, None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["XDG_CACHE_HOME"] = str(work / "cache")  # never the user's ~/.cache
    return env


def timed(command: list[str], root: Path, log: Path, env: dict[str, str]) -> tuple[int, float]:
    """Run a command in `root`, its output to `log` (shown, never parsed); exit code, seconds."""
    log.parent.mkdir(parents=True, exist_ok=True)
    print("  $ " + " ".join(command[1:]), flush=True)
    start = time.perf_counter()
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run(command, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
    return done.returncode, round(time.perf_counter() - start, 1)


def review_help(killmap: Path, env: dict[str, str]) -> str | None:
    """`killmap review --help`, or None when this killmap has no such command."""
    done = subprocess.run([str(killmap), "review", "--help"], capture_output=True, text=True, env=env)
    return done.stdout if done.returncode == 0 else None


# --- one PR ---------------------------------------------------------------------------------


def load_truth(path: Path = CORPUS / "redfirst_truth.toml") -> dict[tuple[int, tuple[str, ...]], dict[str, Any]]:
    """The observations of observe.py, keyed by PR and the files reverted."""
    if not path.is_file():
        return {}
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return {(o["pr"], tuple(o["revert"])): o for o in data.get("observation", [])}


def red_first(
    pr: PR, killmap: Path, root: Path, folder: Path, env: dict[str, str], truth: dict, revert: tuple[str, ...] = ()
) -> dict[str, Any]:
    """`killmap red-first BASE` on the PR (with `--revert` of `revert` when given), and how its
    fail-to-pass set and causes compare with what plain pytest showed with the same files
    reverted."""
    command = [str(killmap), "red-first", pr.base, "--report-dir", str(folder)]
    if revert:
        command += ["--revert", *revert]
    code, seconds = timed(command, root, folder / "out.txt", env)
    doc = json.loads((folder / "red-first.json").read_text(encoding="utf-8"))
    reverted = tuple(sorted(c["path"] for c in doc["reverted"] if c["path"].startswith("src/")))
    f2p = sorted(t["id"] for t in doc["tests"] if t["class"] == "fail-to-pass")
    observed = truth.get((pr.number, reverted))
    expected = None if observed is None else sorted(set(observed["reverted_red"]) - set(observed["head_red"]))
    return {
        "exit_code": code,
        "wall_seconds": seconds,
        "reverted": list(reverted),
        "summary": doc["summary"],
        "fail_to_pass": f2p,
        "observed_fail_to_pass": expected,
        "observed_kinds": None if observed is None else observed["kinds"],
        "agrees": None if expected is None else expected == f2p,
    }


def sweep(pr: PR, killmap: Path, root: Path, reports: Path, env: dict[str, str], target: str, jobs: int):
    """Today's `killmap sweep --changed BASE`: every survivor, each marked on the change or not."""
    folder = reports / "sweep"
    command = [str(killmap), "sweep", "--changed", pr.base, "--jobs", str(jobs), "--no-cache"]
    code, seconds = timed([*command, "--report-dir", str(folder), target], root, folder / "out.txt", env)
    doc = json.loads((folder / "killmap-sweep.json").read_text(encoding="utf-8"))
    lines = changed_lines(root, pr.base, pr.head)
    mutants = doc["sweep"]["mutants"]
    survivors = []
    for m in mutants:
        if m["status"] != "survived":
            continue
        keep = ("id", "file", "line", "lines", "function", "op", "change")
        survivors.append({**{k: m[k] for k in keep}, "on_change": on_change(m, lines)})
    touched = [m for m in mutants if on_change(m, lines)]
    return {
        "exit_code": code,
        "wall_seconds": seconds,
        "sweep_wall_seconds": doc["wall_seconds"],
        "summary": doc["sweep"]["summary"],
        "functions": sorted({f"{m['file']}::{m['function']}" for m in mutants}),
        "mutants_on_change": len(touched),
        "killed_on_change": sum(m["status"] == "killed" for m in touched),
        "unreached_on_change": sum(m["status"] == "unreached" for m in touched),
        "unswept_lines": unswept(root, lines, mutants),
        "survivors": survivors,
    }


def review(
    pr: PR, killmap: Path, root: Path, reports: Path, env: dict[str, str], jobs: int, usage: str
) -> dict[str, Any]:
    """`killmap review BASE`, when this killmap has it: its wall time and what its JSON reports.

    The command is being built as this corpus is; the JSON is read loosely (any mutant list
    whose entries carry `reported`), and the raw report stays in the reports folder."""
    folder = reports / "review"
    command = [str(killmap), "review", pr.base, "--jobs", str(jobs), "--report-dir", str(folder)]
    if "--no-cache" in usage:  # a cold run, as the sweep's is, and no cache left in the tree
        command.append("--no-cache")
    code, seconds = timed(command, root, folder / "out.txt", env)
    reported: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.json")):
        reported += [m for m in _mutant_lists(json.loads(path.read_text(encoding="utf-8"))) if m.get("reported")]
    unique = {m.get("id") or (m.get("file"), m.get("line"), m.get("op"), m.get("change")): m for m in reported}
    survivors = [m for m in unique.values() if m.get("status") in ("survived", None)]
    return {"exit_code": code, "wall_seconds": seconds, "reported": len(survivors), "mutants": survivors}


def judge_review(
    reported: list[dict[str, Any]], survivors: list[dict[str, Any]], known: dict[tuple, str] | None = None
) -> dict[str, Any]:
    """The review's reported survivors against the hand labels (of the sweep's survivors, and
    `known`: labels.toml's for this PR, by file, line, op and change): how many are labelled
    actionable, which are unlabelled, and which lines holding an actionable survivor of the
    sweep on the change the review does not report (lost)."""
    labels = {(s["file"], s["line"], s["op"], s["change"]): s.get("label") for s in survivors if s["on_change"]}
    labels = {**(known or {}), **{k: v for k, v in labels.items() if v is not None}}
    found = [labels.get((m.get("file"), m.get("line"), m.get("op"), m.get("change"))) for m in reported]
    shown = {(m.get("file"), m.get("line")) for m in reported}
    actionable_lines = {(f, line) for (f, line, _, _), label in labels.items() if label == "actionable"}
    return {
        "actionable": found.count("actionable"),
        "unlabelled": [m for m, label in zip(reported, found, strict=True) if label is None],
        "lost": sorted(actionable_lines - shown),
    }


def _mutant_lists(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        return [x for v in node.values() for x in _mutant_lists(v)]
    if isinstance(node, list):
        if node and all(isinstance(x, dict) and "reported" in x for x in node):
            return node
        return [x for v in node for x in _mutant_lists(v)]
    return []


def measure(pr: PR, args: argparse.Namespace, python: Path, project: dict[str, Any]) -> dict[str, Any]:
    killmap = python.parent / "killmap"
    env = clean_env(args.work)
    root = materialise(args.repo, pr, args.work / "prs" / f"pr{pr.number}")
    reports = args.work / "reports" / f"pr{pr.number}"
    shutil.rmtree(reports, ignore_errors=True)
    print(f"PR #{pr.number} {pr.title} ({pr.base[:8]}..{pr.head[:8]})", flush=True)
    result: dict[str, Any] = {"pr": pr.number, "title": pr.title, "base": pr.base, "head": pr.head}
    # The size a reviewer reads: the lines of code (src/) the PR added or rewrote.
    code_lines = changed_lines(root, pr.base, pr.head)
    result["diff_lines"] = sum(len(v) for k, v in code_lines.items() if k.startswith("src/"))
    truth = load_truth()
    result["red_first"] = red_first(pr, killmap, root, reports / "red-first", env, truth)
    result["red_first_behaviour"] = None
    if pr.behaviour != pr.fix:  # the fix also adds names the tests import: revert behaviour alone
        folder = reports / "red-first-behaviour"
        result["red_first_behaviour"] = red_first(pr, killmap, root, folder, env, truth, pr.behaviour)
    result["sweep"] = sweep(pr, killmap, root, reports, env, project["sweep_target"], args.jobs)
    labels = load_labels()
    for s in result["sweep"]["survivors"]:
        if s["on_change"]:
            entry = labels.get(label_key(pr.number, s))
            s["label"] = entry["label"] if entry else None
            s["reason"] = entry["reason"] if entry else None
    usage = review_help(killmap, env)
    if usage is not None:
        result["review"] = review(pr, killmap, root, reports, env, args.jobs, usage)
        known = {key[1:]: entry["label"] for key, entry in labels.items() if key[0] == pr.number}
        result["review"]["judged"] = judge_review(result["review"]["mutants"], result["sweep"]["survivors"], known)
    else:
        result["review"] = None
        print("  killmap review: not in this killmap yet; skipped", flush=True)
    status = git(root, "status", "--porcelain").splitlines()
    result["tree_untouched"] = status == ["?? mutations/"]
    return result


# --- the table ------------------------------------------------------------------------------


def summarise(result: dict[str, Any]) -> dict[str, Any]:
    """The numbers per PR the README's tables hold."""
    survivors = result["sweep"]["survivors"]
    on = [s for s in survivors if s["on_change"]]
    counts = {label: sum(s.get("label") == label for s in on) for label in LABELS}
    emulated = emulated_review(survivors)
    rf, behaviour = result["red_first"], result["red_first_behaviour"]
    return {
        "pr": result["pr"],
        "diff_lines": result["diff_lines"],
        "f2p": len(rf["fail_to_pass"]),
        "f2p_causes": rf["summary"].get("fail-to-pass by cause", {}),
        "observed_kinds": rf["observed_kinds"],
        "red_first_agrees": rf["agrees"],
        "red_first_seconds": rf["wall_seconds"],
        "behaviour_f2p": None if behaviour is None else len(behaviour["fail_to_pass"]),
        "behaviour_causes": None if behaviour is None else behaviour["summary"].get("fail-to-pass by cause", {}),
        "behaviour_agrees": None if behaviour is None else behaviour["agrees"],
        "mutants": result["sweep"]["summary"]["total"],
        "mutants_on_change": result["sweep"]["mutants_on_change"],
        "killed_on_change": result["sweep"]["killed_on_change"],
        "unreached_on_change": result["sweep"]["unreached_on_change"],
        "unswept_lines": sum(len(v) for v in result["sweep"]["unswept_lines"].values()),
        "survivors_before": len(survivors),
        "survivors_on_change": len(on),
        "lines_on_change": len({(s["file"], s["line"]) for s in on}),
        **counts,
        "unlabelled": sum(s.get("label") is None for s in on),
        "emulated_reported": len(emulated),
        "emulated_actionable": sum(s.get("label") == "actionable" for s in emulated),
        "sweep_seconds": result["sweep"]["wall_seconds"],
        "review_reported": None if result["review"] is None else result["review"]["reported"],
        "review_seconds": None if result["review"] is None else result["review"]["wall_seconds"],
        "review_actionable": None if result["review"] is None else result["review"]["judged"]["actionable"],
        "review_lost": None if result["review"] is None else len(result["review"]["judged"]["lost"]),
    }


def _causes(causes: dict[str, int] | None) -> str:
    return "-" if causes is None else ", ".join(f"{n} {k}" for k, n in sorted(causes.items())) or "0"


RED_FIRST = (
    ("PR", lambda r: str(r["pr"])),
    ("src lines", lambda r: str(r["diff_lines"])),
    ("fail-to-pass (killmap's causes)", lambda r: f"{r['f2p']} ({_causes(r['f2p_causes'])})"),
    ("plain pytest (kinds)", lambda r: _causes(r["observed_kinds"])),
    ("same set", lambda r: {True: "yes", False: "**no**", None: "-"}[r["red_first_agrees"]]),
    ("behaviour files alone", lambda r: "-" if r["behaviour_f2p"] is None else _behaviour(r)),
    ("s", lambda r: str(r["red_first_seconds"])),
)


def _behaviour(row: dict[str, Any]) -> str:
    same = {True: "same set", False: "**other set**", None: "no truth"}[row["behaviour_agrees"]]
    return f"{row['behaviour_f2p']} ({_causes(row['behaviour_causes'])}; {same})"


def _on_change(row: dict[str, Any]) -> str:
    return f"{row['killed_on_change']}/{row['unreached_on_change']}/{row['mutants_on_change']}"


def _review(row: dict[str, Any]) -> str:
    if row["review_seconds"] is None:
        return "-"
    return f"{row['review_reported']} ({row['review_actionable']}), {row['review_lost']} lost, {row['review_seconds']}"


SWEEP = (
    ("PR", lambda r: str(r["pr"])),
    ("mutants", lambda r: str(r["mutants"])),
    ("on change: killed/unreached/all", lambda r: _on_change(r)),
    ("changed code lines unswept", lambda r: str(r["unswept_lines"])),
    ("survivors before", lambda r: str(r["survivors_before"])),
    ("on change (lines)", lambda r: f"{r['survivors_on_change']} ({r['lines_on_change']})"),
    ("act/eq/arid/?", lambda r: f"{r['actionable']}/{r['equivalent']}/{r['arid']}/{r['unlabelled']}"),
    ("target review: reported (actionable)", lambda r: f"{r['emulated_reported']} ({r['emulated_actionable']})"),
    ("sweep s", lambda r: str(r["sweep_seconds"])),
    ("`review`: reported (actionable), lost, s", lambda r: _review(r)),
)


def table(rows: list[dict[str, Any]], columns) -> str:
    lines = ["| " + " | ".join(t for t, _ in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(r) for _, cell in columns) + " |" for r in rows]
    return "\n".join(lines)


def totals(rows: list[dict[str, Any]]) -> str:
    """The corpus in one line: before and after, the actionable share, the wall time."""
    before = sum(r["survivors_before"] for r in rows)
    on = sum(r["survivors_on_change"] for r in rows)
    reported = sum(r["emulated_reported"] for r in rows)
    actionable = sum(r["emulated_actionable"] for r in rows)
    share = f"{100 * actionable / reported:.0f}%" if reported else "-"
    seconds = sum(r["red_first_seconds"] + r["sweep_seconds"] for r in rows)
    return (
        f"{len(rows)} PRs: {before} survivors today, {on} on the changed lines; the target review "
        f"reports {reported}, {actionable} actionable ({share}); red-first + sweep {seconds:.0f} s in all"
    )


def unlabelled(result: dict[str, Any]) -> list[str]:
    """labels.toml entries to write, one per survivor on the change that has none, and one
    per survivor the review reports that the sweep's labels do not cover."""
    out = []
    todo = [s for s in result["sweep"]["survivors"] if s["on_change"] and s.get("label") is None]
    if result["review"] is not None:
        todo += [m for m in result["review"]["judged"]["unlabelled"] if {"file", "line", "op", "change"} <= set(m)]
    for s in todo:
        out.append(
            "[[label]]\n"
            f"pr = {result['pr']}\nfile = {json.dumps(s['file'])}\nline = {s['line']}\n"
            f"op = {json.dumps(s['op'])}\nchange = {json.dumps(s['change'])}\n"
            'label = "?"\nreason = ""\n'
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", type=int, action="append", default=[], metavar="N", help="this PR only (repeatable)")
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO, help="werkzeug's git repository, with refs/pull")
    parser.add_argument("--jobs", type=int, default=2, choices=(1, 2), help="killmap's --jobs (default 2)")
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help="clones, venv and reports (default .work/)")
    parser.add_argument("--killmap-root", type=Path, default=REPO, help="the killmap checkout to measure")
    parser.add_argument("--write", action="store_true", help="also write benchmarks/review_corpus/results.json")
    args = parser.parse_args()
    args.work = args.work.resolve()
    if not (args.repo / "refs").exists() and not (args.repo / ".git").exists():
        raise SystemExit(f"--repo {args.repo}: no git repository there (README: how to get werkzeug's)")
    project, prs = load_prs()
    prs = tuple(p for p in prs if not args.only or p.number in args.only)
    python = prepare_venv(args.work, args.killmap_root.resolve())
    results = [measure(pr, args, python, project) for pr in prs]  # one at a time: a shared machine
    rows = [summarise(r) for r in results]
    print(table(rows, RED_FIRST))
    print()
    print(table(rows, SWEEP))
    print(totals(rows))
    todo = [entry for r in results for entry in unlabelled(r)]
    disagree = [r["pr"] for r in results if r["red_first"]["agrees"] is False]
    commit = git(args.killmap_root, "rev-parse", "--short", "HEAD").strip()
    document = {"project": project["name"], "killmap": commit, "jobs": args.jobs, "rows": rows, "prs": results}
    (args.work / "results.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    if args.write:  # the numbers and every survivor, without the long lists of test ids
        kept = [{"pr": r["pr"], "sweep": r["sweep"]} for r in results]
        summary = {**document, "prs": kept}
        (CORPUS / "results.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    if todo:
        (args.work / "labels-todo.toml").write_text("\n".join(todo), encoding="utf-8")
        print(f"{len(todo)} survivor(s) on the change have no label: see {args.work / 'labels-todo.toml'}")
    if disagree:
        print(f"red-first disagrees with plain pytest on PR(s) {disagree}")
    lost = [r["pr"] for r in results if r["review"] is not None and r["review"]["judged"]["lost"]]
    if lost:
        print(f"killmap review does not report a line with an actionable survivor on the change: PR(s) {lost}")
    untouched = [r["pr"] for r in results if not r["tree_untouched"]]
    if untouched:
        print(f"killmap left changes in the tree of PR(s) {untouched}")
    return 1 if todo or disagree or lost or untouched else 0


if __name__ == "__main__":
    sys.exit(main())
