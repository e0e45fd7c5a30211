"""Where an invariant's control may fire: the rule that makes the control evidence that the
tests can see a change at the invariant's own site."""

from __future__ import annotations

from killmap.mutate.mutants import build_mutant
from killmap.verdict.prepare import control_site_problems

MODULE = """\
from dataclasses import dataclass


@dataclass(frozen=True)
class Point:
    x: int

    def moved(self, dx):
        return Point(self.x + dx)


@dataclass
class Other:
    y: int

    def shifted(self, dy):
        return Other(self.y + dy)
"""

CATALOG = """\
[[mutation]]
name = "moved-backwards"
target = "src/pkg/mod.py::Point.moved"
op = "replace"
old = "self.x + dx"
new = "self.x - dx"
kills = ["tests/test_mod.py::test_mod"]

[[mutation]]
name = "shifted-backwards"
target = "src/pkg/mod.py::Other.shifted"
op = "replace"
old = "self.y + dy"
new = "self.y - dy"
kills = ["tests/test_mod.py::test_mod"]

[[mutation]]
name = "eq-spelled-out"
target = "src/pkg/mod.py::Point"
op = "replace"
old = "@dataclass(frozen=True)"
new = "@dataclass(frozen=True, eq=True)"
invariant = true
control = "moved-backwards"

[[mutation]]
name = "eq-spelled-out-controlled-elsewhere"
target = "src/pkg/mod.py::Point"
op = "replace"
old = "(frozen=True)"
new = "(eq=True, frozen=True)"
invariant = true
control = "shifted-backwards"

[[mutation]]
name = "moved-spelled-out"
target = "src/pkg/mod.py::Point.moved"
op = "replace"
old = "Point(self.x + dx)"
new = "Point(x=self.x + dx)"
invariant = true
control = "shifted-backwards"
"""


def _problems(km_project):
    km_project.module(MODULE)
    mutations = list(km_project.catalog(CATALOG).mutations)
    mutants = {m.name: build_mutant(km_project.root, m) for m in mutations}
    assert all(m.applied for m in mutants.values()), {n: m.reason for n, m in mutants.items()}
    return {problem.mutation: str(problem) for problem in control_site_problems(mutations, mutants)}


def test_an_invariant_in_a_class_decorator_takes_a_control_in_that_classs_methods(km_project):
    problems = _problems(km_project)
    assert "eq-spelled-out" not in problems


def test_a_control_in_another_class_or_function_is_still_at_another_site(km_project):
    problems = _problems(km_project)
    assert set(problems) == {"eq-spelled-out-controlled-elsewhere", "moved-spelled-out"}
    assert "shifted-backwards" in problems["moved-spelled-out"]
