"""killmap sweep against mutmut 3.8.1 itself, side by side, on the same mutants.

    python3 benchmarks/sweep_vs_mutmut.py [--repeat 3] [--only SUBJECT] [--out reports/bench]

    SUBJECT: draftroute, packaging, packaging-specifiers, werkzeug, more-itertools

Creates benchmarks/.venv-sweep (gitignored) on first use with killmap (editable, with its
[sweep] extra) and mutmut==3.8.1, then re-runs itself there. Never run in CI: it downloads
an sdist and takes minutes.

Subjects (each a private copy in benchmarks/.sweep-work/, gitignored):

- draftroute: a snapshot of this repository's files; `src/draftroute/` swept against
  `tests/draftroute` (the bundled catalog's [gate]).
- packaging: the sdist of packaging 24.2 (pip download, once), one real-world file,
  `src/packaging/utils.py`, against `tests/test_utils.py`.
- packaging-specifiers: the same sdist's `src/packaging/specifiers.py`, against `tests/test_specifiers.py`
  (click's parser cannot be a subject: see `packaging_specifiers`).
- werkzeug: the sdist of werkzeug 3.1.3, its URL matcher `src/werkzeug/routing/matcher.py`
  against `tests/test_routing.py`, the package imported from `src/` (a catalog's [gate] paths).
- more-itertools: the sdist of more-itertools 10.5.0, `more_itertools/recipes.py` against its
  whole unittest suite (`tests/`), fourteen of whose mutants loop forever.

killmap runs from a byte-compiled copy of its source (venvs.snapshot_killmap), as mutmut runs
from its compiled package.

Per repeat, interleaved: `killmap sweep TARGET --ops mutmut --no-cache --jobs 2` (mutmut's
operators only: the same mutants mutmut makes) and `mutmut run --max-children 2` on a fresh
`mutants/` folder, each wall-timed around the whole command, with the 1-minute load average
before it. mutmut's configuration is written into the copy's pyproject.toml (the copy is
the benchmark's, never the user's). Once: `killmap sweep --ops mutmut,killmap`, to count
what killmap's own operators add.

Compared: the mutants generated (killmap records mutmut's name for each of its mutmut
mutants), the wall times (median) and the CPU seconds each command and its children used
(median: on a machine of two cores a sweep keeps both busy, so CPU is what a faster wall
must come from), the statuses, and every disagreement, each with the
killmap rule that explains it or, where none does, what plain pytest says of the mutant (written
into a scratch copy, the subject's tests run there): the ground truth. Written to
OUT/sweep_vs_mutmut.json and, when every subject ran, as the table docs/sweep/against-mutmut.md
that the sweep page includes.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import sdists  # benchmarks/sdists.py: this script's folder is first on sys.path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
VENV = HERE / ".venv-sweep"
PYTHON = VENV / "bin" / "python"
WORK = HERE / ".sweep-work"
MUTMUT = "mutmut==3.8.1"
JOBS = 2
PACKAGING = "packaging==24.2"
PRETEND = "pretend==1.0.9"  # some of packaging's tests import it
WERKZEUG = "werkzeug==3.1.3"
MORE_ITERTOOLS = "more-itertools==10.5.0"
# werkzeug's tests/conftest.py imports ephemeral_port_reserve; werkzeug itself needs markupsafe
WERKZEUG_TEST_TOOLS = ("ephemeral-port-reserve==1.1.4", "markupsafe==3.0.2")
# killmap's status for each of mutmut's (mutmut/stats.py status_by_exit_code)
MUTMUT_TO_KILLMAP = {
    "killed": "killed",
    "segfault": "killed",
    "survived": "survived",
    "no tests": "unreached",
    "timeout": "timeout",
    "suspicious": "timeout",
    "skipped": "skipped",
    "caught by type check": "broken",
    "not checked": "not checked",
}


def ensure_venv() -> None:
    sys.path.insert(0, str(HERE))
    from venvs import run_inside

    run_inside(
        VENV,
        Path(__file__),
        what=f"killmap[sweep] (editable), {MUTMUT}, {PRETEND} and {', '.join(WERKZEUG_TEST_TOOLS)}",
        probe=(
            "import killmap, pretend, ephemeral_port_reserve, markupsafe, importlib.metadata as m; "
            "assert m.version('mutmut') == '3.8.1'"
        ),
        install=["-e", f"{REPO}[sweep]", MUTMUT, PRETEND, *WERKZEUG_TEST_TOOLS],
    )


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = str(WORK / "xdg-cache")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    for key in ("PYTEST_ADDOPTS", "COVERAGE_PROCESS_START", "PYTHONPATH", "VIRTUAL_ENV"):
        env.pop(key, None)
    env["PATH"] = f"{VENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


# --- subjects -------------------------------------------------------------------------------


def draftroute() -> dict:
    root = WORK / "draftroute"
    shutil.rmtree(root, ignore_errors=True)
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for rel in filter(None, listed):
        if (REPO / rel).is_file() and not rel.startswith("benchmarks/"):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, root / rel)
    sdists.snapshot(arid_off(root))
    return {
        "name": "draftroute",
        "root": root,
        "targets": ["src/draftroute/"],
        "killmap_args": [],
        "mutmut": {"source_paths": ["src/draftroute"], "pytest_add_cli_args_test_selection": ["tests/draftroute"]},
    }


ARID_RULES = ("logging", "messages", "stacklevel", "docstrings", "annotations", "repr", "truth")
ARID_OFF = "\n[sweep]\n" + "".join(f"arid_{rule} = false\n" for rule in ARID_RULES)


def arid_off(root: Path) -> Path:
    """Every arid rule off in the subject's catalogs (a catalog of `[sweep]` alone where it has
    none): the sweep then makes exactly `mutmut run`'s mutants, the comparison's premise."""
    catalogs = sorted((root / "mutations").glob("*.toml"))
    for catalog in catalogs:
        catalog.write_text(catalog.read_text(encoding="utf-8") + ARID_OFF, encoding="utf-8")
    if not catalogs:
        (root / "mutations").mkdir(exist_ok=True)
        (root / "mutations" / "sweep.toml").write_text(ARID_OFF.lstrip(), encoding="utf-8")
    return root


def _from_sdist(requirement: str, copy: str) -> Path:
    """A fresh private copy of a pinned sdist (downloaded once with pip), under git, in a folder
    of the subject's own (`copy`): two subjects of one sdist each get their [tool.mutmut]."""
    tarball = sdists.download(requirement, WORK / "sdists", PYTHON)
    return sdists.snapshot(arid_off(sdists.unpack(tarball, WORK / copy)))


