"""A mutant's diff is exactly difflib's unified diff of the two whole files.

It is computed only where the versions differ (mutant.unified_diff), for speed; the text must
not change for that: it is in every report, and the verdict cache's key and `--promote`
compare it. Edits of every shape are made to a real module, including the ones a diff can
place more than one way (a line repeated beside its copy, two lines swapped).
"""

from __future__ import annotations

import difflib
import random
from pathlib import Path

import pytest

from killmap.mutate import splice
from killmap.mutate.mutant import unified_diff
from killmap.mutate.patching import split_lines

MODULE = split_lines(Path(splice.__file__).read_text(encoding="utf-8"))


def difflib_diff(a: list[str], b: list[str]) -> str:
    return "".join(difflib.unified_diff(a, b, fromfile="a/m.py", tofile="b/m.py"))


def edited(lines: list[str], kind: str, at: int) -> list[str]:
    out = list(lines)
    if kind == "replace":
        out[at] = out[at].rstrip("\n") + "  # mutated\n"
    elif kind == "insert":
        out.insert(at, "    return None\n")
    elif kind == "delete":
        del out[at]
    elif kind == "repeat":  # the same line twice: above or below its copy, both are right
        out.insert(at, out[at])
    elif kind == "swap":
        out[at], out[at + 1] = out[at + 1], out[at]
    elif kind == "blank":
        out.insert(at, "\n")
    elif kind == "block":
        out[at : at + 4] = ["    x = 1\n", "    x = 1\n"]
    return out


KINDS = ["replace", "insert", "delete", "repeat", "swap", "blank", "block"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_shape_of_edit_anywhere_in_a_real_module_gives_difflibs_text(kind):
    where = random.Random(kind).sample(range(len(MODULE) - 5), 60) + [0, 1, len(MODULE) - 5]
    for at in where:
        mutated = edited(MODULE, kind, at)
        assert unified_diff(MODULE, mutated, "m.py") == difflib_diff(MODULE, mutated), (kind, at)


def test_the_ends_of_a_file_and_a_missing_last_newline():
    for a, b in [
        (["x\n", "y"], ["x\n", "z"]),
        (["a\n"], ["b\n"]),
        ([], ["a\n"]),
        (["a\n"], []),
        (["a\n", "b\n"], ["a\n", "b\n", "c"]),
        (MODULE, MODULE),
    ]:
        assert unified_diff(a, b, "m.py") == difflib_diff(a, b)


def test_a_line_repeated_beside_its_copy_is_placed_where_difflib_places_it():
    """Comparing only the changed region would put the copy first; difflib, on the whole
    file, puts it second. The whole files decide such a case."""
    at = next(i for i in range(5, len(MODULE)) if MODULE[i].strip() and MODULE[i] != MODULE[i - 1])
    mutated = edited(MODULE, "repeat", at)
    assert unified_diff(MODULE, mutated, "m.py") == difflib_diff(MODULE, mutated)
