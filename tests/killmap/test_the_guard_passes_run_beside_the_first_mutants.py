"""A worker done with its share of the guard passes runs mutants while another still re-runs a
long test; nothing is said of them until the guard passes settle the baseline, and where
they do not, whole runs decide and every mutant runs again on their baseline.

The project: `test_slow` reaches the mutated function and sleeps two seconds in one of its
unmutated calls (the guard pass's, or the reach pass's), which is green, red, or red again
later, as each test asks.
Every unmutated call of it and every run of a mutant leaves a mark with its time, so the
order of what ran is read from the marks, not from the gate's own account.
"""

from __future__ import annotations

from pathlib import Path

from gatekit import gate_env, one_mutation_project, run_gate, write_project

TESTS = """\
import os
import time
from pathlib import Path

from pkg import one

MARKS = Path(os.environ["GUARD_MARKS"])
RED_CALLS = {RED_CALLS}
SLOW_CALL = {SLOW_CALL}
TREE_WRITE = {TREE_WRITE}


def _mark(name):
    n = 1
    while True:
        try:
            with open(MARKS / f"{name}-{n}", "x") as mark:  # made once, by one process
                mark.write(repr(time.time()))
        except FileExistsError:
            n += 1
            continue
        return n


def test_one():
    if one() != 1:
        _mark("mutant")
        if TREE_WRITE:  # a hostile mutant: into the user's tree, by its absolute path
            Path(TREE_WRITE).write_text("the mutant's")
    assert one() == 1


def test_slow():
    assert one() == 1  # under the mutant: red here, and not counted
    call = _mark("slow")
    if call == SLOW_CALL:
        time.sleep(2)
    assert call not in RED_CALLS, f"call {call}"
"""


def _project(
    tmp_path: Path, red_calls: set[int], slow_call: int = 2, tree_write: Path | None = None
) -> tuple[Path, Path]:
    marks = tmp_path / "marks"
    marks.mkdir()
    source = TESTS.replace("{RED_CALLS}", repr(red_calls or set())).replace("{SLOW_CALL}", str(slow_call))
    source = source.replace("{TREE_WRITE}", repr(str(tree_write) if tree_write else None))
    project = one_mutation_project(
        tmp_path / "proj",
        "def one():\n    return 1\n",
        source,
        value="2",
        kills=("tests/test_pkg.py::test_one", "tests/test_pkg.py::test_slow"),
    )
    return project, marks


def _times(marks: Path, name: str) -> list[float]:
    found = sorted(marks.glob(f"{name}-*"), key=lambda p: int(p.name.rsplit("-", 1)[1]))
    return [float(p.read_text()) for p in found]


def _gate(project: Path, marks: Path):
    env = gate_env(project, {"GUARD_MARKS": str(marks), "KILLMAP_CONFINE": "0"})
    return run_gate(project, "run", "--no-cache", "--jobs", "2", env=env)


def test_a_mutant_runs_on_the_worker_that_is_done_with_its_share_of_the_guard_pass(tmp_path):
    project, marks = _project(tmp_path, set())
    run = _gate(project, marks)
    assert run.code == 0, run.stdout + run.stderr
    assert run.verdicts() == {"one-mutated": "held"}
    reach, guard = _times(marks, "slow")  # each unmutated call of test_slow, as it began
    # The mutant ran while the guard pass's call slept (it ends 2 s after it began).
    assert _times(marks, "mutant")[0] < guard + 2, (guard, _times(marks, "mutant"))
    # And its verdict was said after the baseline's line, as ever.
    assert run.stdout.index("baseline: 2 tests green in 2 runs") < run.stdout.index("one-mutated"), run.stdout


def test_a_guard_pass_that_whole_runs_settle_runs_every_mutant_again_on_their_baseline(tmp_path):
    # Red in the guard pass only: whole runs decide (calls 3 and 4, green), and the mutant,
    # which ran beside the guard pass, runs again on the baseline they made.
    project, marks = _project(tmp_path, {2})
    run = _gate(project, marks)
    assert run.code == 0, run.stdout + run.stderr
    assert run.verdicts() == {"one-mutated": "held"}
    slow = _times(marks, "slow")
    assert len(slow) == 4, slow  # the reach pass, the guard pass, two whole runs
    mutant = _times(marks, "mutant")
    assert mutant[0] < slow[1] + 2, (slow, mutant)  # beside the guard pass
    assert mutant[-1] > slow[3], (slow, mutant)  # and again after the whole runs
    assert run.stdout.count("held one-mutated") == 1, run.stdout  # its verdict said once


