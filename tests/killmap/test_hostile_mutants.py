"""Hostile mutants: each is contained, and none can fool the gate into a false verdict.

Real mutants, run by the real gate over tests/fixtures/projects/hostile: interpreters
that die mid-test, sessions stopped after the kills went red, daemons that detach every
way there is, writes into the sandbox and into the user's working tree. Every process
the gate starts carries a marker in its environment, so a leftover one is found by
looking for the marker, not by guessing at process names.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
import uuid
from pathlib import Path

import pytest
from gatekit import copy_fixture, gate_env, one_mutation_project, run_gate, tree_digest, write_project

from killmap.engine.containment import landlock

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process containment is proven with /proc")


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as environ:
                if marker.encode() in environ.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def left_over(marker: str) -> list[int]:
    # The gate has exited; give the kernel a moment to finish reaping.
    for _ in range(20):
        found = processes_with(marker)
        if not found:
            return []
        time.sleep(0.1)
    return found


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory):
    project = copy_fixture("hostile", tmp_path_factory.mktemp("hostile"))
    marker = f"KILLMAP_PROBE_{uuid.uuid4().hex}"
    env = gate_env(project, {marker: "1"})
    run = run_gate(project, "run", "--no-cache", "--jobs", "1", env=env)
    run.leftover = left_over(marker)
    return run


def red_ids(entry) -> dict[str, str]:
    return {r["id"]: r["cause"] for r in entry["red"]}


@pytest.mark.parametrize("name", ["exit-zero", "segfault", "keyboard-interrupt"])
def test_a_mutant_that_kills_or_interrupts_the_interpreter_crashes_both_callers_into_overreach(hostile_run, name):
    entry = hostile_run.mutation(name)
    assert entry["verdict"] == "overreach", entry["detail"]
    assert red_ids(entry) == {
        "tests/test_core.py::test_value": "crash",
        "tests/test_core.py::test_value_again": "crash",
    }


def test_a_segfault_is_named_by_its_signal(hostile_run):
    reds = hostile_run.mutation("segfault")["red"]
    assert all("SIGSEGV" in r["message"] for r in reds)


@pytest.mark.parametrize("name", ["interrupt-after-kills", "exit-after-kills"])
def test_a_session_stopped_after_the_kills_went_red_is_not_held(hostile_run, name):
    entry = hostile_run.mutation(name)
    assert entry["verdict"] == "overreach", entry["detail"]
    assert red_ids(entry) == {
        "tests/test_core.py::test_value": "assertion",
        "tests/test_core.py::test_value_again": "crash",
    }


def test_tests_after_an_interruption_run_in_a_fresh_session(hostile_run):
    # The interruption comes first, in a test outside the contract; the kills test after
    # it must still get an outcome, or the red set is incomplete.
    entry = hostile_run.mutation("interrupt-then-resume")
    assert "tests/test_core.py::test_b_first_value_again" in red_ids(entry)
    assert red_ids(entry)["tests/test_core.py::test_a_first_value"] == "crash"
    assert entry["verdict"] == "overreach"


@pytest.mark.parametrize("name", ["exit-zero", "segfault", "keyboard-interrupt"])
def test_every_selected_test_of_a_crashed_run_gets_an_outcome(hostile_run, name):
    # Both tests that call value() are selected; the first crash must not leave the second
    # without an outcome (it would read as green).
    entry = hostile_run.mutation(name)
    assert len(entry["selected"]) == 2
    assert set(entry["selected"]) == set(red_ids(entry))


def test_no_process_a_mutant_started_outlives_the_gate(hostile_run):
    for name in ("popen-daemons", "setsid-daemon", "many-sleepers"):
        assert hostile_run.mutation(name)["verdict"] == "held"
    assert hostile_run.leftover == []


def test_no_process_outlives_the_gate_without_the_confirmation_either(tmp_path):
    project = copy_fixture("hostile", tmp_path)
    marker = f"KILLMAP_PROBE_{uuid.uuid4().hex}"
    run = run_gate(
        project,
        "run",
        "--no-cache",
        "--no-confirm",
        "--only",
        "many-sleepers",
        "--only",
        "setsid-daemon",
        env=gate_env(project, {marker: "1"}),
    )
    assert run.code == 0, run.stderr
    assert left_over(marker) == []


def test_a_mutant_that_poisons_its_sandbox_is_reported_and_the_next_mutant_sees_a_pristine_one(hostile_run):
    writer = hostile_run.mutation("sandbox-writer")
    assert any("wrote to tests/test_core.py in its sandbox" in w for w in writer["warnings"])
    # Run after it on the same worker (one job): the redefined, always-red test_spawn would
    # make this equivalent mutant read held.
    assert hostile_run.mutation("spawn-equivalent")["verdict"] == "vacuous"


def test_a_mutant_that_deletes_its_sandbox_does_not_poison_later_runs(hostile_run):
    remover = hostile_run.mutation("sandbox-remover")
    assert remover["verdict"] == "inconclusive"
    assert "own sandbox" in remover["detail"]
    assert hostile_run.mutation("spawn-equivalent")["verdict"] == "vacuous"


def test_a_verdict_from_a_run_that_wrote_to_its_sandbox_is_never_cached(tmp_path):
    project = copy_fixture("hostile", tmp_path)
    first = run_gate(project, "run", "--only", "sandbox-writer")
    again = run_gate(project, "run", "--only", "sandbox-writer")
    assert first.mutation("sandbox-writer")["verdict"] == "held"
    assert again.mutation("sandbox-writer")["cached"] is False


def add_tree_writer(project) -> None:
    """A mutation that appends to the project's own core.py, by its absolute path."""
    victim = project / "src" / "hpkg" / "core.py"
    catalog = project / "mutations" / "hostile.toml"
    catalog.write_text(
        catalog.read_text()
        + f'''
[[mutation]]
name = "tree-writer"
target = "src/hpkg/core.py::spawn"
op = "replace"
old = "return 1"
new = """with open({str(victim)!r}, "a") as escaped:
        escaped.write("# written by a mutant\\\\n")
    return 2"""
kills = ["tests/test_core.py::test_spawn"]
'''
    )


