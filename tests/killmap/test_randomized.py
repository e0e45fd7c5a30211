"""Randomized suites give one verdict: Hypothesis and pytest-randomly draw from the gate's seed.

The fixture `randomized` has a property test that finds its mutant (a quoting function that
leaves a tab unquoted) on about half of Hypothesis's random seeds: 10 uncached gates gave held 4,
vacuous 5, flaky 1 before the seed was fixed (issue 35). `randomly` has a test whose values come
from `random`, reseeded by pytest-randomly. The gate's default seed draws neither mutant; a few
further seeds derived from it are tried before a randomized kills test is called vacuous
(trial.reseeded), and one of them finds each. Each gate here runs several copies of one
mutation: every copy is a run of its own, with its own re-run, so one gate stands for several.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from gatekit import GateRun, copy_fixture, gate_env, one_mutation_project, run_gate

from killmap.catalog.plan import DEFAULT_SEED
from killmap.engine.inrun.foreign_plugins import CI_VARIABLES
from killmap.verdict.trial import FURTHER_SEEDS, further_seeds

pytest.importorskip("hypothesis")

TAB = "tab-left-unquoted"
PROPERTY = "tests/test_quoting.py::test_quoted_text_has_no_whitespace"


def _copies(project: Path, catalog: str, name: str, count: int) -> list[str]:
    """`count` copies of the catalog's one mutation, under other names: each is run and judged
    on its own, so one gate makes `count` draws."""
    path = project / "mutations" / catalog
    text = path.read_text()
    entry = text[text.index("[[mutation]]") :]
    names = [name] + [f"{name}-{n}" for n in range(2, count + 1)]
    path.write_text(text + "".join("\n" + entry.replace(f'"{name}"', f'"{n}"', 1) for n in names[1:]))
    return names


def _gate(project: Path, *args: str) -> GateRun:
    ran = run_gate(project, "run", "--no-cache", "--jobs", "1", "--baseline-runs", "1", *args)
    assert ran.report is not None, ran.stdout + ran.stderr
    return ran


_FOUND_BY_A_FURTHER_SEED = f"green under the run's seed {DEFAULT_SEED}, found under seed"


def _details(project: Path, *args: str) -> list[tuple[str, str]]:
    """Each mutation's verdict, and whether a further seed found it."""
    ran = _gate(project, *args)
    assert ran.report is not None
    return [
        (m["verdict"], _FOUND_BY_A_FURTHER_SEED if _FOUND_BY_A_FURTHER_SEED in m["detail"] else m["detail"])
        for m in ran.report["mutations"]
    ]


def _verdicts(project: Path, *args: str) -> list[str]:
    ran = _gate(project, *args)
    assert ran.report is not None
    return [m["verdict"] for m in ran.report["mutations"]]


def test_a_property_test_that_finds_the_mutant_on_some_draws_gives_one_verdict_in_six_uncached_runs(tmp_path):
    project = copy_fixture("randomized", tmp_path)
    _copies(project, "quoting.toml", TAB, 3)
    # Three copies on one job, then on two (another runner's shape): their draws cannot depend on
    # which worker, or which neighbour, a mutant got.
    first, second = _gate(project), _gate(project, "--jobs", "2")
    seen = {(m["verdict"], m["detail"]) for ran in (first, second) if ran.report for m in ran.report["mutations"]}
    assert len(seen) == 1, seen  # six runs, one verdict, one sentence (unseeded: 2% of sixes agree)
    verdict, detail = seen.pop()
    # The gate's seed draws no tab; the first further seed does, and says so.
    assert verdict == "held"
    first_further = further_seeds(DEFAULT_SEED)[0]
    assert f"{PROPERTY} is randomized" in detail
    assert f"green under the run's seed {DEFAULT_SEED}, found under seed {first_further}" in detail
    # The seed it drew from is recorded, and said on the console's last line.
    assert first.report is not None and first.report["seed"] == DEFAULT_SEED
    assert f"seed {DEFAULT_SEED}" in first.stdout


