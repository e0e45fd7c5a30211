"""Timing of the baseline's two line recorders on any suite: plain, C tracer, sys.monitoring.

The baseline's reach evidence is each test's lines of the target files. On Python 3.11 it
is recorded by coverage's C tracer, which puts the whole interpreter on its slow path; on
3.12+ by killmap's line monitor (src/killmap/monitor.py), LINE events armed on the target
files' code objects only. This script times both on any suite, beside a plain run, and
checks that they record the same lines for every test and for collection:

    python3.12 benchmarks/monitoring_experiment.py PROJECT --target src/pkg/mod.py [...] -- [pytest args]

It runs pytest three times in PROJECT (plain, C tracer, sys.monitoring) with this file as a
plugin that starts killmap's own recorders before collection, as the gate does, and prints
each wall time and how many contexts' line sets differ. The interpreter needs pytest and
killmap. It started as the experiment that led to the monitor; benchmarks/tracer_agreement.py
is the check on the real-world corpora through the gate's own baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

MODE_ENV, TARGETS_ENV, OUT_ENV = "KM_EXP_MODE", "KM_EXP_TARGETS", "KM_EXP_OUT"

# --- the pytest plugin (loaded with -p monitoring_experiment) -------------------------------
# Both recorders are killmap's own (tracing.per_test_coverage, monitor.LineMonitor), started
# before collection as the gate starts them, so what is timed is what the gate runs.

_state: dict = {"recorder": None}


def _targets() -> list[str]:
    return [p for p in os.environ.get(TARGETS_ENV, "").split(os.pathsep) if p]


def pytest_configure(config):
    mode = os.environ.get(MODE_ENV)
    if mode == "ctrace":
        from killmap.engine.reach.tracing import per_test_coverage

        recorder = per_test_coverage(_targets())
    elif mode == "monitor":
        from killmap.engine.reach.line_monitor import line_monitor

        recorder = line_monitor(_targets())
    else:
        return
    recorder.start()
    _state["recorder"] = recorder


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    if _state["recorder"] is not None:
        _state["recorder"].switch_context(item.nodeid)


def pytest_runtest_logfinish(nodeid, location):
    if _state["recorder"] is not None:
        _state["recorder"].switch_context("")


def pytest_unconfigure(config):
    out, recorder = os.environ.get(OUT_ENV), _state["recorder"]
    if recorder is None or not out:
        return
    recorder.stop()
    from killmap.engine.reach.line_monitor import LineMonitor
    from killmap.engine.reach.tracing import coverage_contexts

    found = recorder.contexts() if isinstance(recorder, LineMonitor) else coverage_contexts(recorder)
    Path(out).write_text(
        json.dumps(
            {f"{path}::{context}": lines for path, by_context in found.items() for context, lines in by_context.items()}
        ),
        encoding="utf-8",
    )


# --- the driver -------------------------------------------------------------------------------


def _run(project: Path, mode: str, targets: list[str], pytest_args: list[str], out: Path) -> float:
    env = dict(os.environ, **{MODE_ENV: mode, TARGETS_ENV: os.pathsep.join(targets), OUT_ENV: str(out)})
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parent), env.get("PYTHONPATH", "")])
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "monitoring_experiment", *pytest_args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"pytest failed under {mode} (exit {done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return wall


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("project", type=Path)
    ap.add_argument("--target", action="append", required=True, help="a target file, relative to PROJECT")
    ap.add_argument("--repeat", type=int, default=2)
    argv = list(sys.argv[1:] if argv is None else argv)
    pytest_args = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = ap.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    if sys.version_info < (3, 12):
        sys.exit("sys.monitoring needs Python 3.12 or newer")
    project = args.project.resolve()
    targets = [str(project / t) for t in args.target]
    with tempfile.TemporaryDirectory() as scratch:
        walls: dict[str, list[float]] = {"none": [], "ctrace": [], "monitor": []}
        for _ in range(args.repeat):
            for mode in walls:
                walls[mode].append(_run(project, mode, targets, pytest_args, Path(scratch) / f"{mode}.json"))
        traced = json.loads((Path(scratch) / "ctrace.json").read_text(encoding="utf-8"))
        monitored = json.loads((Path(scratch) / "monitor.json").read_text(encoding="utf-8"))
    differ = sorted(k for k in set(traced) | set(monitored) if traced.get(k) != monitored.get(k))
    for mode, values in walls.items():
        print(f"{mode:8} " + " ".join(f"{v:.2f}s" for v in values))
    print(
        f"contexts with lines in a target: {len(traced)} (C tracer), {len(monitored)} (sys.monitoring); "
        f"contexts whose line sets differ: {len(differ)}"
    )
    for test in differ[:5]:
        print("  differs:", test)
    if not traced:
        # Agreement on nothing proves nothing: the targets were never imported from PROJECT
        # (an installed copy shadowing it?).
        print("no line of a target ran: check --target and where the tests import it from")
        return 1
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
