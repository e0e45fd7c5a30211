"""Every refusal reads in its own words (spec §4.4, §5.3, test T-MSG-DISJOINT).

The phrases are literals here, never read from the subject: if they were imported, merging
two templates (M03) would change both sides of the comparison (spec §9 trap 12).
"""

from __future__ import annotations

from draftroute import REFUSAL_TEMPLATES, RouteRefusal

PHRASES = {
    "R-SPEC-KEY": "unknown speculative-config key",
    "R-LOADCFG": "draft_load_config is invalid",
    "R-SPEC-LAYOUT": "cannot be translated",
    "R-METHOD": "is not routed here",
    "R-K-MISSING": "was not given",
    "R-K-INVALID": "must be a positive integer",
    "R-DFLASH-MODEL": "needs 'model' to name a DFlash draft",
    "R-NOCONFIG": "has no readable config.json",
    "R-FOLD-TARGET": "without a separate draft expects",
    "R-IDENTITY": "does not identify as a DSpark draft",
    "R-DSV4-LANE": "classifies to the DeepSeek-V4 folded lane",
    "R-BLOCK": "does not fit the draft's block",
    "L-MARKOV-TYPE": "is not one of vanilla, gated, rnn",
    "L-REMAP-RANK": "after the vanilla remap",
}

# One value for every placeholder of every template; none of them contains a phrase.
SAMPLE_FIELDS = {
    "key": "sample_key",
    "known": "a, b",
    "reason": "sample reason",
    "model": "models/sample",
    "method": "sample",
    "value": "sample",
    "target": "org/sample-target",
    "target_model_type": "sample_type",
    "archs": ["SampleModel"],
    "model_type": "sample_type",
    "k": 9,
    "floor": 4,
    "floor_key": "sample_key",
    "name": "sample.weight",
    "got": 8,
    "want": 4,
}


def test_refusal_phrases_are_disjoint():
    assert set(REFUSAL_TEMPLATES) == set(PHRASES)
    rendered = {arm: template.format(**SAMPLE_FIELDS) for arm, template in REFUSAL_TEMPLATES.items()}
    for arm, phrase in PHRASES.items():
        holders = sorted(other for other, message in rendered.items() if phrase in message)
        assert holders == [arm], f"{phrase!r} should be in {arm}'s message only, found in {holders}"


def test_a_refusal_reads_as_its_message_alone():
    # Found by `killmap sweep`'s delete-call on RouteRefusal.__init__: without
    # super().__init__(message), str() is the tuple "('R-METHOD', '...')", which still holds
    # every phrase, so no phrase test could tell.
    refusal = RouteRefusal("R-METHOD", "the message")
    assert str(refusal) == "the message"
    assert refusal.arm == "R-METHOD"
