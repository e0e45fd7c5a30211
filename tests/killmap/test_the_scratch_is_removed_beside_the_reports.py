"""What an engine leaves when it closes (its scratch removed, its rewrites kept) is done on a
thread of its own while the gate renders and writes its reports, and done before the gate ends.

Read from the gate's own timeline (KILLMAP_TIMELINE): the removal is recorded on the thread the
launch runs it on, not on the gate's main thread, and it ends before the gate's last mark; the
temporary folder the gate was given holds nothing after it.
"""

from __future__ import annotations

import json

from gatekit import copy_fixture, gate_env, run_gate


def test_the_scratch_is_removed_off_the_main_thread_and_before_the_gate_ends(tmp_path):
    project = copy_fixture("basic", tmp_path)
    record, scratch = tmp_path / "timeline.jsonl", tmp_path / "tmp"
    scratch.mkdir()
    env = gate_env(project, {"KILLMAP_TIMELINE": str(record), "TMPDIR": str(scratch)})
    run = run_gate(project, "run", "--no-cache", "--jobs", "2", env=env)
    assert run.code == 0, run.stderr
    events = [json.loads(line) for line in record.read_text().splitlines()]
    gate = next(e["pid"] for e in events if e["event"] == "main")
    removed = [e for e in events if e["event"] == "scratch removed" and e["pid"] == gate]
    assert [e["at"] for e in removed] == ["begin", "end"]
    assert {e["thread"] for e in removed} == {"killmap-behind"}
    reports_began = next(e["t"] for e in events if e["event"] == "reports" and e["at"] == "begin")
    closed = next(e["t"] for e in events if e["event"] == "engine close" and e["at"] == "end")
    exit_mark = next(e["t"] for e in events if e["event"] == "exit")
    # The engine's close returned before its scratch was gone, and the reports did not wait for it.
    assert closed <= removed[1]["t"] and closed <= reports_began
    assert removed[1]["t"] <= exit_mark
    assert list(scratch.iterdir()) == []
