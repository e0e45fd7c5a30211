"""The gate's shards and `merge`: a shard's report records the split it was cut from, a
time-balanced split (`--durations`) merges into the unsharded verdicts, and merge refuses
shards of different splits, a lost mutation and a doubled one, each in one line naming it."""

from __future__ import annotations

import json

import pytest
from gatekit import copy_fixture, run_gate


@pytest.fixture(scope="module")
def gated(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gate-shards")
    project = copy_fixture("selection", tmp)
    whole = run_gate(project, "run", "--no-cache")
    assert whole.report is not None, whole.stderr
    durations = tmp / "durations.json"
    # Dearest first, so that the time-balanced split is not the round-robin one:
    # round-robin (by name) pairs offset-at-import with unrelated-gains-a-line.
    costs = {"offset-at-import": 10.0, "shared-off-by-one": 9.0}
    report = dict(whole.report)
    report["mutations"] = [{**m, "duration_seconds": costs.get(m["name"], 1.0)} for m in report["mutations"]]
    durations.write_text(json.dumps(report))
    return project, tmp, whole, durations


def _shard(project, tmp, spec: str, *extra: str):
    run = run_gate(project, "run", "--no-cache", "--shard", spec, *extra)
    assert run.report is not None, run.stderr
    path = tmp / f"shard-{spec.replace('/', '-of-')}{'-timed' if extra else ''}.json"
    path.write_text(json.dumps(run.report))
    return run.report, path


def _one_line_error(done) -> str:
    assert done.code == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("killmap: "), done.stderr
    return lines[0]


def test_time_balanced_gate_shards_record_their_split_and_merge_into_the_unsharded_verdicts(gated):
    project, tmp, whole, durations = gated
    first, one = _shard(project, tmp, "1/2", "--durations", str(durations))
    second, two = _shard(project, tmp, "2/2", "--durations", str(durations))
    assert {m["name"] for m in first["mutations"]} == {"offset-at-import", "unrelated-scaled"}
    assert first["split"]["method"] == "time" and first["split"]["digest"] == second["split"]["digest"]
    merged = run_gate(project, "merge", str(one), str(two), "--report-dir", str(tmp / "merged"))
    assert merged.code == whole.code == 1, merged.stderr
    document = json.loads((tmp / "merged" / "killmap.json").read_text())
    assert [(m["name"], m["verdict"]) for m in document["mutations"]] == list(whole.verdicts().items())


def test_merge_refuses_gate_shards_cut_from_different_splits_naming_them(gated):
    project, tmp, _, durations = gated
    _, timed = _shard(project, tmp, "1/2", "--durations", str(durations))
    _, dealt = _shard(project, tmp, "2/2")
    line = _one_line_error(run_gate(project, "merge", str(timed), str(dealt), "--report-dir", str(tmp / "m")))
    assert "different splits" in line and timed.name in line and dealt.name in line


def test_merge_refuses_a_gate_mutation_reported_by_two_shards_naming_it(gated):
    project, tmp, _, _ = gated
    report, one = _shard(project, tmp, "1/2")
    _, two = _shard(project, tmp, "2/2")
    doubled = json.loads(two.read_text())
    doubled["mutations"].append(report["mutations"][0])
    two.write_text(json.dumps(doubled))
    line = _one_line_error(run_gate(project, "merge", str(one), str(two), "--report-dir", str(tmp / "m")))
    assert "reported by two shards" in line and report["mutations"][0]["name"] in line


def test_a_durations_report_of_the_wrong_kind_is_one_line_before_anything_runs(gated):
    project, tmp, _, _ = gated
    wrong = tmp / "not-a-report.json"
    wrong.write_text(json.dumps({"schema": "killmap-sweep/1"}))
    line = _one_line_error(run_gate(project, "run", "--shard", "1/2", "--durations", str(wrong)))
    assert "--durations" in line and str(wrong) in line
    alone = _one_line_error(run_gate(project, "run", "--durations", str(wrong)))
    assert "--shard" in alone


@pytest.mark.parametrize("seconds", [float("nan"), float("inf"), -1.0])
def test_a_durations_report_with_a_duration_that_is_not_seconds_is_one_line_naming_the_mutation(gated, seconds):
    # NaN compares false with everything: the split would hang on the order of the entries,
    # and two runners could cut different shards from the same report.
    project, tmp, whole, _ = gated
    report = dict(whole.report)
    name = report["mutations"][0]["name"]
    entries = report["mutations"]
    report["mutations"] = [{**m, "duration_seconds": seconds if m["name"] == name else 1.0} for m in entries]
    bad = tmp / "bad-durations.json"
    bad.write_text(json.dumps(report))
    line = _one_line_error(run_gate(project, "run", "--shard", "1/2", "--durations", str(bad)))
    assert name in line and "duration_seconds" in line and str(bad) in line and "--durations" in line
