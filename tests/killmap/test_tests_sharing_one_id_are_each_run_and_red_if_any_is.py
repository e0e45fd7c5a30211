"""A custom collector may give several items one id (docopt-ng: every use case of one example
is `testcases(9)`). A run of the id runs each of them, as pytest's does, and the id is red if
any of them is, as pytest's summary says: a fork ran only the last item of an id, and the
recorder kept the last outcome, so a mutant that failed one case read `vacuous` and a sweep
called two killed mutants survivors."""

from __future__ import annotations

import pytest
from gatekit import pkg_project, replace_catalog, run_gate

CONFTEST = """\
import pytest

from pkg import double


def pytest_collect_file(parent, file_path):
    if file_path.suffix == ".cases":
        return CaseFile.from_parent(parent, path=file_path)


class CaseFile(pytest.File):
    def collect(self):
        for line in self.path.read_text().splitlines():
            x, want = line.split()
            yield CaseItem.from_parent(self, name="double", x=int(x), want=int(want))


class CaseItem(pytest.Item):
    def __init__(self, *, x, want, **kwargs):
        super().__init__(**kwargs)
        self.x, self.want = x, want

    def runtest(self):
        assert double(self.x) == self.want

    def reportinfo(self):
        return self.path, 0, f"double({self.x})"
"""
CATALOG = replace_catalog(
    "zero-is-five", "double", "return x * 2", "return x * 2 if x else 5", "tests/double.cases::double"
)


@pytest.mark.parametrize("path", [[], ["--no-swap"]], ids=["fork", "fresh session"])
def test_an_id_two_cases_share_is_red_when_the_first_case_fails(tmp_path, path):
    project = pkg_project(
        tmp_path / "p",
        "def double(x):\n    return x * 2\n",
        {"tests/conftest.py": CONFTEST, "tests/double.cases": "0 0\n2 4\n"},  # the failing case first
        CATALOG,
    )
    done = run_gate(project, "run", "--no-cache", "--jobs", "1", *path)
    entry = done.mutation("zero-is-five")
    assert entry["verdict"] == "held", entry["detail"]
    assert [r["id"] for r in entry["red"]] == ["tests/double.cases::double"]
