"""A memo runs its block for the first test that asks and serves every later one from module
state: the later tests never run the changed statements, yet read what the mutant built.
A change under a condition (or in a `try`'s handler) that reads module state a function
writes is reached by every test that ran that condition too. isodate's regex cache: one
test per worker ran the mutated pattern, the gate said `held` where plain pytest turned
three tests red, and a sweep called 27 tested mutants survivors."""

from __future__ import annotations

import textwrap

import pytest
from gatekit import pkg_project, replace_catalog, run_gate

from killmap.verdict.reach import region_of


def _region(source: str, changed: str):
    text = textwrap.dedent(source)
    line = next(n for n, written in enumerate(text.splitlines(), 1) if written.strip() == changed)
    return region_of(text, (line,)), text.splitlines()


def _shown(region, lines):
    return sorted(lines[n - 1].strip() for n in region.entry_lines)


@pytest.mark.parametrize(
    "source, changed, guard",
    [
        (
            """\
            CACHE = {}

            def pattern(digits):
                if digits not in CACHE:
                    built = "[0-9]{%d}" % digits
                    CACHE[digits] = built
                return CACHE[digits]
            """,
            'built = "[0-9]{%d}" % digits',
            ["if digits not in CACHE:"],
        ),
        (
            """\
            _instance = None

            def instance():
                global _instance
                if _instance is None:
                    _instance = make(3)
                return _instance
            """,
            "_instance = make(3)",
            ["if _instance is None:"],
        ),
        (
            """\
            SEEN = {}

            def lookup(key):
                try:
                    return SEEN[key]
                except KeyError:
                    value = key * 2
                SEEN.setdefault(key, value)
                return value
            """,
            "value = key * 2",
            ["return SEEN[key]"],
        ),
        (
            """\
            class Registry:
                _cache = {}

                def lookup(self, key):
                    if key not in self._cache:
                        built = key * 2
                        self._cache[key] = built
                    return self._cache[key]
            """,
            "built = key * 2",
            ["if key not in self._cache:"],
        ),
        (
            """\
            class Config:
                _instance = None

                @classmethod
                def get(cls):
                    if cls._instance is None:
                        made = cls()
                        cls._instance = made
                    return cls._instance
            """,
            "made = cls()",
            ["if cls._instance is None:"],
        ),
    ],
    ids=[
        "a dict filled by item",
        "a global rebound",
        "a try whose handler builds",
        "a class's dict every instance shares",
        "a singleton on its class",
    ],
)
def test_a_change_a_memo_guards_is_reached_by_every_test_that_asks_the_memo(source, changed, guard):
    region, lines = _region(source, changed)
    assert _shown(region, lines) == guard
    assert not region.import_time


@pytest.mark.parametrize(
    "source, changed",
    [
        (
            """\
            LIMIT = 10

            def clip(x):
                if x > LIMIT:
                    x = LIMIT
                return x
            """,
            "x = LIMIT",
        ),
        (
            """\
            def fill(seen, key):
                if key not in seen:
                    seen[key] = key * 2
                return seen[key]
            """,
            "seen[key] = key * 2",
        ),
        (
            """\
            class Box:
                _seen = {}

                def __init__(self):
                    self._seen = {}

                def fill(self, key):
                    if key not in self._seen:
                        self._seen[key] = key * 2
                    return self._seen[key]
            """,
            "self._seen[key] = key * 2",
        ),
    ],
    ids=["a constant no function writes", "a local, not module state", "an attribute each instance rebinds"],
)
def test_a_condition_on_no_module_state_adds_nothing(source, changed):
    region, _ = _region(source, changed)
    assert region.entry_lines == frozenset()


MODULE = (
    "CACHE = {}\n\n\n"
    "def pattern(digits):\n"
    "    if digits not in CACHE:\n"
    '        built = "%d digits" % digits\n'
    "        CACHE[digits] = built\n"
    "    return CACHE[digits]\n"
)
TESTS = (
    "from pkg import pattern\n\n\n"
    "def test_first_asks():\n    assert pattern(4) == '4 digits'\n\n\n"
    "def test_later_reads_the_memo():\n    assert pattern(4).startswith('4')\n\n\n"
    "def test_other_code():\n    assert 1 + 1 == 2\n"
)
CATALOG = replace_catalog("wrong-count", "pattern", "% digits", "% (digits + 1)", "tests/test_memo.py::test_first_asks")


@pytest.mark.parametrize("path", [[], ["--no-swap"]], ids=["fork", "fresh session"])
def test_a_memo_read_by_a_test_outside_the_contract_is_overreach(tmp_path, path):
    project = pkg_project(tmp_path / "p", MODULE, {"tests/test_memo.py": TESTS}, CATALOG)
    done = run_gate(project, "run", "--no-cache", "--jobs", "1", *path)
    entry = done.mutation("wrong-count")
    assert entry["verdict"] == "overreach", entry["detail"]
    red = sorted(r["id"] for r in entry["red"])
    assert red == ["tests/test_memo.py::test_first_asks", "tests/test_memo.py::test_later_reads_the_memo"]
