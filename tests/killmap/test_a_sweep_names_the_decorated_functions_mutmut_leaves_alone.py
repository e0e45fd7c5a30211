"""mutmut's operators leave a decorated function alone (but one whose only decorator is
`staticmethod` or `classmethod`), as `mutmut run` does; a whole-file sweep names those
functions, in its report and on the console, instead of giving them no mutant in silence.
A sweep of a change gives a touched one mutmut's mutants, so it names none."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from rich.console import Console
from sweepkit import require_mutmut

from killmap.catalog.contract import ARID_RULES, SweepSettings
from killmap.catalog.reader import GateSettings

MODULE = """\
    import functools
    import typing

    def deco(f):
        @functools.wraps(f)
        def inner(*a):
            return f(*a)
        return inner

    @deco
    def double(x):
        if x > 3:
            return x * 2
        return x + 1

    class Box:
        @typing.overload
        def plain2(self, x: int) -> int: ...

        @typing.overload
        def plain2(self, x: str) -> str: ...

        def plain2(self, x):
            return x * 2

        @property
        def size(self):
            return len("abc") + 1

        @size.setter
        def size(self, value):
            self._size = value + 1

        @staticmethod
        def plain(x):
            return x - 1
    """


@pytest.fixture(autouse=True)
def _mutmut():
    require_mutmut()


def _enumerated(tmp_path: Path, ops: tuple[str, ...], symbol: str | None = None):
    from killmap.verdict.sweep import SweepTarget, enumerate_mutants

    (tmp_path / "m.py").write_text(textwrap.dedent(MODULE))
    target = SweepTarget("m.py", symbol, GateSettings(paths=(".",)), SweepSettings(frozenset(ARID_RULES)))
    return enumerate_mutants(tmp_path, [target], ops)


def test_a_whole_file_sweep_names_the_decorated_functions_that_got_no_mutmut_mutant(tmp_path):
    found = _enumerated(tmp_path, ("mutmut",))
    # Not the staticmethod, mutated; a property's getter and setter once (jsonpatch's `key`);
    # no overload stub, whose function's own definition is mutated (cssselect's __init__).
    assert found.decorated == ["m.py::double", "m.py::Box.size"]
    assert {m.function for m in found.mutants} == {"Box.plain", "Box.plain2"}


def test_a_target_inside_the_file_names_only_its_own_decorated_functions(tmp_path):
    assert _enumerated(tmp_path, ("mutmut",), "Box").decorated == ["m.py::Box.size"]


def test_killmaps_operators_alone_name_none(tmp_path):
    assert _enumerated(tmp_path, ("killmap",)).decorated == []


def _rendered(decorated: list[str], ops: list[str], mutants: list | None = None) -> str:
    from killmap.report.sweep_report import render

    counts = dict.fromkeys(("killed", "survived", "unreached", "broken", "timeout", "named"), 0)
    counts |= dict.fromkeys(("flaky", "inconclusive", "escaped"), 0)
    doc = {
        "wall_seconds": 1.0,
        "sweep": {
            "ops": ops,
            "mutants": mutants or [],
            "functions": [],
            "summary": {**counts, "total": 0, "score": None},
            "generated": {"mutmut": 0, "killmap": 0, "arid": {}, "decorated": decorated},
        },
    }
    console = Console(record=True, width=400)
    render(console, doc)
    return console.export_text()


def test_the_console_says_which_functions_got_no_mutmut_mutant_and_what_sweeps_them():
    said = _rendered(["m.py::double", "m.py::Box.size"], ["mutmut"])
    assert "2 decorated functions got no mutmut mutant, as under `mutmut run`: m.py::double, m.py::Box.size" in said
    assert "`--ops mutmut,killmap` sweeps their statements" in said
    assert "killmap's operators sweep them" in _rendered(["m.py::double"], ["mutmut", "killmap"])


def test_the_console_says_nothing_of_them_when_there_are_none():
    assert "decorated" not in _rendered([], ["mutmut"])


def test_a_long_list_is_cut_to_three_and_counted():
    said = _rendered([f"m.py::f{n}" for n in range(5)], ["mutmut"])
    assert "m.py::f0, m.py::f1, m.py::f2 and 2 more (" in said


def test_the_console_counts_the_broken_mutants_that_made_test_files_fail_to_load():
    # parsimonious: 216 of 542 mutants broken, its grammar built from the mutated module at
    # import; nothing said why so many, nor that mutmut counts them killed.
    shape = {"file": "m.py", "line": 1, "function": "f", "op": "mutmut:x", "change": "a -> b", "id": "m.f.1"}
    loading = "collection failed in t.py: TypeError: x; 4 test files failed to load: t.py"
    broken = {**shape, "status": "broken", "detail": loading}
    other = {**shape, "status": "broken", "detail": "the mutant cannot run as written (pyflakes): undefined name 'y'"}
    said = " ".join(_rendered([], ["mutmut"], [broken, broken, other]).split())
    assert "2 broken mutants made test files fail to load" in said, said
    assert "`mutmut run` counts them killed; the score leaves them out" in said
    assert "fail to load" not in _rendered([], ["mutmut"], [other])
