"""The median sentence length, in words, of each documentation page.

    python3 benchmarks/sentences.py                 # README.md and every docs/*.md
    python3 benchmarks/sentences.py docs/trust.md   # named pages only

What counts as prose: every line outside a fenced code block and outside an HTML comment.
Headings are not sentences. A table cell is read as prose of its own, so one long cell counts
as the long sentence it is; a cell of fewer than four words is a label (`held`, `delete-call`),
not a sentence, and is left out. A sentence ends at `.`, `!` or `?` followed by a space or the end
of its paragraph, and at the end of a paragraph, list item or cell. A word is a run of
non-space characters once Markdown links are reduced to their text; inline code counts as the
words it holds. Short sentences outside tables ("Nothing to do.") count: they are what a
reader reads.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_LABEL_WORDS = 4
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[^a-z0-9])")


def prose_units(text: str) -> list[str]:
    """Paragraphs, list items and table cells outside code fences, headings and comments."""
    units: list[str] = []
    current: list[str] = []
    fenced = False
    commented = False

    def flush() -> None:
        if current:
            units.append(" ".join(current))
            current.clear()

    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            flush()
            fenced = not fenced
            continue
        if fenced:
            continue
        if line.startswith("<!--"):
            commented = "-->" not in line
            continue
        if commented:
            commented = "-->" not in line
            continue
        if not line or line.startswith(("#", "---", "--8<--")) or raw.startswith("    "):
            flush()
            continue
        if line.startswith("|"):
            flush()
            if not re.fullmatch(r"\|[\s:|-]*\|?", line):
                cells = (cell.strip() for cell in line.strip("|").split("|"))
                units.extend(cell for cell in cells if len(cell.split()) >= _LABEL_WORDS)
            continue
        if re.match(r"([-*+]|\d+\.)\s", line):
            flush()
            line = re.sub(r"^([-*+]|\d+\.)\s+", "", line)
        current.append(line)
    flush()
    return units


def sentence_lengths(text: str) -> list[int]:
    """The number of words in each sentence of the page's prose."""
    lengths = []
    for unit in prose_units(text):
        plain = _LINK.sub(r"\1", unit)
        for sentence in _SENTENCE_END.split(plain):
            words = sentence.split()
            if words:
                lengths.append(len(words))
    return lengths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", type=Path)
    args = parser.parse_args(argv)
    pages = args.pages or [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    print(f"{'page':<28} {'sentences':>9} {'median':>6} {'longest':>7}")
    for page in pages:
        lengths = sentence_lengths(page.read_text(encoding="utf-8"))
        if not lengths:
            continue
        name = page.relative_to(ROOT) if page.is_absolute() else page
        print(f"{str(name):<28} {len(lengths):>9} {statistics.median(lengths):>6} {max(lengths):>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
