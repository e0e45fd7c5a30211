"""killmap benchmarks: against mutgate 0.1.1, against the floor, and scaling.

    python3 benchmarks/run.py [--quick] [--repeat R] [--out reports/bench] [--skip-realworld]
                              [--corpus NAME ...]

Creates benchmarks/.venv (gitignored) on first use with `pip install -e .[bench]`
(killmap, mutgate==0.1.1, matplotlib) and re-runs itself there; the project's own .venv
is never touched. Every tool runs with that venv's interpreter, on private copies, with
its own verdict-cache folder, so nothing in the working tree or ~/.cache is written but
the results: OUT/bench.json, OUT/scaling.png, OUT/measured.md and (unless --quick)
docs/speed/measured-<python>.md, the table the speed page includes.

What is measured (rows marked R are repeated R times, interleaved so that drift hits
every row alike, and the median is reported; the others run once, in the first repeat):

  a. R  killmap (`run --no-cache --jobs 2`) and mutgate (`run DECL`; sequential, it has no
        parallelism) on the bundled catalog mutations/draftroute.toml, on a snapshot of
        this repository's files (tracked + untracked-unignored, what both tools copy).
     R  killmap on the synthetic subject S1000: 50 mutations over 1,000 tests (500 reach
        the mutated functions, 500 do not).
     1  mutgate on S1000 (about 2 minutes a run here; --mutgate-repeat N for more).
     mutgate's declarations are translated from killmap's own mutant texts
     (benchmarks/translate.py) and its TESTS are the catalog's [gate] tests, so both tools
     check the same contracts over the same suite. Every run must come out all held / all
     OK, or the table says so.
  b. R  The floor, from one plain pytest run per repeat: that run's own wall time (one
        plain run of the gate's tests is what CI pays anyway), plus, per test, the
        duration pytest measures (setup + call + teardown, summed as killmap's plugin sums
        it), summed per mutation over the tests killmap selected and over mutations,
        divided by the 2 jobs. Reported: gate wall / floor, and both parts of the floor.
  c. R  killmap on S10000: the same 50 mutations, non-reaching tests x10 (5,500 tests), and
        its floor as in b. (target <=1.5x: the gate runs each of its tests once, traced, the
        non-reaching ones included; its growth over S1000 is printed beside it).
     1  killmap on S1000 with K = 10 and 25 mutations (`--only`), and with --no-confirm.
     R  The cached re-run of S1000: one populating run (without --no-cache), then
        `killmap run` again, each repeat.
  d. R  The real-world corpora packaging 24.2, click 8.1.8, werkzeug 3.1.3 and markupsafe
        3.0.2, or those --corpus names (benchmarks/realworld_bench.py
        prepares them with benchmarks/realworld.py's own functions): killmap as in a., its
        verdict counts and how many match the corpus's observed ground truth; the floor as
        in b.; killmap / floor, target <=1.5x (a mutant killmap saw time out costs it the
        catalog's timeout, the floor only its tests' plain durations). So beside it, the
        bound no gate honouring the catalog can beat: a timed-out mutant at its limit,
        and the mutations' part at least the dearest one (it runs on one job), plain run +
        max(sum / jobs, dearest); killmap / bound against the same 1.5x.
     1  mutgate on the same mutants, translated as in a., with `--timeout` = the largest
        timeout the catalog states (each catalog holds an endless-loop mutant).
     Their test dependencies (pytest 8.3.4, pretend, the project installed from its sdist)
     are in the venv realworld.py builds, benchmarks/realworld/.work/venv: the environment
     the ground truth was observed in, where realworld.py checks every verdict. So killmap
     (the same driver, the frozen source) and the plain pytest run use that venv's python,
     and mutgate, run from benchmarks/.venv, runs its pytest with it (its own --python);
     nothing is installed into either venv for this. Installing the corpora's pins into
     benchmarks/.venv instead would put packaging 24.2 and pytest 8.3.4 under matplotlib
     and under every other row. A corpus that cannot be prepared (no network) is a row
     saying why; --skip-realworld leaves them out.
     For every subject, mutgate / floor is printed too: the best mutgate/killmap ratio the
     floor allows.

killmap runs through a thin driver that calls `killmap.cli.main` unchanged and timestamps
the lab's progress events, splitting each run into startup (interpreter + imports + catalog),
setup (mutants, sandboxes, workers), baseline, mutants and tail. killmap's source
is frozen at the start of the run (copied and put first on PYTHONPATH), because other
engineers may edit src/killmap meanwhile. Walls are measured around each whole command.

--quick: one repeat; mutgate on S1000 runs 5 of the 50 mutations and its wall is
extrapolated (strictly sequential: a baseline run plus one full-suite run per mutation),
marked "estimated"; K = 10 only; no --no-confirm row; the S1000 killmap row runs with an
empty verdict cache instead of --no-cache (the same work) and populates the cache for the
re-run; the corpora run once, and mutgate on a corpus predicted to take over a minute
(plain run x mutations + timeouts) runs 3 mutations and is extrapolated the same way, plus
one --timeout per mutant killmap saw time out, marked "est.".
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

sys.path.insert(0, str(HERE))  # the sibling scripts are modules too; stdlib-only at import
import realworld_bench  # noqa: E402 - the corpora: preparation, estimates and table rows
from bench_results import floor_of, measured_path, plot, plot_paths, print_table, summarize, write_markdown  # noqa: E402
from venvs import snapshot_killmap  # noqa: E402

sys.path.pop(0)
VENV = HERE / ".venv"
JOBS = 2

# Runs killmap's CLI as its console script does (cli.entry), and records when the lab's
# phases start and end. The lab is wrapped as it is imported, not imported first: the CLI
# starts its workers before it imports the lab (launch.py), and so must it here.
KILLMAP_DRIVER = r"""
import importlib.abc, json, os, sys, time
t0 = time.perf_counter()
marks = {}