def test_a_mutant_that_writes_into_the_working_tree_is_escaped_and_the_file_restored(tmp_path):
    project = copy_fixture("hostile", tmp_path)
    add_tree_writer(project)
    before = tree_digest(project)
    # Unconfined, as on macOS: under Landlock the write is denied (the test below).
    env = gate_env(project, {"KILLMAP_CONFINE": "0"})
    run = run_gate(project, "run", "--no-cache", "--only", "tree-writer", env=env)
    entry = run.mutation("tree-writer")
    assert entry["verdict"] == "escaped", entry["detail"]
    assert "src/hpkg/core.py" in entry["detail"]
    assert run.code == 1
    assert tree_digest(project) == before
    kept = list((tmp_path / "xdg-cache" / "killmap" / "displaced").rglob("core.py"))
    assert kept and kept[0].read_text().endswith("# written by a mutant\n")


def outside_tmp_project():
    """A project outside the temp folder (Landlock allows writes beneath it, so only a tree
    elsewhere shows a write denied) and outside any git checkout."""
    import tempfile
    from pathlib import Path

    home = Path(tempfile.mkdtemp(prefix="killmap-landlock-", dir="/var/tmp"))
    return copy_fixture("hostile", home), home


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or landlock.abi_version() < 1,
    reason="Landlock is not available on this kernel",
)
def test_with_landlock_a_write_into_the_working_tree_is_denied_before_it_happens_and_called_escaped(tmp_path_factory):
    import shutil

    project, home = outside_tmp_project()
    try:
        add_tree_writer(project)
        before = tree_digest(project)
        run = run_gate(
            project,
            "run",
            "--no-cache",
            "--only",
            "tree-writer",
            env=gate_env(project, {"XDG_CACHE_HOME": str(tmp_path_factory.mktemp("xdg"))}),
        )
        entry = run.mutation("tree-writer")
        # Denied: the write raised PermissionError inside the test, so nothing was written; the
        # attempt is still the finding, with the path it reached for.
        assert entry["verdict"] == "escaped", entry["detail"]
        assert "confinement refused it" in entry["detail"] and run.code == 1
        assert entry["red"][0]["exception"] == "PermissionError"
        assert tree_digest(project) == before
    finally:
        shutil.rmtree(home, ignore_errors=True)