def test_a_baseline_the_guard_pass_finds_flaky_is_refused_and_no_verdict_run_beside_it_is_said(tmp_path):
    project, marks = _project(tmp_path, {2, 4})
    run = _gate(project, marks)
    lines = [line for line in run.stderr.splitlines() if line.startswith("killmap:")]
    assert run.code == 2 and len(lines) == 1, run.stdout + run.stderr
    assert "flaky" in lines[0] and "tests/test_pkg.py::test_slow" in lines[0], lines[0]
    assert _times(marks, "mutant"), "the mutant did not run beside the guard pass"
    assert "one-mutated" not in run.stdout, run.stdout


def test_a_mutant_that_writes_into_the_tree_beside_the_guard_pass_is_blamed_and_the_baseline_stands(tmp_path):
    # Unconfined (as on macOS), the mutant writes a file into the working tree while the guard
    # pass's call of test_slow sleeps: both runs were in progress, both hear of the write.
    # Whole runs, with no mutant beside them, write nothing: the baseline stands, and the
    # mutant, run again on their baseline, is the one that escaped.
    written = tmp_path / "proj" / "written-by-a-mutant.txt"
    project, marks = _project(tmp_path, set(), tree_write=written)
    run = _gate(project, marks)
    assert run.code != 2, run.stdout + run.stderr  # not the baseline's refusal
    assert run.verdicts() == {"one-mutated": "escaped"}, run.stdout + run.stderr
    slow, mutant = _times(marks, "slow"), _times(marks, "mutant")
    assert mutant[0] < slow[1] + 2, (slow, mutant)  # the write was made beside the guard pass
    assert len(slow) == 4, slow  # the reach pass, the guard pass, two whole runs
    assert not written.exists()  # moved out of the tree, kept under the gate's displaced/


def test_a_worker_done_with_its_reach_share_runs_the_guard_run_of_the_test_another_still_runs(tmp_path):
    # test_slow sleeps in the reach pass: the other worker, done with test_one, runs test_slow
    # again untraced meanwhile, and that run is its guard pass's (it reaches the mutation).
    project, marks = _project(tmp_path, set(), slow_call=1)
    run = _gate(project, marks)
    assert run.code == 0, run.stdout + run.stderr
    assert run.verdicts() == {"one-mutated": "held"}
    slow = _times(marks, "slow")
    assert len(slow) == 2, slow  # the reach pass's run and one guard run, no third
    assert slow[1] < slow[0] + 2, slow  # begun while the reach pass's run still slept
    assert "baseline: 2 tests green in 2 runs," in run.stdout, run.stdout


def test_the_tests_a_running_pass_holds_are_those_begun_and_not_ended_in_its_runs_events(tmp_path):
    import json

    from killmap.engine.outcome import tests_begun_not_ended

    runs = tmp_path / "runs"
    for folder, events in {
        "00001-baseline-1": [("start", "t::a"), ("test", "t::a"), ("start", "t::long")],
        "00002-baseline-2": [("start", "t::b"), ("test", "t::b")],
        "00003-baseline-2-1": [("start", "t::guard")],  # another pass's run: not asked about
    }.items():
        (runs / folder).mkdir(parents=True)
        # As the plugin writes them: a test's "test" event carries its outcome.
        lines = [
            json.dumps({"event": kind, "id": test, **({"outcome": "passed"} if kind == "test" else {})})
            for kind, test in events
        ]
        (runs / folder / "events.jsonl").write_text("\n".join(lines) + '\n{"event": "start", "id": "t::ha', "utf-8")
    assert tests_begun_not_ended(runs, {"baseline-1", "baseline-2"}) == {"t::long"}
    assert tests_begun_not_ended(runs, {"baseline-3"}) == frozenset()  # not begun: holds none


