"""Scenarios: what one pytest run in a sandbox is asked to do, and what came back.

A scenario is the baseline (unmutated, with per-test coverage of the mutation targets)
or a mutant (the mutated file written in, coverage of that file only, the origin of its
module proven afterwards). A mutant run also carries its confirmation: a copy of the
session forked after collection re-runs the tests whose outcome matters, to tell a real
red from a flake (see plugin.Recorder.pytest_runtestloop).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from killmap.outcome import RunOutcome, read_outcome
from killmap.pool import Worker
from killmap.sandbox import Scratch

# Flags the gate owns, placed after the project's addopts so they win: every failure is
# seen (no maxfail), order is the file's (no random order), nothing is cached between runs.
GATE_FLAGS = ("-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:random_order",
              "-p", "no:xdist", "--maxfail=0", "-q", "--tb=short", "-o", "console_output_style=classic")


@dataclass(frozen=True)
class Scenario:
    label: str
    tests: tuple[str, ...]              # pytest targets or node ids
    timeout: float
    sys_path: tuple[str, ...]           # relative to the sandbox
    writes: tuple[tuple[str, str], ...] = ()
    coverage_files: tuple[str, ...] = ()  # relative; per-test contexts recorded for these
    mutated_file: str | None = None
    expect_module: str | None = None
    coverage_after_collection: bool = False
    # Re-run the red tests and these (the green kills) from a snapshot taken after collection.
    confirm_kills: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()        # relative test files left out of collection
    collect_only: bool = False          # collect and report the node ids; run no test (check)


def run_scenario(worker: Worker, scratch: Scratch, root: Path, scenario: Scenario) -> RunOutcome:
    folder = scratch.run_dir(scenario.label)
    sandbox = worker.sandbox
    request = {
        "id": scenario.label,
        "sandbox": str(sandbox),
        "writes": dict(scenario.writes),
        # A private basetemp per run: pytest prunes old numbered temp folders, and two
        # workers sharing the default one could delete each other's tmp_path mid-test.
        "args": [*scenario.tests, *GATE_FLAGS, f"--rootdir={sandbox}", f"--basetemp={scratch.temp_dir()}",
                 *(("--collect-only",) if scenario.collect_only else ())],
        "timeout": scenario.timeout,
        "events": str(folder / "events.jsonl"),
        "log": str(folder / "pytest.log"),
        "sys_path": [str((sandbox / p).resolve()) for p in scenario.sys_path],
        "blocked_root": str(root),
        "mutated_file": str(sandbox / scenario.mutated_file) if scenario.mutated_file else None,
        "pycache_prefix": str(scratch.path / f"pycache-{worker.index}"),
    }
    if scenario.coverage_files:
        request["coverage"] = {"include": [str(sandbox / f) for f in scenario.coverage_files],
                               "out": str(folder / "coverage.json"),
                               "after_collection": scenario.coverage_after_collection}
    if scenario.expect_module and scenario.mutated_file:
        text = dict(scenario.writes).get(scenario.mutated_file)
        data = text.encode("utf-8") if text is not None else (sandbox / scenario.mutated_file).read_bytes()
        request["expect"] = {"module": scenario.expect_module,
                             "file": str(sandbox / scenario.mutated_file),
                             "sha256": hashlib.sha256(data).hexdigest()}
    if scenario.ignore:
        request["ignore"] = [str(sandbox / rel) for rel in scenario.ignore]
    if scenario.confirm_kills is not None:
        request["snapshot"] = {"events": str(folder / "confirm-events.jsonl"),
                               "log": str(folder / "confirm-pytest.log"),
                               "kill_ids": list(scenario.confirm_kills)}
    response = worker.request(request)
    if response.get("status") == "error":
        response = {**response, "status": "error"}
    outcome = read_outcome(folder / "events.jsonl", folder / "pytest.log", response,
                           folder / "coverage.json" if scenario.coverage_files else None)
    if outcome.coverage is not None:
        # Coverage speaks in sandbox paths; the rest of the gate speaks in project paths.
        prefix = str(sandbox.resolve()) + "/"
        outcome = _relative_coverage(outcome, prefix)
    if scenario.confirm_kills is not None and (folder / "confirm-events.jsonl").exists():
        confirmation = read_outcome(folder / "confirm-events.jsonl", folder / "confirm-pytest.log",
                                    {"status": "done", "wall": 0.0})
        if confirmation.finished:
            from dataclasses import replace
            outcome = replace(outcome, confirmation=replace(confirmation, wall=confirmation.final_wall))
    return outcome


def _relative_coverage(outcome: RunOutcome, prefix: str) -> RunOutcome:
    from dataclasses import replace
    mapped = {(f[len(prefix):] if f.startswith(prefix) else f): data
              for f, data in (outcome.coverage or {}).items()}
    return replace(outcome, coverage=mapped)
