"""Bad input is one line naming file, mutation and field, exit 2, and no traceback."""

from __future__ import annotations

import pytest
from gatekit import copy_fixture, gate_env, run_gate, tree_digest


def _one_line_error(run):
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.code == 2, (run.stdout, run.stderr)
    assert len(lines) == 1 and lines[0].startswith("killmap: "), run.stderr
    assert "Traceback" not in run.stderr
    return lines[0]


def test_a_kills_id_that_matches_no_test_is_a_catalog_error_not_a_vacuous_verdict(tmp_path):
    project = copy_fixture("basic", tmp_path)
    catalog = project / "mutations" / "basic.toml"
    catalog.write_text(catalog.read_text().replace("test_odd_is_refused", "test_odd_is_refusd"))
    ran = run_gate(project, "run", "--no-cache")
    line = _one_line_error(ran)
    assert "mutations/basic.toml" in line and "'classify-call-deleted'" in line and "'kills'" in line
    assert "baseline" not in ran.stdout  # the error is all the user sees, not a baseline before it


def test_a_kills_id_that_matches_no_test_is_all_that_is_said_though_other_verdicts_are_cached(tmp_path):
    project = copy_fixture("basic", tmp_path)
    env = gate_env(project, {"XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert run_gate(project, "run", env=env).code == 0  # both verdicts cached
    catalog = project / "mutations" / "basic.toml"
    text = catalog.read_text()
    second = text.index("odd-refusal-fix-reverted")  # only its kills gets the typo: the other stays cached
    catalog.write_text(text[:second] + text[second:].replace("test_odd_is_refused", "test_odd_is_refusd"))
    ran = run_gate(project, "run", env=env)
    line = _one_line_error(ran)
    assert "'odd-refusal-fix-reverted'" in line and "'kills'" in line
    assert ran.stdout.strip() == "", ran.stdout  # no cached verdict, as if the run had begun


def test_a_red_baseline_stops_the_run_and_names_the_failing_test(tmp_path):
    project = copy_fixture("basic", tmp_path)
    test_file = project / "tests" / "test_core.py"
    test_file.write_text(test_file.read_text().replace('== "even"', '== "odd"'))
    line = _one_line_error(run_gate(project, "run", "--no-cache"))
    assert "red" in line and "tests/test_core.py::test_even_is_accepted" in line


def test_a_test_that_flips_between_baseline_runs_stops_the_run_as_flaky(tmp_path):
    project = copy_fixture("basic", tmp_path)
    # Unconfined: the marker that makes the test flip lies outside what Landlock grants a test.
    env = gate_env(project, {"FLAKE_MARKER": str(tmp_path / "marker"), "KILLMAP_CONFINE": "0"})
    line = _one_line_error(run_gate(project, "run", "--no-cache", "--jobs", "1", env=env))
    assert "flaky" in line and "tests/test_core.py::test_green_once_then_red" in line


@pytest.mark.parametrize(
    "stamp, jobs, said",
    [
        # Two sessions' ids differ: they are said to.
        ("f'{os.getpid()}-{time.time_ns()}'", "2", "collected in one baseline run and not the other"),
        # One job, one session (or two sessions in the same second): the clock in the id is
        # seen whatever the sessions say. Without it the catalog was refused on some runs only,
        # and the others called each mutant run in a fresh session `inconclusive`.
        ("datetime.datetime.now().strftime('%H:%M:%S %Y-%m-%d')", "1", "hold the moment they were collected"),
    ],
    ids=["pid-and-clock-two-sessions", "datetime-now-one-session"],
)
def test_a_test_id_that_changes_at_every_collection_is_refused_and_excluded_by_its_name(tmp_path, stamp, jobs, said):
    # marshmallow parametrizes over datetime.now(): the ids differ run to run, the outcomes
    # do not, and no exact id in `exclude` could ever name them.
    from gatekit import one_mutation_project

    project = one_mutation_project(
        tmp_path / "proj",
        "def one():\n    return 1\n",
        (
            "import datetime, os, time\nimport pytest\nfrom pkg import one\n\n\n"
            "def test_one():\n    assert one() == 1\n\n\n"
            f"@pytest.mark.parametrize('stamp', [{stamp}])\n"
            "def test_stamped(stamp):\n    assert stamp\n"
        ),
        value="2",
    )
    line = _one_line_error(run_gate(project, "run", "--no-cache", "--jobs", jobs))
    assert said in line and "test_stamped[" in line, line
    catalog = project / "mutations" / "pkg.toml"
    catalog.write_text(
        catalog.read_text().replace("[gate]\n", '[gate]\nexclude = ["tests/test_pkg.py::test_stamped"]\n')
    )
    run = run_gate(project, "run", "--no-cache", "--jobs", jobs)
    assert run.code == 0, run.stdout + run.stderr


def test_what_counts_as_an_id_that_holds_the_moment_it_was_collected():
    import datetime

    from killmap.verdict.baseline import holds_the_clock

    now = datetime.datetime(2026, 12, 7, 3, 14, 47, tzinfo=datetime.timezone.utc)
    assert holds_the_clock("t.py::test_x[03:14:47 2026-12-07]", now)  # marshmallow's
    assert holds_the_clock("t.py::test_x[2026-12-07T02:59:12.1]", now)  # isoformat(), a quarter hour ago
    assert holds_the_clock(f"t.py::test_x[{int(now.timestamp() * 1e9)}]", now)  # time.time_ns()
    assert not holds_the_clock("t.py::test_x[2026-12-07]", now)  # date.today(): the same all day
    assert not holds_the_clock("t.py::test_x[03:14:47 2020-01-01]", now)
    assert not holds_the_clock("t.py::test_x[1234567890123]", now)
    assert not holds_the_clock("t.py::test_2026_12_07_0314", now)  # no parameters


def test_an_exclude_of_a_catalog_with_no_mutations_is_checked_too(tmp_path):
    # A catalog of [gate] and [sweep] alone, written to sweep before naming anything: `check`
    # collected its tests and said nothing of an exclude a letter off.
    project = copy_fixture("basic", tmp_path)
    (project / "mutations" / "basic.toml").unlink()
    (project / "mutations" / "sweep.toml").write_text(
        '[gate]\ntests = ["tests"]\npaths = ["src"]\nexclude = ["tests/test_core.py::test_green_once_then_rd"]\n'
    )
    done = run_gate(project, "check")
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.code == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "mutations/sweep.toml" in lines[0] and "exclude" in lines[0], lines[0]
    assert "did you mean 'tests/test_core.py::test_green_once_then_red'" in lines[0], lines[0]


def test_a_flaky_test_listed_in_gate_exclude_is_left_out(tmp_path):
    project = copy_fixture("basic", tmp_path)
    catalog = project / "mutations" / "basic.toml"
    catalog.write_text(
        catalog.read_text().replace("[gate]\n", '[gate]\nexclude = ["tests/test_core.py::test_green_once_then_red"]\n')
    )
    env = gate_env(project, {"FLAKE_MARKER": str(tmp_path / "marker")})
    run = run_gate(project, "run", "--no-cache", "--jobs", "1", env=env)
    assert run.code == 0, run.stderr
    assert run.verdicts() == {"classify-call-deleted": "held", "odd-refusal-fix-reverted": "held"}


@pytest.mark.parametrize("command", ["run", "check"])
def test_an_exclude_that_matches_no_test_is_an_error_naming_the_nearest(tmp_path, command):
    # itsdangerous: `test_encodng.py` in exclude left the flaky file in the gate, and `check`
    # said every id resolved.
    project = copy_fixture("basic", tmp_path)
    catalog = project / "mutations" / "basic.toml"
    catalog.write_text(
        catalog.read_text().replace("[gate]\n", '[gate]\nexclude = ["tests/test_core.py::test_green_once_then_rd"]\n')
    )
    done = run_gate(project, command, "--no-cache") if command == "run" else run_gate(project, command)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.code == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    line = lines[0]
    assert "mutations/basic.toml" in line and "exclude" in line, line
    assert "'tests/test_core.py::test_green_once_then_rd' excludes no test" in line, line
    assert "did you mean 'tests/test_core.py::test_green_once_then_red'?" in line, line


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_test_module_that_cannot_import_is_left_out_by_an_exclude_naming_its_file(tmp_path, command):
    # dacite's sdist ships a test module whose helper it does not ship: `exclude = [file]`, as
    # the docs say to leave a red file out, still failed on that file's ImportError.
    project = copy_fixture("basic", tmp_path)
    (project / "tests" / "test_unshipped.py").write_text(
        "from tests.common import helper\n\n\ndef test_x():\n    pass\n"
    )
    catalog = project / "mutations" / "basic.toml"
    refused = run_gate(project, command, "--no-cache") if command == "run" else run_gate(project, command)
    assert refused.code == 2, refused.stdout + refused.stderr
    assert "leave it out: [gate] exclude = ['tests/test_unshipped.py']" in refused.stderr, refused.stderr
    catalog.write_text(catalog.read_text().replace("[gate]\n", '[gate]\nexclude = ["tests/test_unshipped.py"]\n'))
    done = run_gate(project, command, "--no-cache") if command == "run" else run_gate(project, command)
    assert done.code == 0, done.stdout + done.stderr
    if command == "run":
        assert done.verdicts() == {"classify-call-deleted": "held", "odd-refusal-fix-reverted": "held"}
    # A contract naming a test in the file left out is told why it names nothing.
    catalog.write_text(
        catalog.read_text().replace(
            'kills = ["tests/test_core.py::test_odd_is_refused"]\nrequire',
            'kills = ["tests/test_core.py::test_odd_is_refused", "tests/test_unshipped.py::test_x"]\nrequire',
            1,
        )
    )
    done = run_gate(project, command, "--no-cache") if command == "run" else run_gate(project, command)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.code == 2 and len(lines) == 1, done.stdout + done.stderr
    assert (
        "'tests/test_unshipped.py::test_x' is in tests/test_unshipped.py, which [gate] exclude leaves out" in lines[0]
    )


@pytest.mark.parametrize("command", ["run", "check"])
def test_an_exclude_naming_a_test_module_not_there_is_said_though_the_collection_fails(tmp_path, command):
    # pycodestyle: `tests/test_shel.py` in exclude left tests/test_shell.py failing to import,
    # and only that failure was said.
    project = copy_fixture("basic", tmp_path)
    (project / "tests" / "test_shell.py").write_text("import no_such_helper\n\n\ndef test_x():\n    pass\n")
    catalog = project / "mutations" / "basic.toml"
    catalog.write_text(catalog.read_text().replace("[gate]\n", '[gate]\nexclude = ["tests/test_shel.py"]\n'))
    done = run_gate(project, command, "--no-cache") if command == "run" else run_gate(project, command)
    assert done.code == 2 and "Traceback" not in done.stderr, done.stdout + done.stderr
    said = [line for line in done.stderr.splitlines() if "field 'exclude'" in line]
    assert len(said) == 1, done.stderr
    assert "'tests/test_shel.py' names tests/test_shel.py, no file of the project" in said[0], said
    assert "did you mean 'tests/test_shell.py'?" in said[0], said


def test_an_exclude_of_one_test_leaves_the_tests_whose_names_it_starts_in_the_gate(tmp_path):
    # glom: `exclude = ["...::test_main"]`, as the red baseline's own hint wrote it, also
    # deselected test_main_basic and three more (pytest's --deselect takes any prefix).
    project = copy_fixture("basic", tmp_path)
    (project / "tests" / "test_main.py").write_text(
        "def test_main():\n    assert False\n\n\ndef test_main_basic():\n    pass\n"
    )
    catalog = project / "mutations" / "basic.toml"
    catalog.write_text(catalog.read_text().replace("[gate]\n", '[gate]\nexclude = ["tests/test_main.py::test_main"]\n'))
    done = run_gate(project, "run", "--no-cache")
    assert done.code == 0, done.stdout + done.stderr
    # The fixture's three tests and test_main_basic: test_main alone is left out.
    assert [b["collected"] for b in done.report["baselines"]] == [4], done.report["baselines"]
    # A contract naming the test left out is told it exists, and what left it out.
    catalog.write_text(
        catalog.read_text().replace(
            'kills = ["tests/test_core.py::test_odd_is_refused"]\nrequire',
            'kills = ["tests/test_core.py::test_odd_is_refused", "tests/test_main.py::test_main"]\nrequire',
            1,
        )
    )
    checked = run_gate(project, "check")
    assert checked.code == 2, checked.stdout + checked.stderr
    assert (
        "'tests/test_main.py::test_main' names 1 test that exists but is deselected by [gate] exclude" in checked.stderr
    )


def test_an_unknown_only_name_is_an_error(tmp_path):
    project = copy_fixture("basic", tmp_path)
    line = _one_line_error(run_gate(project, "run", "--only", "no-such-mutation"))
    assert "no-such-mutation" in line


def test_two_names_after_one_only_say_how_to_name_the_second(tmp_path):
    # `--only a b` reads b as a catalog file: the error says to repeat the flag.
    project = copy_fixture("basic", tmp_path)
    line = _one_line_error(run_gate(project, "run", "--only", "classify-call-deleted", "odd-refusal-fix-reverted"))
    assert "odd-refusal-fix-reverted: catalog file not found" in line
    assert "repeat the flag: --only A --only B" in line


def test_an_unknown_operator_names_file_mutation_and_field(tmp_path):
    project = copy_fixture("basic", tmp_path)
    catalog = project / "mutations" / "basic.toml"
    catalog.write_text(catalog.read_text().replace('op = "delete-call"', 'op = "delete-cal"'))
    line = _one_line_error(run_gate(project, "run"))
    assert "mutations/basic.toml" in line and "'classify-call-deleted'" in line and "'op'" in line


def test_a_missing_target_symbol_names_the_field(tmp_path):
    project = copy_fixture("basic", tmp_path)
    catalog = project / "mutations" / "basic.toml"
    catalog.write_text(catalog.read_text().replace("core.py::classify", "core.py::clasify"))
    line = _one_line_error(run_gate(project, "run"))
    assert "'target'" in line and "clasify" in line
    # The nearest name the scope defines, as a kills typo gets; and the name said once.
    assert line.endswith("no symbol 'clasify' in src/basicpkg/core.py; did you mean 'classify'?"), line


def test_bad_input_leaves_the_tree_untouched(tmp_path):
    project = copy_fixture("basic", tmp_path)
    catalog = project / "mutations" / "basic.toml"
    catalog.write_text(catalog.read_text().replace("kills", "kill"))
    before = tree_digest(project)
    _one_line_error(run_gate(project, "run"))
    assert tree_digest(project) == before


def test_show_prints_the_mutant_as_a_unified_diff(tmp_path):
    project = copy_fixture("basic", tmp_path)
    run = run_gate(project, "show", "classify-call-deleted")
    assert run.code == 0
    assert "--- a/src/basicpkg/core.py" in run.stdout and "-    if not is_even(n):" in run.stdout


def test_a_control_at_another_site_is_a_catalog_error(tmp_path):
    project = copy_fixture("basic", tmp_path)
    catalog = project / "mutations" / "basic.toml"
    catalog.write_text(
        catalog.read_text()
        + (
            '\n[[mutation]]\nname = "even-check-equivalent"\ntarget = "src/basicpkg/core.py::is_even"\n'
            'op = "replace"\nold = "n % 2 == 0"\nnew = "not n % 2"\ninvariant = true\n'
            'control = "classify-call-deleted"\n'
        )
    )
    line = _one_line_error(run_gate(project, "run", "--no-cache"))
    assert "'even-check-equivalent'" in line and "'control'" in line and "overlap" in line


def test_a_test_file_that_does_not_collect_stops_the_baseline(tmp_path):
    project = copy_fixture("basic", tmp_path)
    (project / "tests" / "test_broken.py").write_text("def test_x(:\n    pass\n")
    line = _one_line_error(run_gate(project, "run", "--no-cache"))
    assert "collection failed" in line and "test_broken.py" in line


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_conftest_that_does_not_import_is_named_with_its_error(command, tmp_path):
    # pytest stops with a usage error before it collects: the line names the conftest and
    # the exception from the recorder's own event, not from pytest's text.
    project = copy_fixture("basic", tmp_path)
    (project / "tests" / "conftest.py").write_text("import nosuchmodule_xyz  # noqa: F401\n")
    before = tree_digest(project)
    run = run_gate(project, command, *(["--no-cache"] if command == "run" else []))
    assert run.code == 2, run.stderr
    said = [line for line in run.stderr.splitlines() if "conftest" in line]
    assert (
        said and "tests/conftest.py does not import: ModuleNotFoundError: No module named 'nosuchmodule_xyz'" in said[0]
    ), run.stderr
    assert "Traceback" not in run.stderr
    assert tree_digest(project) == before


def test_a_warning_made_an_error_while_collecting_is_named_not_its_last_line(tmp_path):
    # python-dateutil 2.9 under pytest 9 with `filterwarnings = error`: the collection error's
    # last line was "See https://docs.pytest.org/...", which named nothing.
    project = copy_fixture("basic", tmp_path)
    (project / "tests" / "test_warns.py").write_text(
        "import warnings\n\nimport basicpkg.core  # noqa: F401\n\n"
        "warnings.warn('this suite is old\\nSee the changelog', DeprecationWarning)\n\n\n"
        "def test_x():\n    pass\n"
    )
    (project / "pytest.ini").write_text("[pytest]\nfilterwarnings =\n    error\n")
    line = _one_line_error(run_gate(project, "run", "--no-cache"))
    assert "test_warns.py" in line and "DeprecationWarning: this suite is old" in line, line


def test_a_malformed_shard_is_an_error(tmp_path):
    project = copy_fixture("basic", tmp_path)
    line = _one_line_error(run_gate(project, "run", "--shard", "3/2"))
    assert "--shard" in line


def test_a_catalog_error_found_while_building_is_all_the_output(tmp_path):
    # The baseline runs meanwhile (early_baseline.py), but says nothing before it is in: the error
    # line is not preceded by progress about a run the error cancelled.
    project = copy_fixture("basic", tmp_path)
    tests = project / "tests" / "test_core.py"
    # A baseline that cannot be in before the error is found (it is stopped, not waited for).
    tests.write_text(tests.read_text() + "\n\ndef test_takes_its_time():\n    import time\n    time.sleep(30)\n")
    catalog = project / "mutations" / "basic.toml"
    catalog.write_text(catalog.read_text().replace("core.py::classify", "core.py::no_such_function"))
    run = run_gate(project, "run", "--no-cache")
    line = _one_line_error(run)
    assert "'classify-call-deleted'" in line and "'target'" in line
    assert run.stdout.strip() == "", run.stdout


def test_a_target_with_nothing_after_its_double_colon_is_one_line_naming_the_target_field(tmp_path):
    # 'mod.py::' was taken for the whole file: a replace then matched anywhere in it.
    from gatekit import one_mutation_project

    project = one_mutation_project(tmp_path / "proj", "def one():\n    return 1\n", "def test_one():\n    pass\n")
    catalog = project / "mutations" / "pkg.toml"
    text = catalog.read_text().replace('"pkg/__init__.py::one"', '"pkg/__init__.py::"')
    catalog.write_text(text.replace('op = "constant-return"\nvalue = "0"', 'op = "replace"\nold = "1"\nnew = "2"'))
    line = _one_line_error(run_gate(project, "run", "--no-cache"))
    assert "'one-mutated'" in line and "'target'" in line and "no symbol after '::'" in line, line


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="resource limits are POSIX")
def test_more_jobs_than_the_open_files_limit_holds_are_capped_and_said_in_one_line(tmp_path):
    import resource
    import subprocess
    import sys

    from gatekit import one_mutation_project

    project = one_mutation_project(
        tmp_path / "proj",
        "def one():\n    return 1\n",
        "from pkg import one\n\n\ndef test_one():\n    assert one() == 1\n",
    )
    temp = tmp_path / "temp"  # every folder the gate makes, start folder included, goes here
    temp.mkdir()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    done = subprocess.run(
        [sys.executable, "-m", "killmap", "run", "--no-cache", "--jobs", "10000", "--report-dir", str(tmp_path / "r")],
        cwd=project,
        env=gate_env(project, {"TMPDIR": str(temp)}),
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (1024, min(1024, hard))),
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "killmap: --jobs 10000 is more workers than this machine holds (ulimit -n is 1024): running 240"
    ]
    assert list(temp.iterdir()) == []  # no scratch, no start folder


