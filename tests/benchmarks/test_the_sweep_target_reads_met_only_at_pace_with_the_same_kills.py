"""Issue 58's sweep target, as the sweep benchmark prints it: at least three times `mutmut run`'s
pace, with the same kills. A status the tools disagree on counts against it unless the catalog
names the change, plain pytest sided with killmap (on the mutant, or, for an unreached one,
under coverage on the original), or both tools detect the mutant (killed against timeout)."""

from __future__ import annotations

import sys

import pytest
from benchkit import BENCH, bench_module


@pytest.fixture(scope="module")
def sweep_bench():
    sys.path.insert(0, str(BENCH))  # it imports its sibling sdists.py, as a script would
    try:
        yield bench_module("sweep_vs_mutmut")
    finally:
        sys.path.remove(str(BENCH))


def _result(ratio: float, *disagreements: tuple[str, str]) -> dict:
    return {
        "ratio_mutmut_over_killmap": ratio,
        "disagreements": [
            {"id": f"m{i}", "killmap": status, "why": why} for i, (status, why) in enumerate(disagreements)
        ],
    }


def test_three_times_the_pace_with_no_disagreement_is_met(sweep_bench):
    assert sweep_bench.target_met(_result(3.09)) == (True, "")


def test_under_three_times_the_pace_is_not_met(sweep_bench):
    met, short = sweep_bench.target_met(_result(2.51))
    assert not met and "2.51x, under 3x" in short


def test_a_disagreement_the_catalog_names_or_plain_pytest_settles_for_killmap_keeps_it_met(sweep_bench):
    settled = ("survived", "plain pytest on the mutant: 806 passed in 0.56s; killmap agrees")
    named = ("named", "named: the catalog's 'block-boundary' makes this change; `killmap run` judges it")
    unreached = (
        "unreached",
        "selection by statement: no test executes the changed statement (mutmut runs every test that calls "
        "the function); plain pytest under coverage runs none of lines [202]: killmap agrees",
    )
    assert sweep_bench.target_met(_result(3.33, settled, named, unreached)) == (True, "")


def test_an_unreached_mutant_plain_coverage_does_not_vouch_for_is_not_the_same_kills(sweep_bench):
    unvouched = (
        "unreached",
        "selection by statement: no test executes the changed statement (mutmut runs every test that calls "
        "the function)",
    )
    met, short = sweep_bench.target_met(_result(3.5, unvouched))
    assert not met and "1 disagreement(s) not settled in killmap's favour" in short


def test_a_disagreement_settled_for_mutmut_or_unexplained_is_not_the_same_kills(sweep_bench):
    for why in ("plain pytest on the mutant: 1 failed; mutmut agrees", "unexplained"):
        met, short = sweep_bench.target_met(_result(3.0, ("survived", why)))
        assert not met and "1 disagreement(s) not settled in killmap's favour" in short


def test_killed_against_timeout_is_the_same_kill_and_timeout_against_survived_is_not(sweep_bench):
    entry = {"status": "timeout", "detail": "", "named": None}
    both = sweep_bench._why(entry, "killed")
    assert both == sweep_bench._why({**entry, "status": "killed"}, "timeout")
    assert sweep_bench.target_met(_result(3.2, ("timeout", both))) == (True, "")
    alone = sweep_bench._why(entry, "survived")
    met, short = sweep_bench.target_met(_result(3.2, ("timeout", alone)))
    assert not met and "1 disagreement(s) not settled in killmap's favour" in short


def test_the_docs_table_says_whether_each_subject_met_it(sweep_bench):
    row = {
        "subject": "packaging 24.2 utils.py",
        "targets": ["src/packaging/utils.py"],
        "tests": ["tests/test_utils.py"],
        "repeat": 3,
        "wall": {"killmap": [1.8, 1.8, 1.7], "mutmut": [4.4, 4.2, 4.4]},
        "load1": {"killmap": [0.2], "mutmut": [0.3]},
        "median_wall": {"killmap": 1.8, "mutmut": 4.4},
        "median_cpu": {"killmap": 3.3, "mutmut": 7.7},
        "mutants": {"killmap": 107, "mutmut": 107, "both": 107},
        "survivors": {"killmap": 14, "mutmut": 14},
        **_result(3.44),
    }
    slow = {**row, "subject": "slow", **_result(1.5)}
    table = sweep_bench.markdown_table({"when": "now", "python": "3.11", "cpus": 2, "jobs": 2, "results": [row, slow]})
    assert "| 3.44x: yes |" in table
    assert "| 1.5x: no (1.5x, under 3x) |" in table
    assert "| 3.3 s / 7.7 s (2.33x) |" in table  # the CPU's ratio, the one a busy machine moves least


def test_an_unreached_mutant_is_settled_for_killmap_only_where_plain_pytest_runs_none_of_its_lines(
    sweep_bench, tmp_path, monkeypatch
):
    """The sweep fixture's `untouched` is called by no test; `within` is: plain pytest, traced by
    coverage in a scratch copy, vouches for the first and not for the second."""
    import shutil

    root = tmp_path / "subject"
    shutil.copytree(BENCH.parent / "tests" / "fixtures" / "projects" / "sweep", root)
    monkeypatch.setattr(sweep_bench, "PYTHON", sys.executable)
    monkeypatch.setattr(sweep_bench, "WORK", tmp_path / "work")
    source = (root / "src" / "sweeppkg" / "limits.py").read_text(encoding="utf-8").splitlines()
    never, run = source.index("    return x * 2") + 1, source.index("    return value < limit") + 1
    why = "selection by statement: no test executes the changed statement"
    disagreements = [
        {"killmap": "unreached", "file": "src/sweeppkg/limits.py", "lines": [line], "why": why} for line in (never, run)
    ]
    subject = {"root": root, "mutmut": {"pytest_add_cli_args_test_selection": ["tests"]}}
    sweep_bench._settle_unreached(subject, disagreements)
    assert disagreements[0]["why"].endswith(f"runs none of lines [{never}]: killmap agrees")
    assert disagreements[1]["why"] == why
