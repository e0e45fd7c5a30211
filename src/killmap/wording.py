"""Counted nouns, as the console and the reports say them: "1 test", "2 tests", "0 sites"."""

from __future__ import annotations


def counted(count: int, phrase: str) -> str:
    """`count` and `phrase`, its last word in the plural unless `count` is one ("selected
    test" gives "3 selected tests"); the words killmap counts all take an s."""
    return f"{count} {phrase}" if count == 1 else f"{count} {phrase}s"
