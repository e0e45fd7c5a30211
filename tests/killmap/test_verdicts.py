"""Every verdict, from one real run of the gate over the `verdicts` fixture project.

Each mutation in tests/fixtures/projects/verdicts/mutations/verdicts.toml is built to
land on one verdict. Breaking the check behind a verdict turns its test here red.
"""

from __future__ import annotations

import pytest
from gatekit import one_mutation_project, run_gate, write_project


def test_a_failed_contract_exits_one_and_writes_the_report(verdicts_run):
    assert verdicts_run.code == 1, verdicts_run.stderr
    assert verdicts_run.report["exit_code"] == 1
    assert verdicts_run.report["summary"]["total"] == len(verdicts_run.report["mutations"])


def test_the_users_tree_is_byte_identical_after_the_run(verdicts_run):
    assert verdicts_run.tree_unchanged


def test_a_deleted_check_that_turns_its_test_red_by_assertion_is_held(verdicts_run):
    entry = verdicts_run.mutation("refusal-check-deleted")
    assert entry["verdict"] == "held"
    assert [r["id"] for r in entry["red"]] == ["tests/test_logic.py::test_label_refuses"]
    assert set(entry["expected"]) <= set(entry["selected"])
    assert entry["run_seconds"] > 0 and entry["confirm_seconds"] > 0
    assert entry["red"][0]["cause"] == "assertion"
    assert "tests/test_logic.py::test_label_refuses" in entry["reached_by"]


def test_a_kills_test_that_stays_green_is_vacuous(verdicts_run):
    entry = verdicts_run.mutation("predicate-constant-true")
    assert entry["verdict"] == "vacuous"
    assert entry["missing"] == ["tests/test_logic.py::test_is_positive_accepts_one"]
    # may_kill tests may go red without making it an overreach
    assert entry["unexpected"] == []


def test_a_red_test_outside_the_contract_is_overreach(verdicts_run):
    entry = verdicts_run.mutation("predicate-negated")
    assert entry["verdict"] == "overreach"
    assert entry["unexpected"] == [
        "tests/test_logic.py::test_label_positive",
        "tests/test_logic.py::test_label_refuses",
    ]


def test_the_projects_maxfail_addopts_cannot_hide_reds(verdicts_run):
    # The fixture's pyproject sets addopts = "-x"; the gate's --maxfail=0 comes after it.
    assert len(verdicts_run.mutation("predicate-negated")["red"]) == 3


def test_an_invariant_that_turns_a_test_red_is_visible(verdicts_run):
    entry = verdicts_run.mutation("clamp-limit-lowered")
    assert entry["verdict"] == "visible"
    assert entry["unexpected"] == ["tests/test_logic.py::test_clamp"]


def test_an_invariant_that_stays_green_with_its_control_held_is_held(verdicts_run):
    assert verdicts_run.mutation("spin-guard-negated")["verdict"] == "held"
    entry = verdicts_run.mutation("spin-bound-equivalent")
    assert entry["verdict"] == "held"
    assert entry["reached_by"] == ["tests/test_logic.py::test_spin"]


def test_an_invariant_whose_code_no_test_runs_is_unevidenced(verdicts_run):
    assert verdicts_run.mutation("describe-threshold-lowered")["verdict"] == "held"
    entry = verdicts_run.mutation("big-word-changed")
    assert entry["verdict"] == "unevidenced"
    assert "no test executes" in entry["detail"]
    # Its control held: the explanation says what happened, not "or its control did not hold".
    assert entry["explanation"] == "nothing proves this verdict: no test executed the mutated code"


def test_an_invariant_whose_control_did_not_hold_is_unevidenced(verdicts_run):
    assert verdicts_run.mutation("greet-space-dropped")["verdict"] == "vacuous"
    entry = verdicts_run.mutation("greet-concat-empty")
    assert entry["verdict"] == "unevidenced"
    assert "greet-space-dropped" in entry["detail"]
    assert entry["explanation"] == "nothing proves this invariance: its control did not hold in this run"
    # The live line too, not only the table: its own run alone read "held".
    live = [line.split() for line in verdicts_run.stdout.splitlines() if line.endswith(" greet-concat-empty")]
    assert live == [["unevidenced", "greet-concat-empty"]], verdicts_run.stdout


def test_an_endless_loop_is_a_timeout_not_a_kill(verdicts_run):
    entry = verdicts_run.mutation("spin-never-ends")
    assert entry["verdict"] == "timeout"
    assert "tests/test_logic.py::test_spin" in entry["detail"]  # the test in progress is named
    assert entry["timeout_seconds"] == 3


def test_a_pattern_that_matches_nothing_is_not_applied(verdicts_run):
    entry = verdicts_run.mutation("pattern-missing")
    assert entry["verdict"] == "not-applied"
    assert "matched 0 sites" in entry["detail"]


