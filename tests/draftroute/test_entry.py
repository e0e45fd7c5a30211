"""The production entry reaches the classification (spec §6, tests T-E*).

A unit test on the predicate does not prove the loader reaches it (seed-004): these go
through prepare_draft with real config.json files, so deleting the identity call or
trusting the method flag turns them red even though every unit test stays green.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from draft_shapes import CFG_DSV4, CFG_LLAMA, CFG_PAIR, TGT_QWEN, K, native_head_weights

from draftroute import LoadConfig, RouteRefusal, prepare_draft


def write_draft(directory: Path, config: dict) -> Path:
    directory.mkdir(parents=True)
    (directory / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return directory


def read_config_json(model: str):
    """The injected config reader: None when the draft has no config.json."""
    path = Path(model) / "config.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def prepare(model: Path, build):
    return prepare_draft(
        {"method": "dspark", "model": str(model), "num_speculative_tokens": K},
        TGT_QWEN,
        read_config=read_config_json,
        read_weights=lambda _model: native_head_weights(),
        build=build,
        global_load_config=LoadConfig(load_format="fastsafetensors"),
        target_quant_config=object(),
        draft_quant_config=object(),
    )


@pytest.mark.parametrize(
    ("dirname", "config", "arm", "phrase", "sibling_phrase"),
    [
        (
            "draft",
            CFG_LLAMA,
            "R-IDENTITY",
            "does not identify as a DSpark draft",
            "classifies to the DeepSeek-V4 folded lane",
        ),
        # The DeepSeek-V4 lane refusal is reachable only by name (P1), hence the path.
        (
            "dspark-v4-export",
            CFG_DSV4,
            "R-DSV4-LANE",
            "classifies to the DeepSeek-V4 folded lane",
            "does not identify as a DSpark draft",
        ),
    ],
    ids=["identity", "dsv4"],
)
def test_entry_refuses_by_name(build, draft_root, dirname, config, arm, phrase, sibling_phrase):
    draft = write_draft(draft_root / dirname, config)
    with pytest.raises(RouteRefusal) as refused:
        prepare(draft, build)
    assert refused.value.arm == arm
    assert phrase in str(refused.value)
    assert sibling_phrase not in str(refused.value)
    assert build.calls == []


def test_entry_routes_pair(build, draft_root):
    # The declared name (DSparkDraftModel) differs from the lane, so only a decision can
    # produce Qwen3DSparkModel here. A method-flag default would also produce it: this
    # test survives M09 by design, which is why T-E01 exists (seed-004's "loaded by
    # omission rather than by decision").
    prepare(write_draft(draft_root / "draft", CFG_PAIR), build)
    assert len(build.calls) == 1
    assert build.calls[0]["architecture"] == "Qwen3DSparkModel"
    assert "markov_head.markov_w1.weight" in build.calls[0]["weights"]
