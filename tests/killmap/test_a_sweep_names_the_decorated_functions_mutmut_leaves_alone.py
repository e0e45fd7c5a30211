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
    import enum
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

        def __new__(cls, *args):
            return super().__new__(cls) if args else None

        def quiet(self):
            return 1 + 2  # pragma: no mutate

    class Colour(enum.Enum):
        def __init__(self, code):
            self.code = code * 2

        RED = 1
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


def test_a_whole_file_sweep_names_the_functions_mutmuts_other_rules_leave_alone(tmp_path):
    # blinker: `Symbol.__new__`, which mutmut never mutates by its name, got no mutant and no
    # word; nor does an enum's `__init__`. One a pragma covers is the project's own choice.
    found = _enumerated(tmp_path, ("mutmut",))
    assert found.left_alone == ["m.py::Box.__new__", "m.py::Colour.__init__"]


def test_a_sweep_of_a_change_gives_a_touched_function_mutmut_leaves_alone_mutmuts_mutants(tmp_path):
    from killmap.verdict.changed import FileChange
    from killmap.verdict.sweep import SweepTarget, enumerate_mutants

    class OneLine:  # ChangeSince's face, without git: one changed line of m.py
        base = "HEAD"

        def file(self, path):
            return FileChange(path, frozenset({line}), frozenset()) if path == "m.py" else None

    (tmp_path / "m.py").write_text(textwrap.dedent(MODULE))
    line = textwrap.dedent(MODULE).splitlines().index("        return super().__new__(cls) if args else None") + 1
    change = OneLine()
    target = SweepTarget("m.py", None, GateSettings(paths=(".",)), SweepSettings(frozenset(ARID_RULES)))
    found = enumerate_mutants(tmp_path, [target], ("mutmut",), change)
    assert "Box.__new__" in {m.function for m in found.mutants}


def test_a_target_inside_the_file_names_only_its_own_decorated_functions(tmp_path):
    assert _enumerated(tmp_path, ("mutmut",), "Box").decorated == ["m.py::Box.size"]


def test_killmaps_operators_alone_name_none(tmp_path):
    assert _enumerated(tmp_path, ("killmap",)).decorated == []


def _rendered(decorated: list[str], ops: list[str], mutants: list | None = None, left_alone=(), nested=()) -> str:
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
            "generated": {
                "mutmut": 0,
                "killmap": 0,
                "arid": {},
                "decorated": decorated,
                "left_alone": list(left_alone),
                "nested": list(nested),
            },
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


def test_the_console_says_which_functions_mutmuts_rules_leave_alone():
    doc_said = _rendered([], ["mutmut"], left_alone=["m.py::Box.__new__"])
    assert (
        "1 function mutmut's rules leave alone (a name such as `__new__`) got no mutmut mutant, as under "
        "`mutmut run`: m.py::Box.__new__" in " ".join(doc_said.split())
    ), doc_said


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


NESTED = """\
    try:
        import no_such_module_for_strategies
    except ImportError:
        pass
    else:
        def port_numbers(draw):
            return draw + 1

        class Strategy:
            def make(self):
                return 2 * 3

    def top(x):
        return x + 1
    """


def test_a_whole_file_sweep_names_the_definitions_under_a_module_level_statement(tmp_path):
    # hyperlink: every strategy of hypothesis.py sits under `try: import hypothesis ... else:`;
    # the sweep made no mutant and said nothing, as if the file held nothing to mutate.
    from killmap.verdict.sweep import SweepTarget, enumerate_mutants

    (tmp_path / "m.py").write_text(textwrap.dedent(NESTED))
    target = SweepTarget("m.py", None, GateSettings(paths=(".",)), SweepSettings(frozenset(ARID_RULES)))
    found = enumerate_mutants(tmp_path, [target], ("mutmut", "killmap"))
    assert found.nested == ["m.py::port_numbers", "m.py::Strategy"]
    assert {m.function for m in found.mutants} == {"top"}
    said = " ".join(_rendered([], ["mutmut"], nested=found.nested).split())
    assert "2 definitions under a module-level `if`, `try` or `with` got no mutant: m.py::port_numbers" in said


def test_off_a_terminal_a_sweep_says_how_far_it_is_every_half_minute():
    # hyperlink: 1,471 mutants ran 15 minutes in a CI log that said nothing after the baseline.
    from types import SimpleNamespace

    from killmap.report.sweep_report import SweepProgress

    now = [100.0]
    console = Console(record=True, width=200, force_terminal=False)
    progress = SweepProgress(console, clock=lambda: now[0])
    verdict = SimpleNamespace(name="m.f.1", verdict="overreach", red=(1,))
    with progress:
        progress("planned", 40)
        for _ in range(10):
            now[0] += 4.0  # ten mutants, 40 s in all
            progress("done", verdict)
    lines = [line for line in console.export_text().splitlines() if line.startswith("sweep:")]
    assert lines == ["sweep: 8 of 40 mutants done, 0m32s"], console.export_text()


def test_the_sweeps_progress_counts_the_named_mutants_the_summary_counts():
    # rfc3986: "12 of 135 mutants done" beside a summary of 136 mutants, one of them named.
    from types import SimpleNamespace

    from killmap.report.sweep_report import SweepProgress

    now = [0.0]
    console = Console(record=True, width=200, force_terminal=False)
    progress = SweepProgress(console, clock=lambda: now[0])
    with progress:
        progress("named", 1)
        progress("planned", 135)
        now[0] += 31.0
        progress("done", SimpleNamespace(name="m.f.1", verdict="overreach", red=(1,)))
    lines = [line for line in console.export_text().splitlines() if line.startswith("sweep:")]
    assert lines == ["sweep: 1 of 135 mutants done (and 1 a catalog names, not run), 0m31s"], lines


def test_a_long_detail_is_cut_between_words_on_the_console():
    from killmap.report.sweep_report import clipped

    detail = "still running after 3.2s (in test_cycle, busy: it kept the CPU running to the end, as a loop that"
    assert clipped(detail, len(detail)) == detail
    assert (
        clipped(detail, 90)
        == "still running after 3.2s (in test_cycle, busy: it kept the CPU running to the end, as a …"
    )
