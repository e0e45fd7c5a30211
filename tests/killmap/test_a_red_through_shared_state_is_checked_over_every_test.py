"""A kills test that goes red through state an earlier test left (a cache filled by the
mutated code) proves the mutant's effect outlives the call that ran it: tests the selection
left out, since in the baseline they only met the cache, may go red too. A `held` verdict
with such a red is judged again over every test (idna: codecs.lookup caches the mutated
codec; plain pytest turned two more tests red, and the gate said held)."""

from __future__ import annotations

from gatekit import run_gate, write_project

FILES = {
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
    "pkg/__init__.py": (
        "_CACHE = {}\n\n\ndef make(name):\n    return name.upper()\n\n\n"
        "def lookup(name):\n    if name not in _CACHE:\n        _CACHE[name] = make(name)\n    return _CACHE[name]\n"
    ),
    # In this order: the first fills the cache (the only test that runs make), the others meet it.
    "tests/test_pkg.py": (
        "from pkg import lookup\n\n\ndef test_a_fills():\n    assert lookup('x')\n\n\n"
        "def test_b_value():\n    assert lookup('x') == 'X'\n\n\n"
        "def test_c_case():\n    assert lookup('x').isupper()\n"
    ),
    "mutations/pkg.toml": (
        '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "lowered"\n'
        'target = "pkg/__init__.py::make"\nop = "replace"\nold = "name.upper()"\nnew = "name.lower()"\n'
        'kills = ["tests/test_pkg.py::test_b_value"]\n'
    ),
}


def test_a_held_verdict_with_a_red_through_state_is_judged_over_every_test(tmp_path):
    done = run_gate(write_project(tmp_path / "p", FILES), "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("lowered")
    # Plain pytest: test_b_value and test_c_case red.
    assert entry["verdict"] == "overreach", entry["detail"]
    red = sorted(r["id"] for r in entry["red"])
    assert red == ["tests/test_pkg.py::test_b_value", "tests/test_pkg.py::test_c_case"]
    assert "then every test, since a kills test went red through state" in entry["selection"]
