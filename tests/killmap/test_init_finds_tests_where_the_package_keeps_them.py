"""`killmap init` gates the tests where the package keeps them, and the doctests its pytest runs.

A library's tests often live inside its package (`src/urlkit/test/`, networkx's
`networkx/algorithms/shortest_paths/tests/`), and its examples run as doctests when the
project's pytest configuration says `--doctest-modules`. init reads both, and `--package`
aimed at a subpackage gates that subpackage's own tests, not the whole project's. The
fixtures `inpackage` and `doctests` are each gated at first contact: init, check, run.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from gatekit import copy_fixture, run_gate

from killmap.catalog.init_detect import detect

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DIJKSTRA_DOCTEST = "routegraph/algorithms/shortest/weighted.py::routegraph.algorithms.shortest.weighted.dijkstra"


def _project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in {"pyproject.toml": '[project]\nname = "demo"\nversion = "0"\n', **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


_CODE = "def route(path):\n    if path:\n        return path.split('/')\n    return None\n"
_TEST = "from demo.core import route\n\n\ndef test_route():\n    assert route('a/b') == ['a', 'b']\n"


@pytest.mark.parametrize(
    "layout, expected",
    [
        ({"src/demo/test/__init__.py": "", "src/demo/test/test_core.py": _TEST}, ["src/demo/test"]),
        ({"src/demo/tests/test_core.py": _TEST}, ["src/demo/tests"]),
        ({"demo/tests/test_core.py": _TEST}, ["demo/tests"]),
        # spread over several folders of the package: the package whole (pytest collects only test modules)
        ({"demo/tests/test_core.py": _TEST, "demo/sub/tests/test_sub.py": _TEST}, ["demo"]),
        # a tests/ folder at the root as well: both
        ({"tests/test_top.py": _TEST, "src/demo/test/test_core.py": _TEST}, ["tests", "src/demo/test"]),
        # a helper named like a test module, with no test in it (Python-Markdown's test_tools.py)
        (
            {
                "tests/test_top.py": _TEST,
                "demo/test_tools.py": "class TestCase:\n    def assertRenders(self):\n        pass\n",
            },
            ["tests"],
        ),
    ],
    ids=["src-pkg-test", "src-pkg-tests", "flat-pkg-tests", "several-folders", "and-a-root-folder", "a-helper"],
)
def test_tests_inside_the_package_are_found(tmp_path, layout, expected):
    source = "src/demo" if any(rel.startswith("src/") for rel in layout) else "demo"
    root = _project(
        tmp_path, {f"{source}/__init__.py": "", f"{source}/core.py": _CODE, f"{source}/sub/__init__.py": "", **layout}
    )
    plan = detect(root)
    assert plan.tests == expected, plan.tests_reason
    assert plan.module == f"{source}/core.py" and plan.kills.endswith("::test_route")


def test_test_modules_named_by_python_files_inside_the_package_are_tests_not_code(tmp_path):
    # Django's layout: each app keeps its tests in `app/tests.py`, which pytest collects
    # under `python_files = tests.py test_*.py`. They are the package's tests, and no
    # function of them is code to aim at, however large the module.
    big_test = "".join(f"def helper_{n}(x):\n    if x:\n        return {n}\n    return 0\n\n\n" for n in range(30))
    root = _project(
        tmp_path,
        {
            "pytest.ini": "[pytest]\npython_files = tests.py test_*.py\n",
            "demo/__init__.py": "",
            "demo/core.py": _CODE,
            "demo/tests.py": _TEST + "\n\n" + big_test,
        },
    )
    plan = detect(root)
    assert plan.tests == ["demo"], plan.tests_reason
    assert (plan.module, plan.function) == ("demo/core.py", "route")
    assert plan.kills == "demo/tests.py::test_route"


def test_the_inpackage_fixture_is_gated_at_first_contact(tmp_path):
    project = copy_fixture("inpackage", tmp_path)
    done = run_gate(project, "init")
    assert done.code == 0, done.stderr
    assert "tests = ['src/urlkit/test'] (the tests inside the package)" in done.stdout, done.stdout
    data = tomllib.loads((project / "mutations" / "urlkit.toml").read_text())
    assert data["gate"] == {"tests": ["src/urlkit/test"], "paths": ["src"]}
    checked = run_gate(project, "check")
    assert checked.code == 0, checked.stderr
    assert "5 tests collected" in checked.stdout
    ran = run_gate(project, "run", "--no-cache")
    [entry] = ran.report["mutations"]
    # The starter contract names one test; every parse test sees `None`: too narrow, as said.
    assert entry["verdict"] == "overreach", entry["detail"]
    red = {r["id"] for r in entry["red"]}
    assert set(data["mutation"][0]["kills"]) < red
    assert all(r.startswith("src/urlkit/test/test_query.py::") for r in red)


def _no_doctests(project: Path) -> None:
    config = project / "pyproject.toml"
    config.write_text(config.read_text().replace('addopts = "--doctest-modules"\n', ""))


@pytest.mark.parametrize("doctests", [True, False], ids=["doctests-on", "doctests-off"])
def test_doctests_are_gated_when_the_projects_pytest_runs_them(tmp_path, doctests):
    project = copy_fixture("doctests", tmp_path)
    if not doctests:
        _no_doctests(project)
    plan = detect(project)
    # No testpaths, no tests/ folder: the tests are in two folders of the package.
    assert plan.tests == ["routegraph"]
    assert ("doctests" in plan.tests_reason) is doctests, plan.tests_reason
    assert plan.function == "dijkstra"
    if doctests:
        assert (plan.kills, plan.kills_reason) == (
            DIJKSTRA_DOCTEST,
            "its own doctest (--doctest-modules in pyproject.toml [tool.pytest.ini_options])",
        )
    else:
        assert plan.kills.startswith("routegraph/algorithms/shortest/tests/test_weighted.py::")


@pytest.mark.parametrize(
    "config",
    [
        {"pytest.ini": "[pytest]\naddopts = -ra --doctest-modules\n"},
        {"setup.cfg": "[tool:pytest]\naddopts = --doctest-modules\n"},
        {"pyproject.toml": '[project]\nname = "demo"\n\n[tool.pytest.ini_options]\naddopts = ["--doctest-modules"]\n'},
    ],
    ids=["pytest.ini", "setup.cfg", "pyproject-list"],
)
def test_doctests_are_read_from_each_pytest_configuration(tmp_path, config):
    code = 'def route(path):\n    """\n    >>> route("a/b")\n    [\'a\', \'b\']\n    """\n' + _CODE.split(":\n", 1)[1]
    root = _project(
        tmp_path, {"src/demo/__init__.py": "", "src/demo/core.py": code, "tests/test_core.py": _TEST, **config}
    )
    plan = detect(root)
    assert plan.tests == ["tests", "src/demo"], plan.tests_reason
    assert plan.kills == "src/demo/core.py::demo.core.route"


@pytest.mark.parametrize(
    "package",
    ["routegraph.algorithms.shortest", "routegraph/algorithms/shortest", "routegraph/algorithms/shortest/weighted.py"],
)
@pytest.mark.parametrize("doctests", [True, False], ids=["doctests-on", "doctests-off"])
def test_a_subpackage_aimed_at_gates_its_own_tests(tmp_path, package, doctests):
    project = copy_fixture("doctests", tmp_path)
    if not doctests:
        _no_doctests(project)
    plan = detect(project, package)
    own = "routegraph/algorithms/shortest"
    assert plan.tests == ([own] if doctests else [f"{own}/tests"]), plan.tests_reason
    assert plan.tests_reason == (
        f"the tests and doctests inside {own} (--doctest-modules in pyproject.toml [tool.pytest.ini_options])"
        if doctests
        else f"the tests inside {own}"
    )


def test_a_subpackage_with_no_tests_of_its_own_keeps_the_projects(tmp_path):
    project = copy_fixture("doctests", tmp_path)
    _no_doctests(project)
    plan = detect(project, "routegraph.graph")
    assert plan.tests == ["routegraph"]


def test_the_doctests_fixture_is_gated_at_first_contact_from_a_subpackage(tmp_path):
    project = copy_fixture("doctests", tmp_path)
    done = run_gate(project, "init", "--package", "routegraph.algorithms.shortest")
    assert done.code == 0, done.stderr
    data = tomllib.loads((project / "mutations" / "routegraph.algorithms.shortest.toml").read_text())
    assert data["gate"]["tests"] == ["routegraph/algorithms/shortest"]
    assert data["mutation"][0]["kills"] == [DIJKSTRA_DOCTEST]
    # elsewhere is a sibling, not the parent that holds the aimed code and every test
    assert "aim elsewhere: killmap init --package routegraph.graph " in done.stdout, done.stdout
    checked = run_gate(project, "check")
    assert checked.code == 0, checked.stderr
    # its three tests and two doctests, none of routegraph/tests
    assert "5 tests collected" in checked.stdout
    ran = run_gate(project, "run", "--no-cache")
    [entry] = ran.report["mutations"]
    red = {r["id"] for r in entry["red"]}
    assert DIJKSTRA_DOCTEST in red and all(r.startswith("routegraph/algorithms/shortest/") for r in red)
    assert entry["verdict"] == "overreach", entry["detail"]


def test_a_tests_folder_whose_modules_python_files_never_names_is_gated_by_its_modules(tmp_path):
    # decorator: tests/test.py and tests/documentation.py, and `tests = ["tests"]` collected
    # nothing; pytest collects a module named on its command line whatever its name.
    test_case = "import unittest\n\nfrom demo.core import route\n\n\nclass Docs(unittest.TestCase):\n"
    test_case += "    def test_doc(self):\n        self.assertEqual(route('a'), ['a'])\n"
    root = _project(
        tmp_path / "p",
        {"demo/__init__.py": "", "demo/core.py": _CODE, "tests/test.py": _TEST, "tests/documentation.py": test_case},
    )
    plan = detect(root)
    assert plan.tests == ["tests/documentation.py", "tests/test.py"], plan.tests_reason
    assert plan.kills == "tests/documentation.py::Docs::test_doc", plan.kills  # the first that names route
    (root / "tests/test_more.py").write_text(_TEST)
    assert detect(root).tests == ["tests"]
