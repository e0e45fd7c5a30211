"""The resolver's arms (spec §4, tests T-R*, T-G*, T-A*, T-P*, T-S*).

Every refusal test asserts the arm id AND the arm's distinguishing phrase, written here as
a literal. Drafts live under a neutral root; only T-R05 puts "dspark" in a path, because
the DeepSeek-V4 lane refusal cannot be reached any other way.
"""

from __future__ import annotations

import dataclasses

import pytest
from draft_shapes import (
    CFG_DFLASH2,
    CFG_DSV4,
    CFG_GEMMA4,
    CFG_LLAMA,
    CFG_NOARCH,
    CFG_PAIR,
    CFG_QWEN3,
    CFG_SPEC,
    TGT_DSV4,
    TGT_QWEN,
    K,
)

from draftroute import (
    RouteRefusal,
    is_dspark_draft,
    resolve_dspark_architecture,
    resolve_route,
    translate_speculators_layout,
)

NEUTRAL_ID = "models/draft"  # a model id naming no draft family, for the predicate tests


def dspark(model, **fields):
    """An explicit dspark spec with the default k."""
    return {"method": "dspark", "model": str(model), "num_speculative_tokens": K, **fields}


def refusal_of(spec, draft_config, target=TGT_QWEN) -> RouteRefusal:
    with pytest.raises(RouteRefusal) as refused:
        resolve_route(spec, draft_config, target)
    return refused.value


# --- S6c: standalone classification and normalization ---------------------------------


def test_qwen3_pair_routes_to_qwen3_lane(draft_root):
    route = resolve_route(dspark(draft_root / "draft"), CFG_PAIR, TGT_QWEN)
    assert route.lane == "Qwen3DSparkModel"
    assert route.classified is True


def test_declared_qwen3_lane_passes(draft_root):
    # Declared name equals the lane, so this cannot tell a decision from an accident
    # (M04 survives it by design, spec §9 trap 6); T-R01 and T-R03 can.
    route = resolve_route(dspark(draft_root / "draft"), CFG_QWEN3, TGT_QWEN)
    assert route.lane == "Qwen3DSparkModel"


def test_gemma4_collapses_onto_qwen3_lane(draft_root):
    route = resolve_route(dspark(draft_root / "draft"), CFG_GEMMA4, TGT_QWEN)
    assert route.lane == "Qwen3DSparkModel"


def test_identity_refusal_is_named(draft_root):
    refusal = refusal_of(dspark(draft_root / "draft"), CFG_LLAMA)
    assert refusal.arm == "R-IDENTITY"
    assert "does not identify as a DSpark draft" in str(refusal)
    assert "classifies to the DeepSeek-V4 folded lane" not in str(refusal)


def test_dsv4_lane_refusal_is_named(draft_root):
    # "dspark" in the path is the only way past the identity check for a DeepSeek-V4
    # config: the identity true-set minus the accept-set is exactly the P1-only inputs.
    refusal = refusal_of(dspark(draft_root / "dspark-v4-export"), CFG_DSV4)
    assert refusal.arm == "R-DSV4-LANE"
    assert "classifies to the DeepSeek-V4 folded lane" in str(refusal)
    assert "does not identify as a DSpark draft" not in str(refusal)


@pytest.mark.parametrize("draft_config", [CFG_NOARCH, {**CFG_NOARCH, "architectures": []}], ids=["missing", "empty"])
def test_config_without_architectures_is_not_classified(draft_root, draft_config):
    route = resolve_route(dspark(draft_root / "draft"), draft_config, TGT_QWEN)
    assert route.lane == "Qwen3DSparkModel"
    assert route.classified is False


@pytest.mark.parametrize(
    "draft_config",
    [CFG_SPEC, {**CFG_SPEC, "architectures": ["DSparkDraftModel"]}],
    ids=["no-top-level-arch", "top-level-arch"],
)
def test_speculators_layout_translated_before_classification(draft_root, draft_config):
    route = resolve_route(dspark(draft_root / "draft"), draft_config, TGT_QWEN)
    assert route.lane == "Qwen3DSparkModel"
    assert route.classified is True