def tapped(run_mutations):
    # The commands call run_mutations (the catalog already read), not run_lab.
    def run(root, mutations, options, progress=lambda kind, data: None, *rest, **named):
        def tap(kind, data):
            now = time.perf_counter() - t0
            marks.setdefault(kind + ":first", now)
            marks[kind + ":last"] = now
            progress(kind, data)
        marks["lab:start"] = time.perf_counter() - t0
        try:
            return run_mutations(root, mutations, options, tap, *rest, **named)
        finally:
            marks["lab:end"] = time.perf_counter() - t0
    return run

def tapped_baseline(run_baseline):
    # The baseline starts with the lab (an early baseline, before the mutants are built) and says
    # nothing until the first mutant runs on it: its own start and end are timed here. Its end is
    # the reach pass's: the guard pass runs beside the first mutants (verdict/dispatch.py).
    def run(*args, **named):
        marks.setdefault("baseline-run:start", time.perf_counter() - t0)
        try:
            return run_baseline(*args, **named)
        finally:
            marks["baseline-run:end"] = time.perf_counter() - t0
    return run

TAPS = {
    "killmap.verdict.lab": ("run_mutations", tapped),
    "killmap.verdict.baseline": ("run_baseline", tapped_baseline),
}

class Tap(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in TAPS:
            return None
        attribute, wrap = TAPS.pop(name)
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            if TAPS:
                sys.meta_path.insert(0, self)
        load = spec.loader.exec_module
        def exec_module(module):
            load(module)
            setattr(module, attribute, wrap(getattr(module, attribute)))
            if attribute == "run_mutations":
                marks["killmap_file"] = module.__file__
        spec.loader.exec_module = exec_module
        return spec

def write_marks():
    marks["end"] = time.perf_counter() - t0
    with open(os.environ["KILLMAP_BENCH_MARKS"], "w") as out:
        json.dump(marks, out)

# entry() leaves by os._exit once it has flushed (no interpreter teardown), which skips any
# `finally` here: the marks are written on the way out, by the gate's own process only.
real_exit, gate = os._exit, os.getpid()
def leave(code):
    if os.getpid() == gate:
        write_marks()
    real_exit(code)
os._exit = leave

import importlib.util
sys.meta_path.insert(0, Tap())
from killmap.cli import entry
marks["imported"] = time.perf_counter() - t0
try:
    entry()
finally:
    write_marks()
"""

# One plain pytest run; per test id the summed phase durations, like killmap's plugin.
DURATIONS_DRIVER = r"""
import json, sys
import pytest
class Durations:
    def __init__(self):
        self.seen = {}
    def pytest_runtest_logreport(self, report):
        self.seen[report.nodeid] = self.seen.get(report.nodeid, 0.0) + report.duration
plugin = Durations()
code = pytest.main(sys.argv[2:], plugins=[plugin])
with open(sys.argv[1], "w") as out:
    json.dump(plugin.seen, out)
sys.exit(int(code))
"""


# --- the venv -----------------------------------------------------------------------------


def ensure_venv() -> None:
    """Re-exec inside benchmarks/.venv, creating and filling it first when needed."""
    sys.path.insert(0, str(HERE))
    from venvs import for_this_python, run_inside

    run_inside(
        for_this_python(VENV),
        Path(__file__),
        what="killmap (editable), mutgate==0.1.1 and matplotlib",
        probe="import killmap, mutgate, matplotlib; assert mutgate.__version__ == '0.1.1'",
        install=["-e", f"{REPO}[bench]"],
    )


# --- running the tools ------------------------------------------------------------------


def _env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = str(cache)  # killmap's verdict cache: private to the bench
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    for key in ("PYTEST_ADDOPTS", "COVERAGE_PROCESS_START", "PYTHONPATH"):
        env.pop(key, None)
    return env


def _killmap_source() -> str:
    from killmap.verdict.cache import gate_source_digest

    return gate_source_digest()


def _loadavg() -> float:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return -1.0


KILLMAP_PATH: list[str] = []  # set in main(): the frozen source, first on PYTHONPATH


def run_killmap(
    root: Path,
    work: Path,
    label: str,
    *,
    catalogs: list[Path] = (),
    only: list[str] = (),
    no_cache: bool = True,
    extra: list[str] = (),
    python: Path | None = None,
) -> dict:
    """One `killmap run` through the driver; python: the interpreter (default this one)."""
    report_dir = work / "reports" / label
    marks_file = work / f"marks-{label}.json"
    argv = ["run", *map(str, catalogs), "--jobs", str(JOBS), "--report-dir", str(report_dir)]
    argv += [a for name in only for a in ("--only", name)]
    argv += (["--no-cache"] if no_cache else []) + list(extra)
    env = _env(work / "cache")
    env["KILLMAP_BENCH_MARKS"] = str(marks_file)
    if KILLMAP_PATH:
        env["PYTHONPATH"] = os.pathsep.join(KILLMAP_PATH)
    load = _loadavg()
    started = time.perf_counter()
    proc = subprocess.run(
        [str(python or sys.executable), "-c", KILLMAP_DRIVER, *argv], cwd=root, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - started
    result = {"tool": "killmap", "label": label, "wall": wall, "exit": proc.returncode, "load1": load}
    if proc.returncode not in (0, 1):
        result["error"] = (proc.stdout + proc.stderr)[-2000:]
        return result
    report = json.loads((report_dir / "killmap.json").read_text(encoding="utf-8"))
    marks = json.loads(marks_file.read_text(encoding="utf-8")) if marks_file.exists() else {}
    summary = report["summary"]
    result.update(
        total=summary["total"],
        held=summary["held"],
        jobs=report["jobs"],
        verdicts={k: n for k, n in summary.items() if k != "total" and n},
        report_file=str(report_dir / "killmap.json"),
        lab_wall=report["wall_seconds"],
        cached=sum(m["cached"] for m in report["mutations"]),
        baselines=report["baselines"],
        phases=_phases(marks),
        mutations=[
            {
                "name": m["name"],
                "verdict": m["verdict"],
                "selected_tests": m["selected_tests"],
                "selection": m["selection"],
                "duration": m["duration_seconds"],
                "expected": m["expected"],
                "may_kill": m["may_kill"],
                "reached_by": m["reached_by"],
                "cached": m["cached"],
                "path": "cached" if m["cached"] else m.get("path", "none"),
                "wall": m["duration_seconds"],
                "timeout_seconds": m["timeout_seconds"],
            }
            for m in report["mutations"]
        ],
    )
    return result


def _phases(marks: dict) -> dict:
    """Seconds: process start -> lab (interpreter, imports, the catalog read), setup (mutants,
    sandboxes, workers started), baseline (its runs, while the gate builds and checks the
    mutants: lab.py starts both at once), mutants (the reach pass in -> last verdict, the guard
    pass beside the first of them), tail (pool stop, cache, reports, exit).

    The baseline is timed around run_baseline itself: the lab announces it only when the first
    mutant is about to run on it, so its progress events came together and the baseline read
    0.00 s, its runs counted as setup."""
    if "lab:start" not in marks:
        return {}
    base0, base1 = marks.get("baseline-run:start"), marks.get("baseline-run:end")
    last_done = max(marks.get("done:last", 0.0), base1 or 0.0)
    lab_end = marks.get("lab:end", marks["end"])
    out = {"startup": marks["lab:start"], "end": marks["end"], "killmap_file": marks.get("killmap_file")}
    if base0 is None:  # everything cached: no baseline, no mutant run
        out.update(setup=lab_end - marks["lab:start"], baseline=0.0, mutants=0.0)
    else:
        out.update(setup=base0 - marks["lab:start"], baseline=base1 - base0, mutants=last_done - base1)
    out["tail"] = marks["end"] - (last_done if base0 is not None else lab_end)
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in out.items()}


def run_mutgate(
    decl: Path,
    work: Path,
    label: str,
    *,
    only: list[str] = (),
    pytest_python: Path | None = None,
    timeout: float | None = None,
) -> dict:
    """One `mutgate run`; pytest_python: the interpreter mutgate runs pytest with (its own
    --python; default the one mutgate runs in); timeout: mutgate's --timeout per pytest run."""
    args = [sys.executable, "-m", "mutgate", "run", str(decl)]
    meta = _declaration_meta(decl)
    args += [f"--pytest-arg={a}" for a in meta["pytest_args"]]
    if pytest_python:
        args += ["--python", str(pytest_python)]
    if timeout:
        args += ["--timeout", str(timeout)]
    if only:
        args += ["--only", *only]
    load = _loadavg()
    started = time.perf_counter()
    proc = subprocess.run(args, cwd=work, env=_env(work / "cache"), capture_output=True, text=True)
    wall = time.perf_counter() - started
    names = set(only or meta["names"])
    ok = sum(
        1
        for line in proc.stdout.splitlines()
        if len(line.split()) > 1 and line.split()[0] in names and line.split()[1] == "OK"
    )
    lines = proc.stdout.strip().splitlines()
    result = {
        "tool": "mutgate",
        "label": label,
        "wall": wall,
        "exit": proc.returncode,
        "load1": load,
        "total": len(only) if only else meta["count"],
        "ok": ok,
        "summary": lines[-1] if lines else "",
    }  # mutgate's last line: "12 OK, 3 DECORATION"
    if proc.returncode not in (0, 1):
        result["error"] = (proc.stdout + proc.stderr)[-2000:]
    return result


def _declaration_meta(decl: Path) -> dict:
    namespace: dict = {}
    exec(compile(decl.read_text(encoding="utf-8"), str(decl), "exec"), namespace)  # our own file
    return {
        "pytest_args": list(namespace.get("PYTEST_ARGS", ())),
        "count": len(namespace["MUTATIONS"]),
        "names": [m.name for m in namespace["MUTATIONS"]],
    }


def measure_durations(
    root: Path, work: Path, tests: list[str], paths: list[str], pytest_args: list[str] = (), python: Path | None = None
) -> tuple[dict[str, float], float]:
    """Per-test durations of one plain pytest run, and that run's wall time."""
    out = work / f"durations-{root.name}.json"
    env = _env(work / "cache")
    env["PYTHONPATH"] = os.pathsep.join(str(root / p) for p in paths)
    started = time.perf_counter()
    proc = subprocess.run(
        [
            str(python or sys.executable),
            "-c",
            DURATIONS_DRIVER,
            str(out),
            *tests,
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            *pytest_args,
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"the plain pytest run of {root} failed:\n{proc.stdout[-2000:]}")
    return json.loads(out.read_text(encoding="utf-8")), wall


# --- subjects -----------------------------------------------------------------------------


def make_synth(dest: Path, non_reaching: int, work_iterations: int) -> dict:
    sys.path.insert(0, str(HERE))
    try:
        import synth
    finally:
        sys.path.pop(0)
    spec = synth.Spec(
        functions=50, tests_per_function=10, mutations=50, non_reaching=non_reaching, work=work_iterations
    )
    return synth.generate(dest, spec)


def snapshot_repo(dest: Path) -> Path:
    """A copy of the files both tools would copy (tracked + untracked-unignored)."""
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
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest / rel)
    return dest


def prepare_bundled(work: Path) -> dict:
    catalog = REPO / "mutations" / "draftroute.toml"
    if not catalog.is_file():
        return {"skipped": f"{catalog.relative_to(REPO)} does not exist yet"}
    root = snapshot_repo(work / "bundled")
    return translated_subject(root, root / "mutations" / "draftroute.toml", work / "mutgate_draftroute.py")


def translated_subject(root: Path, catalog: Path, decl: Path) -> dict:
    """A catalog on a project, and mutgate's declaration of the same mutants written to decl:
    {"root", "decl", "catalog", "tests", "paths", "pytest_args", "mutations"}, or {"skipped"}."""
    sys.path.insert(0, str(HERE))
    try:
        import translate

        translate.write_declaration(root, [catalog], decl)
    except Exception as exc:  # noqa: BLE001 - any load failure means: skip, say why
        return {"skipped": f"{catalog.relative_to(root)} does not load: {type(exc).__name__}: {exc}"}
    finally:
        sys.path.pop(0)
    meta = _declaration_meta(decl)
    namespace: dict = {}
    exec(compile(decl.read_text(encoding="utf-8"), str(decl), "exec"), namespace)
    return {
        "root": root,
        "decl": decl,
        "catalog": catalog,
        "tests": list(namespace["TESTS"]),
        "paths": list(namespace["PATHS"]),
        "pytest_args": meta["pytest_args"],
        "mutations": meta["count"],
    }


# --- the plan -----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="killmap benchmarks (see the module docstring)")
    ap.add_argument("--quick", action="store_true", help="one repeat, mutgate on S1000 estimated from 5 mutations")
    ap.add_argument("--repeat", type=int, default=None, help="repeats (default 3, --quick 1)")
    ap.add_argument("--out", type=Path, default=REPO / "reports" / "bench")
    ap.add_argument(
        "--work", type=int, default=25_000, help="loop iterations per synthetic test call (25,000 ~ 1.3 ms here)"
    )
    ap.add_argument(
        "--mutgate-repeat", type=int, default=1, help="full mutgate runs on S1000 (about 2.5 min each here; default 1)"
    )
    ap.add_argument("--keep", action="store_true", help="keep the temporary subjects")
    ap.add_argument(
        "--skip-realworld",
        action="store_true",
        help="leave out the real-world corpora (they download their sdists on first use)",
    )
    ap.add_argument(
        "--corpus",
        action="append",
        choices=[c.name for c in realworld_bench.rw.CORPORA],
        help="measure only this real-world corpus (repeatable; default: all of them)",
    )
    args = ap.parse_args(argv)
    ensure_venv()
    repeat = args.repeat or (1 if args.quick else 3)
    out_dir = args.out if args.out.is_absolute() else Path.cwd() / args.out
    out_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="killmap-bench-"))
    t_start = time.perf_counter()
    say = lambda text: print(f"[{time.perf_counter() - t_start:6.1f}s] {text}", flush=True)  # noqa: E731

    try:
        say(f"workspace {work}; generating subjects")
        s1k = work / "s1000"
        s10k = work / "s10000"
        info1k = make_synth(s1k, 500, args.work)
        info10k = make_synth(s10k, 5000, args.work)
        names = [m["name"] for m in info1k["mutations"]]
        bundled = prepare_bundled(work)
        if "skipped" in bundled:
            say(f"bundled catalog SKIPPED: {bundled['skipped']}")
        corpora = [] if args.skip_realworld else realworld_bench.prepare(work, args.corpus)
        for subject in corpora:
            if "skipped" not in subject:
                subject.update(
                    translated_subject(
                        subject["root"], subject["catalog"], work / f"mutgate_{subject['corpus'].name}.py"
                    )
                )
            if "skipped" in subject:
                say(f"{subject['key']} SKIPPED: {subject['skipped']}")
        k_values = [10] if args.quick else [10, 25]
        mg_only = names[:5] if args.quick else []
        mg_repeat = 1 if args.quick else min(args.mutgate_repeat, repeat)
        KILLMAP_PATH.append(str(snapshot_killmap(work)))
        source_before = _killmap_source()

        runs: dict[str, list[dict]] = {}

        def record(key: str, result: dict) -> dict:
            runs.setdefault(key, []).append(result)
            status = ""
            if result["tool"] == "killmap":
                status = f"{result.get('held', '?')}/{result.get('total', '?')} held" + (
                    f", {result['cached']} cached" if result.get("cached") else ""
                )
            else:
                status = f"{result.get('ok', '?')}/{result.get('total', '?')} OK"
            if "error" in result:
                status += " ERROR: " + result["error"].strip().splitlines()[-1][:200]
            say(f"  {key:28} {result['wall']:7.2f}s  {status}  (load {result['load1']})")
            return result

        floors: dict[str, list[dict]] = {}

        def measure_corpus(subject: dict, r: int) -> None:
            """killmap, then the floor's plain run, then mutgate (whose --quick plan needs
            the plain run's wall and killmap's timed-out mutants), all with the corpus venv's
            interpreter (see the docstring)."""
            key, name, python = subject["key"], subject["corpus"].name, subject["python"]
            gate = record(
                f"{key}/killmap",
                run_killmap(subject["root"], work, f"{name}-{r}", catalogs=[subject["catalog"]], python=python),
            )
            plain = None
            try:
                plain = measure_durations(
                    subject["root"], work, subject["tests"], subject["paths"], subject["pytest_args"], python=python
                )
            except RuntimeError as exc:
                subject.setdefault("problems", []).append(f"the plain pytest run failed: {exc}"[-300:])
                say(f"  {key}: the plain pytest run failed")
            if plain and "mutations" in gate:
                floors.setdefault(key, []).append(floor_of(gate, plain, JOBS))
            if r < mg_repeat:
                plan = realworld_bench.mutgate_plan(
                    _declaration_meta(subject["decl"])["names"],
                    gate,
                    plain[1] if plain else 0.0,
                    subject["mutgate_timeout"],
                    args.quick,
                )
                result = run_mutgate(
                    subject["decl"],
                    work,
                    name,
                    only=plan["only"],
                    pytest_python=python,
                    timeout=subject["mutgate_timeout"],
                )
                result["plan"] = plan
                record(f"{key}/mutgate", result)

        for r in range(repeat):
            say(f"repeat {r + 1}/{repeat}")
            first = r == 0
            if "skipped" not in bundled:
                record(
                    "bundled/killmap", run_killmap(bundled["root"], work, f"bundled-{r}", catalogs=[bundled["catalog"]])
                )
                record("bundled/mutgate", run_mutgate(bundled["decl"], work, "bundled"))
            if args.quick:
                # The first repeat: the same work as --no-cache (the cache folder is empty), and it
                # fills the cache for the cached re-run; a later repeat would read that cache.
                record("s1000/killmap", run_killmap(s1k, work, f"s1000-{r}", no_cache=not first))
            else:
                record("s1000/killmap", run_killmap(s1k, work, f"s1000-{r}"))
            if r < mg_repeat:
                record("s1000/mutgate", run_mutgate(s1k / "mutgate_decl.py", work, "s1000", only=mg_only))
            record("s10000/killmap", run_killmap(s10k, work, f"s10000-{r}"))
            if first:
                # single runs: diagnostics and the K axis
                if not args.quick:
                    record("s1000/killmap --no-confirm", run_killmap(s1k, work, "s1000-nc", extra=["--no-confirm"]))
                for k in k_values:
                    record(f"s1000/killmap K={k}", run_killmap(s1k, work, f"s1000-k{k}", only=names[:k]))
                if not args.quick:
                    record("s1000/killmap populate cache", run_killmap(s1k, work, "s1000-populate", no_cache=False))
            record("s1000/killmap cached rerun", run_killmap(s1k, work, f"s1000-cached-{r}", no_cache=False))
            # the floor, once per repeat, from a plain pytest run
            d1k = measure_durations(s1k, work, ["tests"], ["src"])
            if "mutations" in runs["s1000/killmap"][-1]:
                floors.setdefault("s1000", []).append(floor_of(runs["s1000/killmap"][-1], d1k, JOBS))
            # S10000's too: the gate runs every test of its [gate] once (baseline.py), the
            # non-reaching ones included, so their plain run is part of any gate's floor
            d10k = measure_durations(s10k, work, ["tests"], ["src"])
            if "mutations" in runs["s10000/killmap"][-1]:
                floors.setdefault("s10000", []).append(floor_of(runs["s10000/killmap"][-1], d10k, JOBS))
            if "skipped" not in bundled and "mutations" in runs["bundled/killmap"][-1]:
                dbu = measure_durations(
                    bundled["root"], work, bundled["tests"], bundled["paths"], bundled["pytest_args"]
                )
                floors.setdefault("bundled", []).append(floor_of(runs["bundled/killmap"][-1], dbu, JOBS))
            for subject in corpora:
                if "skipped" not in subject:
                    measure_corpus(subject, r)

        results = summarize(runs, floors, info1k, info10k, bundled, args, repeat, mg_only, k_values, corpora, JOBS)
        results["mutgate_s1000_runs"] = mg_repeat
        results["killmap_source_sha256"] = {
            "measured (frozen at start)": source_before,
            "working tree at end": _killmap_source(),
        }
        results["elapsed_seconds"] = round(time.perf_counter() - t_start, 1)
        (out_dir / "bench.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
        plot(results, out_dir / "scaling.png")
        plot_paths(runs, out_dir / "paths.png")
        print_table(results)
        # The speed page includes the table as Markdown; a --quick run is too rough to replace it.
        tables = write_markdown(results, out_dir / "measured.md", *([] if args.quick else [measured_path(results)]))
        say(f"wrote {out_dir / 'bench.json'}, {out_dir / 'scaling.png'}, {out_dir / 'paths.png'}, ")
        say("and the table as Markdown: " + ", ".join(str(p) for p in tables))
        return 0
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
