"""A name a letter or two off is told the nearest known one; where several are as near, each
of them (tinydb: a target `Query.__lte__` was told `Query.__lt__` alone, though `__le__`, the
one meant, is one letter off too)."""

from __future__ import annotations

import libcst as cst
import pytest

from killmap.catalog.entries import did_you_mean, nearest
from killmap.mutate.symbols import SymbolError, resolve_symbol


def test_every_name_as_near_is_offered_and_a_nearer_one_alone():
    assert nearest("__lte__", ["__lt__", "__le__", "__eq__", "matches"]) == ["__le__", "__lt__"]
    assert did_you_mean("__lte__", ["__lt__", "__le__"]) == "; did you mean '__le__' or '__lt__'?"
    assert did_you_mean("kils", ["kills", "may_kill"]) == "; did you mean 'kills'?"
    assert did_you_mean("zzz", ["kills"]) == ""


def test_two_neighbouring_letters_swapped_are_as_near_as_a_letter_off_in_a_short_name():
    assert did_you_mean("nwe", ["new", "note", "old"]) == "; did you mean 'new'?"
    assert did_you_mean("odl", ["new", "old"]) == "; did you mean 'old'?"
    assert did_you_mean("ewn", ["new"]) == ""  # two swaps, not one slip


def test_a_target_symbol_a_letter_off_two_methods_is_told_both():
    module = cst.parse_module(
        "class Query:\n    def __lt__(self, other):\n        return True\n\n"
        "    def __le__(self, other):\n        return True\n"
    )
    with pytest.raises(SymbolError) as error:
        resolve_symbol(module, "Query.__lte__", "tinydb/queries.py")
    assert str(error.value).endswith("did you mean 'Query.__le__' or 'Query.__lt__'?"), str(error.value)
