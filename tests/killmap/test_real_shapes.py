"""The shapes of real routing code: mutants that leave dead code behind still run.

Seed 004's lesson is that a mutant that did not build must never be read as a result.
A Python mutant whose deleted call leaves its import unused builds, imports and runs the
defect its name says, so it is judged on its tests; only `werror = true` makes such dead
code broken. One gate run over tests/fixtures/projects/realshape checks each rule.
"""

from __future__ import annotations

import pytest
from gatekit import copy_fixture, run_gate


@pytest.fixture(scope="module")
def shapes_run(tmp_path_factory):
    project = copy_fixture("realshape", tmp_path_factory.mktemp("realshape"))
    return run_gate(project, "run", "--no-cache", "--jobs", "2")


def test_a_deleted_call_that_leaves_its_import_unused_is_held_with_warnings(shapes_run):
    entry = shapes_run.mutation("draft-check-deleted")
    assert entry["verdict"] == "held", entry["detail"]
    assert [r["id"] for r in entry["red"]] == ["tests/test_route.py::test_drafts_are_refused"]
    assert any("'.predicates.is_draft' imported but unused" in w for w in entry["warnings"])
    assert any("RouteConflict' imported but unused" in w for w in entry["warnings"])


def test_the_same_mutant_under_werror_is_broken_before_anything_runs(shapes_run):
    entry = shapes_run.mutation("draft-check-deleted-linted")
    assert entry["verdict"] == "broken"
    assert entry["broken_cause"] == "pyflakes"
    assert "werror" in entry["detail"]
    assert entry["red"] == [] and entry["selected_tests"] == 0


def test_a_new_undefined_name_is_still_broken(shapes_run):
    entry = shapes_run.mutation("draft-check-misspelt")
    assert entry["verdict"] == "broken"
    assert "undefined name 'is_drft'" in entry["detail"]


def test_a_constant_predicate_that_leaves_its_import_unused_is_held(shapes_run):
    entry = shapes_run.mutation("marked-constant")
    assert entry["verdict"] == "held", entry["detail"]
    assert any("has_marker" in w for w in entry["warnings"])


def test_a_narrowed_condition_that_leaves_a_local_unused_is_held(shapes_run):
    entry = shapes_run.mutation("pair-count-dropped")
    assert entry["verdict"] == "held", entry["detail"]
    assert any("local variable 'seen'" in w for w in entry["warnings"])


def test_a_replace_with_empty_new_deletes_the_guard_and_is_held(shapes_run):
    entry = shapes_run.mutation("none-guard-deleted")
    assert entry["verdict"] == "held", entry["detail"]
    # A pure deletion replaces the lines with nothing (not with a copy of the line after them).
    assert entry["replacement"] == "", entry["replacement"]
    assert "-    if value is None:" in entry["diff"]


def test_a_control_in_the_same_function_on_other_lines_is_accepted_and_proves_the_invariant(shapes_run):
    control, invariant = shapes_run.mutation("total-starts-at-one"), shapes_run.mutation("total-reordered")
    assert not set(control["lines"]) & set(invariant["lines"])
    assert control["verdict"] == "held"
    assert invariant["verdict"] == "held", invariant["detail"]


def test_a_red_names_the_projects_own_line_and_keeps_the_innermost_frame(shapes_run):
    # pytest.raises that did not raise fails inside _pytest/outcomes.py: a reviewer can act
    # only on the test's own `with pytest.raises(...)` line.
    [red] = shapes_run.mutation("draft-check-deleted")["red"]
    assert red["raised_at"] == "tests/test_route.py:8"
    assert "_pytest" in red["raised_innermost"]


def test_warnings_reach_every_report_format(shapes_run):
    folder = shapes_run.report_dir
    needle = "'.predicates.has_marker' imported but unused"
    for name in ("killmap.md", "killmap.html", "killmap.junit.xml", "mutation-report.json"):
        text = (folder / name).read_text()
        assert needle in text or needle.replace("'", "&#x27;") in text, name


def test_a_kills_test_on_code_no_test_runs_is_unevidenced_not_vacuous(shapes_run):
    # The test stays green because it never runs the code: the finding is missing reach,
    # not a weak assertion.
    entry = shapes_run.mutation("legacy-route-constant")
    assert entry["verdict"] == "unevidenced", entry["detail"]
    assert entry["reached_by"] == []


