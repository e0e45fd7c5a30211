"""The gate's progress bar (and rich, which draws it) begins at the lab's first event, which the lab
says once its engine has begun: the workers are copying their sandboxes by then, and the gate's
way to its engine, which those copies wait for, did not import rich. Read from the gate's own
timeline (KILLMAP_TIMELINE); the bar and the lines it prints are the progress tests' to hold.
"""

from __future__ import annotations

import json

from gatekit import copy_fixture, gate_env, run_gate


def test_the_progress_bar_begins_after_the_copies_are_ordered(tmp_path):
    project = copy_fixture("basic", tmp_path)
    record = tmp_path / "timeline.jsonl"
    env = gate_env(project, {"KILLMAP_TIMELINE": str(record)})
    run = run_gate(project, "run", "--no-cache", "--jobs", "2", env=env)
    assert run.code == 0, run.stderr
    assert "baseline:" in run.stdout and "contracts held" in run.stdout
    events = [json.loads(line) for line in record.read_text().splitlines()]
    gate = next(e["pid"] for e in events if e["event"] == "main")
    at = {(e["event"], e["at"]): e["t"] for e in events if e["pid"] == gate}
    assert at[("copies ordered", "mark")] <= at[("progress begun", "mark")]
    builds = [e["t"] for e in events if e["event"] == "build" and e["at"] == "begin"]
    assert builds and at[("progress begun", "mark")] <= min(builds)
