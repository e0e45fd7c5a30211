"""A `require = "timeout"` entry that holds was told as a red that never came (six, jsonschema,
prettytable): "0 / 1" in the red / expected column, no red, and "the tests named in kills went
red by a real failure". A hang is no red: the column counts the kills test that hung apart, and
the explanation says it hung as declared. The verdict is untouched: `held`, with no red."""

from __future__ import annotations

from gatekit import run_gate, write_project

from killmap.report.cells import contract_cell

KILLS = "tests/test_pkg.py::test_a"
TESTS = "from pkg import one\n\n\ndef test_a():\n    assert one() == 1\n"
CATALOG = (
    '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "hangs-in-a"\n'
    'target = "pkg/__init__.py::one"\nop = "replace"\nold = "return 1"\n'
    f'new = "while True:\\n        pass"\nkills = ["{KILLS}"]\nrequire = "timeout"\ntimeout = 3\n'
)


def test_a_held_hang_counts_its_kills_test_as_hung_in_every_table_and_says_so(tmp_path):
    project = write_project(
        tmp_path / "proj",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": "def one():\n    return 1\n",
            "tests/test_pkg.py": TESTS,
            "mutations/pkg.toml": CATALOG,
        },
    )
    run = run_gate(project, "run", "--no-cache")
    entry = run.mutation("hangs-in-a")
    assert (entry["verdict"], entry["red"], entry["hung"]) == ("held", [], KILLS), run.stdout + run.stderr
    assert entry["explanation"].startswith("the kills test hung, as require = 'timeout' declares")
    assert "1 hung / 1" in run.stdout and "0 / 1" not in run.stdout, run.stdout
    assert "| `hangs-in-a` | ✅ held | 1 hung / 1 |" in (run.report_dir / "killmap.md").read_text()


def test_kills_tests_red_before_the_hang_are_counted_beside_it():
    cell = contract_cell(ran=True, red=1, expected=2, invariant=False, reached_by=1, held=True, hung=1)
    assert cell == "1 red + 1 hung / 2"
