"""killmap red-first on real repositories: the fix reverted, the tests kept.

Each scenario is a change fixture (tests/fixtures/projects/rf-*: base/ and head/) made into
a repository with main at BASE and a branch at HEAD; killmap runs once per scenario as a
real subprocess, and the tests read its report.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from gatekit import gate_env
from reviewkit import change_repo, commit_all, git, review, untouched

FOLDED = "tests/test_loader.py::test_load_keeps_quant[DSparkDraftModel-True]"
STANDALONE = "tests/test_loader.py::test_load_keeps_quant[Qwen3DSparkModel-False]"


@pytest.fixture(scope="module")
def fold(tmp_path_factory):
    """Seed 001's shape: utils.py fixed, loader.py tidied, the test parametrized."""
    project = change_repo("rf-fold", tmp_path_factory.mktemp("fold"))
    before = untouched(project)
    runs = {"utils-only": review(project, "red-first", "--revert", "src/foldroute/utils.py")}
    runs["utils-only-tree"] = untouched(project)
    runs["expected"] = review(project, "red-first", "--revert", "src/foldroute/utils.py", "--expect", FOLDED)
    runs["wrong-expected"] = review(
        project,
        "red-first",
        "--revert",
        "src/foldroute/utils.py",
        "--expect",
        "tests/test_loader.py::test_architecture_is_the_route_lane",
    )
    runs["everything"] = review(project, "red-first", "main")
    return project, before, runs


# --- seed 001: "with your test but utils.py reverted: only the folded parametrization fails" ---


def test_reverting_one_file_fails_only_the_folded_parametrization(fold):
    _, _, runs = fold
    run = runs["utils-only"]
    assert [c["path"] for c in run.report["reverted"]] == ["src/foldroute/utils.py"], run.stdout
    assert run.classes()[FOLDED] == "fail-to-pass"
    assert run.tests()[FOLDED]["cause"] == "assertion"
    assert run.classes()[STANDALONE] == "pass-to-pass"
    assert [t for t, c in run.classes().items() if c == "fail-to-pass"] == [FOLDED]


def test_a_modified_test_that_passes_without_the_fix_breaks_the_contract(fold):
    run = fold[2]["utils-only"]
    assert run.code == 1
    assert run.tests()[STANDALONE]["change"] == "modified"
    assert run.report["problems"] == [
        f"{STANDALONE} was modified by this change but passes with the fix reverted: it does not test the fix"
    ]
    assert run.report["problems"][0] in run.stdout


def test_expect_names_the_exact_fail_to_pass_set(fold):
    runs = fold[2]
    assert runs["expected"].code == 0, runs["expected"].stdout
    assert runs["expected"].report["problems"] == []
    # One fail-to-pass test left out of --expect, and one pass-to-pass test named in it.
    wrong = runs["wrong-expected"]
    assert wrong.code == 1
    assert wrong.report["problems"] == [
        f"{FOLDED} is fail-to-pass but not in --expect",
        "tests/test_loader.py::test_architecture_is_the_route_lane is in --expect but is pass-to-pass: it does "
        "not fail with the fix reverted",
    ]


def test_only_the_changed_and_reaching_tests_run(fold):
    run = fold[2]["utils-only"]
    assert {t: entry["why"] for t, entry in run.tests().items()} == {
        FOLDED: "modified",
        STANDALONE: "modified",
        "tests/test_loader.py::test_architecture_is_the_route_lane": "in a changed test file",
        "tests/test_entry.py::test_entry_builds_a_standalone_draft": "reaching the changed source",
    }
    assert run.report["head_collected"] == 5  # test_names.py never reaches the fix


def test_without_revert_every_changed_source_file_is_reverted_and_docs_are_kept(fold):
    run = fold[2]["everything"]
    assert [c["path"] for c in run.report["reverted"]] == ["src/foldroute/loader.py", "src/foldroute/utils.py"]
    assert [c["path"] for c in run.report["kept"]] == ["README.md"]
    assert [c["path"] for c in run.report["test_files"]] == ["tests/test_loader.py"]