def test_a_conditionally_defined_function_and_a_property_setter_are_held_swapped_and_fresh(tmp_path):
    # dateutil's shapes: `enfold` defined under a module-level `if`, `relativedelta.weeks`
    # a property with a setter. Each is a target, its mutant is the code that ran, and the
    # swap (the function's code replaced in the collected session) agrees with a fresh import.
    from gatekit import write_project

    project = write_project(
        tmp_path / "proj",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": (
                "import sys\n\nif sys.version_info >= (3,):\n"
                "    def enfold(dt, fold=1):\n        return (dt, fold)\n\n\n"
                "class Delta:\n    def __init__(self, days):\n        self.days = days\n\n    @property\n"
                "    def weeks(self):\n        return self.days // 7\n\n    @weeks.setter\n"
                "    def weeks(self, value):\n        self.days = value * 7\n"
            ),
            "tests/test_pkg.py": (
                "from pkg import Delta, enfold\n\n\ndef test_enfold():\n    assert enfold('d') == ('d', 1)\n\n\n"
                "def test_weeks_read():\n    assert Delta(14).weeks == 2\n\n\n"
                "def test_weeks_write():\n    d = Delta(0)\n    d.weeks = 3\n    assert d.days == 21\n"
            ),
            "mutations/pkg.toml": (
                '[gate]\ntests = ["tests"]\npaths = ["."]\n\n'
                '[[mutation]]\nname = "enfold-drops-fold"\ntarget = "pkg/__init__.py::enfold"\nop = "constant-return"\n'
                'value = "(dt, 0)"\nkills = ["tests/test_pkg.py::test_enfold"]\n\n'
                '[[mutation]]\nname = "weeks-reads-zero"\ntarget = "pkg/__init__.py::Delta.weeks"\n'
                'op = "constant-return"\n'
                'value = "0"\nkills = ["tests/test_pkg.py::test_weeks_read"]\n\n'
                '[[mutation]]\nname = "weeks-setter-forgets-seven"\ntarget = "pkg/__init__.py::Delta.weeks.setter"\n'
                'op = "replace"\nold = "value * 7"\nnew = "value"\nkills = ["tests/test_pkg.py::test_weeks_write"]\n'
            ),
        },
    )
    for flags in ((), ("--no-swap",)):
        run = run_gate(project, "run", "--no-cache", *flags)
        assert run.code == 0, run.stdout + run.stderr
        for name, test in (
            ("enfold-drops-fold", "test_enfold"),
            ("weeks-reads-zero", "test_weeks_read"),
            ("weeks-setter-forgets-seven", "test_weeks_write"),
        ):
            entry = run.mutation(name)
            assert entry["verdict"] == "held", entry["detail"]
            assert [r["id"] for r in entry["red"]] == [f"tests/test_pkg.py::{test}"]
            assert entry["path"] == ("fresh" if flags else "swap"), entry


def test_the_baseline_line_counts_skipped_and_xfailed_tests_apart_from_the_green(tmp_path):
    from gatekit import one_mutation_project

    project = one_mutation_project(
        tmp_path / "proj",
        "def one():\n    return 1\n",
        (
            "import pytest\nfrom pkg import one\n\n\ndef test_one():\n    assert one() == 1\n\n\n"
            "def test_two():\n    assert one() + 1 == 2\n\n\n"
            "@pytest.mark.skip(reason='later')\ndef test_later():\n    pass\n\n\n"
            "@pytest.mark.xfail(reason='known')\ndef test_known():\n    assert False\n"
        ),
        value="2",
        kills=("tests/test_pkg.py::test_one", "tests/test_pkg.py::test_two"),
    )
    run = run_gate(project, "run", "--no-cache")
    assert run.code == 0, run.stdout + run.stderr
    assert "baseline: 2 tests green, 1 skipped, 1 xfailed in 2 runs" in run.stdout


def test_a_test_whose_subtests_fail_is_red_once_with_the_first_failing_subtests_cause(tmp_path):
    # more-itertools and pyparsing check most things inside unittest's subTest: pytest 9
    # reports SUBFAILED lines (and may still call the parent PASSED). The gate reads the
    # parent red, by the first subtest that failed.
    from gatekit import one_mutation_project

    project = one_mutation_project(
        tmp_path / "proj",
        "def one(x):\n    return x * 2\n",
        (
            "import unittest\nfrom pkg import one\n\n\nclass DoubleTests(unittest.TestCase):\n"
            "    def test_many(self):\n        for i in range(3):\n            with self.subTest(i=i):\n"
            "                self.assertEqual(one(i), i * 2)\n\n\n"
            "def test_zero():\n    assert one(0) == 0\n"
        ),
        kills=("tests/test_pkg.py::DoubleTests::test_many",),
        extra='require = "assertion"\n',
    )
    run = run_gate(project, "run", "--no-cache")
    assert run.code == 0, run.stdout + run.stderr
    entry = run.mutation("one-mutated")
    assert entry["verdict"] == "held", entry["detail"]
    [red] = entry["red"]
    assert red["id"] == "tests/test_pkg.py::DoubleTests::test_many" and red["cause"] == "assertion"
    assert "0 != 2" in red["message"]


def test_a_mutant_that_renames_a_parametrized_test_is_inconclusive_not_green(tmp_path):
    # marshmallow parametrizes over its own constants: the mutant changed a test's id, the
    # fresh session was given the baseline's ids, pytest refused them all and ran nothing,
    # and every selected test read as green: `vacuous`, against 4 reds under plain pytest.
    from gatekit import write_project

    project = write_project(
        tmp_path / "proj",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": (
                'MODES = ("exclude", "include")\n\n\ndef known(mode):\n    return mode in ("exclude", "include")\n'
            ),
            "tests/test_pkg.py": (
                "import pytest\nimport pkg\n\n\n@pytest.mark.parametrize('mode', pkg.MODES)\n"
                "def test_known(mode):\n    assert pkg.known(mode)\n"
            ),
            "mutations/pkg.toml": (
                '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "exclude-renamed"\n'
                'target = "pkg/__init__.py::MODES"\nop = "replace"\nold = \'"exclude"\'\nnew = \'"raise"\'\n'
                'kills = ["tests/test_pkg.py::test_known"]\n'
            ),
        },
    )
    run = run_gate(project, "run", "--no-cache")
    entry = run.mutation("exclude-renamed")
    assert entry["verdict"] == "inconclusive", entry["detail"]
    # The test and its file as the project names them, not inside the gate's sandbox, and the
    # detail names the other cause of ids that do not come back (marshmallow's datetime.now()).
    assert (
        "did not run in the mutant (first: tests/test_pkg.py::test_known[exclude]; in tests/test_pkg.py)"
        in (entry["detail"])
    )
    assert "sandbox-" not in entry["detail"] and "[gate] exclude" in entry["detail"]
    assert run.code == 1
