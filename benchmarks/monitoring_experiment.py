"""The experiment behind the line monitor (src/killmap/monitor.py): per-test lines from sys.monitoring.

The baseline's reach evidence is coverage's C tracer with one context per test. On Python
3.11 any trace function puts the whole interpreter on its slow path, so a traced test runs
2-5x slower even where it runs nothing of a target file. Python 3.12's sys.monitoring can
instead arm LINE events on the target files' code objects only. This script measures both
on a real suite, side by side, and checks that they record the same lines for every test:

    python3.12 benchmarks/monitoring_experiment.py PROJECT --target src/pkg/mod.py [...] -- [pytest args]

It runs pytest three times in PROJECT (plain, C tracer, sys.monitoring) with this file as a
plugin, and prints each wall time and how many tests' line sets differ. The interpreter
needs pytest and coverage. Only the lines run during tests are compared: what runs while
tests are collected stays with coverage in any design.

The monitoring plugin arms, after collection, every code object of the target files that a
live function (or a suspended generator) holds, and the code objects nested in them; each
event returns DISABLE, and restart_events() re-arms them at every test. A target module
first imported, or reloaded, during a test would be missed here; the gate's monitor arms
code on PY_START instead, from before collection (and benchmarks/tracer_agreement.py holds
it to the C tracer on the real-world corpora).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

import pytest

MODE_ENV, TARGETS_ENV, OUT_ENV = "KM_EXP_MODE", "KM_EXP_TARGETS", "KM_EXP_OUT"
TOOL_ID = 3   # sys.monitoring's free ids are 0-5; coverage takes its own when it uses one

# --- the pytest plugin (loaded with -p monitoring_experiment) -------------------------------

_state: dict = {"context": "", "lines": {}, "coverage": None}


def _targets() -> set[str]:
    return {os.path.realpath(p) for p in os.environ.get(TARGETS_ENV, "").split(os.pathsep) if p}


def _nested(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _nested(const)


def pytest_configure(config):
    if os.environ.get(MODE_ENV) == "ctrace":
        import coverage
        cov = coverage.Coverage(data_file=None, include=sorted(_targets()), config_file=False, branch=False)
        cov.set_option("run:core", "ctrace")
        cov.start()
        _state["coverage"] = cov


def pytest_collection_finish(session):
    if os.environ.get(MODE_ENV) != "monitor":
        return
    import gc
    monitoring = sys.monitoring
    targets, lines = _targets(), _state["lines"]
    monitoring.use_tool_id(TOOL_ID, "killmap-experiment")

    def on_line(code, line):
        lines.setdefault(_state["context"], set()).add((code.co_filename, line))
        return monitoring.DISABLE

    monitoring.register_callback(TOOL_ID, monitoring.events.LINE, on_line)
    armed: set[int] = set()
    for obj in gc.get_objects():
        code = getattr(obj, "__code__", None) if isinstance(obj, types.FunctionType) else \
            getattr(obj, "gi_code", None) if isinstance(obj, types.GeneratorType) else None
        if code is None or os.path.realpath(code.co_filename) not in targets:
            continue
        for each in _nested(code):
            if id(each) not in armed:
                armed.add(id(each))
                monitoring.set_local_events(TOOL_ID, each, monitoring.events.LINE)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    mode = os.environ.get(MODE_ENV)
    if mode == "ctrace":
        _state["coverage"].switch_context(item.nodeid)
    elif mode == "monitor":
        _state["context"] = item.nodeid
        sys.monitoring.restart_events()


def pytest_runtest_logfinish(nodeid, location):
    mode = os.environ.get(MODE_ENV)
    if mode == "ctrace":
        _state["coverage"].switch_context("")
    elif mode == "monitor":
        _state["context"] = ""


def pytest_unconfigure(config):
    out, mode = os.environ.get(OUT_ENV), os.environ.get(MODE_ENV)
    found: dict[str, set] = {}
    if mode == "ctrace":
        cov = _state["coverage"]
        cov.stop()
        data = cov.get_data()
        for filename in data.measured_files():
            real = os.path.realpath(filename)
            for line, contexts in data.contexts_by_lineno(filename).items():
                for context in contexts:
                    found.setdefault(context, set()).add((real, line))
    elif mode == "monitor":
        real = {f for seen in _state["lines"].values() for f, _ in seen}
        real = {f: os.path.realpath(f) for f in real}   # once per file: they are system calls
        for context, seen in _state["lines"].items():
            found[context] = {(real[f], line) for f, line in seen}
    if out:
        Path(out).write_text(json.dumps({k: sorted(v) for k, v in found.items() if k}), encoding="utf-8")


# --- the driver -------------------------------------------------------------------------------

def _run(project: Path, mode: str, targets: list[str], pytest_args: list[str], out: Path) -> float:
    env = dict(os.environ, **{MODE_ENV: mode, TARGETS_ENV: os.pathsep.join(targets), OUT_ENV: str(out)})
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parent), env.get("PYTHONPATH", "")])
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "monitoring_experiment", *pytest_args], cwd=project, env=env,
                          capture_output=True, text=True)
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
    pytest_args = argv[argv.index("--") + 1:] if "--" in argv else []
    args = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
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
    differ = sorted(t for t in set(traced) | set(monitored)
                    if {tuple(x) for x in traced.get(t, [])} != {tuple(x) for x in monitored.get(t, [])})
    for mode, values in walls.items():
        print(f"{mode:8} " + " ".join(f"{v:.2f}s" for v in values))
    print(f"tests with lines in a target: {len(traced)} (C tracer), {len(monitored)} (sys.monitoring); "
          f"tests whose line sets differ: {len(differ)}")
    for test in differ[:5]:
        print("  differs:", test)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
