"""A sweep of `file::symbol` enumerates only the definitions it sweeps: the others are stood
in for by a string or an empty tuple of the same length, so mutmut and libcst read little
(pycodestyle: 8 s of a 2,717-line module's enumeration before one function's 17 mutants
ran). The mutants, their ids, lines and mutmut names are those of the whole file's."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from sweepkit import require_mutmut

from killmap.catalog.contract import ARID_RULES, GateSettings, SweepSettings

MODULE = '''\
"""A module of several definitions."""
import re

LIMIT = 3


@staticmethod
def decorated(x):
    return x + 1


def first(x):
    if x > LIMIT:
        return x - 1
    return x
    # a comment at the end of first's block


# a comment above second
def second(items):
    total = 0
    for item in items:
        total += item * 2
    return total


class Box:
    size = 2

    def grow(self, by):
        return self.size + by

    def shrink(self, by):
        return max(self.size - by, 0)


def last(text):
    return re.sub("a", "b", text) or (
        "empty"
    )
'''


@pytest.fixture(autouse=True)
def _mutmut():
    require_mutmut()


def _mutants(tmp_path: Path, symbols: list[str | None], code: str = MODULE):
    from killmap.verdict.sweep import SweepTarget, enumerate_mutants

    (tmp_path / "m.py").write_text(code)
    settings = GateSettings(paths=(".",))
    targets = [SweepTarget("m.py", symbol, settings, SweepSettings(frozenset(ARID_RULES))) for symbol in symbols]
    found = enumerate_mutants(tmp_path, targets, ("mutmut", "killmap"))
    return {
        m.id: (m.function, m.mutant.mutated, m.mutant.changed_lines, m.mutant.mutant_changed_lines, m.mutmut_name)
        for m in found.mutants
    }


@pytest.mark.parametrize("symbols", [["second"], ["Box.shrink"], ["first", "last"], ["Box"]])
def test_the_mutants_of_a_symbol_are_the_whole_files_of_that_symbol(tmp_path, symbols):
    whole = _mutants(tmp_path, [None])
    swept = _mutants(tmp_path, list(symbols))
    assert swept, symbols
    wanted = {i: m for i, m in whole.items() if any(m[0] == s or m[0].startswith(s + ".") for s in symbols)}
    assert swept == wanted


def test_what_mutmut_reads_keeps_every_offset_and_only_the_swept_definitions():
    from killmap.verdict.sweep import SweepTarget, _only_what_is_swept

    target = SweepTarget("m.py", "second", GateSettings(), SweepSettings(frozenset(ARID_RULES)))
    read = _only_what_is_swept(MODULE, [target], None)
    assert len(read) == len(MODULE) and read.count("\n") == MODULE.count("\n")
    names = [node.name for node in ast.parse(read).body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]
    assert names == ["second"]
    assert "LIMIT = 3" in read and "import re" in read  # what is not a definition stays
    whole = SweepTarget("m.py", None, GateSettings(), SweepSettings(frozenset(ARID_RULES)))
    assert _only_what_is_swept(MODULE, [whole], None) == MODULE


def test_a_file_with_windows_line_endings_is_swept_alike(tmp_path):
    crlf = textwrap.dedent(MODULE).replace("\n", "\r\n")
    whole = _mutants(tmp_path, [None], crlf)
    swept = _mutants(tmp_path, ["second"], crlf)
    assert swept and swept == {i: m for i, m in whole.items() if m[0] == "second"}
