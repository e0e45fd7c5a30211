"""The real-world corpus: killmap's verdicts on code nobody here wrote, against ground truth.

    python3 benchmarks/realworld.py [--only packaging|click|werkzeug|markupsafe] [--keep]
                                    [--killmap-root DIR] [--skip NAME ...] [--jobs N]
                                    [--work DIR] [--no-swap]

For each corpus (packaging, click, werkzeug, markupsafe) this downloads the sdist at a pinned version with pip,
extracts it, copies in our catalog (benchmarks/realworld/<corpus>/catalog.toml) as
mutations/<corpus>.toml, runs `killmap run --no-cache` there and reads killmap.json. Each
mutation's verdict, red set and mutant text are compared with the ground truth beside the
catalog (ground_truth.toml), which was observed with plain pytest in scratch copies by
benchmarks/realworld/observe.py, never through killmap's runner. It prints a table and
`N/M verdicts match the observed ground truth` per corpus and overall; exit 0 only when
every mutation matches.

Everything downloaded or built lives in benchmarks/realworld/.work/ (gitignored): the
sdists, the venv (killmap editable from --killmap-root, default this repository, plus the
projects' test dependencies at pinned versions), the extracted projects and the reports.
The extracted projects are rebuilt on every run so that no earlier run can leave anything
behind; --keep leaves them (and the reports) in place afterwards for inspection.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import sdists  # benchmarks/sdists.py: this script's folder is first on sys.path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the venv has tomli (a killmap dependency there)
    import tomli as tomllib  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent  # benchmarks/
REPO = HERE.parent
CORPUS_DIR = HERE / "realworld"
DEFAULT_WORK = CORPUS_DIR / ".work"

# The test tools, pinned: the ground truth was observed with exactly these, so a newer
# pytest changing an outcome must show up as a deliberate re-observation, not as drift.
# pytest 8.3.4 is what click 8.1.8's requirements/tests.txt pins; pretend is the only
# test dependency packaging's tests/requirements.txt adds that the gate's tests import;
# werkzeug's tests/conftest.py imports ephemeral_port_reserve at its top, and werkzeug
# itself imports markupsafe (installed --no-deps from its sdist, it needs it there),
# pinned at the markupsafe corpus's own version.
TEST_TOOLS = ("pytest==8.3.4", "pretend==1.0.9", "ephemeral-port-reserve==1.1.4", "markupsafe==3.0.2")


@dataclass(frozen=True)
class Corpus:
    """One real project, taken from its sdist (each ships its tests in it)."""

    name: str  # also the catalog's folder under benchmarks/realworld/
    version: str

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def folder(self) -> str:
        return f"{self.name}-{self.version}"  # the sdist's top-level folder

    @property
    def catalog(self) -> Path:
        return CORPUS_DIR / self.name / "catalog.toml"

    @property
    def ground_truth(self) -> Path:
        return CORPUS_DIR / self.name / "ground_truth.toml"


CORPORA = (
    Corpus("packaging", "24.2"),
    Corpus("click", "8.1.8"),
    Corpus("werkzeug", "3.1.3"),
    Corpus("markupsafe", "3.0.2"),
)

# Verdicts for which the observed red set is the whole story of the run: the tests ran to
# completion. For `broken` (the mutant never imports: nothing runs, or collection fails)
# and `timeout` (the run is killed part way) there is no complete red set to compare.
RED_SET_COMPARED = {"held", "vacuous", "overreach", "visible", "wrong-cause", "unevidenced", "flaky"}


# --- the environment ----------------------------------------------------------------------


@dataclass(frozen=True)
class Env:
    """The venv everything runs in, and the work folder."""

    work: Path
    venv: Path
    killmap_root: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def killmap(self) -> Path:
        return self.venv / "bin" / "killmap"


def prepare_env(work: Path, killmap_root: Path) -> Env:
    """The venv for one killmap checkout: created and filled on first use.

    Each killmap checkout gets its own venv (its path hashed into the name), so that the
    corpus can run against this worktree and against another one without reinstalling.
    """
    killmap_root = killmap_root.resolve()
    tag = "" if killmap_root == REPO else "-" + hashlib.sha256(str(killmap_root).encode()).hexdigest()[:8]
    sys.path.insert(0, str(HERE))
    from venvs import for_this_python

    env = Env(work=work, venv=for_this_python(work / f"venv{tag}"), killmap_root=killmap_root)
    stamp = env.venv / "realworld-stamp.json"
    # The checkout's pyproject.toml is in the stamp: a dependency added there since the venv
    # was made must be installed before that killmap can run.
    pyproject = hashlib.sha256((killmap_root / "pyproject.toml").read_bytes()).hexdigest()
    # And the Python: a venv of another interpreter must be rebuilt, never silently reused.
    wanted = {
        "killmap_root": str(killmap_root),
        "tools": list(TEST_TOOLS),
        "pyproject": pyproject,
        "python": ".".join(map(str, sys.version_info[:2])),
    }
    if stamp.is_file() and json.loads(stamp.read_text()) == wanted and env.killmap.exists():
        return env
    work.mkdir(parents=True, exist_ok=True)
    print(f"creating {env.venv} (killmap -e {killmap_root}, {', '.join(TEST_TOOLS)}) ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(env.venv)], check=True)
    subprocess.run([str(env.python), "-m", "pip", "install", "-q", "-e", str(killmap_root), *TEST_TOOLS], check=True)
    stamp.write_text(json.dumps(wanted))
    return env


def fetch_sdist(env: Env, corpus: Corpus) -> Path:
    """The pinned sdist, downloaded once with pip (never a wheel: wheels hold no tests)."""
    return sdists.download(corpus.requirement, env.work / "sdists", env.python)


def install(env: Env, corpus: Corpus) -> None:
    """The project itself installed in the venv from its sdist, as `pip install .` would.

    Why: a test may import the project in a subprocess (click's test_imports.py does), and
    killmap puts the sandbox first on sys.path only inside its own process, so without an
    installed copy that subprocess cannot import the project and killmap's baseline is red.
    A non-editable install keeps the venv independent of where the extracted copies live;
    in-process, the sandbox's copy comes first (killmap proves it after each run), and the
    observations put the scratch copy first through PYTHONPATH, subprocesses included.
    """
    probe = subprocess.run(
        [str(env.python), "-c", f"import importlib.metadata as m; print(m.version({corpus.name!r}))"],
        capture_output=True,
        text=True,
    )
    if probe.stdout.strip() != corpus.version:
        print(f"installing {corpus.requirement} into the venv (from its sdist) ...", flush=True)
        subprocess.run(
            [str(env.python), "-m", "pip", "install", "-q", "--no-deps", str(fetch_sdist(env, corpus))], check=True
        )


def extract(env: Env, corpus: Corpus, dest: Path) -> Path:
    """A fresh copy of the sdist's tree at dest/<name>-<version>, as its own git checkout
    (sdists.py says why git)."""
    tarball = fetch_sdist(env, corpus)
    install(env, corpus)
    root = sdists.unpack(tarball, dest / corpus.folder)
    if not (root / "pyproject.toml").is_file() or not (root / "tests").is_dir():
        raise SystemExit(f"{tarball.name}: expected pyproject.toml and tests/ at {root}")
    return sdists.snapshot(root, f"{corpus.folder} sdist, as extracted")


def clean_env() -> dict[str, str]:
    """The environment every tool runs in: nothing inherited that could steer pytest."""
    env = dict(os.environ)
    for key in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "COVERAGE_PROCESS_START", "PYTHONPATH", "VIRTUAL_ENV"):
        env.pop(key, None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


# --- ground truth -------------------------------------------------------------------------


@dataclass(frozen=True)
class Truth:
    """What plain pytest showed under one mutant (see observe.py), and the verdict it implies."""

    name: str
    expected_verdict: str
    outcome: str  # "completed", "timeout" or "collection-error"
    observed_red: tuple[str, ...]
    red_at: dict[str, str]  # per red test, the deepest project frame it went red in
    runs: int
    diff: str  # the mutant that was observed
    why: str


def load_truth(corpus: Corpus) -> dict[str, Truth]:
    data = tomllib.loads(corpus.ground_truth.read_text(encoding="utf-8"))
    truths = {}
    for entry in data.get("mutation", []):
        truth = Truth(
            name=entry["name"],
            expected_verdict=entry["expected_verdict"],
            outcome=entry["outcome"],
            observed_red=tuple(entry["observed_red"]),
            red_at=dict(entry.get("red_at", {})),
            runs=entry["runs"],
            diff=entry["diff"],
            why=entry.get("why", ""),
        )
        if truth.expected_verdict == "?" or truth.runs < 2:
            raise SystemExit(
                f"{corpus.ground_truth}: {truth.name} is not reviewed yet (expected_verdict '?' or fewer than 2 runs)"
            )
        truths[truth.name] = truth
    return truths


def catalog_names(path: Path) -> list[str]:
    return [entry["name"] for entry in tomllib.loads(path.read_text(encoding="utf-8"))["mutation"]]


def catalog_without(text: str, skip: set[str]) -> str:
    """The catalog text minus the [[mutation]] blocks named in skip.

    For --skip: an old killmap may refuse one entry as a catalog error (exit 2, which
    gives no verdict for any mutation); leaving that entry out lets the others run, and
    the skipped ones still count as mismatches. Blocks are cut at `[[mutation]]` lines,
    which is how our catalogs are laid out; the result is re-parsed to be sure.
    """
    if not skip:
        return text
    head, *blocks = text.split("\n[[mutation]]\n")
    names = [tomllib.loads("[[mutation]]\n" + block)["mutation"][0]["name"] for block in blocks]
    result = "\n[[mutation]]\n".join([head, *(b for b, n in zip(blocks, names, strict=True) if n not in skip)])
    if [e["name"] for e in tomllib.loads(result)["mutation"]] != [n for n in names if n not in skip]:
        raise SystemExit("--skip: could not cut the catalog into [[mutation]] blocks")
    return result


# --- running killmap and comparing --------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One `killmap run` on one corpus: its exit code and report (None on exit 2)."""

    exit_code: int
    report: dict | None
    error: str  # stderr tail when there is no report


def run_killmap(
    env: Env,
    corpus: Corpus,
    root: Path,
    report_dir: Path,
    skip: set[str],
    jobs: int | None,
    extra: tuple[str, ...] = (),
) -> Run:
    catalog = root / "mutations" / f"{corpus.name}.toml"
    catalog.parent.mkdir(exist_ok=True)
    catalog.write_text(catalog_without(corpus.catalog.read_text(encoding="utf-8"), skip), encoding="utf-8")
    if report_dir.exists():
        shutil.rmtree(report_dir)
    command = [str(env.killmap), "run", "--no-cache", "--report-dir", str(report_dir)]
    if jobs:
        command += ["--jobs", str(jobs)]
    command += list(extra)
    process_env = clean_env()
    process_env["XDG_CACHE_HOME"] = str(env.work / "cache")  # never the user's ~/.cache
    print(f"running killmap on {corpus.folder} ({env.killmap_root}) ...", flush=True)
    # The terminal output is shown to the user as it comes, never read: the verdicts
    # come from killmap.json only.
    done = subprocess.run(command, cwd=root, env=process_env, stderr=subprocess.PIPE, text=True)
    sys.stderr.write(done.stderr[-4000:])
    report_file = report_dir / "killmap.json"
    if done.returncode in (0, 1) and report_file.is_file():
        return Run(done.returncode, json.loads(report_file.read_text(encoding="utf-8")), "")
    return Run(done.returncode, None, done.stderr.strip()[-600:] or f"exit {done.returncode}, no killmap.json")


@dataclass(frozen=True)
class Row:
    """One mutation: the ground truth against what killmap reported."""

    name: str
    op: str
    expected: str
    got: str
    observed_red: int
    killmap_red: int | None
    problems: tuple[str, ...]  # empty: this mutation matches

    @property
    def matches(self) -> bool:
        return not self.problems


def compare(corpus: Corpus, truths: dict[str, Truth], run: Run, skip: set[str]) -> list[Row]:
    entries = {m["name"]: m for m in (run.report or {}).get("mutations", [])}
    ops = {e["name"]: e["op"] for e in tomllib.loads(corpus.catalog.read_text(encoding="utf-8"))["mutation"]}
    rows = []
    for name in catalog_names(corpus.catalog):
        truth = truths.get(name)
        entry = entries.get(name)
        problems = []
        if truth is None:
            problems.append("no ground truth for this mutation")
        if entry is None:
            problems.append(
                "left out with --skip"
                if name in skip
                else f"killmap gave no verdict (exit {run.exit_code}, see below)"
                if run.report is None
                else "killmap's report has no entry for it"
            )
        if truth is None or entry is None:
            rows.append(
                Row(
                    name,
                    ops.get(name, "?"),
                    truth.expected_verdict if truth else "?",
                    entry["verdict"] if entry else "-",
                    len(truth.observed_red) if truth else 0,
                    None,
                    tuple(problems),
                )
            )
            continue
        got = entry["verdict"]
        red = sorted(r["id"] for r in entry["red"])
        if got != truth.expected_verdict:
            detail = entry["detail"] if len(entry["detail"]) <= 300 else entry["detail"][:300] + " ..."
            problems.append(f"verdict {got} (expected {truth.expected_verdict}): {detail}")
        # The mutant killmap ran must be the one that was observed, or the comparison is moot.
        if entry["diff"] != truth.diff:
            problems.append("killmap's mutant differs from the observed one (the diff in ground_truth.toml)")
        if truth.expected_verdict in RED_SET_COMPARED and got in RED_SET_COMPARED:
            observed = sorted(truth.observed_red)
            if red != observed:
                extra = sorted(set(red) - set(observed))
                lost = sorted(set(observed) - set(red))
                problems.append(f"red set differs: killmap only {_few(extra)}; observed only {_few(lost)}")
            # Where each red test went red (issue 8 item 5: the deepest frame inside the project).
            elsewhere = [
                f"{r['id']} at {r['raised_at']}, observed {truth.red_at[r['id']]}"
                for r in entry["red"]
                if r["id"] in truth.red_at and r["raised_at"] != truth.red_at[r["id"]]
            ]
            if elsewhere:
                problems.append(f"raised_at differs: {_few(elsewhere)}")
        rows.append(
            Row(name, entry["op"], truth.expected_verdict, got, len(truth.observed_red), len(red), tuple(problems))
        )
    return rows


def _few(ids: list[str], limit: int = 3) -> str:
    if not ids:
        return "none"
    shown = ", ".join(ids[:limit])
    return f"{shown} (+{len(ids) - limit} more)" if len(ids) > limit else shown


def print_table(corpus: Corpus, rows: list[Row]) -> None:
    headers = ("mutation", "op", "expected", "killmap", "red obs", "red km", "match")
    cells = [
        (
            r.name,
            r.op,
            r.expected,
            r.got,
            str(r.observed_red),
            "-" if r.killmap_red is None else str(r.killmap_red),
            "yes" if r.matches else "NO",
        )
        for r in rows
    ]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    print(f"\n{corpus.folder}")
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for c in cells:
        print("  ".join(v.ljust(w) for v, w in zip(c, widths, strict=True)))
    for r in rows:
        for problem in r.problems:
            print(f"  {r.name}: {problem}")
    print(f"{sum(r.matches for r in rows)}/{len(rows)} verdicts match the observed ground truth ({corpus.name})")


def tree_untouched(root: Path, catalog_rel: str) -> list[str]:
    """Files killmap changed in the project (it must only read it): git status, minus our catalog."""
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    return [line for line in status if line[3:] not in (catalog_rel, "mutations/")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--only", choices=[c.name for c in CORPORA], action="append", help="run only this corpus (repeatable)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the extracted projects and reports")
    parser.add_argument(
        "--killmap-root",
        type=Path,
        default=REPO,
        help="the killmap checkout to install in the venv (default: this repository)",
    )
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        metavar="NAME",
        help="leave this mutation out of the catalog given to killmap; it counts as a mismatch",
    )
    parser.add_argument("--jobs", type=int, default=None, help="passed to killmap run --jobs")
    parser.add_argument(
        "--no-swap",
        action="store_true",
        help="passed to killmap run: every mutant in a fresh session (the swap's check)",
    )
    parser.add_argument(
        "--reach-tracer",
        choices=("auto", "coverage"),
        default=None,
        help="passed to killmap run (on Python 3.12+, coverage forces the C tracer)",
    )
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help="work folder (default: %(default)s)")
    args = parser.parse_args(argv)

    chosen = [c for c in CORPORA if not args.only or c.name in args.only]
    unknown = set(args.skip) - {n for c in chosen for n in catalog_names(c.catalog)}
    if unknown:
        parser.error(f"--skip: no mutation named {', '.join(sorted(unknown))} in the chosen corpora")
    env = prepare_env(args.work.resolve(), args.killmap_root)
    projects = env.work / "projects"
    all_rows: list[Row] = []
    for corpus in chosen:
        truths = load_truth(corpus)
        root = extract(env, corpus, projects)
        report_dir = env.work / "reports" / (corpus.name + env.venv.name[len("venv") :])
        run = run_killmap(
            env,
            corpus,
            root,
            report_dir,
            set(args.skip),
            args.jobs,
            (("--no-swap",) if args.no_swap else ())
            + (("--reach-tracer", args.reach_tracer) if args.reach_tracer else ()),
        )
        rows = compare(corpus, truths, run, set(args.skip))
        changed = tree_untouched(root, f"mutations/{corpus.name}.toml")
        print_table(corpus, rows)
        if changed:
            print(f"  WARNING: killmap left the project tree changed: {changed[:5]}")
        print(
            f"  report: {report_dir / 'killmap.json'}" if run.report else f"  killmap exit {run.exit_code}: {run.error}"
        )
        all_rows += rows
        if not args.keep:
            shutil.rmtree(root)
    matched = sum(r.matches for r in all_rows)
    print(
        f"\n{matched}/{len(all_rows)} verdicts match the observed ground truth (overall, killmap from "
        f"{env.killmap_root})"
    )
    return 0 if all_rows and matched == len(all_rows) else 1


if __name__ == "__main__":
    sys.exit(main())
