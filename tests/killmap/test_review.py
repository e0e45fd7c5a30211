"""`killmap review BASE`: the pull request's tests proven red-first, then the findings on the
lines it changed (one per line or gap), then one folded line for what lies outside the diff.

One real review of the rf-review change (a function gains a tested `strict` branch and an
untested `OPTIONS` branch; an older gap, nothing checking `methods is None`, sits on an
unchanged line of the same function), run once for the module, read by each test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gatekit import gate_env, killmap_command
from reviewkit import change_repo, untouched

from killmap.catalog.contract import NAME_PATTERN
from killmap.report import review_report


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory):
    where = tmp_path_factory.mktemp("review")
    project = change_repo("rf-review", where)
    before = untouched(project)
    summary = where / "summary.md"
    env = {**gate_env(project), "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_WORKSPACE": str(project)}
    command = [
        sys.executable,
        "-m",
        "killmap",
        "review",
        "main",
        "--outside-the-diff",
        "--report-dir",
        str(where / "reports"),
    ]
    done = subprocess.run(
        [*command, "--annotations", "github"], cwd=project, env=env, capture_output=True, text=True, timeout=300
    )
    assert untouched(project) == before  # the user's tree and index are never written
    return done, where / "reports", summary


def test_the_review_exits_with_red_firsts_code_and_writes_every_part(reviewed):
    done, reports, _ = reviewed
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ("review.md", "review.json", "red-first.json", "killmap-sweep.json"):
        assert (reports / name).is_file(), name
    doc = json.loads((reports / "review.json").read_text())
    assert doc["schema"] == review_report.SCHEMA
    assert doc["red_first"]["summary"]["fail-to-pass"] == 1


def test_the_review_reads_in_the_reviewers_order(reviewed):
    _, reports, _ = reviewed
    markdown = (reports / "review.md").read_text()
    proven = markdown.index("killmap red-first")
    changed = markdown.index("## The changed lines, mutated")
    outside = markdown.index("outside the diff")
    assert proven < changed < outside
    assert markdown.rfind("<details><summary>", 0, outside) > changed  # the outside line is folded


def test_only_findings_on_the_changed_lines_are_reported_one_per_line(reviewed):
    _, reports, _ = reviewed
    doc = json.loads((reports / "review.json").read_text())
    reported = doc["changed_lines"]["reported"]
    # Line 11 (`if method == "OPTIONS":`, two surviving string mutants) and 12 (its
    # `return True`, never run): one finding each. Lines 7-8 (`methods is None`) predate it.
    assert sorted(f["line"] for f in reported) == [11, 12]
    assert all(f["keep"].startswith(f"killmap sweep --promote {f['id']} --name ") for f in reported)
    names = [f["keep"].rpartition(" --name ")[2] for f in reported]
    assert all(NAME_PATTERN.match(name) for name in names), names  # what promote accepts
    assert doc["outside_the_diff"]["findings"] >= 2
    assert doc["outside_the_diff"]["functions"] == ["src/gapcheck/rules.py::allowed"]


def test_by_default_only_the_changed_lines_mutants_run_and_the_others_are_counted(reviewed, tmp_path):
    _, whole_reports, _ = reviewed
    whole = json.loads((whole_reports / "review.json").read_text())
    project = change_repo("rf-review", tmp_path)
    reports = tmp_path / "reports"
    done = killmap_command(project, "review", "main", "--report-dir", str(reports))
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads((reports / "review.json").read_text())
    ran = json.loads((reports / "killmap-sweep.json").read_text())["sweep"]["mutants"]
    assert ran and all(m["on_change"] for m in ran)
    assert doc["outside_the_diff"]["not_run"] == whole["outside_the_diff"]["mutants"] > 0
    assert doc["changed_lines"] == whole["changed_lines"]  # the findings on the change are the same
    assert "were not run (`--outside-the-diff` runs them)" in (reports / "review.md").read_text()


def test_each_finding_on_the_change_is_a_warning_at_its_line_and_the_review_is_the_job_summary(reviewed):
    done, reports, summary = reviewed
    warnings = [line for line in done.stdout.splitlines() if line.startswith("::warning ")]
    assert sorted(w.split("line=")[1].split(",")[0] for w in warnings) == ["11", "12"]
    assert all("file=src/gapcheck/rules.py" in w for w in warnings)
    assert summary.read_text().strip() == (reports / "review.md").read_text().strip()


def test_fail_on_survivors_turns_a_finding_on_the_change_into_exit_1(reviewed):
    _, reports, _ = reviewed
    doc = json.loads((reports / "review.json").read_text())
    sweep = json.loads((reports / "killmap-sweep.json").read_text())
    strict = review_report.to_document(doc["red_first"], sweep, None, fail_on_survivors=True)
    lenient = review_report.to_document(doc["red_first"], sweep, None, fail_on_survivors=False)
    assert (strict["exit_code"], lenient["exit_code"]) == (1, 0)


def test_the_review_json_is_the_pull_requests_one_comment(reviewed):
    _, reports, _ = reviewed
    from killmap.commands.comment import build_body

    body = build_body(reports / "review.json", None)
    assert body.startswith("<!-- killmap -->\n# killmap review: ")
    assert len(body.encode()) <= 65536
    cut = review_report.comment_body(json.loads((reports / "review.json").read_text()), limit=600)
    assert len(cut.encode()) <= 600 and cut.rstrip().endswith("(review.md, review.json)._")
    assert os.path.exists(reports / "review.md")


def test_a_review_of_a_change_without_python_source_sweeps_nothing(tmp_path):
    # Only a test changed: red-first has no fix to revert, so the review refuses in one line.
    project = change_repo("rf-review", tmp_path)
    (project / "tests" / "test_more.py").write_text("def test_more():\n    assert True\n")
    done = killmap_command(project, "review", "HEAD", "--worktree", "--report-dir", str(tmp_path / "r"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert Path(tmp_path / "r" / "review.json").exists() is False


def test_lines_only_without_a_change_is_refused_in_one_line(tmp_path):
    project = change_repo("rf-review", tmp_path)
    done = killmap_command(project, "sweep", "src", "--lines-only", timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip() == "killmap: --lines-only goes with --changed [BASE]"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--ops", "mutmut,nope"], "killmap: --ops takes a comma-separated list of mutmut, killmap"),
        (["--head-report", "h.json"], "killmap: --head-report goes with --base-report FILE"),
        (["--base-report", "missing.json"], "killmap: missing.json: cannot read a killmap report"),
    ],
    ids=["ops", "head-report-alone", "missing-base-report"],
)
def test_bad_input_is_one_line_and_exit_2_before_anything_runs(tmp_path, args, said):
    project = change_repo("rf-review", tmp_path)
    before = untouched(project)
    done = killmap_command(project, "review", "main", "--report-dir", str(tmp_path / "r"), *args, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(said) and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "red-first:" not in done.stdout  # refused before red-first began
    assert untouched(project) == before


def test_the_review_names_the_catalog_keys_that_keep_the_arid_mutants_it_did_not_make():
    part = {
        "mutants": [],
        "all_killed": False,
        "reported": [],
        "alike": 0,
        "marked": 0,
        "not_swept": [],
        "arid": {"repr": 1, "logging": 2},
    }
    lines = review_report._changed_lines(part)
    assert lines[-1] == (
        "Arid mutants not made: logging 2, repr 1 (`[sweep] arid_logging = false, arid_repr = false keep them`)."
    )