def test_a_project_outside_git_holding_dangling_symlinks_is_gated_without_a_traceback(tmp_path):
    import os

    from gatekit import one_mutation_project

    project = one_mutation_project(
        tmp_path / "proj",
        "def one():\n    return 1\n",
        "from pkg import one\n\n\ndef test_one():\n    assert one() == 1\n",
    )
    os.symlink("/nonexistent/killmap-target", project / "dangling")
    os.symlink("missing.py", project / "pkg" / "dangling.py")
    run = run_gate(project, "run", "--no-cache")
    assert run.code == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert run.verdicts() == {"one-mutated": "held"}
    assert os.readlink(project / "dangling") == "/nonexistent/killmap-target"  # the tree as it was


@pytest.mark.parametrize("command", ["run", "check"])
def test_options_that_deselect_every_test_are_named(tmp_path, command):
    # parsimonious: `pytest_args = "-k nothing_matches_this"` said only "no tests collected".
    project = copy_fixture("basic", tmp_path)
    catalog = project / "mutations" / "basic.toml"
    catalog.write_text(catalog.read_text().replace("[gate]\n", '[gate]\npytest_args = "-k nothing_matches_this"\n'))
    done = run_gate(project, command, "--no-cache") if command == "run" else run_gate(project, command)
    assert done.code == 2, done.stdout + done.stderr
    assert "no tests collected: all " in done.stderr and "were deselected by" in done.stderr, done.stderr
    assert "'nothing_matches_this' (-k)" in done.stderr and "[gate] pytest_args" in done.stderr, done.stderr
    assert "mutations/basic.toml: " in done.stderr, done.stderr  # the file whose [gate] says it


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_test_module_that_exits_as_it_is_imported_is_named_with_its_system_exit(tmp_path, command):
    # toposort: its test module ends in `unittest.main()`; pytest stopped with an internal
    # error, and the gate said only "no tests collected".
    project = copy_fixture("basic", tmp_path)
    (project / "tests" / "test_main.py").write_text("import unittest\n\n\nunittest.main()\n")
    done = run_gate(project, command, "--no-cache") if command == "run" else run_gate(project, command)
    assert done.code == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "failed in tests/test_main.py: SystemExit" in done.stderr, done.stderr
    assert "(raised while tests/test_main.py:4 ran at import)" in done.stderr, done.stderr
    assert 'guard the call with `if __name__ == "__main__":`' in done.stderr, done.stderr


def test_an_internal_error_once_the_tests_have_begun_is_no_collection_error(tmp_path):
    # The collection's error is said of an internal error before any test ran; after, it is a
    # test's or a plugin's, and naming it a collection failure would send the reader astray.
    import json
    from types import SimpleNamespace

    from killmap.engine.inrun.plugin import Recorder

    events = tmp_path / "events.jsonl"
    recorder = Recorder(str(events))
    recorder.tests_begun = True
    recorder.pytest_internalerror(None, SimpleNamespace(value=SystemExit(2)))
    recorder.tests_begun = False
    recorder.pytest_internalerror(None, SimpleNamespace(value=SystemExit(3)))
    recorder.close()
    said = [json.loads(line) for line in events.read_text().splitlines()]
    assert [e["event"] for e in said] == ["collect_error"], said
    assert said[0]["message"].startswith("SystemExit: 3; pytest imports test modules"), said
