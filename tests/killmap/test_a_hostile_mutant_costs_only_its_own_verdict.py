"""A hostile mutant costs its own verdict, never the run's (issue 32, items 2 and 3).

One mutant kills the worker that runs it, or deletes every folder beside its sandbox (the
gate's pristine copy among them); the two benign mutations after it, on the same single
worker, must still get the verdicts they get alone, and the gate must end with exit 1 and a
report, not exit 2 without one.
"""

from __future__ import annotations

import sys
import uuid

import pytest
from gatekit import gate_env, run_gate, tree_digest, write_project
from test_hostile_mutants import left_over

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process containment is proven with /proc")

KILLS_ITS_WORKER = """import os, signal, time
    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(30)
    return 0"""

DELETES_ITS_NEIGHBOURS = """import os, shutil
    here = os.getcwd()
    beside = os.path.dirname(here)
    for name in os.listdir(beside):
        path = os.path.join(beside, name)
        if path != here:
            shutil.rmtree(path, ignore_errors=True)
            if os.path.lexists(path):
                os.unlink(path)
    return 0"""


def hostile_then_benign(root, hostile: str):
    """`a-hostile` replaces one()'s body with `hostile`, its contract test_one alone; then two
    benign mutations, each held alone."""
    both = '["tests/test_pkg.py::test_one", "tests/test_pkg.py::test_one_again"]'
    return write_project(
        root,
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": "def one():\n    return 1\n\n\ndef two():\n    return 2\n",
            "tests/test_pkg.py": (
                "from pkg import one, two\n\n\ndef test_one():\n    assert one() == 1\n\n\n"
                "def test_one_again():\n    assert one() + 1 == 2\n\n\ndef test_two():\n    assert two() == 2\n"
            ),
            "mutations/pkg.toml": (
                '[gate]\ntests = ["tests"]\npaths = ["."]\n\n'
                '[[mutation]]\nname = "a-hostile"\ntarget = "pkg/__init__.py::one"\nop = "replace"\n'
                f"old = \"return 1\"\nnew = '''{hostile}'''\nkills = [\"tests/test_pkg.py::test_one\"]\n\n"
                '[[mutation]]\nname = "b-benign"\ntarget = "pkg/__init__.py::one"\nop = "constant-return"\n'
                f'value = "0"\nkills = {both}\n\n'
                '[[mutation]]\nname = "c-benign"\ntarget = "pkg/__init__.py::two"\nop = "constant-return"\n'
                'value = "0"\nkills = ["tests/test_pkg.py::test_two"]\n'
            ),
        },
    )


@pytest.mark.parametrize("swap", [True, False], ids=["session", "fresh"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_mutant_that_kills_its_worker_is_escaped_and_the_gate_goes_on_with_a_new_worker(tmp_path, jobs, swap):
    # In a fork of the collected session the process killed is the session's; in a fresh
    # session, the worker itself. Either is the gate's: the mutant escaped its test.
    project = hostile_then_benign(tmp_path / "proj", KILLS_ITS_WORKER)
    before = tree_digest(project)
    marker = f"KILLMAP_PROBE_{uuid.uuid4().hex}"
    flags = () if swap else ("--no-swap",)
    run = run_gate(project, "run", "--no-cache", "--jobs", jobs, *flags, env=gate_env(project, {marker: "1"}))
    assert run.code == 1, run.stderr
    hostile = run.mutation("a-hostile")
    assert run.verdicts() == {"a-hostile": "escaped", "b-benign": "held", "c-benign": "held"}, hostile["detail"]
    assert hostile["detail"].startswith("the mutant killed the gate's worker" + (" (SIGKILL)" if swap else " while"))
    assert "re-run it" not in hostile["detail"] and "re-run it" not in hostile["explanation"]
    # What its tests reported before they died with the process is no evidence: none is shown.
    assert hostile["red"] == []
    assert "died" not in run.stderr
    assert tree_digest(project) == before
    assert left_over(marker) == []


def test_a_mutant_that_deletes_the_folders_beside_its_sandbox_spoils_no_later_verdict(tmp_path):
    project = hostile_then_benign(tmp_path / "proj", DELETES_ITS_NEIGHBOURS)
    before = tree_digest(project)
    run = run_gate(project, "run", "--no-cache", "--jobs", "1")
    assert run.code == 1, run.stderr
    # Its own run's evidence was beside its sandbox too: it proves nothing, and says so.
    assert run.mutation("a-hostile")["verdict"] == "inconclusive"
    assert run.mutation("b-benign")["verdict"] == "held", run.mutation("b-benign")["detail"]
    assert run.mutation("c-benign")["verdict"] == "held", run.mutation("c-benign")["detail"]
    assert tree_digest(project) == before


def test_a_mutant_that_deletes_the_folders_beside_its_sandbox_and_then_kills_its_worker_spoils_no_later_verdict(
    tmp_path,
):
    # The new worker's sandbox is copied from the repaired pristine copy, by a file list that
    # was beside the sandboxes too; the dead run's own folder is gone. A fresh session, so that
    # the process killed is the worker (in a fork of the collected session, it is the session).
    hostile = DELETES_ITS_NEIGHBOURS.replace("    return 0", "    " + KILLS_ITS_WORKER)
    project = hostile_then_benign(tmp_path / "proj", hostile)
    run = run_gate(project, "run", "--no-cache", "--jobs", "1", "--no-swap")
    assert run.code == 1, run.stderr
    assert run.mutation("b-benign")["verdict"] == "held", run.mutation("b-benign")["detail"]
    assert run.mutation("c-benign")["verdict"] == "held", run.mutation("c-benign")["detail"]