# --- S6b: the folded DeepSeek-V4 shape ---------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "quantization"),
    [
        ({"method": "dspark", "num_speculative_tokens": 5}, "deepseek_v4_fp8"),
        ({"method": "dspark", "model": TGT_DSV4.model, "num_speculative_tokens": 5}, None),
    ],
    ids=["implicit", "explicit"],
)
def test_folded_shape(spec, quantization):
    route = resolve_route(spec, None, TGT_DSV4)
    assert route.lane == "DSparkDraftModel"
    assert route.folded is True
    assert route.quant_source == "target"
    assert route.quantization == quantization


def test_folded_shape_needs_dsv4_target():
    refusal = refusal_of({"method": "dspark", "num_speculative_tokens": K}, None, TGT_QWEN)
    assert refusal.arm == "R-FOLD-TARGET"
    assert "without a separate draft expects" in str(refusal)


# --- S2 and S6a: DFlash and the draft's load config ---------------------------------------

SEED_000_PROFILE = {  # seed-000's --speculative-config, minus the model path
    "method": "dflash",
    "num_speculative_tokens": 7,
    "draft_tensor_parallel_size": 4,
    "kv_cache_dtype": "auto",
    "draft_sample_method": "probabilistic",
    "rejection_sample_method": "standard",
    "draft_load_config": {"load_format": "safetensors"},
}


@pytest.mark.parametrize(
    ("spec", "load_format"),
    [
        (SEED_000_PROFILE, "safetensors"),
        ({"method": "dflash", "num_speculative_tokens": K}, None),
        ({"method": "dflash", "num_speculative_tokens": K, "draft_load_config": None}, None),
        (
            {"method": "dflash", "num_speculative_tokens": K, "draft_load_config": {"load_format": "SafeTensors"}},
            "safetensors",
        ),
    ],
    ids=["seed-profile", "absent", "null", "mixed-case"],
)
def test_dflash_lane_and_load_config(draft_root, spec, load_format):
    route = resolve_route({**spec, "model": str(draft_root / "draft")}, CFG_DFLASH2, TGT_QWEN)
    assert route.lane == "DFlash2DraftModel"
    loaded = route.draft_load_config
    assert (None if loaded is None else loaded.load_format) == load_format


@pytest.mark.parametrize(
    "architectures",
    [["Qwen3ForCausalLM"], ["Qwen3ForCausalLM", "DFlash2DraftModel"]],
    ids=["no-dflash-arch", "dflash-arch-not-first"],
)
def test_dflash_lane_falls_back_when_first_architecture_is_not_dflash(draft_root, architectures):
    # Only the first declared name can choose a DFlash lane; anything else loads the
    # default one rather than a class the DFlash loader does not know.
    draft_config = {"architectures": architectures, "model_type": "qwen3"}
    spec = {"method": "dflash", "model": str(draft_root / "draft"), "num_speculative_tokens": K}
    route = resolve_route(spec, draft_config, TGT_QWEN)
    assert route.lane == "DFlashDraftModel"


# --- S1-S5 refusals ------------------------------------------------------------------------


def test_unknown_spec_key_refused(draft_root):
    spec = dspark(draft_root / "draft", draft_load_confg={"load_format": "safetensors"})
    refusal = refusal_of(spec, CFG_QWEN3)
    assert refusal.arm == "R-SPEC-KEY"
    assert "unknown speculative-config key" in str(refusal)


@pytest.mark.parametrize(
    "draft_load_config",
    [
        "safetensors",
        {"load_format": "safetensors", "dowload_dir": "/cache"},
        {"load_format": "instanttensor"},
        # Not a string, so it is never lower-cased; a list is also unhashable, which the
        # format check must answer rather than crash on.
        {"load_format": ["safetensors"]},
    ],
    ids=["non-object", "unknown-field", "unknown-format", "non-string-format"],
)
def test_bad_draft_load_config(draft_root, draft_load_config):
    refusal = refusal_of(dspark(draft_root / "draft", draft_load_config=draft_load_config), CFG_QWEN3)
    assert refusal.arm == "R-LOADCFG"
    assert "draft_load_config is invalid" in str(refusal)


