"""The loader's arms (spec §5, tests T-L*).

Routes come from resolve_route on CFG_QWEN3 (dspark) and CFG_DFLASH2 (dflash), which no
resolver mutant changes, so a loader test only goes red for a loader defect. The fake
build records its arguments; configs and quant configs are compared by identity (`is`)
on distinct objects, because equal values would hide an ignored argument (spec §9 trap 11).
"""

from __future__ import annotations

import pytest
from draft_shapes import (
    CFG_DFLASH2,
    CFG_QWEN3,
    NATIVE_HEAD_KEYS,
    TGT_DSV4,
    TGT_QWEN,
    VANILLA_HEAD_KEYS,
    K,
    Tensor,
    native_head_weights,
)

from draftroute import LoadConfig, RouteRefusal, load_draft, remap_vanilla_markov_keys, resolve_route

# The target loads with fastsafetensors; seed-000's draft wants plain safetensors.
GLOBAL_LOAD_CONFIG = LoadConfig(load_format="fastsafetensors")
TARGET_QUANT = object()
DRAFT_QUANT = object()
CONFIG_OF = {"dflash": CFG_DFLASH2, "dspark": CFG_QWEN3}
# seed-001's explicit folded shape: 'model' names the target, so quantization is not
# inherited and only the loader can keep the target's quant config.
FOLDED_EXPLICIT = {"method": "dspark", "model": TGT_DSV4.model, "num_speculative_tokens": 5}


def load(build, spec, draft_config, target=TGT_QWEN, weights=None):
    """Resolve and load; return the keyword arguments of the one build call this made."""
    calls_before = len(build.calls)
    route = resolve_route(spec, draft_config, target)
    load_draft(
        route,
        global_load_config=GLOBAL_LOAD_CONFIG,
        target_quant_config=TARGET_QUANT,
        draft_quant_config=DRAFT_QUANT,
        read_weights=lambda model: dict(weights or {}),
        build=build,
    )
    assert len(build.calls) == calls_before + 1
    return build.calls[-1]


def standalone(draft_root, method="dspark", **fields):
    return {"method": method, "model": str(draft_root / "draft"), "num_speculative_tokens": K, **fields}


# --- L2/L3: which load config reaches build -------------------------------------------------


@pytest.mark.parametrize("method", ["dflash", "dspark"], ids=["dflash", "dspark"])
def test_draft_load_config_honoured(build, draft_root, method):
    spec = standalone(draft_root, method, draft_load_config={"load_format": "safetensors"})
    call = load(build, spec, CONFIG_OF[method])
    assert call["load_config"].load_format == "safetensors"


@pytest.mark.parametrize("method", ["dflash", "dspark"], ids=["dflash", "dspark"])
def test_absent_draft_load_config_falls_back(build, draft_root, method):
    call = load(build, standalone(draft_root, method), CONFIG_OF[method])
    assert call["load_config"] is GLOBAL_LOAD_CONFIG


def test_empty_draft_load_config_is_not_fallback(build, draft_root):
    # `{}` is a decision ("auto"), not an absence. Also the sentinel for M12: should
    # LoadConfig ever become falsy, `not load_config` would send this to the global loader.
    call = load(build, standalone(draft_root, draft_load_config={}), CFG_QWEN3)
    assert call["load_config"] is not GLOBAL_LOAD_CONFIG
    assert call["load_config"].load_format == "auto"


# --- L2: which quant config reaches build (seed-001) -----------------------------------------


@pytest.mark.parametrize("folded", [True, False], ids=["DSparkDraftModel-True", "Qwen3DSparkModel-False"])
def test_quant_config_follows_route(build, draft_root, folded):
    if folded:
        call = load(build, FOLDED_EXPLICIT, None, TGT_DSV4)
        assert call["quant_config"] is TARGET_QUANT
    else:
        # The standalone side must stay on the draft's own config: proof that the fix
        # leaves the standalone path untouched (spec §9 trap 9).
        call = load(build, standalone(draft_root), CFG_QWEN3)
        assert call["quant_config"] is DRAFT_QUANT


@pytest.mark.parametrize("method", ["dflash", "dspark"], ids=["dflash", "dspark"])
def test_build_gets_the_drafts_own_lane_weights_and_quant_config(build, draft_root, method):
    # Found by `killmap sweep` (README, "Finding what the catalog misses"): no test looked
    # at which checkpoint the weights came from, at the DFlash lane handed to build, or at
    # the DFlash side's quant config, so `read_weights(None)`, `architecture=None` and
    # `quant_config=None` all survived.
    route = resolve_route(standalone(draft_root, method), CONFIG_OF[method], TGT_QWEN)
    read = []
    load_draft(
        route,
        global_load_config=GLOBAL_LOAD_CONFIG,
        target_quant_config=TARGET_QUANT,
        draft_quant_config=DRAFT_QUANT,
        read_weights=lambda model: read.append(model) or {},
        build=build,
    )
    call = build.calls[-1]
    assert read == [str(draft_root / "draft")]
    assert call["architecture"] == route.lane
    assert call["quant_config"] is DRAFT_QUANT


