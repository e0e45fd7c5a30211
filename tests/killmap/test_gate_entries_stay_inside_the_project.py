"""[gate] tests, paths and exclude are paths or node ids inside the project, never options.

`tests = ["tests", "--junitxml=INJECTED.xml"]` was passed to pytest as an option and
wrote a file into the working tree. An entry starting with '-', an absolute path, or one
climbing out of the project with '..' is a catalog error, exit 2, before anything runs.
"""

from __future__ import annotations

import pytest
from gatekit import copy_fixture, run_gate, tree_digest

from killmap.catalog.reader import load_catalog
from killmap.errors import GateError

ENTRY = (
    '[[mutation]]\nname = "check-flipped"\ntarget = "src/pkg/mod.py::check"\nop = "replace"\n'
    'old = ">"\nnew = ">="\nkills = ["tests/test_mod.py::test_mod"]\n'
)


@pytest.fixture
def project(km_project):
    km_project.module("def check(x):\n    return x > 0\n")
    return km_project


def gate_error(project, key: str, value: str) -> GateError:
    path = project.write("mutations/catalog.toml", f'[gate]\n{key} = ["tests", {value}]\n\n' + ENTRY, dedent=False)
    with pytest.raises(GateError) as caught:
        load_catalog(project.root, path)
    return caught.value


@pytest.mark.parametrize("key", ["tests", "paths", "exclude"])
@pytest.mark.parametrize("value", ['"--junitxml=INJECTED.xml"', '"-p"', '"-x"', '"--deselect=tests"'])
def test_an_entry_starting_with_a_dash_is_refused(project, key, value):
    error = gate_error(project, key, value)
    assert (error.file, error.field) == ("mutations/catalog.toml", key)
    assert value.strip('"') in str(error) and "option" in str(error)


@pytest.mark.parametrize("key", ["tests", "paths", "exclude"])
@pytest.mark.parametrize(
    "value",
    ['"/etc"', '"/tmp/tests/test_x.py::test_a"', '".."', '"../other/tests"', '"tests/../../x.py::t"', '"./../x"'],
)
def test_an_entry_outside_the_project_is_refused(project, key, value):
    error = gate_error(project, key, value)
    assert error.field == key and "outside the project" in str(error)


@pytest.mark.parametrize(
    "value",
    [
        '"tests/test_mod.py::test_mod[-1]"',
        '"./tests"',
        '"tests/sub/../test_mod.py"',
        '"tests/test_mod.py::test_mod[../x]"',
    ],
)
def test_an_entry_inside_the_project_is_accepted(project, value):
    path = project.write("mutations/catalog.toml", f"[gate]\ntests = [{value}]\n\n" + ENTRY, dedent=False)
    assert load_catalog(project.root, path).settings.tests == (value.strip('"'),)


def test_an_option_smuggled_into_gate_tests_writes_nothing_and_exits_2(tmp_path):
    project = copy_fixture("basic", tmp_path)
    catalog = project / "mutations" / "basic.toml"
    catalog.write_text(
        catalog.read_text().replace("[gate]\n", '[gate]\ntests = ["tests", "--junitxml=INJECTED.xml"]\n')
    )
    before = tree_digest(project)
    run = run_gate(project, "run", "--no-cache")
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.code == 2 and len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert "mutations/basic.toml" in lines[0] and "'tests'" in lines[0] and "--junitxml" in lines[0]
    assert tree_digest(project) == before
    assert not list(project.rglob("INJECTED.xml"))
