"""A gate's timeline, from its process start to its exit: what ran when, on which process.

Runs `killmap run` on a project with KILLMAP_TIMELINE set (src/killmap/timeline.py: every
process of the gate appends its phases to one file) and, beside it in the same round, one
plain pytest run of the gate's tests (the floor's first part). Prints, for the median round
by wall time, a chart with one row per process and thread, the phases in a table, each
mutant's cost against its tests' own time, and the floor: the plain run plus the selected
tests' plain durations summed over the mutations, divided by the jobs (bench_results.floor_of).

    python benchmarks/timeline.py PROJECT [--python PY] [--jobs 2] [--repeat 3] [--json OUT]
        [--tests tests/test_x.py ...] [--paths src ...] [--width 100] [--against SRC]
        [-- KILLMAP_RUN_ARGS ...]

--against SRC (a folder with another `killmap` package: `git archive REV src/killmap | tar x`,
then SRC is its src/) runs that gate too in each round, before this one in odd rounds and after
it in even ones, and says both against the round's floor: a before and after, side by side.

PROJECT is a git checkout with its catalogs (mutations/*.toml unless KILLMAP_RUN_ARGS name
others); PY is the Python whose killmap runs (default: this one); --tests and --paths are the
[gate]'s tests and paths, for the plain run (default: read from the gate's report). Each
round runs the plain pytest and then the gate, fresh (--no-cache), its reports and verdict
cache in a scratch folder. Needs killmap importable here (the floor matches contract entries).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# One plain pytest run's per-test durations: the benchmark's own driver, so both floors agree.
from run import DURATIONS_DRIVER  # noqa: E402


def clean_env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    for key in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "COVERAGE_PROCESS_START", "PYTHONPATH", "VIRTUAL_ENV"):
        env.pop(key, None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["XDG_CACHE_HOME"] = str(cache)
    return env


def plain_run(root: Path, python: str, tests: list[str], paths: list[str], work: Path) -> tuple[dict, float]:
    """Per-test durations of one plain pytest run of the gate's tests, and its wall."""
    out = work / "durations.json"
    env = clean_env(work / "cache")
    env["PYTHONPATH"] = os.pathsep.join(str(root / p) for p in paths)
    args = [python, "-c", DURATIONS_DRIVER, str(out), *tests, "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    started = time.monotonic()
    proc = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"the plain pytest run failed:\n{proc.stdout[-2000:]}")
    return json.loads(out.read_text(encoding="utf-8")), wall


def gate_run(
    root: Path, python: str, jobs: int, extra: list[str], work: Path, source: Path | None = None
) -> tuple[list[dict], dict, float]:
    """One fresh gate with its timeline recorded: (the events, the report, its wall). `source`:
    a folder holding another `killmap` package, first on the gate's (and its workers') path."""
    record = work / "timeline.jsonl"
    record.unlink(missing_ok=True)
    env = clean_env(work / "cache")
    env["KILLMAP_TIMELINE"] = str(record)
    if source is not None:
        env["PYTHONPATH"] = str(source)
    reports = work / "reports"
    args = [python, "-m", "killmap", "run", "--no-cache", "--jobs", str(jobs), "--report-dir", str(reports), *extra]
    spawned = time.monotonic()
    proc = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True)
    ended = time.monotonic()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"the gate failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    events = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines() if line.strip()]
    events.append({"t": spawned, "pid": 0, "thread": "harness", "event": "spawn", "at": "mark"})
    events.append({"t": ended, "pid": 0, "thread": "harness", "event": "exited", "at": "mark"})
    report = json.loads((reports / "killmap.json").read_text(encoding="utf-8"))
    return events, report, ended - spawned


# --- reading a timeline -----------------------------------------------------------------------


@dataclass
class Span:
    lane: str
    event: str
    begin: float
    end: float
    about: dict = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return self.end - self.begin


def lanes_of(events: list[dict]) -> dict[int, str]:
    """Each process's lane name: the gate, worker N (from the gate's "ready" marks), a run on
    worker N (from the worker's "forked" marks)."""
    gate = next(e["pid"] for e in events if e["event"] == "main")
    names = {0: "harness", gate: "gate"}
    workers = {e["worker_pid"]: e["worker"] for e in events if e["event"] == "ready" and e["pid"] == gate}
    for pid, index in workers.items():
        names[pid] = f"worker {index}"
    for e in events:
        if e["event"] == "forked" and e.get("fork") and e["pid"] in workers:
            names[e["fork"]] = f"runs on worker {workers[e['pid']]}"
    return names