def _with_a_gate(requirement: str, copy: str, *, tests: str, paths: str) -> Path:
    """A fresh private copy of a pinned sdist with a catalog of its [gate] alone, as a user of
    killmap would write it for the tests and import path the subject needs."""
    root = WORK / copy
    sdists.unpack(sdists.download(requirement, WORK / "sdists", PYTHON), root)
    (root / "mutations").mkdir(exist_ok=True)
    gate = f'[gate]\ntests = ["{tests}"]\npaths = ["{paths}"]\n'
    (root / "mutations" / "gate.toml").write_text(gate, encoding="utf-8")
    return sdists.snapshot(arid_off(root))


def packaging() -> dict:
    return {
        "name": "packaging 24.2 utils.py",
        "root": _from_sdist(PACKAGING, "packaging-24.2-utils"),
        "targets": ["src/packaging/utils.py"],
        "killmap_args": ["--tests", "tests/test_utils.py"],
        "mutmut": {
            "source_paths": ["src/packaging"],
            "only_mutate": ["src/packaging/utils.py"],
            "pytest_add_cli_args_test_selection": ["tests/test_utils.py"],
        },
    }


def packaging_specifiers() -> dict:
    """A second real module, larger: packaging's version specifiers (1,020 lines, 806 tests).

    Not version.py: its 18,060 tests make a survivor cost a minute in either tool.

    Not click's, which the issue asked for: mutmut's own command line is click, so `mutmut run`
    has imported the installed click before it runs the tests in its own process, and every
    test sees that click, never the project's or its mutants (its stats run stops at the first
    test file, and each of its 420 mutants of click's parser.py is "not checked")."""
    return {
        "name": "packaging 24.2 specifiers.py",
        "root": _from_sdist(PACKAGING, "packaging-24.2-specifiers"),
        "targets": ["src/packaging/specifiers.py"],
        "killmap_args": ["--tests", "tests/test_specifiers.py"],
        "mutmut": {
            "source_paths": ["src/packaging"],
            "only_mutate": ["src/packaging/specifiers.py"],
            "pytest_add_cli_args_test_selection": ["tests/test_specifiers.py"],
        },
    }


