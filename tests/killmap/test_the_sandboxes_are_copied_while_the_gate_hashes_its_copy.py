"""The workers copy their sandboxes while the gate hashes its pristine copy and sets up the
working tree's guard: the gate's start is one of two chains that meet at the copies, and what it
did between its copy and the orders held every worker back.

Read from the gate's own timeline (KILLMAP_TIMELINE); the sandboxes' guards still hold what a
mutant writes there to account, which the guard's own tests show on every path.
"""

from __future__ import annotations

import json

from gatekit import copy_fixture, gate_env, run_gate


def test_the_copies_are_ordered_before_the_pristine_copy_is_hashed(tmp_path):
    project = copy_fixture("basic", tmp_path)
    record = tmp_path / "timeline.jsonl"
    run = run_gate(
        project, "run", "--no-cache", "--jobs", "2", env=gate_env(project, {"KILLMAP_TIMELINE": str(record)})
    )
    assert run.code == 0, run.stderr
    events = [json.loads(line) for line in record.read_text().splitlines()]
    gate = next(e["pid"] for e in events if e["event"] == "main")
    at = {(e["event"], e["at"]): e["t"] for e in events if e["pid"] == gate}
    assert at[("pristine copy", "end")] <= at[("copies ordered", "mark")] <= at[("pristine hashes", "begin")]
    assert at[("pristine hashes", "end")] <= at[("tree guard", "mark")]
    # Each sandbox was guarded once its copy was read back, with the hashes worked out meanwhile.
    copied = [e for e in events if e["event"] == "copied"]
    assert len(copied) == 2 and all(e["t"] >= at[("tree guard", "mark")] for e in copied)
