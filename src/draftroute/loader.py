"""The loader: build the draft a Route describes, with the right load and quant configs.

Construction itself is injected (`build`, keyword-only: architecture, load_config,
quant_config, weights), so this module decides only *what* is built, never how.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from draftroute.errors import refuse
from draftroute.resolver import LoadConfig, Route

MARKOV_HEAD_TYPES = ("vanilla", "gated", "rnn")
# ModelOpt's native head names -> the vanilla DSpark layout vLLM loads (U12 -> U13/U14).
# Dotted on purpose: a key only matches at a name boundary (markov_w1x.* is not markov_w1.*).
VANILLA_RENAMES = (
    ("markov_w1.", "markov_head.markov_w1."),
    ("markov_w2.", "markov_head.markov_w2."),
    ("confidence_proj.", "confidence_head.proj."),
)
EXPORT_PREFIX = "dflash_module."
RANK_CHECKED_KEYS = ("markov_head.markov_w1.weight", "markov_head.markov_w2.weight")


def get_model(
    build: Callable[..., Any],
    *,
    architecture: str,
    load_config: LoadConfig | None = None,
    global_load_config: LoadConfig,
    quant_config: Any,
    weights: Mapping[str, Any],
) -> Any:
    """Build a model; a missing load_config falls back to the global one (U6).

    The fallback tests `is None`, not truthiness: LoadConfig() from `{}` is a decision
    ("auto"), not an absence.
    """
    effective = global_load_config if load_config is None else load_config
    return build(architecture=architecture, load_config=effective, quant_config=quant_config, weights=weights)


def remap_vanilla_markov_keys(weights: Mapping[str, Any], markov_head_type: Any, markov_rank: Any) -> dict[str, Any]:
    """Rename ModelOpt's native Markov-head tensors to the vanilla layout (spec §5.2).

    Only a vanilla head is renamed; gated and rnn heads keep their native layout.
    """
    head_type = "vanilla" if markov_head_type is None else markov_head_type  # ModelOpt's default
    if isinstance(head_type, str):
        # Before seed-003's fix "Vanilla" read as non-vanilla and kept the native layout
        # under a config claiming otherwise.
        head_type = head_type.strip().lower()
    if head_type not in MARKOV_HEAD_TYPES:
        refuse("L-MARKOV-TYPE", value=markov_head_type)
    if head_type != "vanilla":
        return dict(weights)

    remapped: dict[str, Any] = {}
    precedence: dict[str, int] = {}
    for key, value in weights.items():
        name, rank = _vanilla_name(key)
        # Several spellings of one tensor: keep the most canonical, whatever the order.
        if name in remapped and precedence[name] <= rank:
            continue
        remapped[name] = value
        precedence[name] = rank

    if isinstance(markov_rank, int) and not isinstance(markov_rank, bool) and markov_rank > 0:
        for name in RANK_CHECKED_KEYS:
            shape = getattr(remapped.get(name), "shape", None)
            if shape is not None and shape[-1] != markov_rank:
                refuse("L-REMAP-RANK", name=name, got=shape[-1], want=markov_rank)
    return remapped


def _vanilla_name(key: str) -> tuple[str, int]:
    """(new name, precedence): 0 untouched or already vanilla, 1 native, 2 prefixed native."""
    prefixed = key.startswith(EXPORT_PREFIX)
    bare = key[len(EXPORT_PREFIX) :] if prefixed else key
    for native, vanilla in VANILLA_RENAMES:
        if bare.startswith(native):
            return vanilla + bare[len(native) :], 2 if prefixed else 1
    return key, 0


def load_draft(
    route: Route,
    *,
    global_load_config: LoadConfig,
    target_quant_config: Any,
    draft_quant_config: Any,
    read_weights: Callable[[str], Mapping[str, Any]],
    build: Callable[..., Any],
) -> Any:
    """L1: dispatch on the route's method to its lane loader."""
    if route.method == "dflash":
        return _load_dflash(
            route,
            global_load_config=global_load_config,
            draft_quant_config=draft_quant_config,
            read_weights=read_weights,
            build=build,
        )
    return _load_dspark(
        route,
        global_load_config=global_load_config,
        target_quant_config=target_quant_config,
        draft_quant_config=draft_quant_config,
        read_weights=read_weights,
        build=build,
    )


def _load_dflash(
    route: Route,
    *,
    global_load_config: LoadConfig,
    draft_quant_config: Any,
    read_weights: Callable[[str], Mapping[str, Any]],
    build: Callable[..., Any],
) -> Any:
    # The draft's own load config must reach get_model (seed-000): without it the draft
    # silently loads with the target's loader.
    return get_model(
        build,
        architecture=route.lane,
        load_config=route.draft_load_config,
        global_load_config=global_load_config,
        quant_config=draft_quant_config,
        weights=read_weights(route.model),
    )


def _load_dspark(
    route: Route,
    *,
    global_load_config: LoadConfig,
    target_quant_config: Any,
    draft_quant_config: Any,
    read_weights: Callable[[str], Mapping[str, Any]],
    build: Callable[..., Any],
) -> Any:
    weights = read_weights(route.model)
    # The Qwen3 DSpark class reads the vanilla layout. A folded route always carries the
    # DSparkDraftModel lane (S6b), so the lane alone decides; a second "not folded" test
    # could never change the outcome (spec §9 trap 5).
    if route.lane == "Qwen3DSparkModel":
        cfg = route.draft_config or {}
        weights = remap_vanilla_markov_keys(weights, cfg.get("markov_head_type"), cfg.get("markov_rank"))
    # A folded draft keeps the target's model-specific quant config (seed-001): a generic
    # one registers the wrong expert scales. quant_source is the resolver's single answer.
    quant_config = target_quant_config if route.quant_source == "target" else draft_quant_config
    return get_model(
        build,
        architecture=route.lane,
        load_config=route.draft_load_config,
        global_load_config=global_load_config,
        quant_config=quant_config,
        weights=weights,
    )
