"""Pins: bind a mutation to the syntax of its target, and rewrite pins after review.

A named mutation is written against code as it was. When that code changes, the
mutation may no longer mean what its name says; the verdict is then "stale" until a
person reviews it and re-pins. revert-patch mutations also pin the patch, its preimage and
its postimage (the target file as it is) byte for byte; a changed byte there is refused (a
GateError naming the pin, exit 2), never a verdict: the patch's boundaries are what the
entry claims, and a verdict over other bytes would prove something else.

Two pin formats are read. `ast1:sha256:...` (what `killmap pin` writes) binds the
target's normalized syntax: a formatter, a comment or a blank line leaves it valid (see
syntax.py for what is ignored and why). `sha256:...`, the older format, binds the
target's exact text and is still checked that way; `killmap pin` upgrades it. The patch
and preimage pins of revert-patch stay byte-exact: a patch's boundaries are bytes.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from killmap.catalog.reader import Mutation
from killmap.errors import GateError
from killmap.mutate.mutant import Mutant, sha256_text
from killmap.mutate.patching import split_lines
from killmap.mutate.syntax import is_syntax_pin


def patch_sha256(root: Path, mutation: Mutation) -> str:
    return "sha256:" + hashlib.sha256((root / mutation.param("patch")).read_bytes()).hexdigest()


def postimage_sha256(root: Path, mutation: Mutation) -> str:
    return "sha256:" + hashlib.sha256((root / mutation.target.path).read_bytes()).hexdigest()


def pins_for(root: Path, mutation: Mutation, mutant: Mutant) -> dict[str, str]:
    """The pins this mutation should carry, computed from the current tree."""
    pins = {"pin": mutant.target_pin}
    if mutation.op == "revert-patch":
        pins["patch_pin"] = patch_sha256(root, mutation)
        if mutant.applied:
            pins["preimage_pin"] = sha256_text(mutant.mutated or "")
            # Only a file the patch reverses is its postimage.
            pins["postimage_pin"] = postimage_sha256(root, mutation)
    return pins


def current_pin(pin: str, mutant: Mutant) -> str:
    """The target's pin now, in the format of the recorded `pin`."""
    return mutant.target_pin if is_syntax_pin(pin) else mutant.target_sha256


def check_pins(root: Path, mutation: Mutation, mutant: Mutant) -> str | None:
    """A sentence saying what to review, or None when every pin still holds.

    A revert-patch's byte pins are checked first and raise a GateError instead (see the
    module's docstring).
    """
    if mutation.op == "revert-patch":
        check_patch_pins(root, mutation, mutant)
    if mutation.pin and mutation.pin != current_pin(mutation.pin, mutant):
        return (
            f"{mutation.target} changed since this mutation was pinned; review that the "
            f"mutation still means what its name says, then run 'killmap pin {mutation.name}'"
        )
    return None


def check_patch_pins(root: Path, mutation: Mutation, mutant: Mutant | None = None) -> None:
    """Refuse, naming the pin, when a byte of the postimage, the patch or the preimage changed.

    The postimage first: a change inside a hunk also stops the patch from reversing, and
    the pin says which bytes moved better than 'not applied' does. Without a mutant only
    the two files are checked: what a gate does before it starts a worker.
    """
    path, patch = mutation.target.path, mutation.param("patch")
    checks = (
        ("postimage_pin", lambda: postimage_sha256(root, mutation), f"{path} is not the patch's pinned postimage"),
        ("patch_pin", lambda: patch_sha256(root, mutation), f"the patch {patch} is not the pinned patch"),
        (
            "preimage_pin",
            lambda: sha256_text(mutant.mutated or "") if mutant is not None and mutant.applied else None,
            f"reverting {patch} no longer gives the pinned preimage of {path}",
        ),
    )
    for field, now, what in checks:
        pinned = mutation.param(field)
        actual = now() if pinned else None
        if pinned and actual is not None and actual != pinned:
            raise mutation.fail(
                f"{what} (a changed byte; it is {actual}): review the fix and its patch, then run "
                f"'killmap pin {mutation.name}'",
                field,
            )


_TABLE = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\-]+)\s*\]\]?")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-]+)\s*=")
_QUOTED_VALUE = re.compile(r"""^\s*[A-Za-z0-9_\-]+\s*=\s*("[^"\\\n]*"(?!")|'[^'\n]*'(?!'))""")


