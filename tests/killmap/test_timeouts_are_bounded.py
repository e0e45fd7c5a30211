"""A timeout is a number of seconds above 0 and at most one day (86400), or a catalog error.

nan compares false with every bound, and inf or 1e300 never arrives: accepted, either
would let a looping mutant hang the gate for ever. Zero and negatives cannot run at all.
"""

from __future__ import annotations

import pytest
from gatekit import copy_fixture, run_gate

from killmap.catalog.reader import MAX_TIMEOUT, load_catalog
from killmap.errors import GateError

BAD = [
    "nan",
    "+nan",
    "-nan",
    "inf",
    "+inf",
    "-inf",
    "1e300",
    "86400.5",
    "86401",
    "0",
    "0.0",
    "-1",
    "-0.5",
    '"30"',
    "true",
    "[30]",
]
ENTRY = (
    '[[mutation]]\nname = "check-flipped"\ntarget = "src/pkg/mod.py::check"\nop = "replace"\n'
    'old = ">"\nnew = ">="\nkills = ["tests/test_mod.py::test_mod"]\n'
)


@pytest.fixture
def project(km_project):
    km_project.module("def check(x):\n    return x > 0\n")
    return km_project


def load(project, text: str):
    path = project.write("mutations/catalog.toml", text, dedent=False)
    return load_catalog(project.root, path)


@pytest.mark.parametrize("value", BAD)
def test_a_bad_mutation_timeout_is_a_catalog_error_naming_the_maximum(project, value):
    with pytest.raises(GateError) as caught:
        load(project, ENTRY + f"timeout = {value}\n")
    assert (caught.value.mutation, caught.value.field) == ("check-flipped", "timeout")
    assert "at most 86400" in str(caught.value)


@pytest.mark.parametrize("value", BAD)
def test_a_bad_gate_timeout_is_a_catalog_error_naming_the_maximum(project, value):
    with pytest.raises(GateError) as caught:
        load(project, f"[gate]\ntimeout = {value}\n\n" + ENTRY)
    assert (caught.value.mutation, caught.value.field) == (None, "timeout")
    assert "at most 86400" in str(caught.value)


@pytest.mark.parametrize("value, seconds", [("86400", 86400.0), ("0.5", 0.5), ("30", 30.0)])
def test_a_timeout_within_the_bounds_is_accepted(project, value, seconds):
    assert (
        load(project, f"[gate]\ntimeout = {value}\n\n" + ENTRY + f"timeout = {value}\n").mutations[0].timeout == seconds
    )
    assert MAX_TIMEOUT == 86400


@pytest.mark.parametrize("where", ["gate", "mutation"])
@pytest.mark.parametrize("value", ["nan", "inf", "1e300"])
def test_the_command_refuses_a_bad_timeout_in_one_line_before_running(tmp_path, where, value):
    project = copy_fixture("basic", tmp_path)
    catalog = project / "mutations" / "basic.toml"
    text = catalog.read_text()
    if where == "gate":
        text = text.replace("[gate]\n", f"[gate]\ntimeout = {value}\n")
    else:
        text = text.replace('call = "is_even"\n', f'call = "is_even"\ntimeout = {value}\n')
    catalog.write_text(text)
    run = run_gate(project, "run", "--no-cache", timeout=60)
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.code == 2 and len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    assert "mutations/basic.toml" in lines[0] and "'timeout'" in lines[0] and "86400" in lines[0]
    if where == "mutation":
        assert "'classify-call-deleted'" in lines[0]