# What tells apart spans of one event on one thread; a begin may say more than its end.
IDENTIFY = ("mutation", "worker", "label", "id")


def spans_of(events: list[dict]) -> tuple[list[Span], list[tuple[str, dict]]]:
    """Begin/end pairs as spans (innermost first matched), and the marks."""
    names = lanes_of(events)
    origin = next(e["t"] for e in events if e["event"] == "spawn")
    open_spans: dict[tuple, list[dict]] = defaultdict(list)
    spans: list[Span] = []
    marks: list[tuple[str, dict]] = []
    for e in sorted(events, key=lambda e: e["t"]):
        # A process no mark names is a copy a run forked in turn: its confirmation.
        lane = names.get(e["pid"], "confirmation copies")
        if lane == "gate" and e["thread"] != "MainThread":
            lane = f"gate: {e['thread']}"
        about = {k: v for k, v in e.items() if k not in ("t", "pid", "thread", "event", "at")}
        key = (e["pid"], e["thread"], e["event"], *(str(about.get(k)) for k in IDENTIFY))
        if e["at"] == "begin":
            open_spans[key].append(e)
        elif e["at"] == "end" and open_spans[key]:
            began = open_spans[key].pop()
            spans.append(Span(lane, e["event"], began["t"] - origin, e["t"] - origin, about))
        else:
            marks.append((lane, {**e, "t": e["t"] - origin}))
    return spans, marks


def fork_spans(marks: list[tuple[str, dict]]) -> list[Span]:
    """Each run's fork, from its first mark to its last, and its tests' loop."""
    by_pid: dict[int, list[tuple[str, dict]]] = defaultdict(list)
    for lane, e in marks:
        if lane.startswith("runs on"):
            by_pid[e["pid"]].append((lane, e))
    out = []
    for pid, seen in by_pid.items():
        lane = seen[0][0]
        times = {e["event"] + (":" + e["at"] if e["at"] != "mark" else ""): e["t"] for _, e in seen}
        if "fork" in times:
            out.append(Span(lane, "run", times["fork"], times.get("concluded", max(times.values())), {"pid": pid}))
    return out


# --- what is printed --------------------------------------------------------------------------

# The chart's letter for each phase; a phase not listed is drawn with its initial.
LETTERS = {
    "imports": "i",
    "plan": "p",
    "new lab": "n",
    "engine": "e",
    "pristine copy": "c",
    "build": "b",
    "baseline": "B",
    "pass": "P",
    "settle": "v",
    "whole runs": "h",
    "await baseline": "w",
    "mutant": "M",
    "await ready": "r",
    "await sandbox": "s",
    "compose": "o",
    "request": "q",
    "guards": "g",
    "sandbox guard": "a",
    "stop workers": "x",
    "final check": "f",
    "scratch removed": "z",
    "tests": "t",
    "results": ".",
    "render": "R",
    "reports": "W",
    "engine close": "x",
    "cache save": "k",
    "serve": "S",
    "collect": "C",
    "unit": "u",
    "run": "T",
    "lab": "-",
}
# Drawn over their enclosing spans: the inner phase shows.
DEPTH = {"lab": 0, "baseline": 0, "await baseline": 0, "serve": 0, "results": 0, "mutant": 1, "pass": 1}


def chart(spans: list[Span], marks: list[tuple[str, dict]], total: float, width: int) -> str:
    rows: dict[str, list[str]] = {}
    order: list[str] = []
    for s in sorted(spans, key=lambda s: (DEPTH.get(s.event, 2), s.begin)):
        if s.lane not in rows:
            rows[s.lane] = [" "] * width
            order.append(s.lane)
        first = min(width - 1, int(s.begin / total * width))
        last = min(width - 1, max(first, int(s.end / total * width) - 1))
        letter = LETTERS.get(s.event, s.event[0])
        for i in range(first, last + 1):
            rows[s.lane][i] = letter
    for lane, e in marks:
        if lane == "gate" and e["event"] in ("main", "exit"):
            rows.setdefault(lane, [" "] * width)[min(width - 1, int(e["t"] / total * width))] = "|"
    scale = "".join(f"{i * total / 10:<{width // 10}.1f}" for i in range(10))
    pad = max(len(lane) for lane in rows) + 1
    lines = [f"{'seconds':<{pad}}{scale}"]
    lanes = sorted(rows, key=_lane_order)
    lines += [f"{lane:<{pad}}{''.join(rows[lane])}" for lane in lanes]
    used = sorted({s.event for s in spans})
    lines.append("")
    lines.append("  ".join(f"{LETTERS.get(e, e[0])} {e}" for e in used) + "  | main, exit")
    return "\n".join(lines)