def test_the_reports_are_one_document_in_every_format(fold):
    run = fold[2]["utils-only"]
    markdown = run.markdown()
    assert "## killmap red-first: ❌" in markdown
    assert f"| `{FOLDED}` | modified | ❌ assertion: AssertionError at tests/test_loader.py:" in markdown
    assert "<details><summary>the fix, reverted" in markdown and "```diff" in markdown
    assert "-        return target_quant" in markdown  # the diff goes HEAD -> the sandbox
    suite = ET.fromstring((run.report_dir / "red-first.junit.xml").read_text())
    failed = [case.get("name") for case in suite.iter("testcase") if case.find("failure") is not None]
    assert failed == [STANDALONE]
    assert STANDALONE in (run.report_dir / "red-first.html").read_text()
    assert run.report["schema"] == "killmap-redfirst/1" and run.report["exit_code"] == 1


def test_the_working_tree_and_index_are_byte_identical(fold):
    project, before, runs = fold
    assert runs["utils-only-tree"] == before
    assert untouched(project) == before


@pytest.mark.parametrize(
    "args,field,words",
    [
        (("--revert", "tests/test_loader.py"), "--revert", "is a test file"),
        (("--revert", "src/foldroute/names.py"), "--revert", "did not change"),
        (("--expect", "tests/test_loader.py::test_nope"), "--expect", "matches no test collected at HEAD"),
        (("no-such-revision",), "BASE", "failed"),
        (("HEAD",), "BASE", "nothing changed"),
    ],
    ids=["revert-a-test", "revert-unchanged", "expect-typo", "bad-base", "no-change"],
)
def test_bad_input_is_one_line_and_exit_2(fold, args, field, words):
    project, before, _ = fold
    run = review(project, "red-first", *args)
    assert run.code == 2, run.stdout + run.stderr
    assert f"{'option' if field.startswith('--') else 'field'} {field!r}" in run.stderr and words in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    assert untouched(project) == before


def test_worktree_takes_the_uncommitted_change_and_a_change_without_tests_proves_nothing(tmp_path):
    project = change_repo("rf-fold", tmp_path)
    utils = project / "src" / "foldroute" / "utils.py"
    utils.write_text(utils.read_text().replace('== "DSparkDraftModel"', 'in ("DSparkDraftModel",)'))
    before = untouched(project)
    assert review(project, "red-first", "HEAD").code == 2  # committed HEAD: nothing changed
    run = review(project, "red-first", "HEAD", "--worktree")
    assert run.code == 1, run.stdout + run.stderr
    assert run.report["head"] == "working tree"
    assert [c["path"] for c in run.report["reverted"]] == ["src/foldroute/utils.py"]
    assert run.report["problems"] == [
        "this change adds or modifies no test, so nothing in it proves the fix "
        "(name the tests that should with --expect)"
    ]
    assert untouched(project) == before


# --- seed 004: "did not compile because it did not exist" ----------------------------------


@pytest.fixture(scope="module")
def absence(tmp_path_factory):
    project = change_repo("rf-absence", tmp_path_factory.mktemp("absence"))
    return review(project, "red-first")


def test_a_test_module_that_imports_a_new_name_is_red_by_absence(absence):
    tests = absence.tests()
    for test_id in (
        "tests/test_architecture.py::test_pair_resolves",
        "tests/test_architecture.py::test_other_pair_refused",
    ):
        assert tests[test_id]["class"] == "fail-to-pass"
        assert tests[test_id]["cause"] == "absence"
        assert tests[test_id]["reverted"]["outcome"] == "uncollected"
        assert tests[test_id]["reverted"]["absent"] in (
            "absentpkg.resolver.Refusal",
            "absentpkg.resolver.resolve_architecture",
        )


def test_an_attribute_or_a_module_the_fix_adds_is_red_by_absence(absence):
    tests = absence.tests()
    refusal = tests["tests/test_resolver.py::test_refusal_has_its_own_type"]
    assert (refusal["cause"], refusal["reverted"]["absent"]) == ("absence", "absentpkg.resolver.Refusal")
    for name in ("test_lanes_module", "test_lanes_module_imported_whole"):
        lanes = tests[f"tests/test_resolver.py::{name}"]
        assert (lanes["cause"], lanes["reverted"]["absent"]) == ("absence", "absentpkg.arch")
        assert lanes["reverted"]["exception"] in ("ImportError", "ModuleNotFoundError")


