"""killmap prove TEST ...: which named defects does this test catch, and which does it miss?"""

from __future__ import annotations

import json

import pytest
from reviewkit import fixture_repo, review, untouched

LESS = "tests/test_fees.py::test_member_pays_less"
RUNS = "tests/test_fees.py::test_fee_runs"
LABEL = "tests/test_fees.py::test_label"
EXACT = "tests/test_fees.py::test_exact_member_fee"


@pytest.fixture(scope="module")
def provable(tmp_path_factory):
    project = fixture_repo("provable", tmp_path_factory.mktemp("prove"))
    before = untouched(project)
    run = review(project, "prove", LESS, RUNS, LABEL, "--mutation", "member-discount-dropped")
    return project, before, run


def test_prove_names_the_missed_defect(provable):
    run = provable[2]
    assert f"{LESS} catches 1 of the 2 named defects in the code it runs; it misses `discount-wrong`." in run.stdout, (
        run.stdout + run.stderr
    )
    assert (
        "| `member-discount-dropped` | `src/provepkg/fees.py::fee` | ✅ caught | assertion | "
        "tests/test_fees.py:6 |" in run.stdout
    )
    assert "| `discount-wrong` | `src/provepkg/fees.py::fee` | ❌ missed |" in run.stdout


def test_a_test_that_catches_none_exits_1(provable):
    run = provable[2]
    assert f"{RUNS} catches none of the 2 named defects in the code it runs" in run.stdout
    assert run.code == 1


def test_only_defects_in_the_code_the_test_runs_count_and_a_named_one_is_run_anyway(provable):
    run = provable[2]
    label = run.stdout[run.stdout.index(f"{LABEL} catches") :]
    assert label.startswith(f"{LABEL} catches the 1 named defect in the code it runs.")
    assert "| `member-discount-dropped` | `src/provepkg/fees.py::fee` | ⚠️ not reached |" in label


def test_invariants_are_not_defects(provable):
    assert "member-test-spelled-out" not in provable[2].stdout


def test_the_working_tree_and_index_are_byte_identical(provable):
    project, before, _ = provable
    assert untouched(project) == before


def test_a_test_that_catches_every_defect_exits_0(provable):
    run = review(provable[0], "prove", EXACT)
    assert run.code == 0, run.stdout + run.stderr
    assert f"{EXACT} catches all 2 named defects in the code it runs." in run.stdout


@pytest.mark.parametrize(
    "args,field,words",
    [
        ((LESS, "--mutation", "no-such-mutation"), "--mutation", "names no mutation"),
        ((LESS, "--mutation", "member-test-spelled-out"), "--mutation", "is an invariant"),
        (("tests/test_fees.py::test_nope",), "TEST", "matches no collected test"),
    ],
    ids=["unknown-mutation", "invariant", "unknown-test"],
)
def test_bad_input_is_one_line_and_exit_2(provable, args, field, words):
    run = review(provable[0], "prove", *args)
    assert run.code == 2, run.stdout + run.stderr
    assert f"{'option' if field.startswith('--') else 'field'} {field!r}" in run.stderr and words in run.stderr
    # Checked before anything is said (an unknown test, against the baseline it needs): no
    # baseline line or verdict printed first, as if the proof had begun.
    assert run.stdout.strip() == "", run.stdout


def test_prove_with_report_dir_writes_the_verdicts_and_its_proof_there(provable, tmp_path):
    folder = tmp_path / "prove-reports"
    run = review(provable[0], "prove", EXACT, "--report-dir", str(folder))
    assert run.code == 0, run.stdout + run.stderr
    document = json.loads((folder / "killmap.json").read_text())
    # Every defect that is not an invariant, judged against its contract with only the given
    # test run: the kills test discount-wrong names is the one given.
    verdicts = {m["name"]: m["verdict"] for m in document["mutations"]}
    assert verdicts == {
        "member-discount-dropped": "vacuous",
        "discount-wrong": "held",
        "label-unit-dropped": "unevidenced",
    }
    [proved] = document["prove"]
    assert proved["test"] == EXACT and proved["sentence"].startswith(f"{EXACT} catches all 2 named")
    caught = {f["mutation"] for f in proved["findings"] if f["status"] == "caught"}
    assert caught == {"member-discount-dropped", "discount-wrong"}
    assert f"reports: {folder / 'killmap.json'}" in run.stdout


