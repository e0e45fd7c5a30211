"""Which lines of a test file are under `pytest.raises`: an exception that escaped one expected
another, so red-first counts it `raised` (the code answered, wrongly), not a crash."""

from __future__ import annotations

from killmap.verdict.redfirst.change import raises_lines

TESTS = """\
import pytest
from pytest import raises


def test_with_block():
    setup = 1
    with pytest.raises(KeyError):
        lookup(setup)
        lookup(setup + 1)
    after = 2


def test_bare_name_and_second_item():
    with open("f") as f, raises(ValueError, match="x"):
        parse(f)


def test_callable_form():
    pytest.raises(
        TypeError, parse, None
    )


def test_a_raises_object_alone_runs_nothing():
    expected = pytest.raises(TypeError)
    parse(None)
"""


def test_the_body_of_a_raises_block_and_the_call_that_runs_a_function_are_under_it():
    assert sorted(raises_lines(TESTS)) == [8, 9, 15, 19, 20, 21]


def test_a_file_that_does_not_parse_has_no_such_line():
    assert raises_lines("def broken(:\n") == frozenset()
