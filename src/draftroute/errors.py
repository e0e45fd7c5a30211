"""Refusals: every way draftroute declines a draft, each in its own words.

Two refusals that read alike hide which decision was made (seed-004: both messages said
"DeepSeek-V4" and "not implemented", and the tests could not tell them apart). So each arm
has a template with a distinguishing phrase that no other template contains, and the only
way to raise is `refuse(arm, **fields)`, which renders exactly that template.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import NoReturn

# Arm id -> message template (spec §4.4 and §5.3, verbatim). R-IDENTITY and R-DSV4-LANE
# take exactly the same placeholders, so merging their texts renders instead of crashing:
# a merged message must be caught by what the tests assert, not by a KeyError.
REFUSAL_TEMPLATES: Mapping[str, str] = MappingProxyType(
    {
        "R-SPEC-KEY": ("draft routing refused: unknown speculative-config key {key!r}; accepted keys are {known}."),
        "R-LOADCFG": (
            "draft routing refused: draft_load_config is invalid ({reason}); "
            "give an object with a load_format field, or null to inherit the target's loader."
        ),
        "R-SPEC-LAYOUT": (
            "draft routing refused: the speculators-format config at {model!r} cannot be translated ({reason})."
        ),
        "R-METHOD": (
            "draft routing refused: method {method!r} is not routed here; "
            "this resolver handles only 'dspark' and 'dflash'."
        ),
        "R-K-MISSING": (
            "draft routing refused: num_speculative_tokens is required for method {method!r} and was not given."
        ),
        "R-K-INVALID": ("draft routing refused: num_speculative_tokens must be a positive integer, got {value!r}."),
        "R-DFLASH-MODEL": ("draft routing refused: method 'dflash' needs 'model' to name a DFlash draft checkpoint."),
        "R-NOCONFIG": (
            "draft routing refused: the draft at {model!r} has no readable config.json, so its lane cannot be decided."
        ),
        "R-FOLD-TARGET": (
            "draft routing refused: method 'dspark' without a separate draft expects the draft "
            "weights folded into a DeepSeek-V4 target, but {target!r} has model_type "
            "{target_model_type!r}; set 'model' to a standalone DSpark draft."
        ),
        "R-IDENTITY": (
            "draft routing refused: {model!r} does not identify as a DSpark draft "
            "(architectures {archs}, model_type {model_type!r}, and no 'dspark' in its name); "
            "point 'model' at a DSpark checkpoint or pick another method."
        ),
        "R-DSV4-LANE": (
            "draft routing refused: {model!r} classifies to the DeepSeek-V4 folded lane "
            "(architectures {archs}, model_type {model_type!r}); that lane reads its weights "
            "from the target checkpoint and cannot load a separate draft directory. "
            "Omit 'model' to use the draft folded into a DeepSeek-V4 target."
        ),
        "R-BLOCK": (
            "draft routing refused: num_speculative_tokens={k} does not fit the draft's block "
            "of {floor} (read from {floor_key}); use {floor} or fewer, or a multiple of {floor}."
        ),
        "L-MARKOV-TYPE": ("draft load refused: markov_head_type {value!r} is not one of vanilla, gated, rnn."),
        "L-REMAP-RANK": (
            "draft load refused: {name} has last dimension {got} after the vanilla remap, "
            "but the draft config declares markov_rank={want}."
        ),
    }
)


class RouteRefusal(ValueError):
    """A draft declined by name. `arm` is the id of the decision that refused it."""

    def __init__(self, arm: str, message: str):
        super().__init__(message)
        self.arm = arm


def refuse(arm: str, **fields: object) -> NoReturn:
    """Raise the refusal of `arm`, rendered from its template (the only way to raise one)."""
    raise RouteRefusal(arm, REFUSAL_TEMPLATES[arm].format(**fields))
