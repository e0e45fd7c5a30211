"""Coverage-selected tests stay sound, and cached verdicts are reused only when valid."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from gatekit import GateRun, copy_fixture, gate_env, run_gate


@pytest.fixture(scope="module")
def gated_once(tmp_path_factory) -> tuple[Path, GateRun]:
    """The selection fixture after one gate run that wrote its verdict cache, and that run."""
    project = copy_fixture("selection", tmp_path_factory.mktemp("gated"))
    return project, run_gate(project, "run")


@pytest.fixture
def gated(gated_once, tmp_path) -> Path:
    """A copy of that project and of its cache (the cache knows a project by its folder's
    name, as a CI cache restored elsewhere does), for a test to change and gate again."""
    project, _ = gated_once
    shutil.copytree(project.parent, tmp_path / "gated", symlinks=True)
    return tmp_path / "gated" / project.name


def test_a_test_outside_kills_that_runs_the_changed_line_is_still_selected_and_caught(tmp_path):
    project = copy_fixture("selection", tmp_path)
    run = run_gate(project, "run", "--no-cache")
    entry = run.mutation("shared-off-by-one")
    assert entry["verdict"] == "overreach"
    assert entry["unexpected"] == ["tests/test_shared.py::test_shared_through_a_caller"]
    # ...while the twenty tests that never run shared() were not run at all.
    assert entry["selected_tests"] == 2


def test_a_module_level_change_runs_every_test(tmp_path):
    project = copy_fixture("selection", tmp_path)
    run = run_gate(project, "run", "--no-cache", "--only", "offset-at-import")
    entry = run.mutation("offset-at-import")
    assert entry["verdict"] == "held"
    assert entry["selected_tests"] == 23
    assert "import" in entry["selection"]


def test_a_second_run_with_nothing_changed_reuses_every_verdict(gated_once, gated):
    first, project = gated_once[1], gated
    second = run_gate(project, "run")
    assert not any(m["cached"] for m in first.report["mutations"])
    assert all(m["cached"] for m in second.report["mutations"])
    assert second.verdicts() == first.verdicts()
    assert second.code == first.code


def test_touching_one_function_reruns_only_the_mutations_that_can_see_it(gated):
    project = gated
    calc = project / "src" / "selpkg" / "calc.py"
    calc.write_text(calc.read_text().replace("return x * 10", "return x * 10  # touched"))
    again = run_gate(project, "run")
    cached = {m["name"]: m["cached"] for m in again.report["mutations"]}
    assert cached == {
        "shared-off-by-one": True,
        "unrelated-scaled": False,
        "offset-at-import": False,
        "unrelated-gains-a-line": False,
    }


def test_no_cache_forces_every_mutation_to_run(gated):
    project = gated
    forced = run_gate(project, "run", "--no-cache")
    assert not any(m["cached"] for m in forced.report["mutations"])


def test_a_changed_catalog_entry_is_not_served_from_the_cache(gated):
    project = gated
    catalog = project / "mutations" / "selection.toml"
    catalog.write_text(catalog.read_text().replace('new = "x * 11"', 'new = "x * 12"'))
    again = run_gate(project, "run")
    assert again.mutation("unrelated-scaled")["cached"] is False
    assert again.mutation("shared-off-by-one")["cached"] is True


def _git(project, *args):
    subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)


def test_changed_runs_only_the_mutations_whose_target_changed_since_base(tmp_path):
    project = copy_fixture("selection", tmp_path)
    _git(project, "init", "-q", "-b", "main")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    calc = project / "src" / "selpkg" / "calc.py"
    calc.write_text(calc.read_text().replace("return x * 10", "return x * 10  # reviewed"))
    run = run_gate(project, "run", "--no-cache", "--changed", "HEAD")
    # unrelated() changed; offset-at-import targets the whole file, which changed too;
    # shared() did not change and its tests did not, so it is left out.
    assert [m["name"] for m in run.report["mutations"]] == [
        "unrelated-scaled",
        "offset-at-import",
        "unrelated-gains-a-line",
    ]
    assert run.code == 1  # unrelated-gains-a-line is unevidenced by design


def test_changed_with_nothing_changed_runs_nothing_and_passes(tmp_path):
    project = copy_fixture("selection", tmp_path)
    _git(project, "init", "-q", "-b", "main")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    run = run_gate(project, "run", "--changed")
    assert run.code == 0
    assert "0 mutations" in run.stdout
    assert run.report is None  # nothing ran, so no report was written


def test_a_kill_that_goes_red_without_reaching_the_change_is_unevidenced(tmp_path):
    project = copy_fixture("selection", tmp_path)
    run = run_gate(project, "run", "--no-cache", "--only", "unrelated-gains-a-line")
    entry = run.mutation("unrelated-gains-a-line")
    assert entry["verdict"] == "unevidenced"
    assert entry["red"][0]["id"] == "tests/test_lines.py::test_anchor_has_not_moved"
    assert entry["red"][0]["reached"] is False


def test_touching_a_test_file_reruns_every_mutation(gated):
    project = gated
    tests = project / "tests" / "test_shared.py"
    tests.write_text(tests.read_text() + "\n\ndef test_added_later():\n    pass\n")
    again = run_gate(project, "run")
    assert not any(m["cached"] for m in again.report["mutations"])


def test_verdicts_and_their_order_do_not_depend_on_jobs(tmp_path):
    one = run_gate(copy_fixture("selection", tmp_path / "one"), "run", "--no-cache", "--jobs", "1")
    two = run_gate(copy_fixture("selection", tmp_path / "two"), "run", "--no-cache", "--jobs", "2")
    assert list(one.verdicts().items()) == list(two.verdicts().items())

    def reds(run):  # messages may hold memory addresses; everything else must agree
        return [
            [(r["id"], r["cause"], r["exception"], r["raised_at"]) for r in m["red"]] for m in run.report["mutations"]
        ]

    assert reds(one) == reds(two)


def test_touching_an_imported_file_that_is_no_target_invalidates_the_verdicts(tmp_path):
    project = copy_fixture("selection", tmp_path)
    (project / "src" / "selpkg" / "fmt.py").write_text("def show(x):\n    return str(x)\n")
    shared = project / "tests" / "test_shared.py"
    shared.write_text("from selpkg import fmt  # noqa: F401\n" + shared.read_text())
    run_gate(project, "run")
    (project / "src" / "selpkg" / "fmt.py").write_text("def show(x):\n    return repr(x)\n")
    again = run_gate(project, "run")
    assert again.mutation("shared-off-by-one")["cached"] is False


def test_a_coverage_core_that_cannot_attribute_lines_per_test_is_not_used(tmp_path):
    # With coverage's sys.monitoring core, a line run by two tests is credited to the
    # first only, and selection would drop the second: the overreaching test here.
    project = copy_fixture("selection", tmp_path)
    env = gate_env(project, {"COVERAGE_CORE": "sysmon"})
    run = run_gate(project, "run", "--no-cache", "--only", "shared-off-by-one", env=env)
    entry = run.mutation("shared-off-by-one")
    assert entry["verdict"] == "overreach"
    assert entry["selected_tests"] == 2


def _add(project, rel, text):
    path = project / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_test_file_whose_imports_never_reach_a_target_still_runs_in_the_baseline_but_not_for_the_mutant(tmp_path):
    # Its imports cannot tell: a library may import the target by name. Its trace can.
    project = copy_fixture("selection", tmp_path)
    _add(project, "src/other/__init__.py", "def alone():\n    return 1\n")
    _add(project, "tests/test_other.py", "from other import alone\n\n\ndef test_alone():\n    assert alone() == 1\n")
    run = run_gate(project, "run", "--no-cache", "--only", "shared-off-by-one")
    assert run.report["baselines"][0]["collected"] == 24  # test_alone ran in the baseline
    entry = run.mutation("shared-off-by-one")
    assert entry["selected"] and "tests/test_other.py::test_alone" not in entry["selected"]
    left_out = 24 - entry["selected_tests"]
    assert (
        f"{left_out} of 24 left out: the traced baseline shows they never ran the changed lines" in entry["selection"]
    )


def test_imports_followed_through_project_modules_keep_a_test_in(tmp_path):
    # test_indirect imports a helper that imports the target: it can overreach, so it runs.
    project = copy_fixture("selection", tmp_path)
    _add(
        project,
        "src/other/__init__.py",
        "from selpkg.calc import shared\n\n\ndef twice(x):\n    return shared(shared(x))\n",
    )
    _add(
        project, "tests/test_indirect.py", "from other import twice\n\n\ndef test_twice():\n    assert twice(0) == 2\n"
    )
    run = run_gate(project, "run", "--no-cache", "--only", "shared-off-by-one")
    entry = run.mutation("shared-off-by-one")
    assert "tests/test_indirect.py::test_twice" in entry["unexpected"]


def test_a_test_that_imports_by_name_at_run_time_is_never_filtered_out(tmp_path):
    project = copy_fixture("selection", tmp_path)
    _add(
        project,
        "tests/test_dynamic.py",
        "import importlib\n\n\ndef test_dynamic():\n"
        "    calc = importlib.import_module('selpkg.calc')\n    assert calc.shared(1) == 2\n",
    )
    run = run_gate(project, "run", "--no-cache", "--only", "shared-off-by-one")
    assert "tests/test_dynamic.py::test_dynamic" in run.mutation("shared-off-by-one")["unexpected"]


def test_a_conftest_that_imports_a_target_keeps_every_test_below_it(tmp_path):
    project = copy_fixture("selection", tmp_path)
    _add(
        project,
        "tests/sub/conftest.py",
        "import pytest\nfrom selpkg.calc import shared\n\n\n@pytest.fixture\ndef one():\n    return shared(0)\n",
    )
    _add(project, "tests/sub/test_fixture_only.py", "def test_uses_fixture(one):\n    assert one == 1\n")
    run = run_gate(project, "run", "--no-cache", "--only", "shared-off-by-one")
    assert "tests/sub/test_fixture_only.py::test_uses_fixture" in run.mutation("shared-off-by-one")["unexpected"]


def test_a_function_that_runs_while_tests_are_collected_selects_every_test(tmp_path):
    project = copy_fixture("selection", tmp_path)
    _add(project, "src/selpkg/cases.py", "def cases():\n    return [1, 2]\n")
    _add(
        project,
        "tests/test_cases.py",
        "import pytest\nfrom selpkg.cases import cases\n\n\n"
        "@pytest.mark.parametrize('n', cases(), ids=['first', 'second'])\ndef test_case(n):\n    assert n > 0\n",
    )
    catalog = project / "mutations" / "selection.toml"
    catalog.write_text(
        catalog.read_text()
        + (
            '\n[[mutation]]\nname = "second-case-negative"\ntarget = "src/selpkg/cases.py::cases"\n'
            'op = "replace"\nold = "[1, 2]"\nnew = "[1, -2]"\n'
            'kills = ["tests/test_cases.py::test_case[second]"]\n'
        )
    )
    run = run_gate(project, "run", "--no-cache", "--only", "second-case-negative")
    entry = run.mutation("second-case-negative")
    assert entry["verdict"] == "held"
    assert "collected" in entry["selection"]
    assert entry["selected_tests"] == run.report["baselines"][0]["collected"]


def test_changed_includes_a_mutation_whose_catalog_entry_changed(tmp_path):
    project = copy_fixture("selection", tmp_path)
    _git(project, "init", "-q", "-b", "main")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    catalog = project / "mutations" / "selection.toml"
    catalog.write_text(catalog.read_text().replace('new = "x * 11"', 'new = "x * 13"'))
    run = run_gate(project, "run", "--no-cache", "--changed", "HEAD")
    assert [m["name"] for m in run.report["mutations"]] == ["unrelated-scaled"]


def test_a_change_to_killmap_inside_a_layer_subpackage_changes_the_gate_source_digest(tmp_path):
    # The cache keys every verdict on killmap's own source: a fix in verdict/ or engine/ must
    # invalidate verdicts as a fix in a top-level module does.
    from killmap.verdict.cache import gate_source_digest

    (tmp_path / "engine").mkdir()
    (tmp_path / "cli.py").write_text("x = 1\n")
    layer_module = tmp_path / "engine" / "core.py"
    layer_module.write_text("y = 1\n")
    before = gate_source_digest(tmp_path)
    layer_module.write_text("y = 2\n")
    assert gate_source_digest(tmp_path) != before