def werkzeug() -> dict:
    """A third real module, of routing: werkzeug's URL matcher (202 lines, the state machine
    every URL is matched by) against the routing suite. killmap imports the package from `src/`
    by the catalog's [gate] paths, as a user of killmap would write it; mutmut finds `src/` itself."""
    return {
        "name": "werkzeug 3.1.3 matcher.py",
        "root": _with_a_gate(WERKZEUG, "werkzeug-3.1.3-matcher", tests="tests/test_routing.py", paths="src"),
        "targets": ["src/werkzeug/routing/matcher.py"],
        "killmap_args": [],
        "mutmut": {
            "source_paths": ["src/werkzeug"],
            "only_mutate": ["src/werkzeug/routing/matcher.py"],
            "pytest_add_cli_args_test_selection": ["tests/test_routing.py"],
        },
    }


def more_itertools() -> dict:
    """A fourth real module, of a different shape: more-itertools' recipes (1,075 lines) against
    its unittest suite, whose tests loop over cases in `subTest` blocks (pytest 9 reports each
    failing one). Fourteen of its mutants loop forever (an iterator that never ends), so this
    subject measures what a hang costs each tool besides the pace per mutant."""
    return {
        "name": "more-itertools 10.5.0 recipes.py",
        "root": _with_a_gate(MORE_ITERTOOLS, "more-itertools-10.5.0-recipes", tests="tests", paths="."),
        "targets": ["more_itertools/recipes.py"],
        "killmap_args": [],
        "mutmut": {
            "source_paths": ["more_itertools"],
            "only_mutate": ["more_itertools/recipes.py"],
            "pytest_add_cli_args_test_selection": ["tests"],
        },
    }


def _mutmut_config(subject: dict) -> None:
    """[tool.mutmut] in the benchmark's own copy (mutmut reads nothing else)."""
    pyproject = subject["root"] / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    if "[tool.mutmut]" not in text:
        lines = ["", "[tool.mutmut]"] + [f"{k} = {json.dumps(v)}" for k, v in subject["mutmut"].items()]
        pyproject.write_text(text.rstrip("\n") + "\n" + "\n".join(lines) + "\n", encoding="utf-8")
        subprocess.run(
            ["git", "commit", "-qam", "mutmut config"],
            cwd=subject["root"],
            check=True,
            env={
                **_env(),
                "GIT_AUTHOR_NAME": "b",
                "GIT_AUTHOR_EMAIL": "b@l",
                "GIT_COMMITTER_NAME": "b",
                "GIT_COMMITTER_EMAIL": "b@l",
            },
        )