def test_the_seed_is_recorded_and_seed_n_changes_the_draws_while_random_is_named(tmp_path):
    project = copy_fixture("randomized", tmp_path)
    # As on a CI runner, where Hypothesis would load its derandomized "ci" profile by itself and
    # draw no tab from any seed: the laptop's draws are the runner's (the other tests here).
    on_ci = gate_env(project, {"CI": "true", "GITHUB_ACTIONS": "true"})
    three = run_gate(project, "run", "--no-cache", "--jobs", "1", "--baseline-runs", "1", "--seed", "3", env=on_ci)
    assert three.report is not None and three.report["seed"] == 3
    assert three.verdicts() == {TAB: "held"}  # seed 3 draws a tab, on a CI runner too
    assert three.report_dir is not None
    assert '<property name="seed" value="3" />' in (three.report_dir / "killmap.junit.xml").read_text()
    assert ", seed 3;" in (three.report_dir / "killmap.html").read_text()
    explored = run_gate(project, "run", "--jobs", "1", "--baseline-runs", "1", "--seed", "random")
    assert explored.report is not None and explored.report["seed"] == "random"
    assert explored.verdicts()[TAB] in ("held", "vacuous", "randomized")  # luck, named as such
    bad = run_gate(project, "run", "--seed", "often")
    assert bad.code == 2 and "--seed takes a whole number, 0 or more, or 'random'; got 'often'" in bad.stderr
    assert "Traceback" not in bad.stderr


def _save_a_failing_example(project: Path) -> None:
    """What an earlier plain pytest run of the mutant leaves in the project's .hypothesis/: the
    failing example, shrunk to a tab, which Hypothesis replays first in every later run."""
    source = project / "src" / "quoting" / "__init__.py"
    original = source.read_text()
    source.write_text(original.replace("if char in SAFE:", 'if char in SAFE or char == "\\t":'))
    env = gate_env(project, {"PYTHONPATH": str(project / "src")})
    env.pop("HYPOTHESIS_STORAGE_DIRECTORY", None)
    for variable in CI_VARIABLES:  # on a CI runner Hypothesis would draw the same examples every run
        env.pop(variable, None)
    try:
        for _ in range(20):  # each run finds the tab on about half of its random seeds
            done = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", PROPERTY],
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
            )
            if done.returncode == 1:
                break
        assert done.returncode == 1, done.stdout
    finally:
        source.write_text(original)
    assert any((project / ".hypothesis" / "examples").rglob("*")), "no example saved"


def test_two_projects_whose_hypothesis_folders_differ_give_the_same_verdict(tmp_path):
    # The example database was copied into the sandbox as the user had it: with the failing
    # example saved, 10 of 10 runs were held; without it, the dice decided.
    clean = copy_fixture("randomized", tmp_path / "clean")
    saved = copy_fixture("randomized", tmp_path / "saved")
    _save_a_failing_example(saved)
    # The seed's draw, not the disk's: a replayed example would have been red under the run's own seed.
    assert _details(saved) == _details(clean) == [("held", _FOUND_BY_A_FURTHER_SEED)]
    assert not (clean / ".hypothesis").exists()  # nothing the gate's runs saved reached the tree


def test_a_mutant_that_makes_hypothesis_save_an_example_does_not_change_the_next_mutants_verdict(tmp_path):
    project = copy_fixture("randomized", tmp_path)
    alone = _verdicts(project, "--only", TAB)
    # Every whitespace left unquoted: the property test finds it on any seed, and Hypothesis
    # saves the failing example (a tab, a space...) where its database is.
    catalog = project / "mutations" / "quoting.toml"
    catalog.write_text(
        catalog.read_text().replace(
            "[[mutation]]",
            '[[mutation]]\nname = "whitespace-left-unquoted"\ntarget = "src/quoting/__init__.py::quote"\n'
            'op = "replace"\nold = "if char in SAFE:"\nnew = "if char in SAFE or char.isspace():"\n'
            f'kills = ["{PROPERTY}"]\n\n[[mutation]]',
            1,
        )
    )
    ran = run_gate(project, "run", "--no-cache", "--jobs", "1", "--baseline-runs", "1")
    assert ran.report is not None, ran.stdout + ran.stderr
    first = ran.mutation("whitespace-left-unquoted")
    assert PROPERTY in [red["id"] for red in first["red"]]  # Hypothesis failed it, and saved that
    # The seed's draw, not the last mutant's example.
    assert (ran.verdicts()[TAB], _FOUND_BY_A_FURTHER_SEED in ran.mutation(TAB)["detail"]) == (alone[0], True)
    assert not (project / ".hypothesis").exists()


