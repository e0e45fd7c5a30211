"""Unified diffs, read and applied in both directions, byte-exact.

Used by the revert-patch operator: "the fix, reverted". The diff is applied in reverse
only when the current text is exactly the patch's postimage, and the reversal is then
applied forward again to prove both byte boundaries (the same text comes back).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(ValueError):
    pass


@dataclass(frozen=True)
class Hunk:
    old_start: int
    new_start: int
    old_lines: tuple[str, ...]  # preimage side (context + removed), with line endings
    new_lines: tuple[str, ...]  # postimage side (context + added), with line endings


@dataclass(frozen=True)
class FilePatch:
    old_path: str
    new_path: str
    hunks: tuple[Hunk, ...]


def split_lines(text: str) -> list[str]:
    """Lines ended by '\\n' only, each keeping its ending (so '\\r\\n' stays whole).

    Not str.splitlines(): that also breaks at form feeds, '\\x1c'-'\\x1e', '\\x85' and
    U+2028/9, which may sit inside a source line (a form feed between sections, one in a
    string). diff, git, libcst and coverage all count '\\n' only, so splitting anywhere
    else shifts every line number after it and breaks hunks apart.
    """
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def equal_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many lines two versions share at the start, and then at the end (never overlapping).

    Found by halving, each step one comparison of two slices (done in C), not a line at a time
    in Python: a sweep asks this of every mutant of a thousand-line module, several times."""
    shorter = min(len(a), len(b))
    head = _longest_equal(lambda n: a[:n] == b[:n], shorter)
    tail = _longest_equal(lambda n: a[len(a) - n :] == b[len(b) - n :], shorter - head)
    return head, tail


def _longest_equal(equal: Callable[[int], bool], most: int) -> int:
    """The largest n <= most for which equal(n) holds, where it holds for every n below one
    that holds (true of a shared start or end) and for n = 0."""
    low, high = 0, most
    while low < high:
        middle = (low + high + 1) // 2
        if equal(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _strip_prefix(path: str) -> str:
    path = path.split("\t")[0].strip()
    if path.startswith(("a/", "b/")):
        return path[2:]
    return path


def parse_patch(text: str) -> list[FilePatch]:
    lines = split_lines(text)
    files: list[FilePatch] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("--- "):
            i += 1
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("+++ "):
            raise PatchError(f"line {i + 1}: '---' without a following '+++'")
        old_path = _strip_prefix(lines[i][4:])
        new_path = _strip_prefix(lines[i + 1][4:])
        i += 2
        hunks = []
        while i < len(lines) and lines[i].startswith("@@"):
            match = HUNK_HEADER.match(lines[i])
            if not match:
                raise PatchError(f"line {i + 1}: malformed hunk header")
            old_count = int(match.group(2) or 1) if match.group(2) != "0" else 0
            new_count = int(match.group(4) or 1) if match.group(4) != "0" else 0
            i += 1
            old: list[str] = []
            new: list[str] = []
            while i < len(lines) and (len(old) < old_count or len(new) < new_count):
                line = lines[i]
                tag, body = line[:1], line[1:]
                if tag == " " or line in ("\n", "\r\n"):
                    body = body if tag == " " else line
                    old.append(body)
                    new.append(body)
                elif tag == "-":
                    old.append(body)
                elif tag == "+":
                    new.append(body)
                elif tag == "\\":
                    pass
                else:
                    raise PatchError(f"line {i + 1}: unexpected line inside a hunk")
                i += 1
                # "\ No newline at end of file" applies to the line just read.
                if i < len(lines) and lines[i].startswith("\\"):
                    if tag in (" ", "-"):
                        old[-1] = old[-1].rstrip("\r\n")
                    if tag in (" ", "+"):
                        new[-1] = new[-1].rstrip("\r\n")
                    i += 1
            if len(old) != old_count or len(new) != new_count:
                raise PatchError("a hunk is shorter than its header says")
            hunks.append(Hunk(int(match.group(1)), int(match.group(3)), tuple(old), tuple(new)))
        if not hunks:
            raise PatchError(f"no hunks for {new_path}")
        files.append(FilePatch(old_path, new_path, tuple(hunks)))
    if not files:
        raise PatchError("no '---'/'+++' file header found: not a unified diff")
    return files


def _apply(text: str, hunks: tuple[Hunk, ...], *, reverse: bool) -> str:
    lines = split_lines(text)
    out: list[str] = []
    cursor = 0
    for hunk in hunks:
        start = hunk.new_start if reverse else hunk.old_start
        expect = hunk.new_lines if reverse else hunk.old_lines
        replace = hunk.old_lines if reverse else hunk.new_lines
        index = max(start - 1, 0) if expect else start
        if index < cursor or tuple(lines[index : index + len(expect)]) != expect:
            side = "postimage" if reverse else "preimage"
            raise PatchError(f"the file is not the patch's {side} at line {start}")
        out.extend(lines[cursor:index])
        out.extend(replace)
        cursor = index + len(expect)
    out.extend(lines[cursor:])
    return "".join(out)


def reverse_apply(text: str, patch: FilePatch) -> str:
    """Return the preimage, after proving the round trip back to `text` is exact."""
    preimage = _apply(text, patch.hunks, reverse=True)
    if _apply(preimage, patch.hunks, reverse=False) != text:
        raise PatchError("reversing and re-applying the patch does not give the same bytes back")
    return preimage
