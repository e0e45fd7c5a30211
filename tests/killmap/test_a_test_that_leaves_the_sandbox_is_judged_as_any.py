"""A test may change the current directory and never come back, to a folder that is gone by
the time the run ends (python-dotenv's tests chdir into tmp_path; pytest removes old ones).
The run reads the sandbox as it started, never the current directory: the origin proof read
`os.getcwd()` after the tests and every verdict of such a suite was `inconclusive` ("the
environment failed: re-run it"), on every run; a red's place was a sandbox path."""

from __future__ import annotations

import pytest
from gatekit import pkg_project, replace_catalog, run_gate

TESTS = (
    "import importlib\nimport os\nimport shutil\nimport tempfile\n\nfrom pkg import double\n\n\n"
    "def test_double_leaves_for_a_folder_it_removes():\n"
    "    gone = tempfile.mkdtemp()\n"
    "    os.chdir(gone)\n"
    "    shutil.rmtree(gone)\n"
    "    importlib.import_module('xml.dom.minidom')  # an import the run makes: the proof looks again\n"
    "    assert double(2) == 4\n"
)
CATALOG = replace_catalog(
    "adds-instead", "double", "x * 2", "x + 3", "tests/test_leave.py::test_double_leaves_for_a_folder_it_removes"
)


@pytest.mark.parametrize("path", [[], ["--no-swap"]], ids=["fork", "fresh session"])
def test_a_test_that_leaves_for_a_removed_folder_gets_its_verdict(tmp_path, path):
    project = pkg_project(tmp_path / "p", "def double(x):\n    return x * 2\n", {"tests/test_leave.py": TESTS}, CATALOG)
    done = run_gate(project, "run", "--no-cache", "--jobs", "1", *path)
    assert done.code == 0, done.stdout + done.stderr
    entry = done.mutation("adds-instead")
    assert entry["verdict"] == "held", entry["detail"]
    (red,) = entry["red"]
    assert red["id"] == "tests/test_leave.py::test_double_leaves_for_a_folder_it_removes"
    assert red["raised_at"].startswith("tests/test_leave.py:"), red  # the project's path, not the sandbox's