def test_a_pytest_randomly_suite_gives_one_verdict_in_six_runs_and_seed_n_changes_it(tmp_path):
    pytest.importorskip("pytest_randomly")
    project = copy_fixture("randomly", tmp_path)
    _copies(project, "picker.toml", "largest-is-last", 3)
    seen = {(m["verdict"], m["detail"]) for jobs in "12" for m in _gate(project, "--jobs", jobs).report["mutations"]}
    assert len(seen) == 1, seen
    verdict, detail = seen.pop()
    # The gate's seed draws the larger value last, and so do the first two further seeds.
    found_by = further_seeds(DEFAULT_SEED)[2]
    assert (verdict, f"found under seed {found_by}" in detail) == ("held", True), detail
    # A fresh session draws from the further seed as a fork of the collected session does.
    assert {(m["verdict"], m["detail"]) for m in _gate(project, "--no-swap").report["mutations"]} == {(verdict, detail)}
    assert set(_verdicts(project, "--seed", str(found_by))) == {"held"}  # reproduced by that seed alone
    assert set(_verdicts(project, "--seed", "1")) == {"held"}


def test_a_hypothesis_deadline_is_a_search_cause_never_an_assertion(tmp_path):
    project = one_mutation_project(
        tmp_path / "deadline",
        "def one():\n    return 1\n",
        "from hypothesis import Phase, given, settings\nfrom hypothesis import strategies as st\n\n"
        "from pkg import one\n\n\n@settings(deadline=20, max_examples=1, phases=[Phase.generate])\n"
        "@given(st.just(0))\ndef test_one(x):\n    assert one() == 1\n",
        value="__import__('time').sleep(0.1) or 1",
        # A loaded machine must not turn the slow mutant into a timeout before Hypothesis speaks.
        extra='require = "assertion"\ntimeout = 120\n',
    )
    ran = run_gate(project, "run", "--no-cache", "--jobs", "1", "--baseline-runs", "1")
    entry = ran.mutation("one-mutated")
    assert entry["verdict"] == "wrong-cause", entry
    assert [(r["id"], r["cause"]) for r in entry["red"]] == [("tests/test_pkg.py::test_one", "search")]
    assert "DeadlineExceeded" in entry["detail"]
    assert ran.report_dir is not None
    page = (ran.report_dir / "killmap.html").read_text()
    assert "td.cell.cause-search{" in page and "Hypothesis&#x27;s search failed" in page  # coloured, in the legend


def _profile_on_a_runner(hooked: bool) -> str:
    code = (
        "import os, sys\n"
        "from killmap.engine.inrun.foreign_plugins import import_hypothesis_as_on_any_machine\n"
        f"if {hooked}:\n"
        "    import_hypothesis_as_on_any_machine()\n"
        "assert 'hypothesis' not in sys.modules  # hooked, not imported: most projects never use it\n"
        "import hypothesis\n"
        "print(hypothesis.settings._current_profile, os.environ['CI'])\n"
    )
    env = dict(gate_env(Path.cwd()), CI="true")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_on_a_ci_runner_hypothesis_keeps_its_default_profile_only_when_the_gate_hooks_its_import():
    if _profile_on_a_runner(hooked=False) != "ci true":
        pytest.skip("this Hypothesis does not load a ci profile by itself")
    assert _profile_on_a_runner(hooked=True) == "default true"  # and the tests still see CI


def test_a_randomized_kills_test_no_seed_finds_is_vacuous_naming_every_seed_tried(tmp_path):
    # A property that draws its inputs but never reaches the difference: every seed misses it.
    project = one_mutation_project(
        tmp_path / "blind",
        "def one(x=0):\n    return 1\n",
        "from hypothesis import given\nfrom hypothesis import strategies as st\n\nfrom pkg import one\n\n\n"
        "@given(st.integers())\ndef test_one(x):\n    assert one(x) in (1, 2)\n",
        value="2",
    )
    first, second = (run_gate(project, "run", "--no-cache", "--jobs", "1", "--baseline-runs", "1") for _ in range(2))
    entry = first.mutation("one-mutated")
    assert entry["verdict"] == "vacuous"
    seeds = ", ".join(map(str, further_seeds(DEFAULT_SEED)))
    assert len(further_seeds(DEFAULT_SEED)) == FURTHER_SEEDS
    assert entry["detail"].endswith(
        f"tests/test_pkg.py::test_one is randomized (its draws depend on the seed): green under the run's seed "
        f"{DEFAULT_SEED} and under seeds {seeds} too"
    )
    assert second.mutation("one-mutated")["detail"] == entry["detail"]


