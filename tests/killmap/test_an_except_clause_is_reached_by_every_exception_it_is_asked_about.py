"""An `except` clause's types are checked whenever the `try` body raises, whether they match
or not: a change to them is reached by every test whose exception got there, not only by
the tests whose exception it caught. funcy's get_in: `except (KeyError, IndexError)` given
TypeError too read its kills test, which expects the TypeError through, as `unevidenced`,
and a test it turned red outside the contract was never run (`held`)."""

from __future__ import annotations

import pytest
from gatekit import pkg_project, replace_catalog, run_gate

from killmap.verdict.reach import region_of

SOURCE = (
    "def get_in(coll, path, default=None):\n"  # 1
    "    for key in path:\n"  # 2
    "        try:\n"  # 3
    "            coll = coll[key]\n"  # 4
    "        except (KeyError,\n"  # 5
    "                IndexError):\n"  # 6
    "            return default\n"  # 7
    "    return coll\n"  # 8
)


@pytest.mark.parametrize("changed", [5, 6])
def test_a_change_to_an_except_header_is_its_header(changed):
    region = region_of(SOURCE, (changed,))
    assert region.lines == frozenset({5, 6}) and not region.import_time
    assert region.entry_lines == frozenset({4})  # the try body's first statement: entered it


def test_a_change_to_the_handler_body_is_the_body_alone():
    region = region_of(SOURCE, (7,))
    assert region.lines == frozenset({7}) and region.entry_lines == frozenset()


TESTS = (
    "import pytest\n\nfrom pkg import get_in\n\n\n"
    "def test_found():\n    assert get_in({'a': 1}, ['a']) == 1\n\n\n"
    "def test_missing():\n    assert get_in({}, ['a'], 0) == 0\n\n\n"
    "def test_a_type_error_goes_through():\n"
    "    with pytest.raises(TypeError):\n        get_in([1, 2], ['a'])\n"
)
CATALOG = replace_catalog(
    "swallows-type-errors",
    "get_in",
    "IndexError)",
    "IndexError, TypeError)",
    "tests/test_get.py::test_a_type_error_goes_through",
)


def test_a_test_whose_exception_the_clause_let_through_is_selected_and_its_red_counts(tmp_path):
    project = pkg_project(tmp_path / "p", SOURCE, {"tests/test_get.py": TESTS}, CATALOG)
    done = run_gate(project, "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("swallows-type-errors")
    assert entry["verdict"] == "held", entry["detail"]
    assert [r["id"] for r in entry["red"]] == ["tests/test_get.py::test_a_type_error_goes_through"]
