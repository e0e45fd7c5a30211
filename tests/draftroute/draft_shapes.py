"""The fixture shapes of spec §7: targets, draft configs and stand-in tensors.

Plain data only. The refusal phrases are deliberately NOT here: each test file writes the
phrases it asserts as literals, so a change to the subject's wording can never change
both sides of an assertion (spec §9 trap 12).
"""

from __future__ import annotations

from dataclasses import dataclass

from draftroute import TargetInfo

TGT_QWEN = TargetInfo(model="Qwen/Qwen3-8B", model_type="qwen3", quantization=None, num_nextn_predict_layers=None)
# The quantization string is the one seed-001 reports for DeepSeek-V4-Flash.
TGT_DSV4 = TargetInfo(
    model="deepseek-ai/DeepSeek-V4-Flash-0731",
    model_type="deepseek_v4",
    quantization="deepseek_v4_fp8",
    num_nextn_predict_layers=1,
)

CFG_PAIR = {
    "architectures": ["DSparkDraftModel"],
    "model_type": "qwen3",
    "block_size": 7,
    "markov_head_type": "vanilla",
    "markov_rank": 4,
}
CFG_QWEN3 = {"architectures": ["Qwen3DSparkModel"], "model_type": "qwen3", "block_size": 7}
CFG_GEMMA4 = {"architectures": ["Gemma4DSparkModel"], "model_type": "gemma4", "block_size": 7}
CFG_LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}
CFG_DSV4 = {"architectures": ["DSparkDraftModel"], "model_type": "deepseek_v4"}
CFG_NOARCH = {"model_type": "qwen3", "block_size": 7}
# A speculators-format wrapper: no top-level architectures or model_type of its own.
CFG_SPEC = {
    "speculators_model_type": "dspark",
    "transformer_layer_config": {"model_type": "qwen3"},
    "aux_hidden_state_layer_ids": [2, 10, 18],
    "mask_token_id": 5,
    "block_size": 7,
    "markov_head_type": "vanilla",
    "speculators_config": {"algorithm": "dspark", "verifier": {"name_or_path": "Qwen/Qwen3-8B"}},
}
CFG_DFLASH2 = {"architectures": ["DFlash2DraftModel"], "model_type": "qwen3", "block_size": 16}

K = 7


@dataclass(frozen=True, eq=False)
class Tensor:
    """A weight stand-in: the loader reads only `.shape`; identity tells instances apart."""

    shape: tuple[int, ...]


def native_head_weights(rank: int = 4) -> dict[str, Tensor]:
    """A ModelOpt export's Markov and confidence heads, in the native layout (U12)."""
    return {
        "markov_w1.weight": Tensor((32, rank)),
        "markov_w2.weight": Tensor((32, rank)),
        "confidence_proj.weight": Tensor((1, 64)),
        "confidence_proj.bias": Tensor((1,)),
        "fc.weight": Tensor((64, 128)),
    }


NATIVE_HEAD_KEYS = {"markov_w1.weight", "markov_w2.weight", "confidence_proj.weight", "confidence_proj.bias"}
VANILLA_HEAD_KEYS = {
    "markov_head.markov_w1.weight",
    "markov_head.markov_w2.weight",
    "confidence_head.proj.weight",
    "confidence_head.proj.bias",
}
