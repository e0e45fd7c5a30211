"""The verdict cache against no cache, side by side, on a real project with hundreds of
dependency files and on the bundled subject.

    python3 benchmarks/cache_bench.py [--repeat 3] [--jobs 2] [--only networkx|bundled] [--work DIR] [--rev REV]

Subjects:
- networkx 3.4.2, from its sdist (pip download --no-deps --no-binary :all:): 12 mutations of its
  shortest-path algorithms (benchmarks/cache/networkx.toml), gated by the algorithms' in-package
  tests. `import networkx` loads every subpackage, so each mutation depends on about 280 files:
  the shape on which a cached run used to be slower than a fresh one.
- the bundled subject: this repository's own catalog (mutations/draftroute.toml), in a copy of
  its committed tree.

For each subject: one populating run (on an emptied cache: it stores every verdict), then,
R times in turn, a fresh run (`--no-cache --no-cache-write`: reads nothing, stores nothing) and a
cached one (`killmap run`). Each run is a `killmap` process of its own, timed from outside; the
1-minute load is read before each. It prints the medians side by side; exit 1 when a cached run
was not wholly cached, when its verdicts differ from the fresh run's, or when the cached median
is not below the fresh one.

It runs in the corpus venv benchmarks/realworld.py makes (pytest 8.3.4), with this checkout's
killmap frozen and byte-compiled first on PYTHONPATH, and keeps its sdist, extracted project, cache and reports in
benchmarks/realworld/.work/ (gitignored). Not in CI: it downloads, and it measures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import realworld as rw  # benchmarks/: this script's folder is first on sys.path
import sdists

NETWORKX = "networkx==3.4.2"
CATALOG = rw.HERE / "cache" / "networkx.toml"


def networkx_project(env: rw.Env, work: Path) -> Path:
    """A fresh copy of networkx's sdist tree as its own git checkout, with the catalog in it."""
    tarball = sdists.download(NETWORKX, env.work / "sdists", env.python)
    root = sdists.unpack(tarball, work / "networkx")
    (root / "mutations").mkdir()
    shutil.copyfile(CATALOG, root / "mutations" / "networkx.toml")
    return sdists.snapshot(root, f"{NETWORKX} sdist, as extracted, and the cache benchmark's catalog")


def bundled_project(work: Path) -> Path:
    """This repository's committed tree (HEAD), as a checkout of its own: never the working
    tree itself, which someone may be editing while the gate's guard restores what a run
    did not expect to change."""
    root = work / "bundled"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(rw.REPO), "archive", "HEAD"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
    return sdists.snapshot(root, "killmap at HEAD, for the cache benchmark")