@pytest.mark.parametrize("method", ["eagle3", "mtp", "deepseek_mtp"], ids=["eagle3", "mtp", "deepseek_mtp"])
def test_method_not_routed(draft_root, method):
    refusal = refusal_of(dspark(draft_root / "draft", method=method), CFG_QWEN3)
    assert refusal.arm == "R-METHOD"
    assert "is not routed here" in str(refusal)


@pytest.mark.parametrize(
    ("dirname", "draft_config", "outcome"),
    [("my-dflash-draft", CFG_DFLASH2, "dflash"), ("draft", CFG_QWEN3, "dspark"), ("draft", CFG_LLAMA, "R-METHOD")],
    ids=["dflash-by-name", "dspark-by-arch", "llama"],
)
def test_method_autodetect(draft_root, dirname, draft_config, outcome):
    spec = {"model": str(draft_root / dirname), "num_speculative_tokens": K}
    if outcome == "R-METHOD":
        # A llama draft is detected as upstream's draft_model method, which is not routed.
        refusal = refusal_of(spec, draft_config)
        assert refusal.arm == "R-METHOD"
        assert "is not routed here" in str(refusal)
    else:
        assert resolve_route(spec, draft_config, TGT_QWEN).method == outcome


@pytest.mark.parametrize(
    ("dirname", "detected"),
    [("my-eagle-draft", "eagle"), ("my-eagle3-draft", "eagle3")],
    ids=["eagle-by-name", "eagle3-by-name"],
)
def test_method_autodetect_refuses_eagle_by_its_detected_name(draft_root, dirname, detected):
    # A llama config: without its name marker the draft would fall through to upstream's
    # draft_model, which reads the same arm and phrase, so only the method named in the
    # message shows that the marker decided.
    spec = {"model": str(draft_root / dirname), "num_speculative_tokens": K}
    refusal = refusal_of(spec, CFG_LLAMA)
    assert refusal.arm == "R-METHOD"
    assert f"method {detected!r} is not routed here" in str(refusal)
    assert "'draft_model'" not in str(refusal)


def test_no_method_and_no_model_is_refused_as_method_none():
    # A DeepSeek-V4 target with k set is exactly the folded shape, so a resolver that
    # guessed dspark here would route it; without a model there is nothing to detect from.
    refusal = refusal_of({"num_speculative_tokens": 5}, None, TGT_DSV4)
    assert refusal.arm == "R-METHOD"
    assert "method None is not routed here" in str(refusal)


@pytest.mark.parametrize(
    "draft_config",
    [
        {"speculators_model_type": "eagle3", "transformer_layer_config": {"model_type": "llama"}},
        {"speculators_model_type": "dspark", "transformer_layer_config": "qwen3"},
    ],
    ids=["unknown-type", "non-object-layer-config"],
)
def test_speculators_layout_refused(draft_root, draft_config):
    refusal = refusal_of(dspark(draft_root / "draft"), draft_config)
    assert refusal.arm == "R-SPEC-LAYOUT"
    assert "cannot be translated" in str(refusal)


def test_dflash_needs_model():
    refusal = refusal_of({"method": "dflash", "num_speculative_tokens": K}, None)
    assert refusal.arm == "R-DFLASH-MODEL"
    assert "needs 'model' to name a DFlash draft" in str(refusal)


def test_standalone_without_config_refused(draft_root):
    refusal = refusal_of(dspark(draft_root / "draft"), None)
    assert refusal.arm == "R-NOCONFIG"
    assert "has no readable config.json" in str(refusal)


def test_missing_k_refused(draft_root):
    refusal = refusal_of({"method": "dspark", "model": str(draft_root / "draft")}, CFG_QWEN3)
    assert refusal.arm == "R-K-MISSING"
    assert "was not given" in str(refusal)


@pytest.mark.parametrize("k", [0, -1, True, "7"], ids=["0", "-1", "True", "str-7"])
def test_invalid_k_refused(draft_root, k):
    refusal = refusal_of(dspark(draft_root / "draft", num_speculative_tokens=k), CFG_QWEN3)
    assert refusal.arm == "R-K-INVALID"
    assert "must be a positive integer" in str(refusal)


# --- S7: the block floor -------------------------------------------------------------------


def _standalone_with_block_key(key):
    draft_config = {k: v for k, v in CFG_QWEN3.items() if k != "block_size"}
    return {**draft_config, key: 7}


