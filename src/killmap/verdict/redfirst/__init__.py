"""red-first: a change's fix reverted, its tests kept, each test classified by what it does
with and without the fix. Other layers import only these names."""

from killmap.verdict.redfirst.change import Change, KeptNames
from killmap.verdict.redfirst.contract import (
    ABSENCE,
    F2F,
    F2P,
    FLAKY,
    P2F,
    P2P,
    RAISED,
    SKIPPED,
    RedFirstOptions,
    RedFirstResult,
    Row,
    Side,
    classify,
)
from killmap.verdict.redfirst.trees import run_red_first

__all__ = [
    "ABSENCE",
    "F2F",
    "F2P",
    "FLAKY",
    "P2F",
    "P2P",
    "RAISED",
    "SKIPPED",
    "Change",
    "KeptNames",
    "RedFirstOptions",
    "RedFirstResult",
    "Row",
    "Side",
    "classify",
    "run_red_first",
]