def rewrite_pins(text: str, updates: dict[str, dict[str, str]], catalog: str) -> str:
    """Set pin fields for the named mutations, keeping every other byte of the file.

    The file is edited line by line (comments and layout survive), then re-parsed to
    prove that the only change is the pins.
    """
    lines = split_lines(text)
    blocks, inside_string = _mutation_blocks(lines)
    edits: dict[int, str] = {}
    inserts: dict[int, list[str]] = {}
    for block_start, block_end in blocks:
        keys = _block_keys(lines, block_start, block_end, inside_string)
        name_line = keys.get("name")
        if name_line is None:
            continue
        name = tomllib.loads(lines[name_line])["name"]
        if name not in updates:
            continue
        for field, value in updates[name].items():
            if field in keys:
                edits[keys[field]] = _with_value(lines[keys[field]], keys[field], field, value, name, catalog)
            else:
                anchor = keys.get("target", name_line)
                inserts.setdefault(anchor, []).append(f'{field} = "{value}"\n')
    result = _edited(lines, edits, inserts)
    _prove_only_pins_changed(text, result, updates, catalog)
    return result


# The catalog is read as lines, not through a TOML writer, so that its comments and layout
# stay; these helpers find the blocks and keys well enough to edit them, and
# _prove_only_pins_changed re-parses the result to catch whatever they get wrong.
def _mutation_blocks(lines: list[str]) -> tuple[list[tuple[int, int]], set[int]]:
    """[start, end) of each [[mutation]] block, and the lines that continue a multi-line string."""
    blocks: list[tuple[int, int]] = []
    start = None
    in_multiline = False
    inside_string: set[int] = set()
    for index, line in enumerate(lines):
        if in_multiline:
            inside_string.add(index)
        if line.count('"""') % 2 == 1 or line.count("'''") % 2 == 1:
            in_multiline = not in_multiline
            continue
        if in_multiline:
            continue
        table = _TABLE.match(line)
        if table:
            if start is not None:
                blocks.append((start, index))
                start = None
            if line.strip().startswith("[[") and table.group(1) == "mutation":
                start = index
    if start is not None:
        blocks.append((start, len(lines)))
    return blocks, inside_string


def _block_keys(lines: list[str], block_start: int, block_end: int, inside_string: set[int]) -> dict[str, int]:
    """The line of each key's first assignment in the block."""
    keys: dict[str, int] = {}
    for index in range(block_start + 1, block_end):
        # `pin = ...` written inside a multi-line note is text, not the pin key.
        key = None if index in inside_string else _KEY.match(lines[index])
        if key and key.group(1) not in keys:
            keys[key.group(1)] = index
    return keys


def _with_value(old: str, index: int, field: str, value: str, name: str, catalog: str) -> str:
    """The line with its value replaced: the indent and a trailing comment stay."""
    quoted = _QUOTED_VALUE.match(old)
    if quoted is None:
        raise GateError(
            f"line {index + 1}: {field} is not a one-line string; edit the pins by hand",
            file=catalog,
            mutation=name,
            field=field,
        )
    return f'{old[: quoted.start(1)]}"{value}"{old[quoted.end(1) :]}'


def _edited(lines: list[str], edits: dict[int, str], inserts: dict[int, list[str]]) -> str:
    """The lines with their edits, and the new keys after their anchor line."""
    out = []
    for index, line in enumerate(lines):
        out.append(edits.get(index, line))
        if index in inserts:
            if not out[-1].endswith("\n"):
                out[-1] += "\n"
            out.extend(inserts[index])
    return "".join(out)


def _prove_only_pins_changed(before: str, after: str, updates: dict[str, dict[str, str]], catalog: str) -> None:
    old = tomllib.loads(before)
    try:
        new = tomllib.loads(after)
    except tomllib.TOMLDecodeError:
        new = None
    if new is None:
        raise GateError(
            "could not rewrite pins without breaking the TOML; edit the pins by hand", file=catalog, field="pin"
        )
    pin_fields = ("pin", "patch_pin", "preimage_pin", "postimage_pin")
    for entry in old.get("mutation", []):
        for field, value in updates.get(entry.get("name"), {}).items():
            entry[field] = value

    def strip(data: dict[str, Any]) -> list[dict[str, Any]]:
        return [{k: v for k, v in e.items() if k not in pin_fields} for e in data.get("mutation", [])]

    def pins(data: dict[str, Any]) -> list[dict[str, Any]]:
        return [{k: e.get(k) for k in pin_fields} for e in data.get("mutation", [])]

    if strip(old) != strip(new) or pins(old) != pins(new) or old.get("gate") != new.get("gate"):
        raise GateError(
            "could not rewrite pins without changing anything else; edit the pins by hand", file=catalog, field="pin"
        )