# --- the tools --------------------------------------------------------------------------------


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _children_cpu() -> float:
    """User and system seconds of every child this process has waited for, with theirs: a
    command's CPU is the difference around it (killmap waits for its workers and their forks,
    mutmut for its forks)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


KILLMAP_SOURCE: list[Path] = []  # set in main(): killmap's source, frozen and byte-compiled (venvs.py)


def run_killmap(subject: dict, ops: str, label: str) -> dict:
    report_dir = WORK / "reports" / f"{subject['root'].name}-{label}"
    shutil.rmtree(report_dir, ignore_errors=True)
    shutil.rmtree(WORK / "xdg-cache", ignore_errors=True)
    # mutmut's output of the previous repetition is no part of the project (mutmut's docs have
    # it ignored by git): left there, every sandbox copied it and every run's guards looked at
    # it (257 of draftroute's 638 files).
    shutil.rmtree(subject["root"] / "mutants", ignore_errors=True)
    argv = [
        str(VENV / "bin" / "killmap"),
        "sweep",
        *subject["targets"],
        *subject["killmap_args"],
        "--ops",
        ops,
        "--no-cache",
        "--jobs",
        str(JOBS),
        "--report-dir",
        str(report_dir),
    ]
    env = _env()
    env["PYTHONPATH"] = str(KILLMAP_SOURCE[0])  # compiled, as mutmut's own package is
    load, cpu, started = _load(), _children_cpu(), time.perf_counter()
    done = subprocess.run(argv, cwd=subject["root"], env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - started, _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"killmap sweep failed ({done.returncode}): {done.stderr[-1500:]}")
    doc = json.loads((report_dir / "killmap-sweep.json").read_text(encoding="utf-8"))
    return {"wall": round(wall, 2), "cpu": round(cpu, 2), "load1": load, "doc": doc}


def run_mutmut(subject: dict) -> dict:
    root = subject["root"]
    _mutmut_config(subject)
    shutil.rmtree(root / "mutants", ignore_errors=True)
    load, cpu, started = _load(), _children_cpu(), time.perf_counter()
    done = subprocess.run(
        [str(VENV / "bin" / "mutmut"), "run", "--max-children", str(JOBS)],
        cwd=root,
        env=_env(),
        capture_output=True,
        text=True,
    )
    wall, cpu = time.perf_counter() - started, _children_cpu() - cpu
    statuses = _mutmut_statuses(root)
    if not statuses:
        raise SystemExit(f"mutmut run produced no results ({done.returncode}): {(done.stdout + done.stderr)[-1500:]}")
    return {"wall": round(wall, 2), "cpu": round(cpu, 2), "load1": load, "exit": done.returncode, "statuses": statuses}


def _mutmut_statuses(root: Path) -> dict[str, str]:
    from mutmut.stats import status_by_exit_code

    found: dict[str, str] = {}
    for meta in (root / "mutants").rglob("*.py.meta"):
        data = json.loads(meta.read_text(encoding="utf-8"))
        source = meta.relative_to(root / "mutants").as_posix()[: -len(".meta")]
        for key, code in data["exit_code_by_key"].items():
            found[f"{source}::{key.rsplit('.', 1)[-1]}"] = status_by_exit_code[code]
    return found


# --- the comparison -----------------------------------------------------------------------------


SAME_KILL = "the same kill"  # a disagreement in how a mutant is detected, not in whether


def _why(killmap: dict, mutmut: str) -> str:
    """The killmap rule that explains a disagreement, or 'unexplained'."""
    status = killmap["status"]
    if status == "broken":
        return "validity: the mutant cannot run as written (" + killmap["detail"][:90] + "); never a kill"
    if status == "named":
        return f"named: the catalog's {killmap['named']!r} makes this change; `killmap run` judges it"
    if status == "flaky":
        return "flake guard: a re-run of the same mutant disagreed"
    if {status, MUTMUT_TO_KILLMAP.get(mutmut, mutmut)} == {"killed", "timeout"}:
        # Both tools detect the mutant (mutmut's score counts a timeout as caught, as PIT's and
        # Stryker's do): each run stops at its first red, and whether the first selected test to
        # meet the mutant fails or loops decides which. mutmut's order is its own (a set).
        return f"both detect it: killed against timeout, by which test meets the mutant first; {SAME_KILL}"
    if status == "timeout" or mutmut == "timeout":
        return "timeout rule: killmap's limit is 10 x the selected tests' own time (at least 5 s)"
    if status == "unreached" and mutmut in ("survived", "killed"):
        return (
            "selection by statement: no test executes the changed statement (mutmut runs every test "
            "that calls the function)"
        )
    return "unexplained"


def _plain_pytest(subject: dict, mutant_ids: list[str]) -> dict[str, tuple[str, str]]:
    """The ground truth for disagreements no killmap rule explains: each mutant written into a
    scratch copy of the subject, and the subject's tests run there by plain pytest. By id:
    "survived" (every test green), "killed" (a test red) or "neither", and pytest's summary."""
    from killmap.verdict.sweep import enumerate_mutants, load_optional_catalogs, resolve_targets

    root = subject["root"]
    targets = resolve_targets(root, list(subject["targets"]), load_optional_catalogs(root, ()))
    mutants = {m.id: m.mutant for m in enumerate_mutants(root, targets, ("mutmut",)).mutants}
    found = {}
    for mutant_id in mutant_ids:
        scratch = WORK / "plain-pytest"
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.copytree(root, scratch, ignore=shutil.ignore_patterns("mutants", ".git", "__pycache__"))
        mutant = mutants[mutant_id]
        (scratch / mutant.file).write_text(mutant.mutated or "", encoding="utf-8")
        tests = subject["mutmut"]["pytest_add_cli_args_test_selection"]
        argv = [str(PYTHON), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *tests]
        env = {**_env(), "PYTHONPATH": str(scratch / "src")}
        done = subprocess.run(argv, cwd=scratch, env=env, capture_output=True, text=True, timeout=900)
        summary = (done.stdout.strip().splitlines() or ["no output"])[-1]
        found[mutant_id] = ({0: "survived", 1: "killed"}.get(done.returncode, "neither"), summary)
    shutil.rmtree(WORK / "plain-pytest", ignore_errors=True)
    return found


