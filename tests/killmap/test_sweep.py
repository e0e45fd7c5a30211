"""`killmap sweep` end to end, on the fixture project tests/fixtures/projects/sweep.

One sweep of its module (both operator families) is shared by the tests that read its
report; promotion works on copies of its own. Each fixture function exists for one status
(its comment says which), so every assertion here names the mutant it is about.
"""

from __future__ import annotations

import json

import pytest
from gatekit import run_gate
from sweepkit import by_status, fresh_fixture, require_mutmut, sweep

from killmap.wording import counted

MODULE = "src/sweeppkg/limits.py"


@pytest.fixture(autouse=True)
def _mutmut():
    require_mutmut()


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    require_mutmut()
    project = fresh_fixture(tmp_path_factory.mktemp("sweep"))
    done, doc, report_dir = sweep(project, MODULE, "--jobs", "2")
    assert done.code == 0, done.stderr
    return project, done, doc, report_dir


def _one(doc, **wanted):
    found = [m for m in doc["sweep"]["mutants"] if all(m[k] == v for k, v in wanted.items())]
    assert len(found) == 1, (wanted, [(m["function"], m["op"], m["change"]) for m in found])
    return found[0]


def test_a_survivor_is_found_and_shown_first(swept):
    _, done, doc, _ = swept
    survivor = _one(doc, function="within", op="mutmut:swap_op")
    assert survivor["status"] == "survived"
    assert survivor["change"] == "return value < limit  ->  return value <= limit"
    assert survivor["red"] == [] and survivor["reached_by"] == ["tests/test_limits.py::test_within"]
    # The terminal lists survivors before anything else, each with its one-line change.
    listed = [
        line.split()[0]
        for line in done.stdout.splitlines()
        if line.split() and line.split()[0] in ("survived", "broken")
    ]
    assert listed[0] == "survived" and "broken" in listed and survivor["id"] in done.stdout


def test_survivors_are_called_a_gap_or_an_equivalent_mutant_never_only_a_gap(swept):
    # `within`'s survivor (`<` read as `<=`) is a gap only if some caller can tell the two apart
    # at the limit; the sweep cannot know, and its words must not assume it.
    _, done, _, report_dir = swept
    said = " ".join(done.stdout.split())
    assert "a survivor may be a gap in the tests, or an equivalent mutant" in said
    assert "the tests do not see" not in said
    page = " ".join((report_dir / "killmap-sweep.html").read_text().split())
    assert "a survivor may be a gap in the tests, or an equivalent mutant" in page


def test_killed_mutants_carry_their_red_set_and_causes(swept):
    _, _, doc, _ = swept
    killed = _one(doc, function="register", change="check_name(name)  ->  (deleted)")
    assert killed["status"] == "killed"
    assert [(r["id"], r["cause"]) for r in killed["red"]] == [
        ("tests/test_limits.py::test_register_refuses_an_empty_name", "assertion")
    ]


def test_killmap_operators_make_the_statement_level_defects(swept):
    _, _, doc, _ = swept
    ops = {m["op"] for m in doc["sweep"]["mutants"] if m["op"].startswith("killmap:")}
    assert ops == {"killmap:delete-call", "killmap:constant-return", "killmap:negate", "killmap:merge-strings"}
    merged = _one(doc, op="killmap:merge-strings")
    assert merged["change"] == 'raise ValueError("level unknown")  ->  raise ValueError("level missing")'
    assert merged["status"] == "killed"
    assert {
        m["change"].split("->")[1].strip()
        for m in doc["sweep"]["mutants"]
        if m["function"] == "within" and m["op"] == "killmap:constant-return"
    } == {"return True", "return False"}


def test_a_mutant_equal_to_a_named_mutation_is_named_and_not_run(swept):
    _, _, doc, _ = swept
    named = _one(doc, status="named")
    assert named["named"] == "low-bound-negated"
    assert named["op"] == "killmap:negate" and named["function"] == "clamp"
    assert named["selected_tests"] == 0 and named["verdict"] is None


