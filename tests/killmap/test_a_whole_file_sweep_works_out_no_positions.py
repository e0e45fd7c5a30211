"""Enumerating a whole file with mutmut's operators never renders the module for node
positions (verdict/sweep.py, _Positions); a target narrowed to a function still does, and
keeps only that function's mutants."""

from __future__ import annotations

from pathlib import Path

import pytest
from libcst.metadata import MetadataWrapper, PositionProvider
from sweepkit import require_mutmut

from killmap.verdict.sweep import enumerate_mutants, resolve_targets

ROOT = Path(__file__).resolve().parents[2]
TARGET = "src/draftroute/resolver.py"


@pytest.fixture
def asked(monkeypatch) -> list:
    require_mutmut()
    providers: list = []
    real = MetadataWrapper.resolve

    def resolve(self, provider):
        providers.append(provider)
        return real(self, provider)

    monkeypatch.setattr(MetadataWrapper, "resolve", resolve)
    return providers


def test_a_whole_file_of_mutmut_mutants_is_enumerated_without_positions(asked):
    found = enumerate_mutants(ROOT, resolve_targets(ROOT, [TARGET], []), ("mutmut",))
    assert len(found.mutants) > 100
    assert PositionProvider not in asked


def test_a_target_narrowed_to_a_function_reads_positions_and_keeps_its_own_mutants(asked):
    everything = enumerate_mutants(ROOT, resolve_targets(ROOT, [TARGET], []), ("mutmut",)).mutants
    chosen = everything[len(everything) // 2].function.split(".")[0]
    narrowed = enumerate_mutants(ROOT, resolve_targets(ROOT, [f"{TARGET}::{chosen}"], []), ("mutmut",)).mutants
    assert PositionProvider in asked
    assert narrowed and all(m.function.split(".")[0] == chosen for m in narrowed)
    assert {m.id for m in narrowed} == {m.id for m in everything if m.function.split(".")[0] == chosen}