def test_an_early_guard_run_of_a_test_that_reaches_nothing_holds_back_no_verdict_and_no_end(tmp_path):
    # The long test reaches no mutated file: its early guard run (its second call, which would
    # sleep 60 s) is no guard run. The gate settles without it and ends with its engine, which
    # ends that run: its "ended" mark is never written.
    marks = tmp_path / "marks"
    marks.mkdir()
    project = one_mutation_project(
        tmp_path / "proj",
        "def one():\n    return 1\n",
        "import os\nimport time\nfrom pathlib import Path\n\nfrom pkg import one\n\n"
        "MARKS = Path(os.environ['GUARD_MARKS'])\n\n\n"
        "def test_one():\n    assert one() == 1\n\n\n"
        "def test_zlong_reaches_nothing():\n"
        "    call = len(list(MARKS.glob('begun-*'))) + 1\n"
        "    (MARKS / f'begun-{call}').write_text('')\n"
        "    time.sleep(2 if call == 1 else 60)\n"
        "    (MARKS / f'ended-{call}').write_text('')\n",
        value="2",
    )
    run = _gate(project, marks)
    assert run.code == 0, run.stdout + run.stderr
    assert run.verdicts() == {"one-mutated": "held"}
    assert (marks / "begun-2").exists(), "no early guard run of the long test"
    assert not (marks / "ended-2").exists(), "the gate waited for a run that was no guard run"


# --- an early guard run that reaches nothing, three workers, and whole runs -----------------

EARLY_TESTS = """\
import os
import time
from pathlib import Path

from pkg import one

MARKS = Path(os.environ["GUARD_MARKS"])
SLEEPS = {SLEEPS}  # test name -> {call: seconds}
RED = {RED}  # test name -> calls that fail


def _mark(name, call=None):
    n = call or 1
    while True:
        try:
            with open(MARKS / f"{name}-{n}", "x") as mark:  # made once, by one process
                mark.write(f"{time.time()!r} {os.getppid()}")
        except FileExistsError:
            if call:
                raise
            n += 1
            continue
        return n


def _unmutated_call(name):
    call = _mark(f"begun-{name}")
    time.sleep(SLEEPS.get(name, {}).get(call, 0))
    _mark(f"ended-{name}", call)
    assert call not in RED.get(name, ()), f"call {call}"


def test_one():
    if one() != 1:
        _mark("mutant")
        time.sleep(0.6)
    assert one() == 1
    _unmutated_call("one")


def test_slow():
    if one() == 1:  # reaches the mutation, green under it
        _unmutated_call("slow")


def test_zlong_reaches_nothing():
    _unmutated_call("zlong")
"""


def _early_project(tmp_path: Path, sleeps: dict, red: dict, mutants: int = 1, tests=("test_one",)) -> tuple[Path, Path]:
    marks = tmp_path / "marks"
    marks.mkdir()
    source = EARLY_TESTS.replace("{SLEEPS}", repr(sleeps)).replace("{RED}", repr(red))
    if "test_slow" not in tests:
        source = source.replace("def test_slow():", "def _not_a_test_slow():")
    entries = "".join(
        f'\n[[mutation]]\nname = "one-is-{n}"\ntarget = "pkg/__init__.py::one"\nop = "constant-return"\n'
        f'value = "{n}"\nkills = ["tests/test_pkg.py::test_one"]\n'
        for n in range(2, mutants + 2)
    )
    files = {
        "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
        "pkg/__init__.py": "def one():\n    return 1\n",
        "tests/test_pkg.py": source,
        "mutations/pkg.toml": '[gate]\ntests = ["tests"]\npaths = ["."]\n' + entries,
    }
    return write_project(tmp_path / "proj", files), marks


def _stamps(marks: Path, name: str) -> list[tuple[float, int]]:
    """(time, the pid of the worker whose fork left it) of each mark `name`, in call order."""
    found = sorted(marks.glob(f"{name}-*"), key=lambda p: int(p.name.rsplit("-", 1)[1]))
    return [(float(t), int(pid)) for t, pid in (p.read_text().split() for p in found)]