def test_the_pragma_is_honoured_by_both_operator_families(swept):
    _, _, doc, _ = swept
    guarded_line = 44  # `if value is None:  # pragma: no mutate`
    assert [m["change"] for m in doc["sweep"]["mutants"] if guarded_line in m["lines"]] == []
    # The line below it has no pragma and is mutated as usual.
    assert any(m["function"] == "guarded" for m in doc["sweep"]["mutants"])
    assert doc["sweep"]["generated"]["pragma"] >= 1  # killmap's negation of it, left out


def test_a_broken_mutant_is_not_counted_in_the_score(swept):
    _, _, doc, _ = swept
    broken = _one(doc, status="broken")
    assert broken["change"] == "return deepcopy(items)  ->  return copy(items)"
    assert "undefined name 'copy'" in broken["detail"]
    copied = next(f for f in doc["sweep"]["functions"] if f["function"] == "copied")
    assert (copied["broken"], copied["killed"], copied["survived"], copied["score"]) == (1, 1, 0, 1.0)


def test_unreached_mutants_are_never_run_and_not_scored(swept):
    _, done, doc, _ = swept
    unreached = by_status(doc, "unreached")
    assert {m["function"] for m in unreached} == {"untouched"} and len(unreached) == 2
    assert all(m["selected_tests"] == 0 and m["duration_seconds"] == 0 for m in unreached)
    untouched = next(f for f in doc["sweep"]["functions"] if f["function"] == "untouched")
    assert untouched["score"] is None
    summary = doc["sweep"]["summary"]
    scored = summary["killed"] + summary["timeout"] + summary["survived"]
    assert summary["score"] == pytest.approx((summary["killed"] + summary["timeout"]) / scored)
    # Findings too, one per line or gap: the terminal counts them (it lists only survivors).
    reported = sum(1 for m in unreached if m.get("reported", True))
    assert f"{counted(reported, 'unreached finding')}, code no test runs: listed in the reports" in done.stdout


def test_reports_carry_the_sweep_html_and_stryker_statuses(swept):
    project, _, doc, report_dir = swept
    assert doc["schema"] == "killmap-sweep/1" and doc["sweep"]["ops"] == ["mutmut", "killmap"]
    assert doc["pytest"] == pytest.__version__  # the pytest that ran, though the gate never imports it
    page = (report_dir / "killmap-sweep.html").read_text()
    assert "limits.py::within" in page and "<pre>" in page
    stryker = json.loads((report_dir / "mutation-report.sweep.json").read_text())
    statuses = {m["id"]: m["status"] for m in stryker["files"][MODULE]["mutants"]}
    expected = {
        "survived": "Survived",
        "killed": "Killed",
        "unreached": "NoCoverage",
        "broken": "CompileError",
        "named": "Ignored",
    }
    assert {statuses[m["id"]] for m in doc["sweep"]["mutants"]} == set(expected.values())
    assert all(statuses[m["id"]] == expected[m["status"]] for m in doc["sweep"]["mutants"])
    # The gate's own reports are not written over.
    assert not (report_dir / "killmap.json").exists()


def test_a_killed_mutant_promoted_is_then_held_by_a_normal_run(swept, tmp_path):
    _, _, doc, report_dir = swept
    project = fresh_fixture(tmp_path)
    killed = _one(doc, function="register", change="check_name(name)  ->  (deleted)")
    before = (project / "mutations/limits.toml").read_text()
    done = run_gate(
        project, "sweep", "--promote", killed["id"], "--name", "name-check-deleted", "--report-dir", str(report_dir)
    )
    assert done.code == 0, done.stderr
    after = (project / "mutations/limits.toml").read_text()
    assert after.startswith(before)  # comments and layout kept: the entry is appended
    added = after[len(before) :]
    assert 'op = "delete-call"' in added and 'call = "check_name"' in added and 'pin = "ast1:sha256:' in added
    assert 'require = "assertion"' in added
    held = run_gate(project, "run", "--only", "name-check-deleted")
    assert held.code == 0, held.stdout + held.stderr
    assert held.verdicts() == {"name-check-deleted": "held"}