def frozen_killmap(env: rw.Env, work: Path, rev: str | None) -> Path:
    """This checkout's killmap (or revision `rev`'s) copied and byte-compiled, for the whole
    measurement: a source edited meanwhile would change the gate's own digest, which keys
    every cached verdict (venvs.snapshot_killmap does the same for run.py). The folder to put
    first on PYTHONPATH."""
    dest = work / "killmap-src"
    shutil.rmtree(dest, ignore_errors=True)
    if rev is None:
        shutil.copytree(rw.REPO / "src" / "killmap", dest / "killmap", ignore=shutil.ignore_patterns("__pycache__"))
    else:
        archive = subprocess.run(
            ["git", "-C", str(rw.REPO), "archive", rev, "src/killmap"], check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", str(work)], input=archive.stdout, check=True)
        shutil.move(str(work / "src" / "killmap"), str(dest / "killmap"))
        shutil.rmtree(work / "src")
    subprocess.run([str(env.python), "-m", "compileall", "-q", str(dest)], check=True)
    return dest


def load1() -> float:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return -1.0


def gate(env: rw.Env, root: Path, work: Path, label: str, jobs: int, *flags: str) -> dict:
    """One `killmap run` in its own process: its wall from outside, the load before it, and
    what its report says."""
    reports = work / "reports" / label
    shutil.rmtree(reports, ignore_errors=True)
    environ = rw.clean_env()
    # A user's killmap is byte-compiled once, not at every start: only the project's own
    # bytecode is kept out of its tree (the gate's workers put theirs elsewhere anyway).
    environ.pop("PYTHONDONTWRITEBYTECODE", None)
    environ["KILLMAP_CACHE_DIR"] = str(work / "cache")
    environ["PYTHONPATH"] = str(work.parent / "killmap-src")
    argv = [str(env.python), "-m", "killmap", "run", "--jobs", str(jobs), "--report-dir", str(reports), *flags]
    load = load1()
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=root, env=environ, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{label}: killmap exited {done.returncode}\n{(done.stdout + done.stderr)[-2000:]}")
    report = json.loads((reports / "killmap.json").read_text(encoding="utf-8"))
    return {
        "wall": wall,
        "load1": load,
        "verdicts": {m["name"]: m["verdict"] for m in report["mutations"]},
        "cached": sum(m["cached"] for m in report["mutations"]),
    }


def dependency_files(work: Path) -> int:
    """The largest dependency set any cached verdict of this subject is keyed on."""
    most = 0
    for path in (work / "cache").rglob("verdicts.json"):
        entries = json.loads(path.read_text(encoding="utf-8"))
        most = max([most, *(len(e.get("deps", {})) for k, e in entries.items() if not k.startswith("#"))])
    return most


def measure(env: rw.Env, name: str, root: Path, work: Path, repeat: int, jobs: int, fresh_flags: tuple) -> dict:
    shutil.rmtree(work / "cache", ignore_errors=True)
    populated = gate(env, root, work, f"{name}-populate", jobs)  # an empty cache: it stores every verdict
    print(f"{name}: populated in {populated['wall']:.2f} s (load {populated['load1']})", flush=True)
    fresh, cached = [], []
    for r in range(repeat):
        fresh.append(gate(env, root, work, f"{name}-fresh-{r}", jobs, *fresh_flags))
        cached.append(gate(env, root, work, f"{name}-cached-{r}", jobs))
        print(
            f"{name}: repeat {r + 1}: fresh {fresh[-1]['wall']:.2f} s (load {fresh[-1]['load1']}), "
            f"cached {cached[-1]['wall']:.2f} s (load {cached[-1]['load1']})",
            flush=True,
        )
    problems = []
    total = len(populated["verdicts"])
    if any(run["cached"] != total for run in cached):
        problems.append(f"{name}: a cached run reused {[run['cached'] for run in cached]} of {total} verdicts")
    for run in fresh + cached:
        differ = {
            k: (populated["verdicts"].get(k), v)
            for k, v in run["verdicts"].items()
            if populated["verdicts"].get(k) != v
        }
        if differ:
            problems.append(f"{name}: verdicts differ from the populating run's: {differ}")
    return {
        "subject": name,
        "mutations": total,
        "dependency_files": dependency_files(work),
        "fresh": statistics.median(run["wall"] for run in fresh),
        "cached": statistics.median(run["wall"] for run in cached),
        "loads": [run["load1"] for run in fresh + cached],
        "problems": problems,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", choices=("networkx", "bundled"), action="append")
    parser.add_argument("--work", type=Path, default=rw.DEFAULT_WORK / "cache-bench")
    # A revision from before the two cache flags: its --no-cache read and wrote nothing.
    parser.add_argument("--rev", help="measure killmap as of this git revision (default: the working tree)")
    args = parser.parse_args(argv)
    env = rw.prepare_env(rw.DEFAULT_WORK, rw.REPO)
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    frozen_killmap(env, work, args.rev)
    fresh_flags = ("--no-cache", "--no-cache-write") if args.rev is None else ("--no-cache",)
    subjects = {"networkx": lambda: networkx_project(env, work), "bundled": lambda: bundled_project(work)}
    results = []
    for name in args.only or subjects:
        # The runs' cache and reports outside the project: files it lists would change its key.
        results.append(measure(env, name, subjects[name](), work / f"{name}-runs", args.repeat, args.jobs, fresh_flags))
    which = f"killmap {args.rev or 'working tree'}"
    print(f"\n{which}: median of {args.repeat}, --jobs {args.jobs}, Python {sys.version.split()[0]}")
    print(f"{'subject':<10} {'mutations':>9} {'dep files':>9} {'fresh':>8} {'cached':>8}  load (1 min)")
    for res in results:
        loads = f"{min(res['loads']):.2f}-{max(res['loads']):.2f}"
        row = f"{res['subject']:<10} {res['mutations']:>9} {res['dependency_files']:>9}"
        print(f"{row} {res['fresh']:>7.2f}s {res['cached']:>7.2f}s  {loads}")
    problems = [p for res in results for p in res["problems"]]
    problems += [
        f"{r['subject']}: cached {r['cached']:.2f} s is not below fresh {r['fresh']:.2f} s"
        for r in results
        if r["cached"] >= r["fresh"]
    ]
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
