"""The live progress line: each verdict as it lands, an invariant's only with its control's."""

from __future__ import annotations

from killmap.verdict import judge
from killmap.verdict.judge import Verdict
from killmap.verdict.lab import _Announcer

CATALOG = """\
[[mutation]]
name = "control"
target = "src/pkg/mod.py::one"
op = "constant-return"
value = "0"
kills = ["tests/test_mod.py::test_mod"]

[[mutation]]
name = "same-thing"
target = "src/pkg/mod.py::one"
op = "replace"
old = "return 1"
new = "return (1)"
invariant = true
control = "control"
"""


def _announced(km_project, landings, *, rest=False):
    km_project.module("def one():\n    return 1\n")
    mutations = list(km_project.catalog(CATALOG).mutations)
    said = []
    announcer = _Announcer(mutations, lambda kind, verdict: said.append((kind, verdict.name, verdict.verdict)))
    for name, verdict in landings:
        announcer.done(Verdict(name=name, verdict=verdict, detail=""))
    if rest:
        announcer.rest()
    return said


def test_an_invariant_is_said_once_its_control_lands_and_as_the_control_makes_it(km_project):
    said = _announced(km_project, [("same-thing", judge.HELD), ("control", judge.VACUOUS)])
    assert sorted(said) == [("done", "control", judge.VACUOUS), ("done", "same-thing", judge.UNEVIDENCED)]


def test_an_invariant_whose_control_never_lands_is_said_at_the_end_as_unevidenced(km_project):
    assert _announced(km_project, [("same-thing", judge.HELD)]) == []
    said = _announced(km_project, [("same-thing", judge.HELD)], rest=True)
    assert said == [("done", "same-thing", judge.UNEVIDENCED)]
