"""The mutant memo: a cached mutant is reused only for the very text it was built from."""

from __future__ import annotations

from killmap.cache import VerdictCache
from killmap.lab import _mutant, _Sources


def test_a_remembered_mutant_is_rebuilt_when_its_target_text_changes(km_project, tmp_path):
    km_project.module("def check(x):\n    return validate(x) > 0\n")
    catalog = km_project.catalog('[[mutation]]\nname = "check-flipped"\ntarget = "src/pkg/mod.py::check"\n'
                                 'op = "replace"\nold = ">"\nnew = "<"\nkills = ["tests/test_mod.py::test_mod"]\n')
    [mutation] = catalog.mutations
    root = km_project.root
    cache = VerdictCache(root, tmp_path / "cache")
    first = _mutant(root, mutation, _Sources(root), cache)
    again = _mutant(root, mutation, _Sources(root), cache)
    assert again.mutated == first.mutated and "< 0" in again.mutated
    km_project.module("def check(x):\n    return validate(x) > 1\n")
    changed = _mutant(root, mutation, _Sources(root), cache)
    assert "< 1" in changed.mutated and changed.original.endswith("> 1\n")
