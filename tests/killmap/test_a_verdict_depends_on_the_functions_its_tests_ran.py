"""A cached verdict depends on each function its tests executed a line of, and on no other:
a line on a function's first or last line counts, a line just outside it does not, and a file
imported but not traced counts every function."""

from __future__ import annotations

from killmap.verdict.cache import Shapes, dependencies

SOURCE = """\
import os


@staticmethod
def first():
    return 1


def second():
    x = 2
    return x


class Box:
    def third(self):
        return 3
"""
# first: lines 4-6 (its decorator opens it), second: 9-11, Box.third: 15-16


def used(tmp_path, lines):
    (tmp_path / "mod.py").write_text(SOURCE, encoding="utf-8")
    return set(dependencies(tmp_path, {"mod.py": lines}, Shapes())["mod.py"]["functions"])


def test_a_line_on_a_functions_first_or_last_line_makes_it_a_dependency(tmp_path):
    assert used(tmp_path, {4}) == {"first"}
    assert used(tmp_path, {11}) == {"second"}
    assert used(tmp_path, {6, 15}) == {"first", "Box.third"}


def test_lines_between_functions_make_none_a_dependency(tmp_path):
    assert used(tmp_path, {1, 2, 3, 7, 8, 12, 13, 14}) == set()
    assert used(tmp_path, set()) == set()


def test_a_file_imported_but_not_traced_depends_on_every_function(tmp_path):
    assert used(tmp_path, None) == {"first", "second", "Box.third"}