def test_absence_is_reported_apart_from_an_assertion_and_from_a_crash(absence):
    tests = absence.tests()
    assert tests["tests/test_resolver.py::test_dsv4_refusal_is_named"]["cause"] == "assertion"
    # An AttributeError too, but of `lane` on a str: no name the fix defines.
    crash = tests["tests/test_resolver.py::test_route_names_its_lane"]
    assert (crash["class"], crash["cause"]) == ("fail-to-pass", "crash")
    assert absence.report["summary"]["fail-to-pass by cause"] == {"absence": 5, "assertion": 1, "crash": 1}
    assert "by the absence of what the fix adds" in absence.markdown()
    assert absence.code == 0, absence.stdout


# --- the code's own answer: an exception it raises on purpose ----------------------------------


def test_an_exception_the_code_raises_on_purpose_proves_behaviour_and_a_crash_does_not(tmp_path):
    run = review(change_repo("rf-raised", tmp_path), "red-first")
    causes = {t.split("::")[1]: (e["class"], e["cause"], e["reverted"]["exception"]) for t, e in run.tests().items()}
    assert causes == {
        "test_known_path_matches": ("pass-to-pass", None, None),
        # The project's own NotFound, under pytest.raises(RequestRedirect) and outside any.
        "test_missing_slash_redirects": ("fail-to-pass", "raised", "NotFound"),
        "test_redirect_names_the_slashed_path": ("fail-to-pass", "raised", "NotFound"),
        # A builtin KeyError escaping the pytest.raises(ValueError) that expected another.
        "test_a_rule_without_methods_is_refused": ("fail-to-pass", "raised", "KeyError"),
        # A builtin escaping no pytest.raises, and the test's own exception class: crashes.
        "test_default_endpoint": ("fail-to-pass", "crash", "KeyError"),
        "test_endpoint_from_the_test_s_own_exception": ("fail-to-pass", "crash", "NoDefault"),
    }, run.stdout
    assert run.report["summary"]["fail-to-pass by cause"] == {"crash": 2, "raised": 3}
    assert (
        "**5 fail-to-pass** (3 by an exception the code raises on purpose, which proves the behaviour too; "
        "2 by crash)" in run.markdown()
    )
    assert "| ❌ raised: NotFound at src/rulemap/routing.py:11 |" in run.markdown()
    assert run.code == 0, run.stdout


# --- a fail-to-pass that rests on absence alone: run again with the names kept -----------------

CHECKS = ("test_the_same_path_twice_is_refused", "test_the_refusal_names_the_path", "test_a_path_needs_its_slash")
NEVER_RED = (
    "test_a_duplicate_is_a_routing_error",
    "test_distinct_paths_are_both_kept",
    "test_the_refusal_carries_its_path",
)


@pytest.fixture(scope="module")
def names(tmp_path_factory):
    """An exception class added with the checks that raise it; the test module imports it."""
    return review(change_repo("rf-names", tmp_path_factory.mktemp("names")), "red-first")


def test_the_names_kept_run_agrees_with_reverting_the_checks_alone_and_with_plain_pytest(names, tmp_path):
    # What a reviewer had to think of alone: --revert of the file holding the checks.
    project = change_repo("rf-names", tmp_path)
    by_hand = review(project, "red-first", "--revert", "src/routemap/map.py")
    assert {t.split("::")[1] for t, c in by_hand.classes().items() if c == "fail-to-pass"} == set(CHECKS)
    # And plain pytest in that tree: the three checks fail, everything else passes.
    git(project, "checkout", "main", "--", "src/routemap/map.py")
    junit = tmp_path / "plain.xml"
    env = {**gate_env(project), "PYTHONPATH": str(project / "src")}
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", "tests"],
        cwd=project,
        env=env,
        capture_output=True,
    )
    failed = {c.get("name") for c in ET.parse(junit).iter("testcase") if c.find("failure") is not None}
    assert failed == set(CHECKS)
    tests = {t.split("::")[1]: e for t, e in names.tests().items()}
    assert {n for n, e in tests.items() if e["names_kept_class"] == "fail-to-pass"} == failed