def test_over_two_gate_settings_each_baseline_line_names_its_tests(tmp_path):
    project = fixture_repo("provable", tmp_path)
    first = next((project / "mutations").glob("*.toml"))
    text = first.read_text()
    entry = text[text.index("[[mutation]]") :].split("\n\n[[mutation]]")[0]
    (project / "mutations" / "narrow.toml").write_text(
        '[gate]\ntests = ["tests/test_fees.py"]\npaths = ["src"]\n\n'
        + entry.replace('name = "', 'name = "narrow-', 1)
        + "\n"
    )
    run = review(project, "prove", LESS)
    lines = [line for line in run.stdout.splitlines() if line.startswith("baseline")]
    assert sorted(line.split(":", 1)[0] for line in lines) == ["baseline of tests", "baseline of tests/test_fees.py"], (
        run.stdout + run.stderr
    )


def test_a_defect_in_code_that_runs_at_import_is_not_measured_not_missed(tmp_path):
    # natsort and marshmallow: code run at import (a module-level table) runs before every test,
    # and prove said a test that never uses it "misses" the defect.
    import subprocess

    from gatekit import run_gate, write_project

    project = write_project(
        tmp_path / "p",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": (
                "def build():\n    return {'a': 1}\n\n\nTABLE = build()\n\n\ndef double(x):\n    return x * 2\n"
            ),
            "tests/test_pkg.py": (
                "from pkg import TABLE, double\n\n\ndef test_table():\n    assert TABLE == {'a': 1}\n\n\n"
                "def test_double():\n    assert double(2) == 4\n"
            ),
            "mutations/pkg.toml": (
                '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "table-empty"\n'
                'target = "pkg/__init__.py::build"\nop = "constant-return"\nvalue = "{}"\n'
                'kills = ["tests/test_pkg.py::test_table"]\n'
            ),
        },
    )
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    done = run_gate(project, "prove", "tests/test_pkg.py::test_double")
    assert "misses" not in done.stdout, done.stdout
    assert "| `table-empty` | `pkg/__init__.py::build` | ⚠️ not measured |" in done.stdout, done.stdout
    assert ": reach cannot say this test uses it" in done.stdout


def test_a_test_that_hangs_under_the_defect_caught_it(tmp_path):
    # A defect under which the test never ends was "not measured": a reviewer reverting the fix
    # sees the test hang, which every CI's limit turns red.
    import subprocess

    from gatekit import run_gate, write_project

    project = write_project(
        tmp_path / "p",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": (
                "def step(n):\n    return n - 1\n\n\n"
                "def countdown(n):\n    while n > 0:\n        n = step(n)\n    return n\n"
            ),
            "tests/test_pkg.py": (
                "from pkg import countdown, step\n\n\ndef test_countdown():\n    assert countdown(3) == 0\n\n\n"
                "def test_step():\n    assert step(2) < 2\n"
            ),
            "mutations/pkg.toml": (
                '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "step-stalls"\n'
                'target = "pkg/__init__.py::step"\nop = "constant-return"\nvalue = "1"\n'
                'kills = ["tests/test_pkg.py::test_countdown"]\n'
            ),
        },
    )
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    done = run_gate(project, "prove", "tests/test_pkg.py::test_countdown", "tests/test_pkg.py::test_step")
    countdown, _, step = done.stdout.partition("tests/test_pkg.py::test_step ")
    assert "tests/test_pkg.py::test_countdown catches the 1 named defect" in countdown, done.stdout + done.stderr
    assert "| `step-stalls` | `pkg/__init__.py::step` | ✅ caught | timeout | still running after" in countdown
    # The other test given was left waiting behind the hang: it proved nothing either way.
    assert "| `step-stalls` | `pkg/__init__.py::step` | ⚠️ not measured |" in step, done.stdout