def _lane_order(lane: str) -> tuple:
    if lane == "gate":
        return (0, lane)
    if lane.startswith("gate"):
        return (1, lane)
    if lane.startswith("worker"):
        return (2, lane.split()[-1], 0)
    if lane.startswith("runs on"):
        return (2, lane.split()[-1], 1)
    return (3, lane)


def phases(spans: list[Span], marks: list[tuple[str, dict]], wall: float) -> list[tuple[str, float, float]]:
    """(phase, from, to) in seconds after the gate's process was spawned."""

    def first(event: str, lane: str | None = None) -> Span | None:
        found = [s for s in spans if s.event == event and (lane is None or s.lane == lane)]
        return min(found, key=lambda s: s.begin) if found else None

    def mark_at(event: str, lane: str | None = None) -> float | None:
        found = [e["t"] for ln, e in marks if e["event"] == event and (lane is None or ln == lane)]
        return min(found) if found else None

    rows: list[tuple[str, float, float]] = []

    def add(name: str, begin: float | None, end: float | None) -> None:
        if begin is not None and end is not None:
            rows.append((name, begin, end))

    add("interpreter start, killmap's cli imported (gate)", 0.0, mark_at("main", "gate"))
    add("parser built, first worker started (gate)", mark_at("main", "gate"), mark_at("launched", "gate"))
    for event in ("imports", "plan", "new lab", "engine", "pristine copy"):
        s = first(event, "gate")
        add(f"{event} (gate)", s.begin if s else None, s.end if s else None)
    builds = [s for s in spans if s.event == "build"]
    if builds:
        add(
            f"mutants built and checked: {len(builds)}, {sum(s.seconds for s in builds):.2f} s of it (gate)",
            min(s.begin for s in builds),
            max(s.end for s in builds),
        )
    add("worker 0: interpreter and pytest imported", mark_at("start workers", "gate"), mark_at("worker imported"))
    add("worker 0: ready (forks its siblings)", mark_at("worker imported"), mark_at("worker ready"))
    for lane in sorted({s.lane for s in spans if s.lane.startswith("worker")}):
        serve = [s for s in spans if s.lane == lane and s.event == "serve" and s.about.get("id") == "copy"]
        if serve:
            add(f"{lane}: sandbox copied", serve[0].begin, serve[0].end)
        collect = first("collect", lane)
        if collect:
            add(f"{lane}: session collected", collect.begin, collect.end)
    base = first("baseline")
    if base:
        add("baseline's reach pass (early-baseline thread)", base.begin, base.end)
    for s in sorted((s for s in spans if s.event == "pass"), key=lambda s: s.begin):
        # A guard pass is run by each worker's share, beside the first mutants (dispatch.py).
        on = f" (worker {s.about['worker']})" if "worker" in s.about else ""
        add(f"  pass {s.about.get('label')}{on}", s.begin, s.end)
    mutants = [s for s in spans if s.event == "mutant"]
    if mutants:
        add(f"mutants run: {len(mutants)}", min(s.begin for s in mutants), max(s.end for s in mutants))
    for event in ("results", "cache save", "engine close", "render", "reports"):
        s = first(event, "gate")
        add(f"{event} (gate)", s.begin if s else None, s.end if s else None)
    add("exit: interpreter gone", mark_at("exit", "gate"), wall)
    return rows


def mutant_costs(spans: list[Span]) -> list[tuple[str, float, float, float]]:
    """Per mutant: (name, its span on the gate, its runs' tests' loops, the rest)."""
    tests = [s for s in spans if s.event == "tests"]
    out = []
    for m in sorted((s for s in spans if s.event == "mutant"), key=lambda s: s.begin):
        lane = f"runs on worker {m.about.get('worker')}"
        inside = sum(t.seconds for t in tests if t.lane == lane and m.begin <= t.begin and t.end <= m.end)
        out.append((m.about.get("mutation", "?"), m.seconds, inside, m.seconds - inside))
    return out


