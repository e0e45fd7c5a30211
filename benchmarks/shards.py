"""A sweep of a whole real package, unsharded and as 4 shards: round-robin against time-balanced.

    python3 benchmarks/shards.py [--subject packaging|click] [--quick] [--exclude MODULE] [--repeat 3]
                                 [--shards 4] [--jobs 2] [--out reports/bench]

Subject: packaging 24.2 (the sdist the real-world corpus uses, downloaded once with pip),
all of `src/packaging/` swept with `--ops mutmut` (3,149 mutants) against its whole test
suite. `--quick` sweeps three of its modules (utils.py, requirements.py, _structures.py: 167
mutants) against their three test files, once: a smoke run of minutes, not the measurement.
`--exclude tags` leaves out tags.py (828 of the 3,149): each of its dearest mutants runs about
8,600 tests in pytest's order before its first red, 100 s apiece here. Without it, the
unsharded sweep was still on the other modules' dearest mutants (Version.__init__,
SpecifierSet.__init__, about a minute each) after 17 minutes. `--subject click`: click
8.1.8's types.py, parser.py, utils.py and formatting.py (1,878 mutants) against its whole
suite but tests/test_imports.py (it imports click in a subprocess, which finds the venv's).

Per repeat, one after another on this machine (a stand-in for N runners), each a fresh
`killmap sweep --no-cache --jobs J` with its own empty cache folder:
1. the unsharded sweep;
2. the N shards dealt round-robin (`--shard K/N`);
3. the N shards balanced by time (`--shard K/N --durations` the first repeat's unsharded
   report), then each split's shards merged (`killmap merge`) and compared, by mutant id,
   with the unsharded statuses;
4. `--shard 1/2`: half of the package (round-robin over mutant ids is an even sample of it),
   beside shard 1/N (1/N of it) and the unsharded sweep (all of it), for how the cost grows:
   mutants per second and the peak memory (VmHWM, the gate process alone, not its workers).

Printed: each shard's wall time (median of the repeats), max/mean per split (the target: the
balanced split's slowest shard within 1.15x the mean), whether the merged statuses equal the
unsharded ones, and mutants/s and peak memory at each size, with the 1-minute load average
before each run. Everything is also written to OUT/shards.json.

Creates benchmarks/.venv-shards (gitignored) on first use with killmap[sweep] (editable) and
packaging's test dependency (pretend), then re-runs itself there. Never run in CI.
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

import sdists  # benchmarks/sdists.py: this script's folder is first on sys.path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
VENV = HERE / ".venv-shards"
WORK = HERE / ".shards-work"
SDISTS = HERE / "realworld" / ".work" / "sdists"  # the real-world corpora's, shared
PACKAGING = "packaging==24.2"
CLICK = "click==8.1.8"
# Four of click's modules, 1,878 of its 6,799 mutmut mutants, against its whole suite: the
# whole package is about three and a half times the work, past a session's machine time.
CLICK_MODULES = ("types", "parser", "utils", "formatting")
# Both corpora's ground truth was observed with it (realworld.py); click 8.1.8's tests do not
# collect under pytest 9, which makes one of their parametrize calls an error.
PYTEST = "pytest==8.3.4"
TARGET = 1.15  # the balanced split's slowest shard, at most this times the mean
QUICK_MODULES = ("utils", "requirements", "_structures")
# The gate process run in-process, so that its own peak RSS is what is read: getrusage's
# RUSAGE_CHILDREN would fold in its workers.
GATE = (
    "import resource, sys\n"
    "from killmap.cli import main\n"
    "code = main(sys.argv[2:])\n"
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n"
    "sys.exit(code)\n"
)


def ensure_venv() -> None:
    sys.path.insert(0, str(HERE))
    from venvs import for_this_python, run_inside

    run_inside(
        for_this_python(VENV),
        Path(__file__),
        what=f"killmap[sweep] (editable), {PYTEST} and pretend",
        probe=f"import killmap, mutmut, pretend, pytest; assert pytest.__version__ == {PYTEST.split('==')[1]!r}",
        install=["-e", f"{REPO}[sweep]", PYTEST, "pretend==1.0.9"],
    )


def fresh_copy(requirement: str, write: dict[str, str] | None = None) -> Path:
    """A fresh copy of the sdist (downloaded once with pip), with `write`'s files added, under git."""
    tarball = sdists.download(requirement, SDISTS)
    root = sdists.unpack(tarball, WORK / requirement.replace("==", "-"))
    for rel, text in (write or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return sdists.snapshot(root)


def subject(name: str, quick: bool, exclude: tuple[str, ...] = ()) -> tuple[Path, list[str]]:
    """A fresh copy of the subject, under git; and the sweep's targets and test arguments."""
    if name == "click":
        # The catalog gives only [gate]: click's whole suite, but the one file that imports
        # click in a subprocess, which finds the venv's click (mutmut's dependency), not this one.
        catalog = '[gate]\ntests = ["tests"]\npaths = ["src"]\nexclude = ["tests/test_imports.py"]\n'
        root = fresh_copy(CLICK, {"mutations/click.toml": catalog})
        return root, [*(f"src/click/{m}.py" for m in CLICK_MODULES), "--ops", "mutmut"]
    root = fresh_copy(PACKAGING)
    if quick:
        targets = [f"src/packaging/{m}.py" for m in QUICK_MODULES]
        tests = [f"tests/test_{m.strip('_')}.py" for m in QUICK_MODULES]
        return root, [*targets, "--ops", "mutmut", *(arg for test in tests for arg in ("--tests", test))]
    if exclude:
        # Every module but these, each named: what a sweep of the package without them sweeps.
        package = root / "src" / "packaging"
        kept = sorted(
            p.relative_to(root).as_posix()
            for p in package.rglob("*.py")
            if p.relative_to(package).with_suffix("").as_posix() not in exclude
        )
        return root, [*kept, "--ops", "mutmut", "--tests", "tests"]
    return root, ["src/packaging/", "--ops", "mutmut", "--tests", "tests"]


def _env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = str(cache)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    for key in ("PYTEST_ADDOPTS", "COVERAGE_PROCESS_START", "PYTHONPATH", "KILLMAP_CACHE_DIR"):
        env.pop(key, None)
    return env


def sweep(root: Path, args: list[str], label: str, jobs: int) -> dict:
    """One `killmap sweep` from an empty cache: wall, peak memory of the gate, its report."""
    folder = WORK / "reports" / label
    cache = WORK / "cache" / label
    for path in (folder, cache):
        shutil.rmtree(path, ignore_errors=True)
    peak = WORK / f"peak-{label}"
    argv = [sys.executable, "-c", GATE, str(peak), "sweep", *args, "--no-cache", "--jobs", str(jobs)]
    load, started = round(os.getloadavg()[0], 2), time.perf_counter()
    done = subprocess.run(
        [*argv, "--report-dir", str(folder)], cwd=root, env=_env(cache), capture_output=True, text=True
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"killmap sweep ({label}) failed ({done.returncode}): {done.stderr[-1500:]}")
    report = folder / "killmap-sweep.json"
    doc = json.loads(report.read_text(encoding="utf-8"))
    mutants = len(doc["sweep"]["mutants"])
    peak_mb = int(peak.read_text()) / 1024
    print(f"  {label:<22} {mutants:>5} mutants {wall:>8.1f} s  peak {peak_mb:>6.0f} MB  load {load}", flush=True)
    baseline = round(sum(b["wall_seconds"] for b in doc["sweep"]["baselines"]), 2)
    return {
        "wall": round(wall, 2),
        "baseline": baseline,
        "load1": load,
        "mutants": mutants,
        "peak_mb": round(peak_mb, 1),
        "report": report,
    }


def merged_statuses(root: Path, reports: list[Path], label: str) -> dict[str, str]:
    folder = WORK / "reports" / f"merged-{label}"
    shutil.rmtree(folder, ignore_errors=True)
    argv = [sys.executable, "-m", "killmap", "merge", *map(str, reports), "--report-dir", str(folder)]
    done = subprocess.run(argv, cwd=root, env=_env(WORK / "cache" / "merge"), capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"killmap merge ({label}) failed ({done.returncode}): {done.stderr[-1500:]}")
    return statuses(folder / "killmap-sweep.json")


def statuses(report: Path) -> dict[str, str]:
    doc = json.loads(report.read_text(encoding="utf-8"))
    return {m["id"]: m["status"] for m in doc["sweep"]["mutants"]}


def one_repeat(root: Path, args: list[str], n: int, jobs: int, durations: Path | None, r: int) -> dict:
    print(f"repeat {r + 1}", flush=True)
    whole = sweep(root, args, f"r{r}-whole", jobs)
    durations = durations or whole["report"]
    splits: dict[str, list[dict]] = {"round-robin": [], "time": []}
    for k in range(1, n + 1):
        splits["round-robin"].append(sweep(root, [*args, "--shard", f"{k}/{n}"], f"r{r}-rr-{k}", jobs))
    for k in range(1, n + 1):
        timed = [*args, "--shard", f"{k}/{n}", "--durations", str(durations)]
        splits["time"].append(sweep(root, timed, f"r{r}-time-{k}", jobs))
    half = sweep(root, [*args, "--shard", "1/2"], f"r{r}-half", jobs)
    unsharded = statuses(whole["report"])
    equal = {}
    for name, shards in splits.items():
        merged = merged_statuses(root, [s["report"] for s in shards], f"r{r}-{name}")
        equal[name] = {
            "equal": merged == unsharded,
            "differ": sorted(i for i in unsharded if merged.get(i) != unsharded[i])[:10],
        }
    return {"whole": whole, "splits": splits, "half": half, "equal": equal, "durations": durations}


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 2)


