"""The production entry: from a --speculative-config to a built draft (spec §6).

It exists so that tests can prove the classification is *reached* from production, not
only correct when called by hand (seed-004: the predicate had no production caller and
routing branched on the method flag).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from draftroute import resolver
from draftroute.loader import load_draft


def prepare_draft(
    spec: Mapping[str, Any],
    target: resolver.TargetInfo,
    *,
    read_config: Callable[[str], Mapping[str, Any] | None],
    read_weights: Callable[[str], Mapping[str, Any]],
    build: Callable[..., Any],
    global_load_config: resolver.LoadConfig,
    target_quant_config: Any,
    draft_quant_config: Any,
) -> Any:
    """Read the draft's config, let the resolver decide, and load what it decided."""
    model = spec.get("model")
    # This repeats the resolver's folded/standalone test only to skip a read it cannot
    # use; the resolver stays the only decider.
    draft_config = read_config(model) if model is not None and model != target.model else None
    route = resolver.resolve_route(spec, draft_config, target)
    return load_draft(
        route,
        global_load_config=global_load_config,
        target_quant_config=target_quant_config,
        draft_quant_config=draft_quant_config,
        read_weights=read_weights,
        build=build,
    )