# A mutant's way from its dispatch to its verdict, step by step: (step, from, to), each an
# event on the gate (g), its worker (w) or its run's fork (f), "<" its begin, ">" its end.
STEPS = (
    ("selection, limits, request composed (gate)", "g<mutant", "g>compose"),
    ("request to the worker (pipe)", "g>compose", "w<serve"),
    ("mutant written, its unit compiled (worker)", "w<serve", "w>unit"),
    ("the session forks the run", "w>unit", "f:fork"),
    ("swap, recorder begun (run)", "f:fork", "f<tests"),
    ("the tests", "f<tests", "f>tests"),
    ("confirmation, origin proof, events written (run)", "f>tests", "f:concluded"),
    ("run ended, leftovers killed, file restored (worker)", "f:concluded", "w>serve"),
    ("answer to the gate (pipe)", "w>serve", "g<guards"),
    ("tree and sandbox guards (gate)", "g<guards", "g>guards"),
    ("outcome read (gate)", "g>guards", "g:outcome read"),
    ("judged, recorded (gate)", "g:outcome read", "g>mutant"),
)


def mutant_steps(events: list[dict]) -> list[tuple[str, float]]:
    """The median of each step over the mutants whose every step was recorded once."""
    names = lanes_of(events)
    gate = next(pid for pid, name in names.items() if name == "gate")
    times: dict[str, list[float]] = defaultdict(list)
    for began in (e for e in events if e["event"] == "mutant" and e["at"] == "begin"):
        found = _steps_of_one(events, names, gate, began)
        if found is None:
            continue  # a run that fell back, timed out or ran twice: its steps are not these
        for step, a, b in STEPS:
            times[step].append(found[b] - found[a])
    return [(step, statistics.median(times[step])) for step, _, _ in STEPS if times[step]]


def _steps_of_one(events: list[dict], names: dict[int, str], gate: int, began: dict) -> dict[str, float] | None:
    """When each step of one mutant's way began: {"w<serve": t, ...}; None unless each was once."""
    index = began["worker"]
    ended = next(
        e for e in events if e["event"] == "mutant" and e["at"] == "end" and e.get("mutation") == began["mutation"]
    )
    own = {f"worker {index}": "w", f"runs on worker {index}": "f"}
    found: dict[str, list[float]] = defaultdict(list)
    for e in events:
        if not began["t"] <= e["t"] <= ended["t"]:
            continue
        if e["pid"] == gate and e.get("worker") == index and e["thread"] == began["thread"]:
            where = "g"
        else:
            where = own.get(names.get(e["pid"], ""), "")
        found[where + {"begin": "<", "end": ">", "mark": ":"}[e["at"]] + e["event"]].append(e["t"])
    found["g<mutant"], found["g>mutant"] = [began["t"]], [ended["t"]]
    if any(len(found.get(key, [])) != 1 for _, a, b in STEPS for key in (a, b)):
        return None
    return {key: at[0] for key, at in found.items()}


def describe(events: list[dict], wall: float, width: int) -> tuple[str, dict]:
    spans, marks = spans_of(events)
    spans = spans + fork_spans(marks)
    out = [chart(spans, marks, wall, width), ""]
    rows = phases(spans, marks, wall)
    out.append(f"{'phase':<64} {'from':>6} {'to':>6} {'took':>6}")
    out += [f"{name:<64} {a:6.2f} {b:6.2f} {b - a:6.2f}" for name, a, b in rows]
    costs = mutant_costs(spans)
    if costs:
        out.append("")
        out.append(f"{'mutant (on the gate: dispatch to verdict)':<44} {'span':>6} {'tests':>6} {'rest':>6}")
        out += [f"{name[:44]:<44} {s:6.3f} {t:6.3f} {r:6.3f}" for name, s, t, r in costs]
        rests = [r for *_, r in costs]
        out.append(f"{'median rest a mutant':<44} {'':>6} {'':>6} {statistics.median(rests):6.3f}")
    steps = mutant_steps(events)
    if steps:
        out.append("")
        out.append(f"{'a mutant, step by step (median over mutants)':<64} {'took':>6}")
        out += [f"{step:<64} {seconds:6.4f}" for step, seconds in steps]
    summary = {
        "phases": [{"phase": n, "from": round(a, 3), "to": round(b, 3)} for n, a, b in rows],
        "steps": [{"step": n, "seconds": round(x, 5)} for n, x in steps],
        "mutants": [
            {"name": n, "span": round(s, 4), "tests": round(t, 4), "rest": round(r, 4)} for n, s, t, r in costs
        ],
    }
    return "\n".join(out), summary