def summarize(repeats: list[dict], n: int) -> dict:
    """Per split, each shard's median wall over the repeats, and max/mean of those."""
    out: dict = {"splits": {}}
    for name in ("round-robin", "time"):
        walls = [_median([r["splits"][name][k]["wall"] for r in repeats]) for k in range(n)]
        mean = statistics.mean(walls)
        # Each shard runs the baseline again: a cost sharding repeats and no split divides.
        past = [
            _median([r["splits"][name][k]["wall"] - r["splits"][name][k]["baseline"] for r in repeats])
            for k in range(n)
        ]
        out["splits"][name] = {
            "past_baseline": past,
            "past_baseline_max_over_mean": round(max(past) / statistics.mean(past), 3),
            "walls": walls,
            "mutants": [repeats[0]["splits"][name][k]["mutants"] for k in range(n)],
            "max": max(walls),
            "mean": round(mean, 2),
            "max_over_mean": round(max(walls) / mean, 3),
            "merged_equal": all(r["equal"][name]["equal"] for r in repeats),
            "differ": repeats[-1]["equal"][name]["differ"],
        }
    sizes = {
        f"{100 // n}%": [r["splits"]["round-robin"][0] for r in repeats],
        "50%": [r["half"] for r in repeats],
        "100%": [r["whole"] for r in repeats],
    }
    out["growth"] = {
        size: {
            "mutants": runs[0]["mutants"],
            "wall": _median([x["wall"] for x in runs]),
            "mutants_per_s": _median([x["mutants"] / x["wall"] for x in runs]),
            "peak_mb": _median([x["peak_mb"] for x in runs]),
        }
        for size, runs in sizes.items()
    }
    loads = [
        x["load1"] for r in repeats for x in [r["whole"], r["half"], *r["splits"]["round-robin"], *r["splits"]["time"]]
    ]
    out["load1"] = [min(loads), max(loads)]
    return out


