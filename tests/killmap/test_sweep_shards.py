"""`killmap sweep --shard K/N` and `--changed`, end to end on tests/fixtures/projects/sweep.

Shards of one sweep, balanced by an earlier sweep's durations, merge (`killmap merge`) into
the unsharded sweep's statuses and render every format; merge refuses a lost mutant, a
doubled one and shards of different splits. `--changed` sweeps only the functions a
change touched, in a git copy of the fixture.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from gatekit import run_gate
from sweepkit import fresh_fixture, require_mutmut, sweep

MODULE = "src/sweeppkg/limits.py"


@pytest.fixture(autouse=True)
def _mutmut():
    require_mutmut()


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    require_mutmut()
    tmp = tmp_path_factory.mktemp("sweep-shards")
    project = fresh_fixture(tmp)
    done, whole, folder = sweep(project, MODULE, "--no-cache", "--jobs", "2", report_dir=tmp / "whole")
    assert done.code == 0, done.stderr
    durations = str(folder / "killmap-sweep.json")
    shards = []
    for k in (1, 2):
        done, doc, _ = sweep(
            project, MODULE, "--no-cache", "--jobs", "2", "--shard", f"{k}/2", "--durations", durations,
            report_dir=tmp / f"shard-{k}",
        )  # fmt: skip
        assert done.code == 0, done.stderr
        shards.append((doc, tmp / f"shard-{k}" / "killmap-sweep.json"))
    return project, tmp, whole, shards


def _merge(project, tmp, *paths, folder="merged"):
    return run_gate(project, "merge", *map(str, paths), "--report-dir", str(tmp / folder))


def _one_line_error(done) -> str:
    assert done.code == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("killmap: "), done.stderr
    return lines[0]


def _statuses(doc) -> dict[str, str]:
    return {m["id"]: m["status"] for m in doc["sweep"]["mutants"]}


def test_sweep_shards_merge_into_the_unsharded_sweeps_statuses_in_every_format(sharded):
    project, tmp, whole, shards = sharded
    (first, _), (second, _) = shards
    assert first["split"]["digest"] == second["split"]["digest"] and first["split"]["method"] == "time"
    assert first["shard"] == "1/2" and _statuses(first) and _statuses(second)
    assert not set(_statuses(first)) & set(_statuses(second))
    done = _merge(project, tmp, *(path for _, path in shards))
    assert done.code == 0, done.stderr
    merged = json.loads((tmp / "merged" / "killmap-sweep.json").read_text())
    assert list(_statuses(merged).items()) == list(_statuses(whole).items())
    assert merged["sweep"]["summary"] == whole["sweep"]["summary"]
    # each shard chose its reported findings alone: the merge chooses the whole sweep's again
    assert {m["id"]: m["reported"] for m in merged["sweep"]["mutants"]} == {
        m["id"]: m["reported"] for m in whole["sweep"]["mutants"]
    }
    assert merged["sweep"]["functions"] == whole["sweep"]["functions"]
    stryker = json.loads((tmp / "merged" / "mutation-report.sweep.json").read_text())
    assert len(stryker["files"][MODULE]["mutants"]) == len(whole["sweep"]["mutants"])
    assert "killmap sweep" in (tmp / "merged" / "killmap-sweep.html").read_text()


def test_merge_refuses_a_sweep_mutant_no_shard_reported_naming_it(sharded):
    project, tmp, _, shards = sharded
    (_, first), (second, _) = shards
    line = _one_line_error(_merge(project, tmp, first, folder="lost"))
    lost = [item for item in second["split"]["items"] if item in _statuses(second)]
    assert "no shard reported" in line and lost[0] in line


def test_merge_refuses_a_sweep_mutant_reported_by_two_shards_naming_it(sharded):
    project, tmp, _, shards = sharded
    (first, one), (second, _) = shards
    doubled = dict(
        second, sweep={**second["sweep"], "mutants": [*second["sweep"]["mutants"], first["sweep"]["mutants"][0]]}
    )
    path = tmp / "doubled.json"
    path.write_text(json.dumps(doubled))
    line = _one_line_error(_merge(project, tmp, one, path, folder="doubled"))
    assert "reported by two shards" in line and first["sweep"]["mutants"][0]["id"] in line


def test_merge_refuses_sweep_shards_cut_from_different_splits(sharded):
    project, tmp, _, shards = sharded
    (_, one), (second, _) = shards
    other = tmp / "round-robin.json"
    done, doc, _ = sweep(project, MODULE, "--jobs", "2", "--shard", "2/2", report_dir=tmp / "round-robin")
    assert done.code == 0 and doc["split"]["method"] == "round-robin", done.stderr
    other.write_text(json.dumps(doc))
    assert doc["split"]["digest"] != second["split"]["digest"] and doc["split"]["items"] == second["split"]["items"]
    line = _one_line_error(_merge(project, tmp, one, other, folder="mixed"))
    assert "different splits" in line and str(one) in line and str(other) in line


def _git(project, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(
        ["git", "-c", "user.name=killmap tests", "-c", "user.email=tests@killmap.invalid", *args],
        cwd=project, check=True, capture_output=True, env=env,
    )  # fmt: skip


def test_sweep_changed_sweeps_only_the_functions_the_change_touched(tmp_path):
    project = fresh_fixture(tmp_path)
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", ".")
    _git(project, "commit", "-q", "-m", "base")
    _git(project, "checkout", "-q", "-b", "feature")
    source = project / MODULE
    text = source.read_text()
    source.write_text(text.replace("return value < limit", "return not value >= limit"))
    _git(project, "commit", "-q", "-am", "within, written otherwise")
    done, doc, _ = sweep(project, MODULE, "--ops", "mutmut", "--changed", report_dir=tmp_path / "changed")
    assert done.code == 0, done.stderr
    assert doc["sweep"]["mutants"] and {m["function"] for m in doc["sweep"]["mutants"]} == {"within"}
    done, doc, _ = sweep(project, MODULE, "--ops", "mutmut", "--changed", "HEAD", report_dir=tmp_path / "none")
    assert done.code == 0 and doc["sweep"]["mutants"] == [], done.stderr