def test_a_token_level_kill_is_promoted_as_a_replace(swept, tmp_path):
    _, _, doc, report_dir = swept
    project = fresh_fixture(tmp_path)
    killed = _one(doc, function="parse_level", op="mutmut:swap_op", change='if text == "low":  ->  if text != "low":')
    assert killed["status"] == "killed"
    done = run_gate(
        project, "sweep", "--promote", killed["id"], "--name", "low-level-flipped", "--report-dir", str(report_dir)
    )
    assert done.code == 0, done.stderr
    added = (project / "mutations/limits.toml").read_text().split("low-level-flipped", 1)[1]
    assert 'op = "replace"' in added and 'old = "    if text == \\"low\\":\\n"' in added, added
    assert run_gate(project, "run", "--only", "low-level-flipped").verdicts() == {"low-level-flipped": "held"}


def test_promoting_a_survivor_is_refused_with_what_to_do(swept, tmp_path):
    _, _, doc, report_dir = swept
    project = fresh_fixture(tmp_path)
    survivor = _one(doc, function="within", op="mutmut:swap_op")
    before = (project / "mutations/limits.toml").read_text()
    done = run_gate(
        project, "sweep", "--promote", survivor["id"], "--name", "within-boundary", "--report-dir", str(report_dir)
    )
    assert done.code == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert "survived" in done.stderr and "vacuous by construction" in done.stderr
    assert "write a test that runs" in done.stderr and "sweep again" in done.stderr
    assert "it is an equivalent mutant: name it as an invariant" in done.stderr
    assert (project / "mutations/limits.toml").read_text() == before


def test_promoting_a_mutant_whose_code_changed_since_the_sweep_is_refused(swept, tmp_path):
    _, _, doc, report_dir = swept
    project = fresh_fixture(tmp_path)
    killed = _one(doc, function="register", change="check_name(name)  ->  (deleted)")
    module = project / MODULE
    module.write_text(
        module.read_text().replace("check_name(name)\n    registry", "check_name(name.strip())\n    registry")
    )
    done = run_gate(
        project, "sweep", "--promote", killed["id"], "--name", "name-check-deleted", "--report-dir", str(report_dir)
    )
    assert done.code == 2 and "changed since the sweep" in done.stderr


def test_ops_choose_the_operator_families(tmp_path):
    project = fresh_fixture(tmp_path)
    done, doc, _ = sweep(project, f"{MODULE}::register", "--ops", "killmap", "--jobs", "1")
    assert done.code == 0, done.stderr
    assert {m["op"] for m in doc["sweep"]["mutants"]} == {"killmap:delete-call"}
    assert {m["function"] for m in doc["sweep"]["mutants"]} == {"register"}
    bad = run_gate(project, "sweep", "--ops", "mutmut,pit")
    assert bad.code == 2 and "--ops" in bad.stderr


def test_tests_replace_the_gate_tests_and_stay_inside_the_project(tmp_path):
    project = fresh_fixture(tmp_path)
    done, doc, _ = sweep(
        project, f"{MODULE}::within", "--ops", "killmap", "--tests", "tests/test_limits.py::test_clamp_low"
    )
    assert done.code == 0, done.stderr
    # Only test_clamp_low runs, and it never calls within: nothing reaches the mutants.
    assert {m["status"] for m in doc["sweep"]["mutants"]} == {"unreached"}
    assert doc["sweep"]["mutants"][0]["gate"]["tests"] == ["tests/test_limits.py::test_clamp_low"]
    outside = run_gate(project, "sweep", MODULE, "--tests", "../elsewhere")
    assert outside.code == 2 and "--tests" in outside.stderr


