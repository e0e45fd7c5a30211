"""The other report formats say the same thing as the JSON, in the shape their readers expect."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from gatekit import copy_fixture, run_gate


@pytest.fixture(scope="module")
def selection_run(tmp_path_factory):
    project = copy_fixture("selection", tmp_path_factory.mktemp("reports"))
    return run_gate(project, "run", "--no-cache")


def test_junit_has_one_case_per_mutation_and_fails_every_verdict_but_held(selection_run):
    suite = ET.parse(selection_run.report_dir / "killmap.junit.xml").getroot()
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert set(cases) == {"shared-off-by-one", "unrelated-scaled", "offset-at-import", "unrelated-gains-a-line"}
    failure = cases["shared-off-by-one"].find("failure")
    assert failure is not None and failure.get("type") == "overreach"
    assert "test_shared_through_a_caller" in failure.text and "--- a/src/selpkg/calc.py" in failure.text
    assert cases["offset-at-import"].find("failure") is None
    assert suite.get("failures") == "2"


def test_markdown_tables_every_mutation_and_explains_each_failure(selection_run):
    text = (selection_run.report_dir / "killmap.md").read_text()
    assert text.startswith("## killmap: 2/4 contracts held")
    assert "| `unrelated-scaled` | ✅ held |" in text
    assert "### `shared-off-by-one`: overreach" in text
    assert "test_shared_through_a_caller" in text and "```diff" in text


def test_stryker_report_maps_verdicts_and_keeps_the_exact_one(selection_run):
    report = json.loads((selection_run.report_dir / "mutation-report.json").read_text())
    assert report["schemaVersion"] == "2"
    mutants = {m["id"]: m for m in report["files"]["src/selpkg/calc.py"]["mutants"]}
    assert mutants["offset-at-import"]["status"] == "Killed"
    assert mutants["shared-off-by-one"]["killmapVerdict"] == "overreach"
    assert mutants["shared-off-by-one"]["killedBy"] == [
        "tests/test_shared.py::test_shared_direct",
        "tests/test_shared.py::test_shared_through_a_caller",
    ]
    assert "tests/test_shared.py" in report["testFiles"]


def test_html_report_names_every_mutation_and_escapes_diffs(selection_run):
    page = (selection_run.report_dir / "killmap.html").read_text()
    assert "2/4 contracts held" in page
    assert all(name in page for name in ("shared-off-by-one", "unrelated-scaled", "offset-at-import"))
    assert "<pre>--- a/src/selpkg/calc.py" in page


def test_json_summary_counts_match_the_mutations(selection_run):
    report = selection_run.report
    assert report["schema"] == "killmap-report/1"
    assert report["summary"]["total"] == 4
    assert report["summary"]["held"] == 2 and report["summary"]["overreach"] == 1
    assert report["summary"]["unevidenced"] == 1


def test_shards_cover_the_catalog_once_and_merge_into_the_unsharded_verdicts(tmp_path):
    project = copy_fixture("selection", tmp_path)
    whole = run_gate(project, "run", "--no-cache")
    shard_reports = []
    for k in (1, 2):
        run = run_gate(project, "run", "--no-cache", "--shard", f"{k}/2")
        target = tmp_path / f"shard-{k}.json"
        target.write_text(json.dumps(run.report))
        shard_reports.append(str(target))
        assert run.report["shard"] == f"{k}/2"
    names = [{m["name"] for m in json.loads(open(p).read())["mutations"]} for p in shard_reports]
    assert names[0] and names[1] and not names[0] & names[1]
    merged = run_gate(project, "merge", *shard_reports, "--report-dir", str(tmp_path / "merged"))
    assert merged.code == whole.code == 1
    document = json.loads((tmp_path / "merged" / "killmap.json").read_text())
    assert [(m["name"], m["verdict"]) for m in document["mutations"]] == list(whole.verdicts().items())
    assert (tmp_path / "merged" / "killmap.junit.xml").exists()


def test_merging_without_every_shard_is_an_error_naming_what_is_missing(tmp_path):
    project = copy_fixture("selection", tmp_path)
    run = run_gate(project, "run", "--no-cache", "--shard", "1/2")
    only = tmp_path / "shard-1.json"
    only.write_text(json.dumps(run.report))
    merged = run_gate(project, "merge", str(only), "--report-dir", str(tmp_path / "merged"))
    assert merged.code == 2
    assert "no shard reported" in merged.stderr and "Traceback" not in merged.stderr


def test_a_shard_keeps_an_invariant_with_its_control(tmp_path):
    from killmap.catalog.plan import shard_mutations
    from killmap.catalog.reader import load_catalog

    project = copy_fixture("verdicts", tmp_path)
    seen = {}
    mutations = list(load_catalog(project, project / "mutations" / "verdicts.toml").mutations)
    for k in (1, 2, 3):
        for m in shard_mutations(mutations, k, 3):
            seen[m.name] = k
    assert len(seen) == len(mutations)
    for m in mutations:
        if m.invariant:
            assert seen[m.name] == seen[m.control]
