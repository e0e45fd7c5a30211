"""The mutant that ran is the sandbox's, fresh, and the user's tree is never written."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

from gatekit import copy_fixture, gate_env, run_gate, tree_digest, write_project


def _installed_copy(tmp_path, project):
    """A second, unmutated copy of the package elsewhere on disk, like a site-packages one."""
    site = tmp_path / "site"
    shutil.copytree(project / "src" / "shadowpkg", site / "shadowpkg")
    return site


def test_an_installed_copy_on_pythonpath_does_not_shadow_the_mutant(tmp_path):
    project = copy_fixture("shadowed", tmp_path)
    site = _installed_copy(tmp_path, project)
    run = run_gate(project, "run", "--no-cache", env=gate_env(project, {"PYTHONPATH": str(site)}))
    assert run.verdicts() == {"answer-changed": "held"}, run.stdout


def test_the_working_tree_on_pythonpath_does_not_shadow_the_mutant(tmp_path):
    # What an editable install does: the user's own src/ on sys.path.
    project = copy_fixture("shadowed", tmp_path)
    run = run_gate(project, "run", "--no-cache", env=gate_env(project, {"PYTHONPATH": str(project / "src")}))
    assert run.verdicts() == {"answer-changed": "held"}, run.stdout


def test_a_copy_that_wins_the_import_anyway_makes_the_verdict_broken_not_vacuous(tmp_path):
    project = copy_fixture("shadowed", tmp_path)
    site = _installed_copy(tmp_path, project)
    run = run_gate(project, "run", "--no-cache", env=gate_env(project, {"SHADOW_PATH": str(site)}))
    entry = run.mutation("answer-changed")
    assert entry["verdict"] == "broken"
    assert "was not the mutant" in entry["detail"] and str(site) in entry["detail"]


def named_elsewhere(project):
    """The working tree's src/, as `@FILE` (the shadowed fixture's conftest reads it): a
    variable naming the tree itself is rewritten to name the sandbox before the tests run."""
    file = project.parent / "shadow-folder.txt"
    file.write_text(str(project / "src"))
    return f"@{file}"


def test_the_working_tree_winning_the_import_makes_the_verdict_broken(tmp_path):
    project = copy_fixture("shadowed", tmp_path)
    run = run_gate(project, "run", "--no-cache", env=gate_env(project, {"SHADOW_PATH": named_elsewhere(project)}))
    entry = run.mutation("answer-changed")
    assert entry["verdict"] == "broken"
    assert "was not the mutant" in entry["detail"] or "working tree" in entry["detail"]


def test_every_mutation_imports_the_project_afresh_in_one_worker(tmp_path):
    # One worker runs both mutants back to back; module state (a registry) must not leak.
    project = copy_fixture("freshstate", tmp_path)
    run = run_gate(project, "run", "--no-cache", "--jobs", "1")
    assert run.verdicts() == {"scale-three": "held", "scale-four": "held"}, run.stdout


def test_same_size_mutants_in_one_sandbox_each_run_their_own_code(tmp_path):
    project = copy_fixture("stalepyc", tmp_path)
    run = run_gate(project, "run", "--no-cache", "--jobs", "1")
    assert run.verdicts() == {"value-two": "held", "value-three": "held"}, run.stdout
    assert not list(project.rglob("__pycache__")), "the gate wrote bytecode into the user's tree"


def _start_slow_gate(tmp_path):
    project = copy_fixture("basic", tmp_path)
    (project / "tests" / "test_slow.py").write_text(
        "import time\nfrom basicpkg import core\n\n\ndef test_slow_under_mutant():\n"
        "    if core.classify(2) != 'even':\n        time.sleep(60)\n"
    )
    catalog = project / "mutations" / "basic.toml"
    catalog.write_text(
        catalog.read_text()
        + (
            '\n[[mutation]]\nname = "slow"\ntarget = "src/basicpkg/core.py::classify"\nop = "replace"\n'
            'old = \'return "even"\'\nnew = \'return "EVEN"\'\nkills = ["tests/test_slow.py"]\n'
            "timeout = 120\n"
        )
    )
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    before = tree_digest(project)
    env = gate_env(project, {"TMPDIR": str(scratch)})
    gate = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "killmap",
            "run",
            "--no-cache",
            "--only",
            "slow",
            "--report-dir",
            str(tmp_path / "reports"),
        ],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.time() + 60
    while time.time() < deadline and not list(scratch.glob("killmap-*/runs/*mutant-slow*")):
        time.sleep(0.1)
    assert list(scratch.glob("killmap-*/runs/*mutant-slow*")), "the mutant never started"
    time.sleep(0.5)  # the mutant is written into the sandbox and its test is sleeping
    return project, before, scratch, gate


def test_interrupting_the_gate_mid_mutant_leaves_the_tree_identical_and_cleans_up(tmp_path):
    project, before, scratch, gate = _start_slow_gate(tmp_path)
    try:
        gate.send_signal(signal.SIGINT)
        gate.wait(timeout=30)
        assert gate.returncode == 130
        assert b"Traceback" not in gate.stderr.read()
        assert tree_digest(project) == before
        assert not list(scratch.glob("killmap-*")), "the sandbox folder was left behind"
    finally:
        _kill_group(gate)


def test_killing_the_gate_outright_leaves_the_tree_identical_and_no_worker_behind(tmp_path):
    project, before, scratch, gate = _start_slow_gate(tmp_path)
    try:
        # Its workers, the first one's forked siblings among them, and their sessions and runs.
        processes = _descendants(gate.pid)
        os.kill(gate.pid, signal.SIGKILL)
        gate.wait(timeout=30)
        assert tree_digest(project) == before
        if sys.platform.startswith("linux"):
            assert len(processes) >= 4, processes  # two workers, a session server, a run at least
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and [pid for pid in processes if _alive(pid)]:
                time.sleep(0.05)
            assert not [pid for pid in processes if _alive(pid)], "a worker outlived the gate killed outright"
    finally:
        _kill_group(gate)


def _descendants(pid: int) -> list[int]:
    """Every process below `pid` (Linux /proc; [] elsewhere)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{current}/task/{task}/children") as listing:
                    kids = [int(p) for p in listing.read().split()]
            except OSError:
                kids = []
            found += kids
            todo += kids
    return found