@pytest.mark.parametrize(
    ("key", "draft_config", "target", "k"),
    [
        ("n_predict", _standalone_with_block_key("n_predict"), TGT_QWEN, 8),
        ("block_size", _standalone_with_block_key("block_size"), TGT_QWEN, 8),
        ("dspark_block_size", _standalone_with_block_key("dspark_block_size"), TGT_QWEN, 8),
        ("num_nextn_predict_layers", None, dataclasses.replace(TGT_DSV4, num_nextn_predict_layers=2), 5),
    ],
    ids=["n_predict", "block_size", "dspark_block_size", "folded"],
)
def test_k_over_block_refused(draft_root, key, draft_config, target, k):
    spec = {"method": "dspark", "num_speculative_tokens": k}
    if draft_config is not None:
        spec["model"] = str(draft_root / "draft")
    refusal = refusal_of(spec, draft_config, target)
    assert refusal.arm == "R-BLOCK"
    assert "does not fit the draft's block" in str(refusal)
    assert key in str(refusal)


# k = 1, the smallest valid k: `k <= 0` read as `k <= 1` survived the sweep without it.
@pytest.mark.parametrize("k", [1, 3, 7, 14], ids=["1", "3", "7", "14"])
def test_k_within_block_accepted(draft_root, k):
    route = resolve_route(dspark(draft_root / "draft", num_speculative_tokens=k), CFG_QWEN3, TGT_QWEN)
    assert route.block_floor == 7
    assert route.block_floor_key == "block_size"


def test_no_block_key_skips_floor(draft_root):
    draft_config = {k: v for k, v in CFG_QWEN3.items() if k != "block_size"}
    spec = dspark(draft_root / "draft", num_speculative_tokens=9)
    route = resolve_route(spec, draft_config, TGT_QWEN)
    assert route.block_floor is None


# --- The classification functions, called directly ------------------------------------------


@pytest.mark.parametrize(
    ("architectures", "model_type", "expected"),
    [
        (["DSparkDraftModel"], "qwen3", "Qwen3DSparkModel"),
        (["Qwen3DSparkModel"], "qwen3", "Qwen3DSparkModel"),
        (["Gemma4DSparkModel"], "gemma4", "Qwen3DSparkModel"),
        (["DSparkDraftModel"], "deepseek_v4", "R-DSV4-LANE"),
        ([], "qwen3", "R-DSV4-LANE"),
    ],
    ids=["pair", "qwen3", "gemma4", "dsv4", "empty"],
)
def test_resolve_dspark_architecture(architectures, model_type, expected):
    if expected == "R-DSV4-LANE":
        # Arm only: what the user reads is pinned through resolve_route (T-R05, T-E01).
        with pytest.raises(RouteRefusal) as refused:
            resolve_dspark_architecture(architectures, model_type)
        assert refused.value.arm == "R-DSV4-LANE"
    else:
        assert resolve_dspark_architecture(architectures, model_type) == expected


def test_predicate_arm_model_id():
    # CFG_LLAMA's fields satisfy no other disjunct: only the name answers.
    model_id = "org/DSpark-Qwen3-b7"
    assert is_dspark_draft(model_id, CFG_LLAMA["architectures"], CFG_LLAMA["model_type"]) is True


@pytest.mark.parametrize(
    ("architectures", "model_type"),
    [(["Qwen3DSparkModel"], "qwen3"), (["Gemma4DSparkModel"], "gemma4")],
    ids=["Qwen3", "Gemma4"],
)
def test_predicate_arm_declared_lane(architectures, model_type):
    assert is_dspark_draft(NEUTRAL_ID, architectures, model_type) is True


def test_predicate_arm_pair():
    assert is_dspark_draft(NEUTRAL_ID, ["DSparkDraftModel"], "qwen3") is True


@pytest.mark.parametrize(
    ("architectures", "model_type"),
    [(["DSparkDraftModel"], "deepseek_v4"), (["LlamaForCausalLM"], "llama"), ([], "qwen3")],
    ids=["dsv4-neutral", "llama", "empty+qwen3"],
)
def test_predicate_negatives(architectures, model_type):
    assert is_dspark_draft(NEUTRAL_ID, architectures, model_type) is False


