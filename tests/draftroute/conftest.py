"""Shared fakes for the draftroute suite: a recording build and a neutral draft root."""

from __future__ import annotations

import pytest

# A draft family's name anywhere in a path decides routing on its own: "dspark" answers
# the identity predicate (P1) and "dflash"/"eagle" steer method detection.
FAMILY_NAMES = ("dspark", "dflash", "eagle")


class RecordingBuild:
    """Stands in for vLLM's model construction (spec §3).

    It stores the keyword arguments it was called with and never dereferences them, so a
    wrong value shows up in an assertion instead of crashing inside the fake.
    """

    def __init__(self) -> None:
        self.calls: list[dict] = []
        self.model = object()

    def __call__(self, **kwargs):
        self.calls.append(kwargs)
        return self.model


@pytest.fixture
def build() -> RecordingBuild:
    return RecordingBuild()


@pytest.fixture
def draft_root(tmp_path_factory):
    """A directory whose path names no draft family, for drafts that must stay neutral.

    Not tmp_path: pytest names that after the test, and test_method_autodetect[dspark-by-arch]
    gets ".../test_method_autodetect_dspark_0/", which would answer the identity predicate
    by name and mute the architecture arms (spec §9 trap 3).
    """
    root = tmp_path_factory.mktemp("drafts")
    named = [name for name in FAMILY_NAMES if name in str(root).lower()]
    assert not named, f"the draft root {root} names {named}; routing tests need a neutral path"
    return root
