"""draftroute: route a speculative-decoding draft model to exactly one lane, or refuse by name.

The reference subject of killmap. Pure Python; all I/O goes through injected callables.
Modelled on vLLM's DSpark/DFlash draft routing; the divergences are listed in the spec (§4.6).

    route = resolve_route({"method": "dspark", "model": path, "num_speculative_tokens": 7},
                          draft_config, target)
    model = load_draft(route, global_load_config=..., target_quant_config=...,
                       draft_quant_config=..., read_weights=..., build=...)
"""

from draftroute.entry import prepare_draft
from draftroute.errors import REFUSAL_TEMPLATES, RouteRefusal, refuse
from draftroute.loader import get_model, load_draft, remap_vanilla_markov_keys
from draftroute.resolver import (
    LoadConfig,
    Route,
    TargetInfo,
    classify_standalone_draft,
    is_dspark_draft,
    resolve_dspark_architecture,
    resolve_route,
    translate_speculators_layout,
)

__all__ = [
    "REFUSAL_TEMPLATES",
    "LoadConfig",
    "Route",
    "RouteRefusal",
    "TargetInfo",
    "classify_standalone_draft",
    "get_model",
    "is_dspark_draft",
    "load_draft",
    "prepare_draft",
    "refuse",
    "remap_vanilla_markov_keys",
    "resolve_dspark_architecture",
    "resolve_route",
    "translate_speculators_layout",
]
