"""Unified diffs: parsed, reversed and re-applied byte for byte."""

from __future__ import annotations

import difflib
import re

import pytest

from killmap.mutate.patching import Hunk, PatchError, equal_ends, parse_patch, reverse_apply, split_lines

PATH = "src/pkg/mod.py"


def unified(before: str, after: str, path: str = PATH, n: int = 3) -> str:
    """difflib's unified diff, plus the '\\ No newline at end of file' marker it omits."""
    out = []
    for line in difflib.unified_diff(lines(before), lines(after), fromfile=f"a/{path}", tofile=f"b/{path}", n=n):
        out.append(line)
        if not line.endswith("\n"):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def lines(text: str) -> list[str]:
    """Lines as diff sees them: ended by '\\n' only (not by '\\f', unlike str.splitlines)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def numbered(count: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, count + 1))


def test_a_single_hunk_is_parsed_into_both_sides_with_line_endings():
    before, after = "a\nb\nc\n", "a\nB\nc\n"
    [patch] = parse_patch(unified(before, after))
    assert (patch.old_path, patch.new_path) == (PATH, PATH)
    assert patch.hunks == (Hunk(1, 1, ("a\n", "b\n", "c\n"), ("a\n", "B\n", "c\n")),)


def test_reverse_apply_gives_back_the_preimage_of_a_single_hunk():
    before, after = "a\nb\nc\n", "a\nB\nc\n"
    [patch] = parse_patch(unified(before, after))
    assert reverse_apply(after, patch) == before


def test_reverse_apply_handles_several_hunks_far_apart():
    before = numbered(40)
    after = (
        before.replace("line 3\n", "line three\n").replace("line 30\n", "line 30\nline 30.5\n").replace("line 20\n", "")
    )
    [patch] = parse_patch(unified(before, after))
    assert len(patch.hunks) == 3
    assert reverse_apply(after, patch) == before


def test_reverse_apply_handles_a_pure_insertion_and_a_pure_deletion_without_context():
    before = numbered(10)
    after = before.replace("line 2\n", "line 2\nnew\n").replace("line 8\n", "")
    [patch] = parse_patch(unified(before, after, n=0))
    assert [(len(h.old_lines), len(h.new_lines)) for h in patch.hunks] == [(0, 1), (1, 0)]
    assert reverse_apply(after, patch) == before


def test_reverse_apply_of_a_file_created_from_nothing_gives_the_empty_text():
    [patch] = parse_patch(unified("", "x = 1\n"))
    assert patch.hunks[0].old_lines == ()
    assert reverse_apply("x = 1\n", patch) == ""


def test_no_newline_at_end_of_file_on_the_new_side_is_kept_exactly():
    before, after = "a\nb\n", "a\nb\nc"
    text = unified(before, after)
    assert "\\ No newline at end of file" in text
    [patch] = parse_patch(text)
    assert patch.hunks[0].new_lines[-1] == "c"
    assert reverse_apply(after, patch) == before


def test_no_newline_at_end_of_file_on_the_old_side_is_kept_exactly():
    before, after = "a\nb", "a\nb\nc\n"
    [patch] = parse_patch(unified(before, after))
    assert patch.hunks[0].old_lines[-1] == "b"
    assert patch.hunks[0].new_lines[-1] == "c\n"
    assert reverse_apply(after, patch) == before


def test_no_newline_at_end_of_file_on_both_sides_is_kept_exactly():
    before, after = "a\nb", "a\nc"
    [patch] = parse_patch(unified(before, after))
    assert reverse_apply(after, patch) == before


def test_reverse_apply_refuses_a_text_that_is_not_the_postimage():
    [patch] = parse_patch(unified("a\nb\nc\n", "a\nB\nc\n"))
    with pytest.raises(PatchError, match="postimage"):
        reverse_apply("a\nX\nc\n", patch)


def test_reverse_apply_refuses_the_postimage_minus_its_final_newline():
    [patch] = parse_patch(unified("a\nb\n", "a\nB\n"))
    with pytest.raises(PatchError):
        reverse_apply("a\nB", patch)


def test_a_form_feed_inside_a_line_does_not_split_it():
    # Python and diff break lines at '\n' only; str.splitlines() also breaks at '\f'.
    before = 'a = 1\n\x0c\ns = "p\x0cq"\nc = 3\n'
    after = before.replace("p", "P")
    [patch] = parse_patch(unified(before, after))
    assert patch.hunks[0].old_lines == ("a = 1\n", "\x0c\n", 's = "p\x0cq"\n', "c = 3\n")
    assert reverse_apply(after, patch) == before
    assert split_lines("x\x0cy\nz") == ["x\x0cy\n", "z"]


def test_crlf_line_endings_round_trip_byte_for_byte():
    before, after = "a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n"
    [patch] = parse_patch(unified(before, after))
    assert reverse_apply(after, patch) == before


def test_a_patch_touching_two_files_is_parsed_as_two_file_patches():
    text = unified("a\n", "b\n", "one.py") + unified("c\n", "d\n", "two.py")
    patches = parse_patch(text)
    assert [p.new_path for p in patches] == ["one.py", "two.py"]


def test_git_headers_around_the_file_header_are_ignored():
    text = "diff --git a/x.py b/x.py\nindex 1111111..2222222 100644\n" + unified("a\n", "b\n", "x.py")
    [patch] = parse_patch(text)
    assert patch.new_path == "x.py"
    assert reverse_apply("b\n", patch) == "a\n"


def test_a_text_without_a_file_header_is_a_patch_error():
    with pytest.raises(PatchError, match="not a unified diff"):
        parse_patch("just some words\n")


def test_a_header_without_plus_plus_plus_is_a_patch_error():
    with pytest.raises(PatchError, match="'---' without a following '\\+\\+\\+'"):
        parse_patch("--- a/x.py\n@@ -1 +1 @@\n-a\n+b\n")


def test_a_malformed_hunk_header_is_a_patch_error():
    with pytest.raises(PatchError, match="malformed hunk header"):
        parse_patch("--- a/x.py\n+++ b/x.py\n@@ one two @@\n-a\n+b\n")


def test_a_hunk_shorter_than_its_header_is_a_patch_error():
    with pytest.raises(PatchError, match="shorter than its header"):
        parse_patch("--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n")


def test_a_file_header_without_hunks_is_a_patch_error():
    with pytest.raises(PatchError, match="no hunks"):
        parse_patch("--- a/x.py\n+++ b/x.py\n")


def test_a_stray_line_inside_a_hunk_is_a_patch_error():
    with pytest.raises(PatchError, match="unexpected line"):
        parse_patch("--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n*b\n")


def _equal_ends_line_by_line(a: list[str], b: list[str]) -> tuple[int, int]:
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


def test_the_shared_start_and_end_of_two_versions_are_those_a_line_by_line_walk_finds():
    import random

    rng = random.Random(7)
    cases = [([], []), (["a\n"], []), (["a\n"], ["a\n"]), (["a\n", "a\n"], ["a\n"]), (["x\n"], ["y\n"])]
    for _ in range(3000):
        a = [rng.choice("abc") + "\n" for _ in range(rng.randrange(0, 12))]
        b = list(a)
        for _ in range(rng.randrange(0, 3)):
            where = rng.randrange(0, len(b) + 1)
            if b and rng.random() < 0.4:
                del b[min(where, len(b) - 1)]
            elif b and rng.random() < 0.5:
                b[min(where, len(b) - 1)] = rng.choice("abcd") + "\n"
            else:
                b.insert(where, rng.choice("abcd") + "\n")
        cases.append((a, b))
    for a, b in cases:
        assert equal_ends(a, b) == _equal_ends_line_by_line(a, b), (a, b)