def _alive(pid: int) -> bool:
    """Running, or at least not yet a reaped or unreaped corpse."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _kill_group(process):
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass


def test_a_sibling_module_imported_from_the_working_tree_makes_the_verdict_broken(tmp_path):
    # The mutated module is the sandbox's, but another project module came from the user's
    # tree: the run mixed the two, so its reds prove nothing about the mutant.
    project = copy_fixture("shadowed", tmp_path)
    run = run_gate(project, "run", "--no-cache", env=gate_env(project, {"SHADOW_AFTER": named_elsewhere(project)}))
    entry = run.mutation("answer-changed")
    assert entry["verdict"] == "broken"
    assert "working tree" in entry["detail"] and "helperpkg" in entry["detail"]


def test_the_worker_refuses_to_write_outside_its_sandbox(tmp_path):
    # The catalog already refuses such targets; this is the last line of defence.
    import pytest as _pytest

    from killmap.engine.workers.worker import serve

    sandbox = tmp_path / "sandbox"
    sandbox.mkdir()
    with _pytest.raises(ValueError, match="outside the sandbox"):
        serve({"id": "x", "sandbox": str(sandbox), "writes": {"../escaped.py": "x = 1\n"}})
    assert not (tmp_path / "escaped.py").exists()


ROOT_MODULE_PROJECT = {
    # Tests that import a module at the project's root, outside `paths`: what plain
    # `python -m pytest` allows, since it puts the folder it runs in first on sys.path.
    "pyproject.toml": '[project]\nname = "rootmod"\nversion = "0"\n',
    "helpers.py": "def double(n):\n    return n * 2\n",
    "tests/test_helpers.py": "import helpers\n\n\ndef test_double():\n    assert helpers.double(3) == 6\n",
    "mutations/root.toml": '[gate]\npaths = ["src"]\n\n[[mutation]]\nname = "double-triples"\n'
    'target = "helpers.py::double"\nop = "replace"\nold = "n * 2"\nnew = "n * 3"\n'
    'kills = ["tests/test_helpers.py::test_double"]\n',
}


def test_a_module_at_the_project_root_is_importable_from_the_sandbox_as_under_python_m_pytest(tmp_path):
    # The workers start before their sandboxes are copied, outside them: each run must put
    # its sandbox where `python -m` put the start folder, or `import helpers` fails.
    project = write_project(tmp_path / "rootmod", ROOT_MODULE_PROJECT)
    for flags in ((), ("--no-swap",)):
        run = run_gate(project, "run", "--no-cache", *flags)
        assert run.code == 0, run.stdout + run.stderr
        assert run.verdicts() == {"double-triples": "held"}, run.stdout