def test_a_run_red_only_by_absence_runs_again_with_the_names_the_fix_adds_kept(names):
    tests = {t.split("::")[1]: entry for t, entry in names.tests().items()}
    assert {(e["class"], e["cause"]) for e in tests.values()} == {("fail-to-pass", "absence")}, names.stdout
    kept = names.report["names_kept"]
    assert kept["ran"] is True
    assert kept["files"] == [
        {"path": "src/routemap/exceptions.py", "how": "at HEAD: it only adds definitions", "kept": ["DuplicateRule"]},
        {"path": "src/routemap/map.py", "how": "as at BASE, with the definitions it adds", "kept": ["DuplicateRule"]},
    ]
    proven = {name for name, e in tests.items() if e["names_kept_class"] == "fail-to-pass"}
    assert proven == set(CHECKS)
    assert {tests[name]["names_kept"]["cause"] for name in CHECKS} == {"assertion"}
    assert kept["summary"]["fail-to-pass by cause"] == {"assertion": 3}
    assert kept["summary"]["pass-to-pass"] == 5  # the three, and the two tests the change left alone


def test_an_added_test_red_only_by_absence_breaks_the_contract_and_the_review_says_which(names):
    assert names.code == 1
    assert names.report["problems"] == [
        f"tests/test_map.py::{name} fails with the fix reverted only because "
        "routemap.exceptions.DuplicateRule does not exist: with the names the fix adds kept it passes, so it "
        "does not test what the fix changes"
        for name in NEVER_RED
    ]
    assert names.report["rests_on_absence"] is False  # the second run found three that assert
    markdown = names.markdown()
    assert "### With the names the fix adds kept" in markdown
    assert "**3 fail-to-pass** (3 by an assertion, which proves the behaviour), 5 pass-to-pass." in markdown
    page = (names.report_dir / "red-first.html").read_text()
    assert "<th>with the names the fix adds kept</th>" in page and "passed → pass-to-pass" in page


def test_a_fix_that_only_adds_definitions_rests_on_absence_and_is_not_a_tick(tmp_path):
    project = change_repo("rf-names", tmp_path)
    git(project, "checkout", "main", "--", "src/routemap/map.py")
    test = project / "tests" / "test_map.py"
    text = test.read_text()
    cut = text.index("# The three that test the fix's checks")
    test.write_text(text[:cut] + text[text.index("# The three that never fail") :])
    commit_all(project, "only the class, no check")
    run = review(project, "red-first")
    assert run.code == 0, run.stdout + run.stderr
    assert {e["cause"] for e in run.tests().values()} == {"absence"}
    assert run.report["rests_on_absence"] is True
    assert run.report["names_kept"]["ran"] is False
    assert all(e["names_kept"] is None for e in run.tests().values())
    markdown = run.markdown()
    assert "## killmap red-first: ⚠️ every fail-to-pass rests on the absence of what the fix adds" in markdown
    assert "red-first cannot show that these tests fail for what the fix does" in markdown


# --- every rule of the contract, broken once -----------------------------------------------


