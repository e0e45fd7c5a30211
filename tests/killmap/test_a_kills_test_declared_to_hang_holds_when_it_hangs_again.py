"""`require = "timeout"` declares that the defect makes its kills test hang (a fix of an
endless loop, reverted): the entry holds when the run hangs in that test, every other red is a
kills test that hung too, and a second run hangs there again. A hang ends its run, so a kills
test after it is never measured: such an entry is a timeout, told to name the test that hangs.
Before, a hang was `timeout` (exit 1) whatever the entry said, and a catalog could only drop it."""

from __future__ import annotations

import json

from gatekit import run_gate, write_project

TESTS = "".join(f"from pkg import one\n\n\ndef test_{n}():\n    assert one() == 1\n\n\n" for n in ("a", "b", "c"))


def entry(name: str, new: str, kills: list[str]) -> str:
    return (
        f'\n[[mutation]]\nname = "{name}"\ntarget = "pkg/__init__.py::one"\nop = "replace"\nold = "return 1"\n'
        f'new = "{new}"\nkills = {json.dumps(kills)}\nrequire = "timeout"\ntimeout = 3\n'
    )


LOOP = "while True:\\n        pass"


def test_a_kills_test_that_hangs_twice_holds_and_one_that_asserts_or_is_never_reached_does_not(tmp_path):
    first = "tests/test_pkg.py::test_a"
    catalog = (
        '[gate]\ntests = ["tests"]\npaths = ["."]\n'
        + entry("hangs-in-a", LOOP, [first])
        + entry("kills-a-test-after-the-hang", LOOP, [first, "tests/test_pkg.py::test_c"])
        + entry("kills-a-test-that-never-hangs", LOOP, ["tests/test_pkg.py::test_b"])
        + entry("fails-without-hanging", "return 2", [first, "tests/test_pkg.py::test_b", "tests/test_pkg.py::test_c"])
    )
    project = write_project(
        tmp_path / "proj",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": "def one():\n    return 1\n",
            "tests/test_pkg.py": TESTS,
            "mutations/pkg.toml": catalog,
        },
    )
    run = run_gate(project, "run", "--no-cache", "--jobs", "2")
    held = run.mutation("hangs-in-a")
    assert held["verdict"] == "held", run.stdout + run.stderr
    assert f"{first} hung, as require = 'timeout' declares" in held["detail"]
    assert held["detail"].endswith("it hung there again on a second run"), held["detail"]

    after = run.mutation("kills-a-test-after-the-hang")
    assert after["verdict"] == "timeout", after
    assert "tests/test_pkg.py::test_c in kills never ran after it" in after["detail"]
    assert f"name in kills the test that hangs, '{first}', alone" in after["detail"]

    elsewhere = run.mutation("kills-a-test-that-never-hangs")
    assert elsewhere["verdict"] == "timeout", elsewhere
    assert f"require = 'timeout' expects a kills test to hang, and {first} is not one" in elsewhere["detail"]

    asserted = run.mutation("fails-without-hanging")
    assert asserted["verdict"] == "wrong-cause", asserted
    assert "went red without hanging, as require = 'timeout' asks" in asserted["detail"]
    assert run.code == 1
    alone = run_gate(project, "run", "--no-cache", "--only", "hangs-in-a")
    assert alone.code == 0, alone.stdout + alone.stderr


def test_a_hang_the_second_run_does_not_repeat_is_flaky(tmp_path):
    # The mutant hangs once: its first run leaves a mark in the runs' temporary folder before it
    # loops (a write outside it is refused), and a run that finds the mark returns 2 instead.
    mark = "os.path.join(tempfile.gettempdir(), 'killmap-test-hung-once')"
    once = f"import os, tempfile\\n    if not os.path.exists({mark}):\\n        open({mark}, 'w').close()\\n"
    once += "        while True:\\n            pass\\n    return 2"
    project = write_project(
        tmp_path / "proj",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": "def one():\n    return 1\n",
            "tests/test_pkg.py": TESTS,
            "mutations/pkg.toml": '[gate]\ntests = ["tests"]\npaths = ["."]\n'
            + entry("hangs-once", once, ["tests/test_pkg.py::test_a"]),
        },
    )
    run = run_gate(project, "run", "--no-cache", "--jobs", "1")
    verdict = run.mutation("hangs-once")
    assert verdict["verdict"] == "flaky", run.stdout + run.stderr
    assert "the first hung in tests/test_pkg.py::test_a; the second was overreach" in verdict["detail"], verdict
