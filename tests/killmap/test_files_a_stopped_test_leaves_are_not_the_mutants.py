"""A run stopped at its limit stopped a test before its teardown: the files that test writes
and removes on every run stay in the sandbox. They are repaired, said as the stopped test's,
not as the mutant's writing, and the verdict is cached as any other (rsa: its key files, left
at each hang, were blamed on the mutant, and its 120 s verdict was run again every time)."""

from __future__ import annotations

from gatekit import run_gate, write_project

FILES = {
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
    "pkg/__init__.py": "def countdown(n):\n    while n > 0:\n        n -= 1\n    return n\n",
    "tests/test_pkg.py": (
        "from pathlib import Path\n\nfrom pkg import countdown\n\n\n"
        "def test_countdown():\n    scratch = Path('scratch.txt')\n    scratch.write_text('x')\n"
        "    try:\n        assert countdown(3) == 0\n    finally:\n        scratch.unlink()\n"
    ),
    "mutations/pkg.toml": (
        '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "never-counts-down"\n'
        'target = "pkg/__init__.py::countdown"\nop = "replace"\nold = "n -= 1"\nnew = "n -= 0"\n'
        'timeout = 1\nrequire = "timeout"\nkills = ["tests/test_pkg.py::test_countdown"]\n'
    ),
}


def test_a_hang_s_leftover_files_are_said_as_the_stopped_test_s_and_its_verdict_is_cached(tmp_path):
    project = write_project(tmp_path / "p", FILES)
    first = run_gate(project, "run", "--jobs", "1")
    entry = first.mutation("never-counts-down")
    assert entry["verdict"] == "held", entry["detail"]
    warnings = " ".join(entry.get("warnings", ()))
    assert "the test its limit stopped left 1 file in its sandbox" in warnings, warnings
    assert "the mutant wrote to" not in warnings
    again = run_gate(project, "run", "--jobs", "1")
    assert again.mutation("never-counts-down")["cached"] is True