def test_a_worker_freed_by_an_early_guard_run_that_reaches_nothing_takes_the_mutants_left(tmp_path):
    # test_zlong sleeps 1.5 s in the reach pass; the other worker re-runs it at once (its
    # early guard run, 2.5 s), and it reaches nothing. The first worker takes mutants from the
    # reach pass's end (each sleeps 0.6 s); the other, once its early run ends, takes
    # the mutants still left.
    project, marks = _early_project(tmp_path, {"zlong": {1: 1.5, 2: 2.5}}, {}, mutants=7)
    run = run_gate(project, "run", "--no-cache", "--jobs", "2", env=gate_env(project, _ENV(marks)))
    assert run.code == 0, run.stdout + run.stderr
    assert set(run.verdicts().values()) == {"held"}, run.verdicts()
    zlong_begun, zlong_ended = _stamps(marks, "begun-zlong"), _stamps(marks, "ended-zlong")
    assert len(zlong_begun) == 2, zlong_begun  # the reach pass's run, and the early one
    early_end, early_worker = zlong_ended[1]
    after = [t for t, worker in _stamps(marks, "mutant") if worker == early_worker and t > early_end]
    assert after, (early_end, early_worker, _stamps(marks, "mutant"))


def test_two_idle_workers_do_not_both_re_run_the_test_a_third_still_runs(tmp_path):
    # Three workers, and the first run to start claims every test (a run claims two ahead):
    # the two others are done with their shares at once, while it runs test_one (0.8 s).
    # One of them re-runs test_one as its guard run; the other finds it begun already.
    project, marks = _early_project(
        tmp_path, {"one": {1: 0.8}, "slow": {1: 1}}, {}, mutants=3, tests=("test_one", "test_slow")
    )
    run = run_gate(project, "run", "--no-cache", "--jobs", "3", env=gate_env(project, _ENV(marks)))
    assert run.code == 0, run.stdout + run.stderr
    assert set(run.verdicts().values()) == {"held"}, run.verdicts()
    one = _stamps(marks, "begun-one")
    assert one[1][0] < one[0][0] + 0.8, one  # an early guard run, begun while the first slept
    assert len(one) == 2, one  # the reach pass's run and one early run, not two
    assert len(_stamps(marks, "begun-slow")) == 2  # its reach and its guard run


def test_with_one_baseline_run_no_test_is_run_early_for_a_guard_pass_there_is_not(tmp_path):
    # --baseline-runs 1: no guard pass, so a worker done with its reach share while the other
    # sleeps in test_one or test_slow re-runs nothing; every unmutated call is the reach pass's.
    project, marks = _early_project(
        tmp_path, {"one": {1: 0.8}, "slow": {1: 1.5}}, {}, mutants=2, tests=("test_one", "test_slow")
    )
    env = gate_env(project, _ENV(marks))
    run = run_gate(project, "run", "--no-cache", "--jobs", "2", "--baseline-runs", "1", env=env)
    assert run.code == 0, run.stdout + run.stderr
    assert set(run.verdicts().values()) == {"held"}, run.verdicts()
    calls = {name: len(_stamps(marks, f"begun-{name}")) for name in ("one", "slow", "zlong")}
    assert calls == {"one": 1, "slow": 1, "zlong": 1}, calls


def test_whole_runs_wait_for_an_early_guard_run_still_in_flight(tmp_path):
    # test_one is red at its second call (the guard pass's): whole runs decide, on every
    # worker, while the other worker still runs test_zlong's early guard run (3 s). Each
    # whole run begins after that run ended, and the verdict stands on their baseline.
    project, marks = _early_project(tmp_path, {"zlong": {1: 1.5, 2: 3}}, {"one": (2,)})
    run = run_gate(project, "run", "--no-cache", "--jobs", "2", env=gate_env(project, _ENV(marks)), timeout=120)
    assert run.code == 0, run.stdout + run.stderr
    assert run.verdicts() == {"one-is-2": "held"}
    zlong_begun, zlong_ended = _stamps(marks, "begun-zlong"), _stamps(marks, "ended-zlong")
    assert len(zlong_begun) == 4, zlong_begun  # reach, early guard, two whole runs
    assert min(t for t, _ in zlong_begun[2:]) > zlong_ended[1][0], (zlong_begun, zlong_ended)
    assert len(_stamps(marks, "begun-one")) == 4  # reach, guard (red), two whole runs (green)


def _ENV(marks: Path) -> dict[str, str]:
    return {"GUARD_MARKS": str(marks), "KILLMAP_CONFINE": "0"}