_HOARD = {
    "pyproject.toml": '[project]\nname = "hoardpkg"\nversion = "0"\n',
    "src/hoardpkg/__init__.py": "",
    "src/hoardpkg/core.py": "def grow(n):\n    return n\n",
    "tests/test_core.py": "from hoardpkg.core import grow\n\n\ndef test_grow():\n    assert grow(3) == 3\n",
    # 2 GB of zeroed buffers: far past the test's 512 MB limit, yet bounded, so that a broken
    # limit costs this test its verdict, not the machine its memory (calloc'd pages that are
    # never written stay unbacked).
    "mutations/hoard.toml": '[gate]\npaths = ["src"]\n\n[[mutation]]\nname = "grow-hoards"\n'
    'target = "src/hoardpkg/core.py::grow"\nop = "replace"\nold = "return n"\n'
    'new = """hoard = [bytearray(32 * 1024 * 1024) for _ in range(64)]\n    return n"""\n'
    'kills = ["tests/test_core.py::test_grow"]\n',
}


@pytest.mark.parametrize("flags", [(), ("--no-swap",)])
def test_a_mutant_that_allocates_without_end_fails_inside_its_test_and_gets_a_verdict(tmp_path, flags):
    project = write_project(tmp_path / "hoard", _HOARD)
    run = run_gate(project, "run", "--no-cache", *flags, env=gate_env(project, {"KILLMAP_MEMORY_MB": "512"}))
    entry = run.mutation("grow-hoards")
    assert entry["verdict"] == "held", run.stdout
    assert [r["exception"] for r in entry["red"]] == ["MemoryError"]


def test_a_malformed_memory_limit_is_one_line_and_exit_2(tmp_path):
    project = write_project(tmp_path / "hoard", _HOARD)
    run = run_gate(project, "run", "--no-cache", env=gate_env(project, {"KILLMAP_MEMORY_MB": "lots"}))
    assert run.code == 2 and run.report is None
    assert "KILLMAP_MEMORY_MB" in run.stderr and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr


def test_a_malformed_memory_limit_is_exit_2_even_when_every_verdict_is_cached(tmp_path):
    project = write_project(tmp_path / "hoard", _HOARD)
    first = run_gate(project, "run", env=gate_env(project, {"KILLMAP_MEMORY_MB": "512"}))
    assert first.code == 0, first.stdout
    again = run_gate(project, "run", env=gate_env(project, {"KILLMAP_MEMORY_MB": "lots"}))
    assert again.code == 2 and "KILLMAP_MEMORY_MB" in again.stderr, again.stdout + again.stderr
    assert "Traceback" not in again.stderr


