"""Which catalog field a static problem is the fault of, and the near-miss of a text that
matched nowhere.

`check` names a field with each problem, and the field named is the one whose text is at
fault: for a mutant that cannot run, the field whose text it holds (`new`, for `replace`);
for one that matched the wrong number of sites, the field the operator looks for (`old`).
"""

from __future__ import annotations

import difflib

from killmap.catalog.reader import Mutation

# The field whose text an operator looks for in the target: the fault when it matches a
# wrong number of sites.
MATCHED_FIELD = {
    "replace": "old",
    "delete-call": "call",
    "stub-call": "call",
    "constant-return": "target",
    "merge-strings": "drop",
    "drop-operand": "operand",
    "negate": "condition",
    "revert-patch": "patch",
}
# The field whose text ends up in the mutant: the fault when the mutant cannot run.
INSERTED_FIELD = {
    "replace": "new",
    "delete-call": "call",
    "stub-call": "value",
    "constant-return": "value",
    "merge-strings": "keep",
    "drop-operand": "operand",
    "negate": "condition",
    "revert-patch": "patch",
}
# The least similarity at which a text is shown as what `old` may have meant.
NEAR_ENOUGH = 0.6


def not_applied_field(mutation: Mutation, reason: str) -> str:
    """The field to blame for a mutant that was not applied, given its reason."""
    if "byte-identical" in reason:
        return INSERTED_FIELD.get(mutation.op, "op")
    if mutation.op == "merge-strings" and reason.startswith("'keep'"):
        return "keep"
    return MATCHED_FIELD.get(mutation.op, "op")


def broken_field(mutation: Mutation) -> str:
    """The field to blame for a mutant that cannot run: the one whose text it holds (the
    problem shows the mutant's line, so a definition `old` removed is seen there too)."""
    return INSERTED_FIELD.get(mutation.op, "op")


def near_miss(old: str, region: str) -> tuple[int, str] | None:
    """Where in `region` the text `old` nearly is, and what differs, or None when nothing is
    near. Checked from the commonest slip to the vaguest: a trailing newline (the target's
    text ends where its last line's code does), quotes, indentation, then the most similar
    text of the same number of lines."""
    bare = old.rstrip()
    if bare != old and bare and bare in region:
        what = "a trailing newline" if "\n" in old[len(bare) :] else "trailing whitespace"
        at = region.find(bare)
        # The region of a function or class ends with its last line's code, not its newline.
        why = " (the target's text ends with that line's code)" if region.endswith(bare) else ""
        return at, f"'old' ends with {what} the target does not have there{why}: drop it"
    swapped = region.translate(_QUOTES)
    at = swapped.find(old.translate(_QUOTES))
    if at >= 0 and ("'" in old or '"' in old):
        return at, f"the quotes differ: the target has {_shown(region[at : at + len(old)])}"
    spaced = _same_but_indentation(old, region)
    if spaced is not None:
        # Shown from the start of its first line to the end of its last: the indentation is the news.
        first = region.rfind("\n", 0, spaced) + 1
        end = region.find("\n", spaced + len(old.strip()))
        shown = _shown(region[first : end if end >= 0 else None])
        return spaced, f"the indentation or spacing differs: the target has {shown}"
    return _most_similar(old, region)


_QUOTES = str.maketrans("'", '"')


def _shown(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _windows(region: str, size: int) -> list[tuple[int, str]]:
    """Every run of `size` consecutive lines of the region, with its offset."""
    lines = region.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    return [(starts[i], "".join(lines[i : i + size])) for i in range(max(len(lines) - size + 1, 0))]


def _same_but_indentation(old: str, region: str) -> int | None:
    """The offset of the first run of lines equal to `old`'s when each is stripped of its
    edges' whitespace (for one line: a line holding `old` stripped)."""
    wanted = [line.strip() for line in old.strip().splitlines()]
    if not wanted or not any(wanted):
        return None
    for offset, window in _windows(region, len(wanted)):
        got = [line.strip() for line in window.splitlines()]
        if len(wanted) == 1 and wanted[0] in got[0]:
            return offset + window.find(wanted[0])
        if got == wanted:
            return offset + len(window) - len(window.lstrip())
    return None


def _most_similar(old: str, region: str) -> tuple[int, str] | None:
    """The text of the region most like `old`: within a window of as many lines, the span
    from the first to the last character the two share."""
    size = max(len(old.strip().splitlines()), 1)
    best: tuple[float, int, str] | None = None
    for offset, window in _windows(region, size):
        matcher = difflib.SequenceMatcher(None, old.strip(), window, autojunk=False)
        blocks = [b for b in matcher.get_matching_blocks() if b.size]
        if not blocks:
            continue
        span = window[blocks[0].b : blocks[-1].b + blocks[-1].size]
        ratio = difflib.SequenceMatcher(None, old.strip(), span, autojunk=False).ratio()
        if best is None or ratio > best[0]:
            best = (ratio, offset + blocks[0].b, window.strip())
    if best is None or best[0] < NEAR_ENOUGH:
        return None
    return best[1], f"the nearest text is {_shown(best[2])}"
