"""The tests run under the gate's hash seed: a set's order, and every id or outcome built on
it, is the same in every gate run (isodate parametrizes over a set, and a kills id that held
in one run matched nothing in the next). `--seed random` leaves the seed to chance, and a
PYTHONHASHSEED the user exported is theirs."""

from __future__ import annotations

import os
import subprocess
import sys

from gatekit import gate_env, one_mutation_project, run_gate

from killmap.catalog.plan import DEFAULT_SEED

WORDS = '{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"}'


def _order_under(seed: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", f"print(list({WORDS}))"],
        env={**os.environ, "PYTHONHASHSEED": seed},
        capture_output=True,
        text=True,
        check=True,
    )
    return eval(done.stdout)  # noqa: S307 - a list of words this test printed


def test_a_test_that_depends_on_a_set_s_order_sees_the_order_of_the_gate_s_seed(tmp_path):
    expected = _order_under(str(DEFAULT_SEED))
    assert expected != _order_under("1")  # the order does depend on the seed
    tests = f"from pkg import one\n\n\ndef test_one():\n    assert one() == 1 and list({WORDS}) == {expected!r}\n"
    project = one_mutation_project(tmp_path / "p", "def one():\n    return 1\n", tests)
    assert run_gate(project, "run", "--no-cache").verdicts() == {"one-mutated": "held"}
    # The user's own seed is kept: under it the set has another order, and the baseline is red.
    theirs = run_gate(project, "run", "--no-cache", env=gate_env(project, {"PYTHONHASHSEED": "1"}))
    assert theirs.code == 2 and "baseline" in theirs.stderr and "test_one" in theirs.stderr, theirs.stderr


def test_a_verdict_judged_under_an_exported_hash_seed_is_reused_only_under_it(tmp_path):
    # jsonpatch: a verdict judged under PYTHONHASHSEED=0 was reused, cached, by a run under
    # the gate's own seed, where the fresh verdict differs (tox exports a new seed every run).
    tests = "from pkg import one\n\n\ndef test_one():\n    assert one() == 1\n"
    project = one_mutation_project(tmp_path / "p", "def one():\n    return 1\n", tests)
    exported = gate_env(project, {"PYTHONHASHSEED": "3"})
    first = run_gate(project, "run", env=exported)
    assert "PYTHONHASHSEED=3 from the environment" in first.stdout, first.stdout
    assert [m["cached"] for m in run_gate(project, "run", env=exported).report["mutations"]] == [True]
    ours = run_gate(project, "run")
    assert [m["cached"] for m in ours.report["mutations"]] == [False]
    assert "PYTHONHASHSEED" not in ours.stdout
