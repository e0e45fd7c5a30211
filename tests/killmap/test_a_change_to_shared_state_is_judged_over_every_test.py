"""A change in a function that writes state other tests share (here `sys.modules`, as six's
`load_module` does) is judged again over every test where the tests left out could change
the verdict: a test may read what the function stored without running a line of it, so the
baseline's reach never selects it. A `held` there becomes the overreach plain pytest shows,
and a sweep's survivor the kill; the red is confirmed after the tests the run ran before it,
since it is green without them (not flaky)."""

from __future__ import annotations

from gatekit import run_gate, write_project
from sweepkit import require_mutmut, sweep

from killmap.verdict.reach import region_of

SOURCE = (
    "import sys\nimport types\n\n\n"
    "def virtual(name):\n"
    "    if name in sys.modules:\n"
    "        return sys.modules[name]\n"
    "    mod = types.ModuleType(name)\n"
    "    mod.VALUE = 42\n"
    "    sys.modules[name] = mod\n"
    "    return mod\n\n\n"
    "def plus(x):\n"
    "    y = x + 1\n"
    "    return y\n"
)

FILES = {
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
    "pkg/__init__.py": SOURCE,
    "tests/test_a.py": (
        "import pkg\n\n\n"
        "def test_one():\n    assert pkg.virtual('pkg_one').VALUE == 42\n\n\n"
        "def test_two_stores():\n    pkg.virtual('pkg_two')\n\n\n"
        "def test_plus():\n    assert pkg.plus(1) == 2\n"
    ),
    # Reads what test_two_stores stored, by another way than `virtual`: green by itself.
    "tests/test_b.py": (
        "import sys\n\n\n"
        "def test_two_read():\n    mod = sys.modules.get('pkg_two')\n    assert mod is None or mod.VALUE == 42\n"
    ),
}

CATALOG = (
    '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "value-lost"\n'
    'target = "pkg/__init__.py::virtual"\nop = "replace"\nold = "mod.VALUE = 42"\nnew = "mod.VALUE = 0"\n'
    'kills = ["tests/test_a.py::test_one"]\n'
)


def test_a_function_that_stores_into_sys_modules_writes_shared_state_and_a_pure_one_does_not():
    assert region_of(SOURCE, (9,)).writes_state
    assert not region_of(SOURCE, (14,)).writes_state


def test_a_module_global_or_a_global_rebound_is_shared_state_and_a_local_or_self_attribute_is_not():
    source = (
        "_CACHE = {}\nCOUNT = 0\n\n\n"
        "def remember(k, v):\n    x = v + 1\n    _CACHE[k] = x\n\n\n"
        "def bump():\n    global COUNT\n    y = 1\n    COUNT = COUNT + y\n\n\n"
        "class K:\n    def set(self, v):\n        w = v\n        self.v = w\n"
    )
    assert region_of(source, (6,)).writes_state
    assert region_of(source, (12,)).writes_state
    assert not region_of(source, (18,)).writes_state


def test_a_held_that_a_test_reading_the_stored_state_breaks_is_the_overreach_plain_pytest_shows(tmp_path):
    project = write_project(tmp_path / "p", {**FILES, "mutations/pkg.toml": CATALOG})
    done = run_gate(project, "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("value-lost")
    assert entry["verdict"] == "overreach", entry["detail"]
    assert [r["id"] for r in entry["red"]] == ["tests/test_a.py::test_one", "tests/test_b.py::test_two_read"]
    assert "writes state other tests may read" in entry["selection"]


def test_a_sweep_survivor_that_a_test_reading_the_stored_state_kills_is_killed(tmp_path):
    require_mutmut()
    project = write_project(
        tmp_path / "p",
        {
            **FILES,
            "tests/test_a.py": FILES["tests/test_a.py"].replace(
                "def test_one():\n    assert pkg.virtual('pkg_one').VALUE == 42\n\n\n", ""
            ),
        },
    )
    done, doc, _ = sweep(project, "pkg/__init__.py::virtual", "--ops", "mutmut", "--jobs", "1", "--no-cache")
    assert done.code == 0, done.stderr
    by_change = {m["change"]: m for m in doc["sweep"]["mutants"]}
    value = by_change["mod.VALUE = 42  ->  mod.VALUE = 43"]
    assert value["status"] == "killed", value["detail"]
    assert [r["id"] for r in value["red"]] == ["tests/test_b.py::test_two_read"]