def _never_run(subject: dict, files: list[str]) -> dict[str, set[int]]:
    """The ground truth for `unreached`: by file, the statements plain pytest never runs, the
    subject's tests run once under coverage's tracer in a scratch copy (no mutant written)."""
    scratch = WORK / "plain-coverage"
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(subject["root"], scratch, ignore=shutil.ignore_patterns("mutants", ".git", "__pycache__"))
    tests = subject["mutmut"]["pytest_add_cli_args_test_selection"]
    include = ",".join(str(scratch / f) for f in files)
    run = [str(PYTHON), "-m", "coverage", "run", f"--include={include}", "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    env = {**_env(), "PYTHONPATH": str(scratch / "src")}
    subprocess.run([*run, "-p", "no:randomly", *tests], cwd=scratch, env=env, capture_output=True, timeout=900)
    script = "import coverage, json, sys; c = coverage.Coverage(); c.load(); " + (
        "print(json.dumps({f: c.analysis2(f)[3] for f in sys.argv[1:]}))"
    )
    done = subprocess.run(
        [str(PYTHON), "-c", script, *(str(scratch / f) for f in files)],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    missing = json.loads(done.stdout)
    shutil.rmtree(scratch, ignore_errors=True)
    return {f: set(missing[str(scratch / f)]) for f in files}


def _settle_unreached(subject: dict, disagreements: list[dict]) -> None:
    """An `unreached` mutant that mutmut ran: killmap agrees with plain pytest when plain pytest,
    traced by coverage, runs none of the mutant's changed lines (no test can kill a change it
    never runs, so mutmut's verdict of it, survived, is no kill either)."""
    unreached = [d for d in disagreements if d["killmap"] == "unreached"]
    if not unreached:
        return
    never = _never_run(subject, sorted({d["file"] for d in unreached}))
    for d in unreached:
        lines = d["lines"]
        if lines and set(lines) <= never[d["file"]]:
            d["why"] += f"; plain pytest under coverage runs none of lines {lines}: killmap agrees"


def compare(subject: dict, killmap_doc: dict, mutmut_statuses: dict[str, str]) -> dict:
    ours = {f"{m['file']}::{m['mutmut_name']}": m for m in killmap_doc["sweep"]["mutants"] if m["mutmut_name"]}
    theirs = {key: MUTMUT_TO_KILLMAP.get(status, status) for key, status in mutmut_statuses.items()}
    only_ours, only_theirs = sorted(set(ours) - set(theirs)), sorted(set(theirs) - set(ours))
    disagreements = []
    for key in sorted(set(ours) & set(theirs)):
        if ours[key]["status"] != theirs[key]:
            entry = ours[key]
            disagreements.append(
                {
                    "mutant": key,
                    "id": entry["id"],
                    "file": entry["file"],
                    "lines": entry["lines"],
                    "killmap": entry["status"],
                    "mutmut": mutmut_statuses[key],
                    "change": entry["change"],
                    "why": _why(entry, theirs[key]),
                }
            )
    _settle_unreached(subject, disagreements)
    unexplained = [d["id"] for d in disagreements if d["why"] == "unexplained"]
    if unexplained:
        truth = _plain_pytest(subject, unexplained)
        for d in disagreements:
            if d["id"] in truth:
                plain, summary = truth[d["id"]]
                right = "killmap" if plain == d["killmap"] else "mutmut" if plain == theirs[d["mutant"]] else "neither"
                d["why"] = f"plain pytest on the mutant: {summary}; {right} agrees"
    generated = killmap_doc["sweep"]["generated"]
    return {
        "mutants": {
            "killmap": len(ours),
            "mutmut": len(theirs),
            "both": len(set(ours) & set(theirs)),
            "only_killmap": only_ours,
            "only_mutmut": only_theirs,
            "killmap_duplicates_dropped": generated["duplicates"],
            "killmap_identical": generated["identical"],
        },
        "survivors": {
            "killmap": sum(m["status"] == "survived" for m in ours.values()),
            "mutmut": sum(s == "survived" for s in theirs.values()),
        },
        "statuses": {"killmap": _tally(m["status"] for m in ours.values()), "mutmut": _tally(theirs.values())},
        "disagreements": disagreements,
    }


# Issue 58's target: at least three times `mutmut run`'s pace on every subject, with the same kills.
TARGET_RATIO = 3.0


def target_met(result: dict) -> tuple[bool, str]:
    """Whether one subject meets issue 58's target, and what falls short when it does not.

    The kills are the same when every status the two tools disagree on is the catalog's
    (`named`: `killmap run` judges that change against its contract) or was settled by plain
    pytest in killmap's favour (the mutant run, or, for `unreached`, the original traced), or is
    `killed` against `timeout` (both detect the mutant): a count that differs only by mutmut's
    errors is not a difference in what the sweep finds."""
    unsettled = [
        d["id"]
        for d in result["disagreements"]
        if d["killmap"] != "named" and not d["why"].endswith(("killmap agrees", SAME_KILL))
    ]
    short = []
    if result["ratio_mutmut_over_killmap"] < TARGET_RATIO:
        short.append(f"{result['ratio_mutmut_over_killmap']}x, under {TARGET_RATIO:g}x")
    if unsettled:
        short.append(f"{len(unsettled)} disagreement(s) not settled in killmap's favour")
    return not short, "; ".join(short)


def _tally(values) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return dict(sorted(counts.items()))


SUBJECTS = {
    "draftroute": draftroute,
    "packaging": packaging,
    "packaging-specifiers": packaging_specifiers,
    "werkzeug": werkzeug,
    "more-itertools": more_itertools,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", choices=tuple(SUBJECTS), default=None)
    parser.add_argument("--out", type=Path, default=REPO / "reports" / "bench")
    args = parser.parse_args()
    ensure_venv()
    WORK.mkdir(exist_ok=True)
    from venvs import snapshot_killmap

    KILLMAP_SOURCE.append(snapshot_killmap(WORK))
    subjects = [make() for name, make in SUBJECTS.items() if args.only in (None, name)]
    results = []
    for subject in subjects:
        print(f"== {subject['name']}: {' '.join(subject['targets'])}", flush=True)
        runs: dict[str, list[dict]] = {"killmap": [], "mutmut": []}
        for repeat in range(args.repeat):
            runs["killmap"].append(run_killmap(subject, "mutmut", f"mutmut-ops-{repeat}"))
            runs["mutmut"].append(run_mutmut(subject))
            print(
                f"   repeat {repeat + 1}: killmap {runs['killmap'][-1]['wall']:.1f}s "
                f"(load {runs['killmap'][-1]['load1']}), mutmut {runs['mutmut'][-1]['wall']:.1f}s "
                f"(load {runs['mutmut'][-1]['load1']})",
                flush=True,
            )
        both = run_killmap(subject, "mutmut,killmap", "both-ops")
        comparison = compare(subject, runs["killmap"][-1]["doc"], runs["mutmut"][-1]["statuses"])
        median = {tool: statistics.median(r["wall"] for r in runs[tool]) for tool in runs}
        killmap_ops = [m for m in both["doc"]["sweep"]["mutants"] if m["op"].startswith("killmap:")]
        result = {
            "subject": subject["name"],
            "targets": subject["targets"],
            "tests": subject["mutmut"]["pytest_add_cli_args_test_selection"],
            "repeat": args.repeat,
            "wall": {tool: [r["wall"] for r in runs[tool]] for tool in runs},
            "cpu": {tool: [r["cpu"] for r in runs[tool]] for tool in runs},
            "median_cpu": {tool: statistics.median(r["cpu"] for r in runs[tool]) for tool in runs},
            "load1": {tool: [r["load1"] for r in runs[tool]] for tool in runs},
            "median_wall": median,
            "ratio_mutmut_over_killmap": round(median["mutmut"] / median["killmap"], 2),
            "killmap_operators": {
                "mutants": len(killmap_ops),
                "wall_both_families": both["wall"],
                "statuses": _tally(m["status"] for m in killmap_ops),
                "survivors": [
                    {"id": m["id"], "change": m["change"], "where": f"{m['file']}:{m['line']}"}
                    for m in killmap_ops
                    if m["status"] == "survived"
                ],
            },
            **comparison,
        }
        results.append(result)
        _print(result)
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / "sweep_vs_mutmut.json"
    out.write_text(
        json.dumps(
            {
                "when": time.strftime("%Y-%m-%d %H:%M"),
                "jobs": JOBS,
                "cpus": os.cpu_count(),
                "python": sys.version.split()[0],
                "results": results,
            },
            indent=1,
        )
        + "\n"
    )
    print(f"written: {out}")
    if args.only is None:  # the sweep page's table holds every subject: a partial run leaves it
        DOCS_TABLE.write_text(markdown_table(json.loads(out.read_text())), encoding="utf-8")
        print(f"written: {DOCS_TABLE}")


# The sweep page includes this file (pymdownx.snippets): its figures are this benchmark's output.
DOCS_TABLE = REPO / "docs" / "sweep" / "against-mutmut.md"


def markdown_table(doc: dict) -> str:
    """Which run, then one row per subject: the same mutants, both walls, survivors, disagreements."""
    loads = [v for r in doc["results"] for values in r["load1"].values() for v in values]
    lines = [
        "<!-- Generated by benchmarks/sweep_vs_mutmut.py from sweep_vs_mutmut.json: do not edit. "
        "Re-run python3 benchmarks/sweep_vs_mutmut.py to replace it. -->",
        "",
        f"Measured {doc['when']} by `python3 benchmarks/sweep_vs_mutmut.py`, median of "
        f"{doc['results'][0]['repeat'] if doc['results'] else 0}, Python {doc['python']}, {doc['cpus']} CPUs, "
        f"`--jobs {doc['jobs']}` and `--max-children {doc['jobs']}`"
        + (f"; 1-minute load average before the runs {min(loads)}-{max(loads)}." if loads else "."),
        "",
        "| subject | mutants: killmap / mutmut / the same | wall: killmap / mutmut (repeats) "
        "| CPU (user + system): killmap / mutmut | survivors: killmap / mutmut | disagreements "
        f"| at least {TARGET_RATIO:g}x, the same kills |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in doc["results"]:
        m, s, w = r["mutants"], r["survivors"], r["wall"]
        repeats = ", ".join(f"{v:.1f}" for v in w["killmap"]) + " / " + ", ".join(f"{v:.1f}" for v in w["mutmut"])
        statuses: dict[str, int] = {}
        for d in r["disagreements"]:
            statuses[d["killmap"]] = statuses.get(d["killmap"], 0) + 1
        disagree = (
            f"{len(r['disagreements'])}: " + ", ".join(f"{n} `{k}` in killmap" for k, n in statuses.items())
            if r["disagreements"]
            else "none"
        )
        where = ", ".join(f"`{t}`" for t in r["targets"] + r.get("tests", []))
        met, short = target_met(r)
        lines.append(
            f"| {r['subject']}: {where} | {m['killmap']} / {m['mutmut']} / {m['both']} "
            f"| **{r['median_wall']['killmap']:.1f} s / {r['median_wall']['mutmut']:.1f} s** ({repeats}) "
            f"| {_cpu_cell(r)} | {s['killmap']} / {s['mutmut']} | {disagree} "
            f"| {r['ratio_mutmut_over_killmap']}x: " + ("yes" if met else f"no ({short})") + " |"
        )
    return "\n".join(lines) + "\n"


def _cpu_cell(r: dict) -> str:
    """Median CPU seconds of each tool and mutmut's over killmap's, or a dash for a result
    measured before they were kept. The CPU ratio is the one to read on a busy machine: a load
    above the cores slows `mutmut run` (a pytest session per mutant) more than the sweep, so the
    wall's ratio grows with the load and the CPU's does not."""
    cpu = r.get("median_cpu")
    if not cpu:
        return "-"
    return f"{cpu['killmap']:.1f} s / {cpu['mutmut']:.1f} s ({cpu['mutmut'] / cpu['killmap']:.2f}x)"


def _print(r: dict) -> None:
    m, s = r["mutants"], r["survivors"]
    print(
        f"   mutants: killmap {m['killmap']} (mutmut's operators), mutmut {m['mutmut']}, same {m['both']}; "
        f"only killmap {len(m['only_killmap'])}, only mutmut {len(m['only_mutmut'])}"
    )
    print(
        f"   wall (median of {r['repeat']}): killmap {r['median_wall']['killmap']:.1f}s, mutmut "
        f"{r['median_wall']['mutmut']:.1f}s, mutmut/killmap {r['ratio_mutmut_over_killmap']}x; "
        f"load {r['load1']}; CPU (median) {_cpu_cell(r)}"
    )
    print(f"   survivors: killmap {s['killmap']}, mutmut {s['mutmut']}")
    print(f"   statuses: killmap {r['statuses']['killmap']}; mutmut {r['statuses']['mutmut']}")
    k = r["killmap_operators"]
    print(
        f"   killmap's own operators: {k['mutants']} more mutants, {k['statuses']} "
        f"(both families: {k['wall_both_families']:.1f}s)"
    )
    print(f"   disagreements: {len(r['disagreements'])}")
    for d in r["disagreements"]:
        print(
            f"     {d['killmap']:>10} vs mutmut {d['mutmut']:<10} {d['mutant']}  {d['change']}\n"
            f"                {d['why']}"
        )
    met, short = target_met(r)
    print(f"   target (at least {TARGET_RATIO:g}x mutmut, the same kills): " + ("met" if met else f"NOT met: {short}"))


if __name__ == "__main__":
    main()