def test_a_second_sweep_with_nothing_changed_reuses_every_verdict(swept):
    project, _, doc, report_dir = swept
    again, second, _ = sweep(project, MODULE, "--jobs", "2", report_dir=report_dir.parent / "again")
    assert again.code == 0, again.stderr
    # Broken is decided before anything runs, named and unreached never run: the rest is cached.
    ran = [m for m in second["sweep"]["mutants"] if m["status"] not in ("named", "unreached", "broken")]
    assert ran and all(m["cached"] for m in ran)
    assert [(m["id"], m["status"], m["red"]) for m in second["sweep"]["mutants"]] == [
        (m["id"], m["status"], m["red"]) for m in doc["sweep"]["mutants"]
    ]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--name", "Not-Kebab"], "kebab-case"),
        (["--name", "low-bound-negated"], "already exists"),
        ([], "needs --name"),
        (["--name", "x", "--catalog", "mutations/other.toml", "--catalog", "mutations/limits.toml"], "at most one"),
    ],
)
def test_promotion_refuses_a_bad_name_or_catalog(swept, tmp_path, args, says):
    _, _, doc, report_dir = swept
    project = fresh_fixture(tmp_path)
    killed = _one(doc, function="register", change="check_name(name)  ->  (deleted)")
    done = run_gate(project, "sweep", "--promote", killed["id"], *args, "--report-dir", str(report_dir))
    assert done.code == 2 and says in done.stderr, done.stderr


def test_promotion_refuses_a_catalog_whose_gate_runs_other_tests(swept, tmp_path):
    _, _, doc, report_dir = swept
    project = fresh_fixture(tmp_path)
    (project / "mutations/other.toml").write_text(
        '[gate]\ntests = ["tests/test_limits.py"]\npaths = ["src"]\n\n[[mutation]]\nname = "other"\n'
        'target = "src/sweeppkg/limits.py::within"\nop = "constant-return"\nvalue = "True"\n'
        'kills = ["tests/test_limits.py::test_within"]\n'
    )
    killed = _one(doc, function="register", change="check_name(name)  ->  (deleted)")
    done = run_gate(
        project,
        "sweep",
        "--promote",
        killed["id"],
        "--name",
        "check-gone",
        "--catalog",
        "mutations/other.toml",
        "--report-dir",
        str(report_dir),
    )
    assert done.code == 2 and "same [gate]" in done.stderr


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("../outside.py", "outside the project"),
        ("pyproject.toml", "not a Python file"),
        (f"{MODULE}::nowhere", "no symbol 'nowhere'"),
    ],
)
def test_a_bad_target_is_one_line_and_exit_2(tmp_path, target, says):
    project = fresh_fixture(tmp_path)
    done = run_gate(project, "sweep", target)
    assert done.code == 2 and says in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_sweep_target_pytest_itself_imports_is_refused_by_its_path_not_a_made_up_mutation(tmp_path):
    # pluggy: "mutation 'sweep of src/pluggy/_result.py': field 'target'", a catalog entry
    # that is not there, and no file.
    from gatekit import pluggy_shaped_project, run_gate

    project = pluggy_shaped_project(tmp_path / "plugin")
    done = run_gate(project, "sweep", "src/pluggy/mod.py", "--ops", "mutmut")
    assert done.code == 2, done.stdout + done.stderr
    assert done.stderr.startswith("killmap: src/pluggy/mod.py: field 'TARGET': pluggy.mod cannot be mutated here")
    assert "sweep of" not in done.stderr


def test_promotion_without_a_report_here_says_to_give_the_sweeps_report_dir(tmp_path):
    # six's trial: the sweep wrote to --report-dir, and promotion said only "run killmap sweep first".
    project = fresh_fixture(tmp_path)
    done = run_gate(project, "sweep", "--promote", "some.id", "--name", "some-name")
    assert done.code == 2 and "--report-dir the sweep wrote to" in done.stderr, done.stderr