def test_an_undefined_name_is_broken_by_the_pyflakes_check(verdicts_run):
    entry = verdicts_run.mutation("undefined-name")
    assert entry["verdict"] == "broken" and entry["broken_cause"] == "pyflakes"
    assert "undefined name 'positive_word'" in entry["detail"]
    # It compiles: its meaning says what is wrong with it, not "does not compile cleanly".
    assert entry["explanation"].startswith("the mutant compiles but cannot run as written"), entry["explanation"]


def test_a_mutant_that_does_not_parse_is_broken(verdicts_run):
    entry = verdicts_run.mutation("does-not-parse")
    assert entry["verdict"] == "broken" and entry["broken_cause"] == "syntax"
    assert "does not parse" in entry["detail"]
    assert entry["explanation"] == "the mutant does not parse, so no test can run it"


def test_a_name_error_raised_from_the_mutated_file_is_broken_not_a_kill(verdicts_run):
    entry = verdicts_run.mutation("unbound-local")
    assert entry["verdict"] == "broken"
    assert entry["red"][0]["cause"] == "broken"
    assert entry["red"][0]["exception"] == "UnboundLocalError"


def test_a_name_error_for_a_name_the_mutant_left_alone_is_a_crash_it_reached(tmp_path):
    # humanfriendly's shape: the mutant takes a path on which the original's own code never
    # binds `text`. Plain pytest shows the same UnboundLocalError: it is a kill, not a mutant
    # that cannot run.
    project = write_project(
        tmp_path / "latent",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": (
                "def shout(value, loud):\n    if loud:\n        text = str(value).upper()\n"
                "    return text\n\n\ndef greet(name):\n    return shout(name, True)\n"
            ),
            "tests/test_pkg.py": "from pkg import greet\n\n\ndef test_greet():\n    assert greet('a') == 'A'\n",
            "mutations/pkg.toml": (
                '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "quiet"\n'
                'target = "pkg/__init__.py::greet"\nop = "replace"\nold = "True"\nnew = "False"\n'
                'kills = ["tests/test_pkg.py::test_greet"]\n'
            ),
        },
    )
    done = run_gate(project, "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("quiet")
    assert entry["verdict"] == "held", (entry["detail"], done.stderr)
    [red] = entry["red"]
    assert (red["exception"], red["cause"]) == ("UnboundLocalError", "crash")


def test_a_mutant_that_breaks_collection_is_broken(verdicts_run):
    entry = verdicts_run.mutation("import-breaks-collection")
    assert entry["verdict"] == "broken"
    # The module that no longer imports, the exception, then the test files that failed to load.
    assert entry["detail"].startswith(
        "vpkg.logic (src/vpkg/logic.py) does not import under the mutant: ModuleNotFoundError"
    )
    assert entry["detail"].endswith("; 1 test file failed to load: tests/test_logic.py")


def test_a_module_no_test_imports_is_still_import_checked(verdicts_run):
    entry = verdicts_run.mutation("unimported-module-breaks")
    assert entry["verdict"] == "broken"
    assert "vpkg.extra does not import" in entry["detail"]


def test_require_assertion_rejects_a_crash(verdicts_run):
    entry = verdicts_run.mutation("lookup-table-emptied")
    assert entry["verdict"] == "wrong-cause"
    assert "KeyError" in entry["detail"]


def test_without_require_a_crash_in_the_code_under_test_is_a_legitimate_kill(verdicts_run):
    entry = verdicts_run.mutation("lookup-table-emptied-crash-ok")
    assert entry["verdict"] == "held"
    assert entry["red"][0]["cause"] == "crash"


def test_a_red_set_that_a_rerun_does_not_confirm_is_flaky(verdicts_run):
    entry = verdicts_run.mutation("flaky-mode-on")
    assert entry["verdict"] == "flaky"
    assert "red then green" in entry["detail"]


def test_a_changed_pinned_target_is_stale_and_says_what_to_do(verdicts_run):
    entry = verdicts_run.mutation("pinned-to-old-text")
    assert entry["verdict"] == "stale"
    assert "killmap pin pinned-to-old-text" in entry["detail"]


def test_the_report_carries_the_diff_and_the_expected_tests(verdicts_run):
    entry = verdicts_run.mutation("refusal-check-deleted")
    assert entry["diff"].startswith("--- a/src/vpkg/logic.py")
    assert "-    if not is_positive(n):" in entry["diff"]
    assert entry["expected"] == ["tests/test_logic.py::test_label_refuses"]
    assert entry["op"] == "delete-call" and entry["target"] == "src/vpkg/logic.py::label"


def test_a_limit_the_unmutated_tests_cannot_meet_is_inconclusive_not_a_timeout(verdicts_run):
    entry = verdicts_run.mutation("limit-below-the-unmutated-time")
    assert entry["verdict"] == "inconclusive"
    assert "unmutated" in entry["detail"]


@pytest.mark.parametrize(
    ("call", "said"),
    [("pytest.skip('sentinel')", "was skipped"), ("pytest.xfail('sentinel')", "xfailed under the mutant")],
)
def test_a_kills_test_the_mutant_skips_or_xfails_is_vacuous_and_says_so_not_stayed_green(tmp_path, call, said):
    # The mutant returns 0, the sentinel on which the kills test skips or xfails itself.
    tests = (
        "import pytest\nfrom pkg import one\n\n\n"
        f"def test_one():\n    if one() == 0:\n        {call}\n    assert one() == 1\n"
    )
    project = one_mutation_project(tmp_path / "proj", "def one():\n    return 1\n", tests)
    run = run_gate(project, "run", "--no-cache")
    entry = run.mutation("one-mutated")
    assert entry["verdict"] == "vacuous", entry
    assert entry["detail"].startswith(f"{said}: tests/test_pkg.py::test_one"), entry["detail"]
    assert "stayed green" not in entry["detail"]
    assert "stayed green" not in entry["explanation"]  # the verdict's meaning, as the detail


def test_the_terminal_lists_ten_red_tests_of_a_verdict_and_counts_the_rest(tmp_path):
    # sqlparse: a mutant of a shared helper printed 230 `red:` lines under one verdict.
    from gatekit import one_mutation_project, run_gate

    project = one_mutation_project(
        tmp_path / "proj",
        "def one():\n    return 1\n",
        "import pytest\nfrom pkg import one\n\n\n@pytest.mark.parametrize('n', range(12))\ndef test_one(n):\n"
        "    assert one() == 1\n",
        value="2",
        kills=("tests/test_pkg.py::test_one[0]",),
    )
    run = run_gate(project, "run", "--no-cache")
    assert run.verdicts() == {"one-mutated": "overreach"}, run.stdout
    assert sum(line.strip().startswith("red: ") for line in run.stdout.splitlines()) == 10, run.stdout
    assert "and 2 more red: every one is in the reports" in run.stdout, run.stdout
    entry = run.mutation("one-mutated")
    assert len(entry["red"]) == 12
    # Its detail too (parse: 71 ids on one line above ten red lines), and the report has all.
    assert entry["detail"].count("tests/test_pkg.py::test_one[") == 10, entry["detail"]
    assert entry["detail"].endswith(" and 1 more") and len(entry["unexpected"]) == 11


def test_an_overreach_also_names_a_kills_test_red_by_the_wrong_cause(tmp_path):
    # semver's bytes-not-decoded: a doctest outside the contract went red, and the kills test
    # crashed where `require = "assertion"` asks for an assertion. Both fixes, in one run.
    tests = "from pkg import one\n\n\ndef test_one():\n    one() + 1\n\n\ndef test_other():\n    assert one() == 1\n"
    project = one_mutation_project(
        tmp_path / "proj", "def one():\n    return 1\n", tests, value="None", extra='require = "assertion"\n'
    )
    entry = run_gate(project, "run", "--no-cache").mutation("one-mutated")
    assert entry["verdict"] == "overreach", entry
    assert entry["detail"].startswith("red outside kills and may_kill: tests/test_pkg.py::test_other; "), entry
    assert "; and wrong-cause: the kills tests went red without an assertion failing: " in entry["detail"]
    assert "tests/test_pkg.py::test_one (crash: TypeError)" in entry["detail"]


def test_a_vacuous_verdict_also_names_a_kills_test_red_by_the_wrong_cause(tmp_path):
    # isodate's time-parse-returns-none: one kills test stayed green and the others crashed
    # where `require = "assertion"` asks for an assertion; only the next run said the second.
    tests = "from pkg import one\n\n\ndef test_one():\n    one() + 1\n\n\ndef test_two():\n    assert one() is not 5\n"
    project = one_mutation_project(
        tmp_path / "proj",
        "def one():\n    return 1\n",
        tests,
        value="None",
        kills=("tests/test_pkg.py::test_one", "tests/test_pkg.py::test_two"),
        extra='require = "assertion"\n',
    )
    entry = run_gate(project, "run", "--no-cache").mutation("one-mutated")
    assert entry["verdict"] == "vacuous", entry
    assert entry["detail"].startswith("stayed green: tests/test_pkg.py::test_two; "), entry
    assert "; and wrong-cause: the kills tests went red without an assertion failing: " in entry["detail"]
    assert "tests/test_pkg.py::test_one (crash: TypeError)" in entry["detail"]


def test_a_vacuous_detail_names_ten_green_kills_tests_and_counts_the_rest(tmp_path):
    # inflection: a merged suffix left 110 kills tests green, all of them on one line.
    project = one_mutation_project(
        tmp_path / "proj",
        "def one():\n    return 1\n",
        "import pytest\nfrom pkg import one\n\n\n@pytest.mark.parametrize('n', range(12))\ndef test_one(n):\n"
        "    assert one() in (1, 2)\n",
        value="2",
    )
    entry = run_gate(project, "run", "--no-cache").mutation("one-mutated")
    assert entry["verdict"] == "vacuous", entry
    assert entry["detail"].count("tests/test_pkg.py::test_one[") == 10, entry["detail"]
    assert "and 2 more" in entry["detail"]
    assert len(entry["missing"]) == 12