def load_average() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def gate_settings(report: dict) -> tuple[list[str], list[str]]:
    tests = report["baselines"][0]["tests"] if report.get("baselines") else ["tests"]
    return list(tests), ["src"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--python", default=sys.executable, help="the Python whose killmap runs")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tests", nargs="*", default=None, help="the [gate]'s tests, for the plain run")
    parser.add_argument("--paths", nargs="*", default=["src"], help="the [gate]'s paths, for the plain run")
    parser.add_argument("--width", type=int, default=100)
    parser.add_argument("--json", type=Path, default=None, help="write every round's numbers here")
    parser.add_argument(
        "--against",
        type=Path,
        default=None,
        help="a folder holding another killmap package (git archive REV src/killmap): its gate runs "
        "in each round too, before or after this one's in turn, against the same floor",
    )
    parser.add_argument("rest", nargs="*", help="after --: more arguments for killmap run")
    args = parser.parse_args(argv)
    import bench_results  # needs killmap here: the floor matches contract entries

    root = args.project.resolve()
    python = os.path.abspath(args.python) if os.sep in args.python else args.python  # the venv's, not its target
    rounds = []
    with tempfile.TemporaryDirectory(prefix="killmap-timeline-") as scratch:
        work = Path(scratch)
        for number in range(args.repeat):
            load = load_average()
            if args.against and number % 2 == 0:
                other = gate_run(root, python, args.jobs, args.rest, work, args.against)[2]
            events, report, wall = gate_run(root, python, args.jobs, args.rest, work)
            if args.against and number % 2 == 1:
                other = gate_run(root, python, args.jobs, args.rest, work, args.against)[2]
            tests = args.tests or gate_settings(report)[0]
            durations, plain = plain_run(root, python, tests, args.paths, work)
            floor = bench_results.floor_of(report, (durations, plain), args.jobs)
            rounds.append({"load": load, "wall": wall, "floor": floor, "events": events, "report": report})
            if args.against:
                rounds[-1]["against"] = other
            # A timed-out mutant costs its limit in every gate that honours the catalog: the bound
            # (bench_results.floor_of) counts it so, the floor at its tests' plain durations.
            bound = (
                f"; bound {floor['bound_seconds']:.2f} s, {wall / floor['bound_seconds']:.2f}x"
                if floor["timed_out_seconds"]
                else ""
            )
            print(
                f"round {number + 1}: load {load:.2f}, killmap {wall:.2f} s, floor {floor['seconds']:.2f} s "
                f"(plain {plain:.2f} s + selected/jobs {floor['selected_over_jobs_seconds']:.2f} s), "
                f"{wall / floor['seconds']:.2f}x{bound}"
                + (f"; against {other:.2f} s, {other / floor['seconds']:.2f}x" if args.against else ""),
                flush=True,
            )
    ratios = [r["wall"] / r["floor"]["seconds"] for r in rounds]
    median_round = sorted(rounds, key=lambda r: r["wall"])[len(rounds) // 2]
    text, summary = describe(median_round["events"], median_round["wall"], args.width)
    print()
    print(text)
    print()
    print(
        f"median of {len(rounds)}: killmap {statistics.median(r['wall'] for r in rounds):.2f} s, "
        f"floor {statistics.median(r['floor']['seconds'] for r in rounds):.2f} s, "
        f"killmap / floor {statistics.median(ratios):.2f}x (per round: {', '.join(f'{x:.2f}' for x in ratios)}); "
        f"load {min(r['load'] for r in rounds):.2f}-{max(r['load'] for r in rounds):.2f}"
    )
    if args.against:
        against = [r["against"] / r["floor"]["seconds"] for r in rounds]
        print(
            f"against {args.against}: killmap {statistics.median(r['against'] for r in rounds):.2f} s, "
            f"{statistics.median(against):.2f}x the floor (per round: {', '.join(f'{x:.2f}' for x in against)})"
        )
    if args.json:
        kept = [{k: v for k, v in r.items() if k != "report"} for r in rounds]
        args.json.write_text(json.dumps({"rounds": kept, "median": summary}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
