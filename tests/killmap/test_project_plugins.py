"""A project whose pytest configuration names pytest-xdist, pytest-cov or pytest-randomly.

Real projects put them in addopts (`-n auto`, `--cov=pkg --cov-fail-under=100`,
`--randomly-seed=...`). Blocking the plugin (`-p no:xdist`) made pytest refuse that
configuration, and leaving pytest-cov on killed the baseline's collection (two coverage
collectors fighting over the trace function). The gate keeps each loaded and switches it off
(killmap/neutral.py); here the real plugins, pinned, are installed beside the suite's own
packages, never into them (pytest-randomly would shuffle this suite too).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from gatekit import gate_env, pinned_plugins, run_gate, write_project

PINS = ("pytest-xdist==3.8.0", "execnet==2.1.2", "pytest-cov==7.1.0", "pytest-randomly==5.1.0")


@pytest.fixture(scope="session")
def plugins() -> Path:
    """The pinned plugins, pip-installed once into a folder put on the gate's PYTHONPATH."""
    return pinned_plugins(PINS)


def _project(root: Path, addopts: str, tests: str) -> Path:
    project = write_project(
        root / "proj",
        {
            "pyproject.toml": f'[project]\nname = "pkg"\nversion = "0"\n\n'
            f'[tool.pytest.ini_options]\naddopts = "{addopts}"\n',
            "pkg/__init__.py": "def double(x):\n    return x * 2\n",
            "tests/test_pkg.py": tests,
            "mutations/pkg.toml": '[gate]\ntests = ["tests"]\npaths = ["."]\n\n'
            '[[mutation]]\nname = "double-is-zero"\ntarget = "pkg/__init__.py::double"\n'
            'op = "constant-return"\nvalue = "0"\nkills = ["tests/test_pkg.py::test_double"]\n',
        },
    )
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], cwd=project, check=True
    )
    return project


def _gate(project: Path, plugins: Path, *args: str):
    return run_gate(project, *args, env=gate_env(project, {"PYTHONPATH": str(plugins)}))


DOUBLE = (
    "from pkg import double\n\n\n"
    "def test_double():\n    assert double(2) == 4\n\n\n"
    "def test_zero():\n    assert double(0) == 0\n"
)


def test_a_project_that_distributes_with_xdist_in_addopts_runs_in_the_gate(tmp_path, plugins):
    # Blocked, `-n 2` was "unrecognized arguments"; left on, xdist ran the tests in its own
    # processes, where the gate's recorder saw none of them.
    project = _project(tmp_path, "-n 2", DOUBLE)
    checked = _gate(project, plugins, "check")
    assert checked.code == 0, checked.stdout + checked.stderr
    ran = _gate(project, plugins, "run", "--no-cache")
    assert ran.code == 0, ran.stdout + ran.stderr
    assert ran.verdicts() == {"double-is-zero": "held"}
    assert [red["id"] for red in ran.mutation("double-is-zero")["red"]] == ["tests/test_pkg.py::test_double"]


def test_a_project_measuring_coverage_with_pytest_cov_in_addopts_runs_in_the_gate(tmp_path, plugins):
    # pytest-cov's collector and the baseline's own fought over the trace function, and the
    # collection died; --cov-fail-under would also fail every run that selects a few tests.
    project = _project(tmp_path, "--cov=pkg --cov-report=term --cov-fail-under=100", DOUBLE)
    ran = _gate(project, plugins, "run", "--no-cache")
    assert ran.code == 0, ran.stdout + ran.stderr
    assert ran.verdicts() == {"double-is-zero": "held"}


def test_a_project_with_pytest_randomly_runs_its_tests_in_file_order(tmp_path, plugins):
    # The seed is named in addopts, so blocking the plugin made pytest refuse it; left on,
    # randomly shuffles (this seed reverses these tests) and reseeds `random` per test.
    order_bound = (
        "from pkg import double\n\nSEEN = []\n\n\n"
        + "".join(f"def test_{n}():\n    SEEN.append({n})\n\n\n" for n in range(1, 5))
        + "def test_double():\n    assert SEEN == [1, 2, 3, 4]\n    assert double(2) == 4\n"
    )
    project = _project(tmp_path, "-p randomly --randomly-seed=1", order_bound)
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=project,
        env=gate_env(project, {"PYTHONPATH": str(plugins)}),
        capture_output=True,
        text=True,
    )
    assert plain.returncode == 1, plain.stdout  # the plugin is live: this seed breaks the order
    ran = _gate(project, plugins, "run", "--no-cache")
    assert ran.code == 0, ran.stdout + ran.stderr
    assert ran.verdicts() == {"double-is-zero": "held"}


def test_pytest_randomly_reseeds_each_test_from_one_seed_in_every_run(tmp_path, plugins):
    # randomly reseeds `random` before each test, by default from a fresh seed every session:
    # the flake guard's two runs, and a mutant's, would each draw other numbers.
    drawn = (
        "import random\n\nfrom killmap.catalog.plan import DEFAULT_SEED\nfrom pkg import double\n\n\n"
        "def test_double(request):\n"
        "    assert request.config.getoption('randomly_seed') == DEFAULT_SEED\n"
        "    assert double(2) == 4\n"
    )
    project = _project(tmp_path, "-p randomly", drawn)
    ran = _gate(project, plugins, "run", "--no-cache")
    assert ran.code == 0, ran.stdout + ran.stderr
    assert ran.verdicts() == {"double-is-zero": "held"}


def test_an_addopts_pytest_refuses_is_named_not_reported_as_no_tests(tmp_path):
    # What a project sees whose addopts names a plugin that is not installed: pytest refuses
    # its command line and collects nothing. "no tests collected" sent users looking elsewhere.
    project = _project(tmp_path, "--option-of-a-plugin-not-installed", DOUBLE)
    for command in ("run", "check"):
        done = run_gate(project, command, "--no-cache") if command == "run" else run_gate(project, command)
        assert done.code == 2, done.stdout + done.stderr
        assert "pytest stopped before collecting" in done.stderr
        assert "unrecognized arguments: --option-of-a-plugin-not-installed" in done.stderr
        assert "Traceback" not in done.stderr


def test_a_conftest_that_does_not_import_is_named_with_its_error(tmp_path):
    project = _project(tmp_path, "-q", DOUBLE)
    (project / "tests" / "conftest.py").write_text("import a_dependency_nobody_installed\n")
    done = run_gate(project, "run", "--no-cache")
    assert done.code == 2, done.stdout + done.stderr
    assert "pytest stopped before collecting" in done.stderr
    assert "No module named 'a_dependency_nobody_installed'" in done.stderr
