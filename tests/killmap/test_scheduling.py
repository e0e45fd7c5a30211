"""The mutants' runs are scheduled dearest first, and the schedule never shows in the verdicts.

A long run started last keeps one worker busy while the others sit idle; starting the runs
whose selected tests took longest in the baseline first is the classic rule for sharing
jobs among workers. The order must not leak: verdicts are listed in catalog order.
"""

from __future__ import annotations

from pathlib import Path

from gatekit import write_project

from killmap.catalog.plan import LabOptions
from killmap.verdict.lab import run_lab

FILES = {
    "pyproject.toml": '[project]\nname = "lptpkg"\nversion = "0"\n',
    "src/lptpkg/__init__.py": "",
    "src/lptpkg/core.py": "import time\n\n\ndef quick(x):\n    return x + 1\n\n\n"
    "def slow(x):\n    time.sleep(0.4)\n    return x * 2\n",
    "tests/test_core.py": "from lptpkg.core import quick, slow\n\n\ndef test_quick():\n    assert quick(1) == 2\n\n\n"
    "def test_slow():\n    assert slow(2) == 4\n",
    "mutations/lpt.toml": '[gate]\npaths = ["src"]\n\n'
    '[[mutation]]\nname = "quick-broken"\ntarget = "src/lptpkg/core.py::quick"\n'
    'op = "replace"\nold = "x + 1"\nnew = "x + 2"\nkills = ["tests/test_core.py::test_quick"]\n\n'
    '[[mutation]]\nname = "slow-broken"\ntarget = "src/lptpkg/core.py::slow"\n'
    'op = "replace"\nold = "x * 2"\nnew = "x * 3"\nkills = ["tests/test_core.py::test_slow"]\n',
}


def test_the_mutant_whose_tests_took_longest_runs_first_and_verdicts_keep_catalog_order(tmp_path, monkeypatch):
    root = write_project(tmp_path / "lpt", FILES)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    finished: list[str] = []

    def progress(kind, data):
        if kind == "done":
            finished.append(data.name)

    # One job: the runs go one after the other, so the order they finish in is the schedule.
    result = run_lab(Path(root), LabOptions(jobs=1, use_cache=False), progress)
    assert finished == ["slow-broken", "quick-broken"]
    assert [(v.name, v.verdict) for v in result.verdicts] == [("quick-broken", "held"), ("slow-broken", "held")]
