"""A sweep mutant's one red test is confirmed in the process that ran it, as
pytest-rerunfailures re-runs a failure, not in a copy forked before the run: that copy cost
a fifth of a sweep. What a re-run in place cannot vouch for goes to the copy, which starts
from the state a fresh session starts its tests in: a re-run that disagrees, and a test that
draws its inputs.

Each project's test writes a line per call, "pid value", to a log outside the project (the
runs are left unconfined for it): which process ran each call is the evidence."""

from __future__ import annotations

import json
from collections import defaultdict

from gatekit import gate_env, run_gate, write_project
from sweepkit import require_mutmut

SOURCE = "def double(x):\n    return x * 2\n"
LOGGING = """import os

from pkg import double


def log(value):
    with open(os.environ["KILLMAP_TEST_PID_LOG"], "a") as out:
        out.write(f"{os.getpid()} {value}\\n")
"""


def _sweep(tmp_path, tests: str, source: str = SOURCE):
    """The whole-file mutmut sweep of double(), every mutant of which must be killed; its
    document and, per value double(1) returned under a mutant, the pid of each call."""
    require_mutmut()
    project = write_project(
        tmp_path / "p",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": source,
            "tests/test_pkg.py": LOGGING + tests,
            "mutations/pkg.toml": '[gate]\ntests = ["tests"]\npaths = ["."]\n',
        },
    )
    log = tmp_path / "calls.log"
    env = gate_env(project, {"KILLMAP_TEST_PID_LOG": str(log), "KILLMAP_CONFINE": "0"})
    report_dir = tmp_path / "reports"
    done = run_gate(
        project,
        "sweep",
        "pkg/__init__.py",
        "--ops",
        "mutmut",
        "--jobs",
        "1",
        "--no-cache",
        "--report-dir",
        str(report_dir),
        env=env,
    )
    assert done.code == 0, done.stdout + done.stderr
    doc = json.loads((report_dir / "killmap-sweep.json").read_text())
    pids: dict[str, list[str]] = defaultdict(list)
    for line in log.read_text().splitlines():
        pid, value = line.split()
        pids[value].append(pid)
    mutated = {value: ran for value, ran in pids.items() if value != "2"}  # 2: the unmutated double(1)
    assert mutated, pids
    return doc, mutated


def test_a_killed_sweep_mutants_red_is_run_again_by_the_process_that_ran_it(tmp_path):
    # A changed default runs in a fresh session, `x * factor` in a fork of the collected one.
    source = "def double(x, factor=2):\n    return x * factor\n"
    doc, mutated = _sweep(tmp_path, "\n\ndef test_1():\n    log(double(1))\n    assert double(1) == 2\n", source)
    assert sorted(m["line"] for m in doc["sweep"]["mutants"]) == [1, 2], doc["sweep"]["mutants"]
    assert all(m["confirm_seconds"] > 0 for m in doc["sweep"]["mutants"])
    for value, ran in mutated.items():
        assert len(ran) == 2 and len(set(ran)) == 1, (value, ran)  # the run, then its re-run, in one process


def test_a_red_only_a_processs_first_call_gives_is_settled_from_a_fresh_start_and_killed(tmp_path):
    # Red at the first call in a process, green after: in place the re-run disagrees. A fresh
    # session would be red every time, so the mutant is killed, not flaky.
    tests = (
        "\n\n_CALLS = []\n\n\ndef test_1():\n    _CALLS.append(1)\n    log(double(1))\n"
        "    if len(_CALLS) == 1:\n        assert double(1) == 2\n"
    )
    _, mutated = _sweep(tmp_path, tests)
    for value, ran in mutated.items():
        # The first run and its re-run in place; then the run and its copy, each its own process.
        assert len(ran) == 4 and ran[0] == ran[1] and len(set(ran)) == 3, (value, ran)


def test_a_red_test_that_draws_its_inputs_is_confirmed_by_the_copy_not_in_place(tmp_path):
    # Hypothesis would replay, in place, the failing example the run saved.
    tests = (
        "\n\nfrom hypothesis import given, settings, strategies as st\n\n\n"
        "@settings(database=None, max_examples=1)\n@given(st.just(1))\ndef test_1(x):\n"
        "    log(double(x))\n    assert double(x) == 2\n"
    )
    _, mutated = _sweep(tmp_path, tests)
    for value, ran in mutated.items():
        # The first run (not re-run in place), then the run and its copy: three processes.
        assert len(set(ran)) == 3, (value, ran)


def test_a_red_whose_re_run_in_place_hangs_is_settled_from_a_fresh_start_and_killed(tmp_path):
    # Red at the first call, stuck at the second (a lock the failing call left held): the run
    # in place runs out of time after its red. A fresh start is red again, at once.
    tests = (
        "\n\nimport time\n\n_CALLS = []\n\n\ndef test_1():\n    _CALLS.append(1)\n    log(double(1))\n"
        "    if len(_CALLS) > 1:\n        time.sleep(120)\n    assert double(1) == 2\n"
    )
    _, mutated = _sweep(tmp_path, tests)
    for value, ran in mutated.items():
        # The first run and its stuck re-run; then the run and its copy, each its own process.
        assert len(ran) == 4 and ran[0] == ran[1] and len(set(ran)) == 3, (value, ran)


def test_a_re_run_in_place_red_for_another_reason_is_settled_from_a_fresh_start(tmp_path):
    # A session fixture that cannot be set up twice in one process: the re-run in place is red
    # in its setup, which confirms nothing about the run's red in the test itself.
    tests = (
        "\n\nimport pytest\n\n_SET_UP = []\n\n\n@pytest.fixture(scope='session')\ndef once():\n"
        "    if _SET_UP:\n        raise RuntimeError('set up twice in one process')\n    _SET_UP.append(1)\n\n\n"
        "def test_1(once):\n    log(double(1))\n    assert double(1) == 2\n"
    )
    _, mutated = _sweep(tmp_path, tests)
    for value, ran in mutated.items():
        # The first run (its re-run never reached the test's body), then the run and its copy.
        assert len(ran) == 3 and len(set(ran)) == 3, (value, ran)


def test_a_re_run_in_place_that_stops_the_session_is_settled_by_the_copy(tmp_path):
    # pytest.exit() at the second call in a process: the re-run in place ends there with no
    # last line, so nothing was confirmed; the copy re-runs the test from a fresh start.
    tests = (
        "\n\nimport pytest\n\n_CALLS = []\n\n\ndef test_1():\n    _CALLS.append(1)\n"
        "    if len(_CALLS) > 1:\n        pytest.exit('stopped at its second call')\n"
        "    log(double(1))\n    assert double(1) == 2\n"
    )
    _, mutated = _sweep(tmp_path, tests)
    for value, ran in mutated.items():
        assert len(ran) == 3 and len(set(ran)) == 3, (value, ran)


def test_a_run_its_red_test_stopped_with_pytest_exit_is_confirmed_by_the_copy(tmp_path):
    # pytest.exit() under the mutant: the run ends at that test, red by crash, with its fixtures
    # left as they were, so nothing is re-run in place; the copy re-runs it from a fresh start.
    tests = (
        "\n\nimport pytest\n\n\ndef test_1():\n    log(double(1))\n"
        "    if double(1) != 2:\n        pytest.exit('the mutant stops the session')\n"
    )
    _, mutated = _sweep(tmp_path, tests)
    for value, ran in mutated.items():
        # The first run (no re-run), then the run and its copy: three processes.
        assert len(ran) == 3 and len(set(ran)) == 3, (value, ran)