def test_without_a_setting_each_run_may_use_an_equal_share_of_the_machines_memory(monkeypatch):
    # The default must be a limit (a runaway mutant is contained without any setting), and
    # one that leaves room: a share per job plus one kept back, never under 2 GB.
    from killmap.engine.workers.reaper import memory_limit_for

    monkeypatch.delenv("KILLMAP_MEMORY_MB", raising=False)
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert memory_limit_for(2) == max(2 * 1024**3, total // 3)
    monkeypatch.setenv("KILLMAP_MEMORY_MB", "0")
    assert memory_limit_for(2) is None


def test_a_test_tools_cache_written_by_a_failing_mutant_is_undone_silently_and_the_verdict_cached(tmp_path):
    # Hypothesis saves each failing example under .hypothesis/examples/<hash>/<hash>: a mutant
    # that breaks a property test always writes a file no unmutated run wrote. That is the
    # tool's cache, not a finding: no warning, and the verdict may be cached. It is still
    # undone, so the next mutant's `test_no_saved_examples` (in no contract) stays green.
    project = write_project(
        tmp_path / "proj",
        {
            "pyproject.toml": '[project]\nname = "prop"\nversion = "0"\n',
            "prop.py": "def double(x):\n    return x * 2\n\n\ndef triple(x):\n    return x * 3\n",
            "tests/conftest.py": (
                "import hashlib, os\nimport pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n"
                "def pytest_runtest_makereport(item, call):\n    report = (yield).get_result()\n"
                "    if report.failed:\n        key = hashlib.sha256(item.nodeid.encode()).hexdigest()[:16]\n"
                "        os.makedirs(f'.hypothesis/examples/{key}', exist_ok=True)\n"
                "        open(f'.hypothesis/examples/{key}/{os.getpid()}', 'w').write('example')\n"
            ),
            "tests/test_prop.py": (
                "import os\nfrom prop import double, triple\n\n\ndef test_double():\n    assert double(2) == 4\n\n\n"
                "def test_triple():\n    assert triple(2) == 6\n\n\n"
                "def test_no_saved_examples():\n    assert not os.path.exists('.hypothesis/examples')\n"
            ),
            "mutations/prop.toml": '[gate]\ntests = ["tests"]\npaths = ["."]\n\n'
            '[[mutation]]\nname = "double-is-zero"\ntarget = "prop.py::double"\nop = "constant-return"\n'
            'value = "0"\nkills = ["tests/test_prop.py::test_double"]\n\n'
            '[[mutation]]\nname = "triple-is-zero"\ntarget = "prop.py::triple"\nop = "constant-return"\n'
            'value = "0"\nkills = ["tests/test_prop.py::test_triple"]\n',
        },
    )
    first = run_gate(project, "run", "--jobs", "1")
    assert first.code == 0, first.stdout + first.stderr
    for name in ("double-is-zero", "triple-is-zero"):
        assert first.mutation(name)["verdict"] == "held"
        assert not [w for w in first.mutation(name)["warnings"] if ".hypothesis" in w]
    again = run_gate(project, "run", "--jobs", "1")
    assert [again.mutation(n)["cached"] for n in ("double-is-zero", "triple-is-zero")] == [True, True]


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or landlock.abi_version() < 1,
    reason="Landlock is not available on this kernel",
)
def test_a_baseline_red_from_a_denied_write_points_at_the_confinement(tmp_path):
    # A suite that writes outside the sandbox and temp (a cache under the home folder, say)
    # passes under plain pytest and is red in the gate: the error must say why, and the way out.
    import tempfile

    outside = Path(tempfile.mkdtemp(prefix="killmap-outside-", dir="/var/tmp"))
    try:
        project = one_mutation_project(
            tmp_path / "proj",
            "def one():\n    return 1\n",
            (
                f"from pkg import one\n\n\ndef test_caches_outside():\n"
                f"    open({str(outside / 'cache.txt')!r}, 'w').write('x')\n    assert one() == 1\n"
            ),
            value="2",
            kills=("tests/test_pkg.py::test_caches_outside",),
        )
        run = run_gate(project, "run", "--no-cache")
        assert run.code == 2, run.stdout + run.stderr
        assert "test_caches_outside" in run.stderr and "[gate] confine = false lifts it" in run.stderr
        catalog = project / "mutations" / "pkg.toml"
        catalog.write_text(catalog.read_text().replace("[gate]\n", "[gate]\nconfine = false\n"))
        lifted = run_gate(project, "run", "--no-cache")
        assert lifted.code == 0, lifted.stdout + lifted.stderr
    finally:
        shutil.rmtree(outside, ignore_errors=True)