def test_translation_hoists_and_shifts():
    translated = translate_speculators_layout(CFG_SPEC)
    assert translated["architectures"] == ["Qwen3DSparkModel"]
    assert translated["model_type"] == "qwen3"
    assert translated["block_size"] == 7
    assert translated["mask_token_id"] == 5
    assert translated["markov_head_type"] == "vanilla"
    assert translated["target_layer_ids"] == [1, 9, 17]
    assert "speculators_model_type" not in translated


# A dflash speculators wrapper: the block and mask token live at the top level, and the
# layer config says nothing about the lane.
CFG_SPEC_DFLASH = {
    "speculators_model_type": "dflash",
    "transformer_layer_config": {"model_type": "qwen3"},
    "mask_token_id": 5,
    "block_size": 16,
}


def test_dflash_translation_declares_dflash_lane_and_hoists_block():
    translated = translate_speculators_layout(CFG_SPEC_DFLASH)
    assert translated["architectures"] == ["DFlashDraftModel"]
    assert translated["model_type"] == "qwen3"
    assert translated.get("block_size") == 16
    assert translated.get("mask_token_id") == 5
    assert "speculators_model_type" not in translated


# --- what a refusal names, and whose quantization a route keeps ---------------------------
# Found by `killmap sweep` (README, "Finding what the catalog misses"): every arm was
# asserted by its phrase, but no test read the values a refusal interpolates, so mutmut's
# argument removals (`model=None`, `value=None`, ...) all survived, and so did a standalone
# draft's own quantization read as None.

REFUSAL_FIELDS = {
    "R-SPEC-KEY": (
        lambda root: {**dspark(root / "draft"), "draft_load_confg": {}},
        CFG_QWEN3,
        TGT_QWEN,
        lambda root: ["'draft_load_confg'", "method, model, num_speculative_tokens, draft_load_config"],
    ),
    "R-K-MISSING": (
        lambda root: {"method": "dspark", "model": str(root / "draft")},
        CFG_QWEN3,
        TGT_QWEN,
        lambda root: ["method 'dspark'"],
    ),
    "R-K-INVALID": (
        lambda root: dspark(root / "draft", num_speculative_tokens="7"),
        CFG_QWEN3,
        TGT_QWEN,
        lambda root: ["got '7'"],
    ),
    "R-NOCONFIG": (lambda root: dspark(root / "draft"), None, TGT_QWEN, lambda root: [repr(str(root / "draft"))]),
    "R-IDENTITY": (
        lambda root: dspark(root / "draft"),
        CFG_LLAMA,
        TGT_QWEN,
        lambda root: [repr(str(root / "draft")), "['LlamaForCausalLM']", "'llama'"],
    ),
    "R-DSV4-LANE": (
        lambda root: dspark(root / "dspark-v4-export"),
        CFG_DSV4,
        TGT_QWEN,
        lambda root: [repr(str(root / "dspark-v4-export")), "['DSparkDraftModel']", "'deepseek_v4'"],
    ),
    "R-FOLD-TARGET": (
        lambda root: {"method": "dspark", "num_speculative_tokens": K},
        None,
        TGT_QWEN,
        lambda root: ["'Qwen/Qwen3-8B'", "model_type 'qwen3'"],
    ),
    "R-BLOCK": (
        lambda root: dspark(root / "draft", num_speculative_tokens=9),
        CFG_QWEN3,
        TGT_QWEN,
        lambda root: ["num_speculative_tokens=9", "block of 7 (read from block_size)"],
    ),
}


@pytest.mark.parametrize("arm", sorted(REFUSAL_FIELDS))
def test_refusals_name_the_values_they_refuse(draft_root, arm):
    spec, draft_config, target, named = REFUSAL_FIELDS[arm]
    message = str(refusal_of(spec(draft_root), draft_config, target))
    for text in named(draft_root):
        assert text in message


def test_a_standalone_draft_keeps_its_own_quantization(draft_root):
    route = resolve_route(dspark(draft_root / "draft", quantization="fp8"), CFG_QWEN3, TGT_QWEN)
    assert route.quantization == "fp8"
    assert route.quant_source == "draft"