# --- §5.2: the vanilla Markov-head remap (seed-003) ------------------------------------------


@pytest.mark.parametrize(
    "markov_head_type", ["vanilla", "Vanilla", " VANILLA ", None], ids=["vanilla", "Vanilla", "VANILLA-padded", "None"]
)
def test_vanilla_remap(build, draft_root, markov_head_type):
    draft_config = {**CFG_QWEN3, "markov_head_type": markov_head_type, "markov_rank": 4}
    call = load(build, standalone(draft_root), draft_config, weights=native_head_weights())
    assert VANILLA_HEAD_KEYS <= set(call["weights"])
    assert not NATIVE_HEAD_KEYS & set(call["weights"])


@pytest.mark.parametrize("markov_head_type", ["gated", "rnn"], ids=["gated", "rnn"])
def test_non_vanilla_heads_keep_native_layout(build, draft_root, markov_head_type):
    draft_config = {**CFG_QWEN3, "markov_head_type": markov_head_type, "markov_rank": 4}
    call = load(build, standalone(draft_root), draft_config, weights=native_head_weights())
    assert set(call["weights"]) == set(native_head_weights())


def test_unknown_head_type_refused(build, draft_root):
    draft_config = {**CFG_QWEN3, "markov_head_type": "lstm"}
    with pytest.raises(RouteRefusal) as refused:
        load(build, standalone(draft_root), draft_config, weights=native_head_weights())
    assert refused.value.arm == "L-MARKOV-TYPE"
    assert "is not one of vanilla, gated, rnn" in str(refused.value)


def test_non_string_head_type_refused(build, draft_root):
    # Not a string, so it is neither stripped nor lower-cased: a list that merely holds a
    # known name is still refused, not crashed on.
    draft_config = {**CFG_QWEN3, "markov_head_type": ["vanilla"]}
    with pytest.raises(RouteRefusal) as refused:
        load(build, standalone(draft_root), draft_config, weights=native_head_weights())
    assert refused.value.arm == "L-MARKOV-TYPE"
    assert "is not one of vanilla, gated, rnn" in str(refused.value)
    assert build.calls == []


def test_duplicate_precedence():
    vanilla, native, prefixed = Tensor((32, 4)), Tensor((32, 4)), Tensor((32, 4))
    native_w2, prefixed_w2 = Tensor((32, 4)), Tensor((32, 4))
    # Orders chosen so neither "first wins" nor "last wins" passes by accident.
    weights = {
        "markov_w1.weight": native,
        "markov_head.markov_w1.weight": vanilla,
        "dflash_module.markov_w1.weight": prefixed,
        "dflash_module.markov_w2.weight": prefixed_w2,
        "markov_w2.weight": native_w2,
    }
    remapped = remap_vanilla_markov_keys(weights, "vanilla", None)
    assert remapped == {"markov_head.markov_w1.weight": vanilla, "markov_head.markov_w2.weight": native_w2}


def test_remap_scope(build, draft_root):
    weights = {
        "dflash_module.markov_w2.weight": Tensor((32, 4)),
        "layers.0.mlp.gate_proj.weight": Tensor((64, 64)),
        "fc.weight": Tensor((64, 128)),
        "layers.0.markov_w1x.weight": Tensor((32, 4)),
        "markov_w1x.weight": Tensor((32, 4)),  # a name boundary is a dot, not a prefix
    }
    untouched = set(weights) - {"dflash_module.markov_w2.weight"}

    standalone_call = load(build, standalone(draft_root), CFG_QWEN3, weights=weights)
    assert set(standalone_call["weights"]) == untouched | {"markov_head.markov_w2.weight"}

    folded_call = load(build, FOLDED_EXPLICIT, None, TGT_DSV4, weights=weights)
    assert set(folded_call["weights"]) == set(weights)

    dflash_call = load(build, standalone(draft_root, "dflash"), CFG_DFLASH2, weights=weights)
    assert set(dflash_call["weights"]) == set(weights)


def test_remapped_rank_mismatch_refused(build, draft_root):
    draft_config = {**CFG_QWEN3, "markov_head_type": "vanilla", "markov_rank": 4}
    weights = {"markov_w1.weight": Tensor((32, 8)), "markov_w2.weight": Tensor((32, 4))}
    with pytest.raises(RouteRefusal) as refused:
        load(build, standalone(draft_root), draft_config, weights=weights)
    assert refused.value.arm == "L-REMAP-RANK"
    assert "after the vanilla remap" in str(refused.value)
