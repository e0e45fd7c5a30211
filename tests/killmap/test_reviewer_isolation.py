"""red-first, try and prove leave the working tree and the git index byte-identical, also
when interrupted (SIGINT) or killed outright (SIGKILL) while a sandbox runs its tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from gatekit import gate_env
from reviewkit import change_repo, commit_all, fixture_repo, untouched

SLOW_FOLD = (
    "import time\n\nfrom foldroute.utils import quant_config_for\n\n\n"
    "def test_slow_without_the_fix():\n"
    "    if quant_config_for({'arch': 'DSparkDraftModel'}, 1, 2) != 1:\n        time.sleep(60)\n"
)
SLOW_BASIC = (
    "import time\n\nfrom basicpkg import core\n\n\ndef test_slow_under_mutant():\n"
    "    if core.classify(2) != 'even':\n        time.sleep(60)\n"
)
SLOW_FEES = (
    "import time\n\nfrom provepkg.fees import fee\n\n\ndef test_slow_under_mutant():\n"
    "    if fee(10, True) != 5:\n        time.sleep(60)\n"
)


def _project(command: str, tmp_path):
    """A repository whose command, once its sandbox runs the slow test, sleeps in it."""
    if command == "red-first":
        project = change_repo("rf-fold", tmp_path)
        (project / "tests" / "test_slow.py").write_text(SLOW_FOLD)
        commit_all(project, "a slow test")
        return project, ["red-first", "--report-dir", str(tmp_path / "reports")], "*reverted*"
    if command == "try":
        project = fixture_repo("basic", tmp_path)
        (project / "tests" / "test_slow.py").write_text(SLOW_BASIC)
        commit_all(project, "a slow test")
        return (
            project,
            [
                "try",
                "src/basicpkg/core.py::classify",
                "--op",
                "replace",
                "--old",
                'return "even"',
                "--new",
                'return "EVEN"',
                "--timeout",
                "120",
                "--save",
                "slow",
            ],
            "*mutant-slow*",
        )
    project = fixture_repo("provable", tmp_path)
    (project / "tests" / "test_slow.py").write_text(SLOW_FEES)
    commit_all(project, "a slow test")
    return project, ["prove", "tests/test_slow.py::test_slow_under_mutant"], "*mutant-*"


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
@pytest.mark.parametrize("command", ["red-first", "try", "prove"])
def test_a_stopped_command_leaves_the_tree_and_the_index_identical(tmp_path, command, how):
    project, args, running = _project(command, tmp_path)
    before = untouched(project)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "killmap", *args],
        cwd=project,
        env=gate_env(project, {"TMPDIR": str(scratch)}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.time() + 90
        while time.time() < deadline and not list(scratch.glob(f"killmap-*/runs/{running}")):
            if process.poll() is not None:
                break
            time.sleep(0.1)
        assert list(scratch.glob(f"killmap-*/runs/{running}")), process.communicate(timeout=30)
        time.sleep(0.5)  # the sandbox's tests are running, the slow one asleep
        os.kill(process.pid, how)
        process.wait(timeout=30)
        if how == signal.SIGINT:
            assert process.returncode == 130
            assert b"Traceback" not in process.stderr.read()
            assert not list(scratch.glob("killmap-*")), "the sandbox folder was left behind"
        assert untouched(project) == before
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