def render(summary: dict, n: int, repeats: int) -> str:
    lines = [f"sweep shards: {n} shards one after another, median of {repeats}, load {summary['load1']}", ""]
    header = "| split | " + " | ".join(f"shard {k + 1}" for k in range(n)) + " | max / mean | merged = unsharded |"
    lines += [header, "|---" * (n + 3) + "|"]
    for name, split in summary["splits"].items():
        cells = [f"{w:.1f} s ({m})" for w, m in zip(split["walls"], split["mutants"], strict=True)]
        verdict = "yes" if split["merged_equal"] else f"no: {', '.join(split['differ'])}"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {split['max_over_mean']:.3f}x | {verdict} |")
    for name, split in summary["splits"].items():
        past = ", ".join(f"{s:.1f}" for s in split["past_baseline"])
        ratio = split["past_baseline_max_over_mean"]
        lines.append(f"{name}, each shard's wall less its baseline: {past} s, max/mean {ratio:.3f}x")
    balanced = summary["splits"]["time"]["max_over_mean"]
    met = "met" if balanced <= TARGET else "NOT met"
    lines += ["", f"target: the balanced split's slowest shard within {TARGET}x the mean: {balanced:.3f}x, {met}", ""]
    lines += ["| size | mutants | wall | mutants/s | peak memory of the gate |", "|---|---|---|---|---|"]
    for size, row in summary["growth"].items():
        speed, peak = f"{row['mutants_per_s']:.2f}", f"{row['peak_mb']:.0f} MB"
        lines.append(f"| {size} | {row['mutants']} | {row['wall']:.1f} s | {speed} | {peak} |")
    growth = summary["growth"]
    first, last = next(iter(growth.values())), growth["100%"]
    memory, count = last["peak_mb"] / first["peak_mb"], last["mutants"] / first["mutants"]
    grows = "met" if memory <= count else "NOT met"
    lines.append(f"\npeak memory x{memory:.2f} for x{count:.2f} the mutants: no faster than the count, {grows}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subject", choices=("packaging", "click"), default="packaging")
    parser.add_argument("--quick", action="store_true", help="three modules, one repeat (packaging)")
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="MODULE",
        help="leave this module of src/packaging out (tags: its dearest mutants take 100 s apiece here)",
    )
    parser.add_argument("--repeat", type=int, default=None, help="repeats (default 3, 1 with --quick)")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=REPO / "reports" / "bench")
    options = parser.parse_args()
    ensure_venv()
    repeat = options.repeat or (1 if options.quick else 3)
    root, args = subject(options.subject, options.quick, tuple(options.exclude))
    repeats: list[dict] = []
    for r in range(repeat):
        # The first repeat's unsharded report balances every repeat: one split throughout.
        repeats.append(
            one_repeat(root, args, options.shards, options.jobs, repeats[0]["durations"] if repeats else None, r)
        )
    summary = summarize(repeats, options.shards)
    table = render(summary, options.shards, repeat)
    print("\n" + table)
    options.out.mkdir(parents=True, exist_ok=True)
    kept = {
        "subject": options.subject,
        "quick": options.quick,
        "exclude": options.exclude,
        "args": args,
        "summary": summary,
        "table": table,
    }
    (options.out / "shards.json").write_text(json.dumps(kept, indent=1, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
