"""The timeline: every process of a gate writes its phases where KILLMAP_TIMELINE says, and no
test sees it.

A real gate on the basic fixture, its suite given one more test that fails if the variable
reaches a test's environment: the baseline stays green only if the workers took it out.
"""

from __future__ import annotations

import json
from collections import Counter

from gatekit import copy_fixture, gate_env, run_gate

BLIND_TEST = """

def test_the_timeline_is_not_in_a_tests_environment():
    import os
    assert "KILLMAP_TIMELINE" not in os.environ
"""


def _timeline_run(tmp_path):
    project = copy_fixture("basic", tmp_path)
    tests = project / "tests" / "test_core.py"
    tests.write_text(tests.read_text() + BLIND_TEST)
    record = tmp_path / "timeline.jsonl"
    run = run_gate(
        project, "run", "--no-cache", "--jobs", "2", env=gate_env(project, {"KILLMAP_TIMELINE": str(record)})
    )
    events = [json.loads(line) for line in record.read_text().splitlines()]
    return run, events


def test_every_process_of_the_gate_records_its_phases_and_no_test_sees_the_file(tmp_path):
    run, events = _timeline_run(tmp_path)
    assert run.code == 0, run.stderr
    gate = next(e["pid"] for e in events if e["event"] == "main")
    workers = {e["worker_pid"] for e in events if e["event"] == "ready" and e["pid"] == gate}
    forks = {e["fork"] for e in events if e["event"] == "forked"}
    assert len(workers) == 2 and workers.isdisjoint({gate})
    # The workers and the runs they forked wrote too, each in its own process.
    assert {e["pid"] for e in events if e["event"] == "worker ready"} == workers
    # (and the confirmation copies the runs forked in turn)
    assert forks and forks <= {e["pid"] for e in events if e["event"] == "tests"}
    # One mutant span for each mutation that ran, on the gate.
    ran = [m["name"] for m in run.report["mutations"] if m["run_seconds"]]
    assert sorted(e["mutation"] for e in events if e["event"] == "mutant" and e["at"] == "begin") == sorted(ran)
    # Every span that began ended, in the process and thread it began in.
    opened = Counter((e["pid"], e["thread"], e["event"]) for e in events if e["at"] == "begin")
    closed = Counter((e["pid"], e["thread"], e["event"]) for e in events if e["at"] == "end")
    assert opened == closed


def test_the_clock_is_one_for_every_process(tmp_path):
    run, events = _timeline_run(tmp_path)
    assert run.code == 0, run.stderr
    at = {(e["event"], e["at"]): e["t"] for e in events}
    # What caused what comes after it, though another process recorded it.
    assert at[("start workers", "mark")] < at[("worker imported", "mark")] < at[("worker ready", "mark")]
    first_fork = min(e["t"] for e in events if e["event"] == "forked")
    first_tests = min(e["t"] for e in events if e["event"] == "tests")
    assert first_fork < first_tests < at[("exit", "mark")]
