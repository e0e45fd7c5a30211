"""A mutant that makes a conftest fail to import is broken, not inconclusive.

Seen on attrs 24.2: its root conftest imports `attr`, and `attr`'s own import runs the
mutated `attrib` (its validators are attrs classes). With `attrib` returning None, pytest
printed "ImportError while loading conftest" and stopped with a usage error, before any
collection report. The gate read "1333 selected tests did not run" and said
`inconclusive` ("re-run it"), which no re-run changes. The baseline loaded the same conftest,
so the mutant broke it: the mutant cannot run as the suite needs it to.
"""

from __future__ import annotations

from gatekit import run_gate, write_project


def test_a_mutant_that_breaks_the_import_a_conftest_makes_is_broken_and_says_where(tmp_path):
    project = write_project(
        tmp_path / "proj",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/core.py": "LIMIT = 2\n",
            # The mutated module imports fine; the package's own import then fails on its value.
            "pkg/__init__.py": "from pkg.core import LIMIT\n\nTHRESHOLD = LIMIT + 1\n",
            "tests/conftest.py": "import pkg  # noqa: F401 - the suite's fixtures need the package loaded\n",
            "tests/test_pkg.py": "from pkg import THRESHOLD\n\n\ndef test_threshold():\n    assert THRESHOLD == 3\n",
            "mutations/pkg.toml": (
                '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\n'
                'name = "limit-becomes-text"\ntarget = "pkg/core.py::LIMIT"\nop = "replace"\n'
                "old = '2'\nnew = '\"2\"'\nkills = [\"tests/test_pkg.py::test_threshold\"]\n"
            ),
        },
    )
    gate = run_gate(project, "run", "--no-cache")
    entry = gate.mutation("limit-becomes-text")
    assert entry["verdict"] == "broken", entry["detail"]
    assert entry["detail"].startswith("tests/conftest.py does not import under the mutant: TypeError"), entry["detail"]
    # And where the error came from, which the conftest's name alone hid (natsort's module-level
    # `natsort_key = natsort_keygen()` ran the mutated code).
    assert entry["detail"].endswith("(raised while pkg/__init__.py:3 ran at import)"), entry["detail"]
    assert gate.code == 1
