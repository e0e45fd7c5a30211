"""A user's pytest options, wherever they come from, give the verdicts plain pytest gives.

The options come from the project's `addopts`, from `PYTEST_ADDOPTS`, or from the catalog's
`[gate] pytest_args`. Those that pick, reorder or re-run tests from what an earlier run left
(--lf, --ff, --nf, --sw, --reruns, --force-flaky) are switched off in the gate's runs, and the
options themselves still parse: the cache provider stays, in a folder of each run's own. Those
under which no test runs are refused in one line. The truth each verdict is held to is plain
pytest's, with no option, run here on each mutant.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gatekit import gate_env, pinned_plugins, run_gate, tree_digest, write_project

# pytest-rerunfailures and flaky: the rerun plugins a project's addopts most often names; and
# pytest-random-order, which shuffles.
PINS = ("pytest-rerunfailures==16.7", "flaky==3.8.1", "pytest-random-order==1.2.0")

SOURCE = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n\n\ndef neg(a):\n    return -a\n"
TESTS = (
    "from calc import add, mul, neg\n\n\n"
    "def test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_add_commutes():\n    assert add(2, 3) == add(3, 2)\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n\n\n"
    "def test_mul_by_add():\n    assert mul(2, 2) == add(2, 2)\n\n\n"
    "def test_neg():\n    assert neg(0) == 0\n"
)
T = "tests/test_calc.py::"
# name: (old text, new text, kills); the mutant is SOURCE with the one text replaced.
MUTATIONS = {
    "add-minus": ("a + b", "a - b", ("test_add", "test_add_commutes", "test_mul_by_add")),
    "mul-power": ("a * b", "a ** b", ("test_mul",)),
    "neg-identity": ("-a", "a", ("test_neg",)),
    "mul-zero": ("a * b", "0", ("test_mul",)),
}
TRUTH = {"add-minus": "held", "mul-power": "held", "neg-identity": "vacuous", "mul-zero": "overreach"}


def catalog(gate_extra: str = "") -> str:
    text = f'[gate]\ntests = ["tests"]\npaths = ["."]\n{gate_extra}\n'
    for name, (old, new, kills) in MUTATIONS.items():
        named = ", ".join(f'"{T}{k}"' for k in kills)
        text += (
            f'[[mutation]]\nname = "{name}"\ntarget = "calc/__init__.py::{old and _function(old)}"\n'
            f'op = "replace"\nold = "{old}"\nnew = "{new}"\nkills = [{named}]\n\n'
        )
    return text


def _function(old: str) -> str:
    return {"a + b": "add", "a * b": "mul", "-a": "neg"}[old]


def project(root: Path, addopts: str = "", gate_extra: str = "", tests: str = TESTS) -> Path:
    pyproject = '[project]\nname = "calc"\nversion = "0"\n'
    if addopts:
        pyproject += f'\n[tool.pytest.ini_options]\naddopts = "{addopts}"\n'
    folder = write_project(
        root / "proj",
        {
            "pyproject.toml": pyproject,
            "calc/__init__.py": SOURCE,
            "tests/test_calc.py": tests,
            "mutations/calc.toml": catalog(gate_extra),
            # What an earlier plain run left: had the gate read it, --lf would run test_neg alone
            # and --sw would start there.
            ".pytest_cache/v/cache/lastfailed": json.dumps({f"{T}test_neg": True}),
            ".pytest_cache/v/cache/stepwise": json.dumps({"last_failed": f"{T}test_neg"}),
        },
    )
    subprocess.run(["git", "init", "-q"], cwd=folder, check=True)
    return folder


def plain_reds(root: Path) -> dict[str, set[str]]:
    """The tests plain pytest, with no option at all, turns red under each mutant."""
    reds = {}
    for name, (old, new, _) in MUTATIONS.items():
        copy = write_project(
            root / f"plain-{name}",
            {"calc/__init__.py": SOURCE.replace(old, new, 1), "tests/test_calc.py": TESTS, "tox.ini": "[pytest]\n"},
        )
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:randomly", "-p", "no:cacheprovider"],
            cwd=copy,
            env=gate_env(copy),
            capture_output=True,
            text=True,
        )
        reds[name] = set(re.findall(r"^FAILED (\S+)", done.stdout, re.M))
        shutil.rmtree(copy)
    return reds


@pytest.fixture(scope="module")
def truth(tmp_path_factory) -> dict[str, set[str]]:
    reds = plain_reds(tmp_path_factory.mktemp("plain"))
    # The verdicts those reds make against each contract, stated once here.
    assert reds == {
        "add-minus": {f"{T}test_add", f"{T}test_add_commutes", f"{T}test_mul_by_add"},
        "mul-power": {f"{T}test_mul"},
        "neg-identity": set(),
        "mul-zero": {f"{T}test_mul", f"{T}test_mul_by_add"},
    }
    return reds


@pytest.fixture(scope="module")
def plugins() -> Path:
    return pinned_plugins(PINS)


def gate(folder: Path, plugins: Path, *args: str, env: dict[str, str] | None = None):
    extra = {"PYTHONPATH": str(plugins), **(env or {})}
    return run_gate(folder, "run", "--no-cache", *args, env=gate_env(folder, extra))


def assert_true_verdicts(run, truth: dict[str, set[str]]) -> None:
    assert run.code == 1, run.stdout + run.stderr
    assert "unrecognized arguments" not in run.stderr
    assert run.verdicts() == TRUTH, {m["name"]: m["detail"] for m in run.report["mutations"]}
    assert {name: {r["id"] for r in run.mutation(name)["red"]} for name in TRUTH} == truth


ADDOPTS = [
    "--reruns 3 --reruns-delay 2",  # pytest-rerunfailures: each red re-run, 2 s apart
    "--force-flaky --max-runs 3",  # flaky: every test re-run until it passes
    "--random-order --random-order-seed 3",  # pytest-random-order: blocked, its options were refused
    "--lf",
    "--last-failed --last-failed-no-failures none",
    "--ff",
    "--nf",
    "--sw",
    "--sw-skip",
    "--sw-reset",
    "--cache-clear",
    "--cache-show",
    "-x",
    "--maxfail 1",
    # The provider blocked, every ini key checked: the gate's own cache_dir must not be refused.
    "-p no:cacheprovider --strict-config",
]


def test_with_no_option_the_gate_gives_plain_pytests_verdicts(tmp_path, plugins, truth):
    assert_true_verdicts(gate(project(tmp_path), plugins), truth)


@pytest.mark.parametrize("addopts", ADDOPTS)
def test_an_option_in_the_projects_addopts_leaves_every_verdict_true(tmp_path, plugins, truth, addopts):
    folder = project(tmp_path, addopts=addopts)
    before = tree_digest(folder)
    assert_true_verdicts(gate(folder, plugins), truth)
    assert tree_digest(folder) == before  # the project's own .pytest_cache neither read nor written


def test_a_test_marked_for_reruns_is_judged_by_its_first_run(tmp_path, plugins, truth):
    # pytest-rerunfailures' marker asks for re-runs without any option.
    marked = TESTS.replace("def test_mul():", "@pytest.mark.flaky(reruns=3, reruns_delay=2)\ndef test_mul():")
    folder = project(tmp_path, addopts="--strict-markers", tests="import pytest\n" + marked)
    assert_true_verdicts(gate(folder, plugins), truth)


@pytest.mark.parametrize("given", ["-x --reruns 3 --reruns-delay 2", "--lf --sw", "--doctest-modules"])
def test_pytest_addopts_reaches_the_gates_runs_and_leaves_every_verdict_true(tmp_path, plugins, truth, given):
    assert_true_verdicts(gate(project(tmp_path), plugins, env={"PYTEST_ADDOPTS": given}), truth)


@pytest.mark.parametrize(
    "field", ['pytest_args = "-x --reruns 3 --reruns-delay 2 --ff"', 'pytest_args = ["--sw", "--maxfail", "1"]']
)
def test_gate_pytest_args_reach_the_gates_runs_and_leave_every_verdict_true(tmp_path, plugins, truth, field):
    assert_true_verdicts(gate(project(tmp_path, gate_extra=field), plugins), truth)


def doctested(root: Path, gate_extra: str = "") -> Path:
    return write_project(
        root / "doc",
        {
            "pyproject.toml": '[project]\nname = "dpkg"\nversion = "0"\n',
            "dpkg/__init__.py": 'def neg(a):\n    """\n    >>> neg(2)\n    -2\n    """\n    return -a\n',
            "mutations/dpkg.toml": f'[gate]\ntests = ["dpkg"]\npaths = ["."]\n{gate_extra}\n'
            '[[mutation]]\nname = "neg-identity"\ntarget = "dpkg/__init__.py::neg"\nop = "replace"\n'
            'old = "-a"\nnew = "a"\nkills = ["dpkg/__init__.py::dpkg.neg"]\n',
        },
    )


def test_pytest_addopts_is_honoured_as_pytest_honours_it(tmp_path):
    # Its doctests are collected only with --doctest-modules: dropped, nothing was collected.
    folder = doctested(tmp_path)
    run = run_gate(folder, "run", "--no-cache", env=gate_env(folder, {"PYTEST_ADDOPTS": "--doctest-modules"}))
    assert run.code == 0, run.stdout + run.stderr
    assert run.verdicts() == {"neg-identity": "held"}
    without = run_gate(folder, "run", "--no-cache")
    assert without.code == 2 and "no tests collected" in without.stderr


def test_gate_pytest_args_are_given_to_every_run(tmp_path):
    folder = doctested(tmp_path, gate_extra='pytest_args = "--doctest-modules"')
    run = run_gate(folder, "run", "--no-cache")
    assert run.code == 0, run.stdout + run.stderr
    assert run.verdicts() == {"neg-identity": "held"}


@pytest.mark.parametrize("option", ["--co", "--collect-only", "--pdb", "--setup-plan", "--fixtures"])
def test_an_option_under_which_no_test_runs_is_refused_in_one_line_naming_pytest_addopts(tmp_path, option):
    folder = project(tmp_path)
    run = run_gate(folder, "check", env=gate_env(folder, {"PYTEST_ADDOPTS": f"-q {option}"}))
    assert run.code == 2
    line = run.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert f"PYTEST_ADDOPTS has {option}," in line and "env -u PYTEST_ADDOPTS" in line


def test_an_option_under_which_no_test_runs_is_refused_in_one_line_naming_the_field(tmp_path):
    folder = project(tmp_path, gate_extra='pytest_args = ["--collect-only"]')
    run = run_gate(folder, "check")
    assert run.code == 2
    assert run.stderr.strip() == (
        "killmap check: mutations/calc.toml: field 'pytest_args': --collect-only: under it pytest runs no test, "
        "so no test could judge a mutant; leave it out"
    )


@pytest.mark.parametrize("value", ["7", '["-x", 3]', '"unclosed \'quote"'])
def test_a_malformed_pytest_args_field_is_one_line_naming_it(tmp_path, value):
    folder = project(tmp_path, gate_extra=f"pytest_args = {value}")
    run = run_gate(folder, "check")
    assert run.code == 2
    line = run.stderr.strip()
    assert "\n" not in line and "field 'pytest_args': must be pytest arguments" in line


@pytest.mark.parametrize("where", ["env", "field"])
def test_a_keyword_that_deselects_a_kills_test_is_refused_in_one_line(tmp_path, where):
    folder = project(tmp_path, gate_extra='pytest_args = "-k add"' if where == "field" else "")
    env = gate_env(folder, {"PYTEST_ADDOPTS": "-k add"} if where == "env" else {})
    run = run_gate(folder, "run", "--no-cache", env=env)
    assert run.code == 2
    line = run.stderr.strip()
    assert "\n" not in line and "deselected by the keyword expression 'add' (-k)" in line


def test_a_marker_expression_that_deselects_a_kills_test_is_refused_in_one_line(tmp_path):
    marked = "import pytest\n" + TESTS.replace("def test_neg():", "@pytest.mark.slow\ndef test_neg():")
    folder = project(tmp_path, gate_extra="pytest_args = ['-m', 'not slow']", tests=marked)
    run = run_gate(folder, "run", "--no-cache")
    assert run.code == 2
    line = run.stderr.strip()
    assert "\n" not in line and f"'{T}test_neg' names 1 test that exists but is deselected" in line
    assert "(-m)" in line
