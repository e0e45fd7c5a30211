"""`killmap check`: every catalog problem that needs no mutant run, found in seconds, exit 2.

Each test breaks one thing in a copy of the basic fixture and requires check to name it;
the first proves check collects through pytest without running a single test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gatekit import copy_fixture, gate_env, run_gate

CATALOG = "mutations/basic.toml"


def _edit(project, rel, old, new):
    path = project / rel
    text = path.read_text()
    assert old in text, (old, rel)
    path.write_text(text.replace(old, new, 1))


def _problems(run):
    assert run.code == 2, (run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert lines and all(line.startswith("killmap check: ") for line in lines), run.stderr
    return lines


def test_a_sound_catalog_passes_and_no_test_runs(tmp_path):
    project = copy_fixture("basic", tmp_path)
    marker = tmp_path / "marker"
    # test_green_once_then_red writes this file whenever it runs: collecting must not run it.
    run = run_gate(project, "check", env=gate_env(project, {"FLAKE_MARKER": str(marker)}))
    assert run.code == 0, run.stderr
    assert run.stdout.strip() == (
        "killmap check: 1 catalog, 2 mutations, 3 tests collected: "
        "every mutation applies, every test id resolves, no stale pin"
    )
    assert not marker.exists()


def test_the_bundled_catalog_passes(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-m", "killmap", "check"], cwd=root, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "17 mutations" in done.stdout


@pytest.mark.parametrize("field", ["kills", "may_kill"])
def test_a_contract_id_that_matches_no_collected_test_is_named(tmp_path, field):
    project = copy_fixture("basic", tmp_path)
    if field == "kills":
        _edit(project, CATALOG, 'test_odd_is_refused"]\n\n', 'test_odd_is_refusd"]\n\n')
    else:
        _edit(
            project, CATALOG, 'call = "is_even"\n', 'call = "is_even"\nmay_kill = ["tests/test_core.py::test_nope"]\n'
        )
    [line] = _problems(run_gate(project, "check"))
    assert "mutations/basic.toml" in line and "'classify-call-deleted'" in line and f"'{field}'" in line
    assert "matches no collected test" in line
    if field == "kills":  # a letter off: the id it was meant to be
        assert line.endswith("; did you mean 'tests/test_core.py::test_odd_is_refused'?"), line
    else:  # nothing near it: no guess
        assert "did you mean" not in line, line


def test_run_names_the_id_a_kills_entry_a_letter_off_was_meant_to_be(tmp_path):
    project = copy_fixture("basic", tmp_path)
    _edit(project, CATALOG, 'test_odd_is_refused"]\n\n', 'test_odd_is_refusd"]\n\n')
    done = run_gate(project, "run", "--no-cache")
    assert done.code == 2, done.stdout + done.stderr
    assert "did you mean 'tests/test_core.py::test_odd_is_refused'?" in done.stderr, done.stderr


def test_an_operator_matching_no_site_is_an_error_not_a_verdict(tmp_path):
    project = copy_fixture("basic", tmp_path)
    _edit(project, CATALOG, 'call = "is_even"', 'call = "is_odd"')
    [line] = _problems(run_gate(project, "check"))
    assert "'classify-call-deleted'" in line and "not applied" in line and "matched 0 sites" in line


def test_a_stale_pin_is_reported(tmp_path):
    project = copy_fixture("basic", tmp_path)
    _edit(project, CATALOG, 'op = "delete-call"', 'pin = "sha256:' + "0" * 64 + '"\nop = "delete-call"')
    [line] = _problems(run_gate(project, "check"))
    assert "'classify-call-deleted'" in line and "field 'pin'" in line and "stale pin" in line
    assert "killmap pin classify-call-deleted" in line


def test_a_mutant_that_would_be_broken_is_reported(tmp_path):
    project = copy_fixture("basic", tmp_path)
    _edit(
        project,
        CATALOG,
        'op = "delete-call"\ncall = "is_even"',
        'op = "replace"\nold = "is_even(n)"\nnew = "is_evn(n)"',
    )
    [line] = _problems(run_gate(project, "check"))
    assert "'classify-call-deleted'" in line and "broken" in line and "undefined name 'is_evn'" in line


def test_a_collection_error_is_reported(tmp_path):
    project = copy_fixture("basic", tmp_path)
    (project / "tests" / "test_syntax.py").write_text("def test_x(:\n    pass\n")
    lines = _problems(run_gate(project, "check"))
    assert any("collection of tests failed in tests/test_syntax.py" in line for line in lines), lines


def test_a_test_module_that_does_not_import_is_said_once_whole_and_by_its_file(tmp_path):
    # Two [gate] settings both collect the failing module, and its import goes through a
    # chain of modules: pytest's text grows past 600 characters before the line that names
    # the exception. Seen as each failure twice, two of them cut at "No module name...".
    from gatekit import write_project

    chain = {f"pkg/m{i}.py": f"import pkg.m{i + 1}  # noqa: F401\n" for i in range(12)}
    chain["pkg/m12.py"] = "import pkg._paths_that_are_gone  # noqa: F401\n"
    entry = 'target = "pkg/__init__.py::one"\nop = "constant-return"\nkills = ["tests/test_pkg.py::test_one"]\n'
    project = write_project(
        tmp_path / "proj",
        {
            **chain,
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": "def one():\n    return 1\n",
            "tests/test_pkg.py": "import pkg\n\n\ndef test_one():\n    assert pkg.one() == 1\n",
            "tests/test_codec.py": "import pkg.m0  # noqa: F401\n\n\ndef test_codec():\n    pass\n",
            "mutations/a.toml": f'[gate]\ntests = ["tests"]\n\n[[mutation]]\nname = "a"\nvalue = "0"\n{entry}',
            "mutations/b.toml": (
                '[gate]\ntests = ["tests/test_codec.py", "tests/test_pkg.py"]\n\n'
                f'[[mutation]]\nname = "b"\nvalue = "2"\n{entry}'
            ),
        },
    )
    lines = _problems(run_gate(project, "check"))
    said = [line for line in lines if "tests/test_codec.py" in line]
    assert len(said) == 1, lines
    assert said[0].endswith(
        "ModuleNotFoundError: No module named 'pkg._paths_that_are_gone'; if it cannot be fixed here, "
        "leave it out: [gate] exclude = ['tests/test_codec.py']"
    ), said


def _internal_test_deselected(root):
    from gatekit import one_mutation_project

    project = one_mutation_project(
        root,
        "def one():\n    return 1\n",
        "import pytest\n\nimport pkg\n\n\n@pytest.mark.internal\ndef test_one():\n    assert pkg.one() == 1\n"
        "\n\ndef test_other():\n    assert pkg.one()\n",
    )
    with (project / "pyproject.toml").open("a") as toml:
        toml.write('\n[tool.pytest.ini_options]\naddopts = "-m \'not internal\'"\nmarkers = ["internal: not for CI"]\n')
    return project


def test_run_says_a_kills_test_the_projects_marker_expression_deselects_is_deselected_not_missing(tmp_path):
    gate = run_gate(_internal_test_deselected(tmp_path / "proj"), "run", "--no-cache")
    assert gate.code == 2, (gate.stdout, gate.stderr)
    assert "Traceback" not in gate.stderr
    [line] = [line for line in gate.stderr.splitlines() if line.startswith("killmap: ")]
    assert "'tests/test_pkg.py::test_one'" in line and "field 'kills'" in line, line
    assert "deselected by the marker expression 'not internal'" in line, line


def test_a_kills_test_the_projects_marker_expression_deselects_is_said_to_be_deselected_not_missing(tmp_path):
    # `-m "not internal"` in the project's own addopts: the test exists, pytest deselects it.
    # It was reported as "matches no collected test", as if the id were a typo.
    [line] = _problems(run_gate(_internal_test_deselected(tmp_path / "proj"), "check"))
    assert "'tests/test_pkg.py::test_one'" in line and "field 'kills'" in line, line
    assert "deselected by the marker expression 'not internal'" in line, line
    assert "matches no collected test" not in line, line


def test_a_collection_that_writes_into_the_working_tree_is_reported_and_the_file_restored(tmp_path):
    project = copy_fixture("basic", tmp_path)
    victim = project / "README.md"
    victim.write_text("the user's own file\n")
    # The real path is written into the conftest itself: a variable naming the tree would be
    # rewritten to name the sandbox before any test reads it.
    (project / "tests" / "conftest.py").write_text(
        f"with open({str(victim)!r}, 'a') as f:\n    f.write('written at collection\\n')\n"
    )
    # Unconfined, as on macOS: where Landlock confines the collection, the write is refused.
    run = run_gate(project, "check", env=gate_env(project, {"KILLMAP_CONFINE": "0"}))
    lines = _problems(run)
    said = [line for line in lines if "collection of tests wrote to the working tree: README.md (restored" in line]
    assert said, lines
    assert victim.read_text() == "the user's own file\n"
    # The folder the line names is the one that holds what was written.
    kept_under = Path(said[0].rsplit("kept under ", 1)[1].rstrip(")"))
    assert [k.read_text() for k in kept_under.glob("*/README.md")] == ["the user's own file\nwritten at collection\n"]


def test_a_catalog_that_does_not_load_is_one_error(tmp_path):
    project = copy_fixture("basic", tmp_path)
    _edit(project, CATALOG, 'op = "delete-call"', 'op = "delete-cal"')
    [line] = _problems(run_gate(project, "check"))
    assert "'classify-call-deleted'" in line and "field 'op'" in line and "unknown operator" in line


def test_every_problem_is_listed_not_just_the_first(tmp_path):
    project = copy_fixture("basic", tmp_path)
    _edit(project, CATALOG, 'call = "is_even"', 'call = "is_odd"')
    _edit(project, CATALOG, 'require = "assertion"', 'require = "assertion"\nmay_kill = ["tests/test_core.py::nope"]')
    lines = _problems(run_gate(project, "check"))
    assert len(lines) == 2, lines
    assert "'classify-call-deleted'" in lines[0] and "'odd-refusal-fix-reverted'" in lines[1]


def test_every_control_at_another_site_is_named_not_only_the_first(tmp_path):
    project = copy_fixture("basic", tmp_path)
    catalog = project / CATALOG
    catalog.write_text(
        catalog.read_text()
        + "".join(
            f'\n[[mutation]]\nname = "{name}"\ntarget = "src/basicpkg/core.py::is_even"\nop = "replace"\n'
            f'old = "{old}"\nnew = "{new}"\ninvariant = true\ncontrol = "classify-call-deleted"\n'
            for name, old, new in (
                ("even-check-equivalent", "n % 2 == 0", "not n % 2"),
                ("even-check-parenthesized", "n % 2", "(n % 2)"),
            )
        )
    )
    lines = _problems(run_gate(project, "check"))
    for name in ("'even-check-equivalent'", "'even-check-parenthesized'"):
        assert any(name in line and "'control'" in line and "overlap" in line for line in lines), lines


def test_an_entry_that_cannot_be_read_is_said_and_the_others_are_checked(tmp_path):
    # funcy: a `value` that does not parse hid a kills id a letter off in another entry; the
    # docs say every problem, not the first only.
    project = copy_fixture("basic", tmp_path)
    _edit(project, CATALOG, 'op = "delete-call"', 'op = "delete-call"\ncolour = "red"')
    _edit(project, CATALOG, 'require = "assertion"', 'require = "assertion"\nmay_kill = ["tests/test_core.py::nope"]')
    done = run_gate(project, "check")
    lines = _problems(done)
    assert len(lines) == 2, lines
    assert "'classify-call-deleted'" in lines[0] and "field 'colour'" in lines[0], lines
    assert "'odd-refusal-fix-reverted'" in lines[1] and "tests/test_core.py::nope" in lines[1], lines
    # Counted with the rest (h11: two unreadable entries read "1 mutation": 2 problems).
    assert "1 catalog, 2 mutations (1 could not be read)," in done.stdout, done.stdout


def test_a_catalog_with_an_error_is_said_found_and_failed_not_counted_as_none(tmp_path):
    project = copy_fixture("basic", tmp_path)
    _edit(project, CATALOG, "[gate]\n", '[gate]\ncolour = "red"\n')
    done = run_gate(project, "check")
    assert done.code == 2, done.stdout + done.stderr
    assert "0 catalogs" not in done.stdout, done.stdout
    assert (
        "1 catalog found (mutations/basic.toml); mutations/basic.toml has an error, so no mutation was checked"
        in done.stdout
    ), done.stdout


def test_check_says_a_test_id_that_holds_the_moment_it_was_collected(tmp_path):
    # The baseline refuses it (a later collection never collects it again): check says so first.
    from gatekit import one_mutation_project

    project = one_mutation_project(
        tmp_path / "proj",
        "def one():\n    return 1\n",
        (
            "import datetime\nimport pytest\nfrom pkg import one\n\n\n"
            "def test_one():\n    assert one() == 1\n\n\n"
            "@pytest.mark.parametrize('when', [datetime.datetime.now().isoformat()])\n"
            "def test_stamped(when):\n    assert when\n"
        ),
    )
    run = run_gate(project, "check")
    assert run.code == 2, run.stdout + run.stderr
    [problem] = _problems(run)
    assert "hold the moment they were collected" in problem and "test_stamped[" in problem, problem


def test_check_refuses_a_target_pytest_itself_imports_as_run_does(tmp_path):
    # pluggy: pytest runs on it, so no test can import the sandbox's copy. `run` refused the
    # catalog that `check` had passed.
    from gatekit import pluggy_shaped_project

    project = pluggy_shaped_project(
        tmp_path / "plugin",
        '\n[[mutation]]\nname = "f-mutated"\ntarget = "src/pluggy/mod.py::f"\nop = "constant-return"\n'
        'value = "0"\nkills = ["tests/test_mod.py::test_mod"]\n',
    )
    [problem] = _problems(run_gate(project, "check"))
    assert "'f-mutated'" in problem and "pytest itself imported pluggy" in problem, problem


def test_tests_two_catalogs_collect_are_counted_once(tmp_path):
    # sqlparse: two catalogs whose [gate] differ in another field said 928 tests of a 464-test suite.
    project = copy_fixture("basic", tmp_path)
    (project / "mutations" / "slow.toml").write_text('[gate]\npaths = ["src"]\ntimeout = 30\n')
    run = run_gate(project, "check")
    assert run.code == 0, run.stderr
    assert "killmap check: 2 catalogs, 2 mutations, 3 tests collected" in run.stdout, run.stdout


SKIPPING = (
    "import sys\nimport unittest\n\nimport pytest\n\nfrom pkg import double\n\n\n"
    "def test_runs():\n    assert double(2) == 4\n\n\n"
    "@pytest.mark.skip(reason='later')\ndef test_marked():\n    assert double(3) == 6\n\n\n"
    "@pytest.mark.skipif(sys.version_info > (3,), reason='py2 only')\ndef test_condition():\n"
    "    assert double(4) == 8\n\n\n"
    "class Old(unittest.TestCase):\n    @unittest.skipIf(True, 'never')\n    def test_unittest(self):\n"
    "        self.assertEqual(double(5), 10)\n"
)


@pytest.mark.parametrize("test", ["test_marked", "test_condition", "Old::test_unittest"])
def test_check_refuses_a_kills_entry_naming_a_test_a_mark_will_skip_as_run_does(tmp_path, test):
    # jmespath: `check` passed a kills test that `skipIf` skips, and `run` then refused it, exit 2.
    from gatekit import write_project

    catalog = (
        '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "double-is-triple"\n'
        'target = "pkg/__init__.py::double"\nop = "replace"\nold = "x * 2"\nnew = "x * 3"\n'
        f'kills = ["tests/test_pkg.py::{test}"]\n'
    )
    files = {
        "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
        "pkg/__init__.py": "def double(x):\n    return x * 2\n",
        "tests/test_pkg.py": SKIPPING,
        "mutations/pkg.toml": catalog,
    }
    project = write_project(tmp_path / "p", files)
    checked = run_gate(project, "check")
    [line] = _problems(checked)
    assert f"'tests/test_pkg.py::{test}' names a test a skip mark skips" in line, line
    ran = run_gate(project, "run", "--no-cache", "--jobs", "1")
    assert ran.code == 2 and f"'tests/test_pkg.py::{test}' names a test the baseline skipped" in ran.stderr
    # A test that runs is no problem to either.
    (project / "mutations/pkg.toml").write_text(catalog.replace(test, "test_runs"))
    assert run_gate(project, "check").code == 0


XFAILING = (
    "import pytest\n\nfrom pkg import double\n\n\n"
    "@pytest.mark.xfail(reason='known')\ndef test_loose():\n    assert double(2) == 4\n\n\n"
    "@pytest.mark.xfail(reason='known', strict=True)\ndef test_strict():\n    assert double(2) == 5\n\n\n"
    "@pytest.mark.xfail(raises=ZeroDivisionError)\ndef test_raises():\n    assert double(2) == 4\n\n\n"
    "@pytest.mark.xfail(run=False, strict=True)\ndef test_not_run():\n    assert double(2) == 4\n\n\n"
    "def test_runs():\n    assert double(2) == 4\n"
)


@pytest.mark.parametrize(
    "test, refused", [("test_loose", True), ("test_not_run", True), ("test_strict", False), ("test_raises", False)]
)
def test_check_refuses_a_kills_entry_naming_a_test_an_xfail_mark_keeps_from_going_red(tmp_path, test, refused):
    # sqlparse: a non-strict xfail test in kills xfails or xpasses, never red: `vacuous` on
    # every run. A strict one goes red when it passes; one with `raises`, by another error.
    from gatekit import pkg_project

    catalog = (
        '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "double-is-triple"\n'
        'target = "pkg/__init__.py::double"\nop = "replace"\nold = "x * 2"\nnew = "x * 3"\n'
        f'kills = ["tests/test_pkg.py::{test}"]\n'
    )
    project = pkg_project(
        tmp_path / "p", "def double(x):\n    return x * 2\n", {"tests/test_pkg.py": XFAILING}, catalog
    )
    checked = run_gate(project, "check")
    if not refused:
        assert checked.code == 0, checked.stdout + checked.stderr
        return
    [line] = _problems(checked)
    assert f"'tests/test_pkg.py::{test}' names a test an xfail mark keeps from going red" in line, line


def test_an_invariant_whose_control_could_not_be_read_points_at_the_control_s_own_error(tmp_path):
    # xmltodict: a control rejected for a bad `require` was then said to be "not a mutation of
    # this catalog", sending the reader looking for a typo in `control`.
    project = copy_fixture("basic", tmp_path)
    catalog = project / CATALOG
    catalog.write_text(
        catalog.read_text().replace('require = "assertion"', 'require = "assertions"', 1)
        + '\n[[mutation]]\nname = "even-check-equivalent"\ntarget = "src/basicpkg/core.py::is_even"\n'
        'op = "replace"\nold = "n % 2 == 0"\nnew = "not n % 2"\ninvariant = true\n'
        'control = "odd-refusal-fix-reverted"\n'
    )
    lines = _problems(run_gate(project, "check"))
    assert any("field 'require'" in line for line in lines), lines
    said = [line for line in lines if "field 'control'" in line]
    assert said and "could not be read: its own error is said above" in said[0], lines
    assert not any("is not a mutation of this catalog" in line for line in lines), lines


def test_an_invariant_whose_control_is_missing_is_counted_once(tmp_path):
    # dacite: a one-entry catalog whose control names nothing read "2 mutations (1 could not
    # be read)": the entry was read, its control is the problem.
    project = copy_fixture("basic", tmp_path)
    catalog = project / CATALOG
    catalog.write_text(
        '[gate]\npaths = ["src"]\n\n[[mutation]]\nname = "even-check-equivalent"\n'
        'target = "src/basicpkg/core.py::is_even"\nop = "replace"\nold = "n % 2 == 0"\nnew = "not n % 2"\n'
        'invariant = true\ncontrol = "no-such-mutation"\n'
    )
    checked = run_gate(project, "check")
    [line] = _problems(checked)
    assert "control 'no-such-mutation' is not a mutation of this catalog" in line, line
    assert "1 catalog, 1 mutation, " in checked.stdout and "could not be read" not in checked.stdout, checked.stdout