def test_a_vacuous_kills_test_that_draws_nothing_is_tried_under_one_seed_only(tmp_path):
    project = one_mutation_project(
        tmp_path / "plain",
        "def one(x=0):\n    return 1\n",
        "from pkg import one\n\n\ndef test_one():\n    assert one() in (1, 2)\n",
        value="2",
    )
    entry = run_gate(project, "run", "--no-cache", "--jobs", "1", "--baseline-runs", "1").mutation("one-mutated")
    assert entry["verdict"] == "vacuous"
    assert "seed" not in entry["detail"] and "randomized" not in entry["detail"]


def test_a_suite_drawing_from_unseeded_random_gives_one_verdict_without_pytest_randomly(tmp_path):
    # cachetools' RRCache evicts by random.choice, and no plugin seeds `random`: the same
    # mutant was vacuous in three gates, held in one and flaky in two, and the cache kept
    # the first. The gate reseeds `random` before each test from its seed, as randomly would.
    project = copy_fixture("randomly", tmp_path)
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('addopts = "-p randomly"', 'addopts = "-p no:randomly"'))
    _copies(project, "picker.toml", "largest-is-last", 3)
    seen = {(m["verdict"], m["detail"]) for jobs in "12" for m in _gate(project, "--jobs", jobs).report["mutations"]}
    assert len(seen) == 1, seen
    verdict, detail = seen.pop()
    # The draws come from the seed, so a green kills test is tried under further seeds.
    assert verdict == "held" and _FOUND_BY_A_FURTHER_SEED in detail or verdict == "vacuous" and "seed" in detail, detail


def _drawing_project(root: Path, tests: str, kills: tuple[str, ...]) -> Path:
    """`one` returns 2 under the mutant, and every kills test accepts 1 or 2: vacuous on any draw."""
    return one_mutation_project(root, "def one(x=0):\n    return 1\n", tests, value="2", kills=kills)


_SEEDS_ITSELF = "def test_one():\n    random.seed(0)\n    assert one(random.randrange(10)) in (1, 2)\n"


def test_a_kills_test_that_seeds_random_itself_is_not_randomized_and_costs_one_further_seed_at_most(tmp_path):
    """A test that calls `random.seed(0)` before it draws draws the same under every seed
    (prettytable's `test_style`): its vacuous verdict does not call it randomized, and no seed
    after the first further one is tried."""
    project = _drawing_project(
        tmp_path / "own-seed",
        f"import random\n\nfrom pkg import one\n\n\n{_SEEDS_ITSELF}",
        ("tests/test_pkg.py::test_one",),
    )
    entry = run_gate(project, "run", "--no-cache", "--jobs", "1", "--baseline-runs", "1").mutation("one-mutated")
    assert entry["verdict"] == "vacuous", entry["detail"]
    assert "randomized" not in entry["detail"], entry["detail"]
    assert len(entry.get("seeds", {}).get("tried", [])) <= 1, entry.get("seeds")


def test_beside_a_test_that_seeds_random_itself_one_that_draws_from_the_seed_is_still_tried_under_every_seed(tmp_path):
    """Only the tests that left `random` as they did under the run's seed are set aside: one
    whose draws came from the seed keeps the mutant tried under every further seed, and is the
    one called randomized."""
    drawing = "def test_two():\n    assert one(random.randrange(10)) in (1, 2)\n"
    kills = ("tests/test_pkg.py::test_one", "tests/test_pkg.py::test_two")
    project = _drawing_project(
        tmp_path / "mixed", f"import random\n\nfrom pkg import one\n\n\n{_SEEDS_ITSELF}\n\n{drawing}", kills
    )
    entry = run_gate(project, "run", "--no-cache", "--jobs", "1", "--baseline-runs", "1").mutation("one-mutated")
    assert entry["verdict"] == "vacuous", entry["detail"]
    seeds = further_seeds(DEFAULT_SEED)
    assert entry["seeds"] == {
        "run": DEFAULT_SEED,
        "tried": list(seeds),
        "found_by": None,
        "self_seeded": ["tests/test_pkg.py::test_one"],
    }
    assert "tests/test_pkg.py::test_two is randomized (its draws depend on the seed)" in entry["detail"]
    assert "tests/test_pkg.py::test_one seeds `random` itself: it left `random` in the same state" in entry["detail"]