@pytest.fixture(scope="module")
def bad(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bad")
    project = change_repo("rf-bad", folder)
    before = untouched(project)
    # Unconfined: the marker that makes a test flip lies outside what Landlock grants a test.
    env = gate_env(project, {"RF_FLAKE_MARKER": str(folder / "marker"), "KILLMAP_CONFINE": "0"})
    # test_settles loops forever with the fix reverted, and the flake guard runs it again: 5 s
    # for a tree's run, not the default (the same verdict, a minute sooner; each tree's run
    # takes about a second).
    run = review(project, "red-first", "--timeout", "5", env=env)
    return run, untouched(project) == before


def test_an_added_test_that_passes_without_the_fix_is_reported_with_exit_1(bad):
    run, _ = bad
    assert run.code == 1
    assert (
        "tests/test_core.py::test_new_tax_case was added by this change but passes with the fix "
        "reverted: it does not test the fix"
    ) in run.report["problems"]
    assert (
        "tests/test_core.py::test_every_arm[a] was added by this change but passes with the fix "
        "reverted: it does not test the fix"
    ) in run.report["problems"]


def test_a_parametrization_that_exists_only_with_the_fix_is_red_by_absence(bad):
    test = bad[0].tests()["tests/test_core.py::test_every_arm[b]"]
    assert (test["class"], test["cause"], test["reverted"]["outcome"]) == ("fail-to-pass", "absence", "uncollected")


def test_nothing_may_be_pass_to_fail(bad):
    run, _ = bad
    assert run.classes()["tests/test_core.py::test_fee_doubles"] == "pass-to-fail"
    assert (
        "tests/test_core.py::test_fee_doubles passes with the fix reverted but fails with it: the change breaks it"
    ) in run.report["problems"]


def test_head_must_be_green(bad):
    run, _ = bad
    assert run.classes()["tests/test_core.py::test_fee_of_one"] == "fail-to-fail"
    assert (
        "tests/test_core.py::test_fee_of_one fails with the fix and without it: HEAD is not green"
        in run.report["problems"]
    )
    assert any(
        p.startswith("HEAD does not collect tests/test_broken_at_head.py: ModuleNotFoundError")
        for p in run.report["problems"]
    )


def test_a_skipped_new_test_proves_nothing(bad):
    assert (
        "tests/test_core.py::test_later was added by this change but is skipped at HEAD: it proves nothing"
        in bad[0].report["problems"]
    )


def test_the_flake_guard_re_runs_every_red_in_its_tree(bad):
    run, _ = bad
    assert run.classes()["tests/test_core.py::test_flaky_once"] == "flaky"
    assert (
        "tests/test_core.py::test_flaky_once is flaky at HEAD: it went red, then green when re-run"
        in run.report["problems"]
    )


def test_a_test_that_hangs_without_the_fix_is_red_by_timeout_and_the_rest_still_run(bad):
    tests = bad[0].tests()
    settles = tests["tests/test_core.py::test_settles"]
    assert (settles["class"], settles["cause"]) == ("fail-to-pass", "timeout")
    after = tests["tests/test_core.py::test_after_the_loop"]
    assert (after["class"], after["cause"]) == ("fail-to-pass", "assertion")


def test_every_problem_is_a_junit_failure_and_the_tree_is_untouched(bad):
    run, tree_untouched = bad
    suite = ET.fromstring((run.report_dir / "red-first.junit.xml").read_text())
    failed = {
        case.get("name"): case.find("failure").get("message")
        for case in suite.iter("testcase")
        if case.find("failure") is not None
    }
    assert int(suite.get("failures")) == len(failed) == len(run.report["problems"]) == 7
    assert failed["the change"].startswith("HEAD does not collect tests/test_broken_at_head.py")
    assert tree_untouched


def test_a_fix_committed_on_top_of_the_branch_is_proved_from_its_parent(tmp_path):
    # BASE may be any revision: the last commit alone, as a reviewer checks one fix-up.
    project = change_repo("rf-fold", tmp_path)
    test = project / "tests" / "test_loader.py"
    test.write_text(
        test.read_text() + "\n\ndef test_folded_lane_kept():\n"
        "    call = load({'arch': 'DSparkDraftModel'}, TARGET_QUANT, DRAFT_QUANT, build)\n"
        "    assert call['quant_config'] is TARGET_QUANT\n"
    )
    utils = project / "src" / "foldroute" / "utils.py"
    utils.write_text(utils.read_text().replace("    return draft_quant\n", "    return draft_quant  # standalone\n"))
    commit_all(project, "a fix-up")
    run = review(project, "red-first", git(project, "rev-parse", "HEAD~1").strip())
    assert run.classes()["tests/test_loader.py::test_folded_lane_kept"] == "pass-to-pass"
    assert run.code == 1


def test_a_conftest_that_needs_a_name_the_fix_adds_makes_every_test_red_by_absence(tmp_path):
    project = change_repo("rf-fold", tmp_path)
    utils = project / "src" / "foldroute" / "utils.py"
    utils.write_text(utils.read_text() + "\n\nFOLDED_ARCH = 'DSparkDraftModel'\n")
    (project / "tests" / "conftest.py").write_text("from foldroute.utils import FOLDED_ARCH  # noqa: F401\n")
    commit_all(project, "a conftest that needs the fix")
    run = review(project, "red-first", "--revert", "src/foldroute/utils.py")
    for test_id in (FOLDED, STANDALONE):
        side = run.tests()[test_id]["reverted"]
        assert (side["outcome"], side["cause"], side["absent"]) == (
            "uncollected",
            "absence",
            "foldroute.utils.FOLDED_ARCH",
        )
    # Both parametrizations fail without the fix, by absence alone; with FOLDED_ARCH kept the
    # standalone one passes again, as it does when nothing is missing (seed 001 above).
    assert run.tests()[FOLDED]["names_kept_class"] == "fail-to-pass"
    assert run.tests()[STANDALONE]["names_kept_class"] == "pass-to-pass"
    assert run.code == 1, run.stdout + run.stderr


def test_a_head_that_collects_nothing_is_exit_2(tmp_path):
    project = change_repo("rf-fold", tmp_path)
    (project / "tests" / "conftest.py").write_text("raise RuntimeError('this conftest is broken')\n")
    commit_all(project, "a broken conftest")
    run = review(project, "red-first")
    assert run.code == 2, run.stdout + run.stderr
    assert "field 'HEAD'" in run.stderr and "this conftest is broken" in run.stderr


def test_tests_that_write_into_the_working_tree_are_exit_2_and_the_file_is_restored(tmp_path):
    project = change_repo("rf-fold", tmp_path)
    target = project / "src" / "foldroute" / "names.py"
    # The real path is in the test's text: a variable naming the tree would be rewritten to name
    # the sandbox. Unconfined, as on macOS: Landlock would refuse the write before it happened.
    (project / "tests" / "test_escape.py").write_text(
        "def test_writes_where_it_must_not():\n"
        f"    with open({str(target)!r}, 'a') as f:\n        f.write('# written by a test\\n')\n"
    )
    commit_all(project, "a test that escapes")
    before = untouched(project)
    run = review(project, "red-first", env=gate_env(project, {"KILLMAP_CONFINE": "0"}))
    assert run.code == 2, run.stdout + run.stderr
    assert "wrote to the working tree: src/foldroute/names.py" in run.stderr
    assert untouched(project) == before


def test_tests_sharing_a_file_and_a_cause_are_one_line_and_the_environment_s_reds_stand_apart(tmp_path):
    project = change_repo("rf-absence", tmp_path)
    cases = "".join(f"\n\ndef test_lane_{n}():\n    assert LANES[0].startswith('Qwen3')\n" for n in range(4))
    (project / "tests" / "test_lanes.py").write_text("from absentpkg.arch import LANES\n" + cases)
    # Red at HEAD as well as without the fix: the environment lacks what it needs, not the fix.
    needs = "".join(
        f"\n\ndef test_needs_a_service_{n}():\n    assert os.environ.get('RF_NO_SERVICE')\n" for n in range(3)
    )
    (project / "tests" / "test_service.py").write_text("import os\n" + needs)
    commit_all(project, "four tests that import a module the fix adds, and one the environment breaks")
    run = review(project, "red-first")
    lanes = [t for t in run.report["tests"] if t["id"].startswith("tests/test_lanes.py::")]
    assert len(lanes) == 4 and {t["cause"] for t in lanes} == {"absence"}  # the JSON keeps every test
    for text in (run.stdout, run.markdown()):
        assert "4 tests in `tests/test_lanes.py`" in text, text
        assert "tests/test_lanes.py::test_lane_0" not in text.split("<details>")[0], text
        own, environment = text.split("### Red with and without the fix")
        assert "test_service.py" not in own and "4 tests in `tests/test_lanes.py`" in own
        assert (
            "3 tests in `tests/test_service.py`: each fails with the fix and without it: HEAD is not green"
            in environment
        )
    folded = run.markdown().split("<summary>4 tests in `tests/test_lanes.py`")[1].split("</details>")[0]
    assert all(f"`tests/test_lanes.py::test_lane_{n}`" in folded for n in range(4)), folded
