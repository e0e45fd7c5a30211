"""A mutant that compiles but makes the tests' imports fail says the one true cause, once.

Seen on two real projects (issue 36, item 1): a conftest that no longer imported was told
its `ModuleNotFoundError` and then the generic "the mutant does not compile cleanly", which
was false; a test module that no longer imported said only "ImportError while importing
test module", cut before the line that names the exception.
"""

from __future__ import annotations

from gatekit import run_gate, write_project

# The package loads a submodule whose name the mutant changes: `pkg._paths` does not exist.
_PACKAGE = "import importlib\n\nfrom pkg.core import PART\n\nimportlib.import_module('pkg.' + PART)\n"
_CATALOG = (
    '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\n'
    'name = "part-renamed"\ntarget = "pkg/core.py::PART"\nop = "replace"\n'
    'old = "\'paths\'"\nnew = "\'_paths\'"\nkills = ["tests/test_pkg.py::test_part"]\n'
)


def _project(root, conftest: bool):
    files = {
        "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
        "pkg/core.py": "PART = 'paths'\n",
        "pkg/paths.py": "WHERE = 1\n",
        "pkg/__init__.py": _PACKAGE,
        "tests/test_pkg.py": "import pkg.core\n\n\ndef test_part():\n    assert pkg.core.PART == 'paths'\n",
        "mutations/pkg.toml": _CATALOG,
    }
    if conftest:
        files["tests/conftest.py"] = "import pkg  # noqa: F401 - the suite needs the package loaded\n"
    return write_project(root, files)


def _said_once(gate, entry):
    assert entry["verdict"] == "broken", entry["detail"]
    assert "ModuleNotFoundError: No module named 'pkg._paths'" in entry["detail"], entry["detail"]
    assert "does not compile cleanly" not in entry["explanation"], entry["explanation"]
    assert "does not compile cleanly" not in gate.stdout, gate.stdout
    assert gate.stdout.count("No module named 'pkg._paths'") == 1, gate.stdout


def test_a_mutant_that_breaks_a_conftest_import_names_the_exception_and_no_generic_compile_cause(tmp_path):
    gate = run_gate(_project(tmp_path / "proj", conftest=True), "run", "--no-cache")
    entry = gate.mutation("part-renamed")
    _said_once(gate, entry)
    assert entry["detail"].startswith("tests/conftest.py does not import under the mutant"), entry["detail"]


def test_a_mutant_that_breaks_a_test_module_import_names_the_exception_and_no_generic_compile_cause(tmp_path):
    gate = run_gate(_project(tmp_path / "proj", conftest=False), "run", "--no-cache")
    entry = gate.mutation("part-renamed")
    _said_once(gate, entry)
    assert "tests/test_pkg.py" in entry["detail"], entry["detail"]


def test_try_on_a_mutant_that_breaks_a_test_module_import_says_the_cause_once_too(tmp_path):
    project = _project(tmp_path / "proj", conftest=False)
    done = run_gate(project, "try", "pkg/core.py::PART", "--op", "replace", "--old", "'paths'", "--new", "'_paths'")
    assert done.code == 1, (done.stdout, done.stderr)
    assert "does not compile cleanly" not in done.stdout, done.stdout
    assert done.stdout.count("No module named 'pkg._paths'") == 1, done.stdout
