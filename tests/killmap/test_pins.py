"""Pins: `killmap pin` writes them without disturbing the catalog; check_pins notices change."""

from __future__ import annotations

import difflib
import hashlib
import re
import subprocess
import sys

import pytest

from killmap.catalog.reader import load_catalog, tomllib  # tomli on Python 3.10
from killmap.errors import GateError
from killmap.mutate.mutants import build_mutant, sha256_text
from killmap.mutate.pins import check_pins, pins_for, rewrite_pins
from killmap.mutate.syntax import syntax_pin

MOD = "src/pkg/mod.py"
CATALOG = "mutations/catalog.toml"
PIN_LINE = re.compile(r'^(pin = "ast1:|patch_pin = "|preimage_pin = "|postimage_pin = ")sha256:[0-9a-f]{64}"\n$')

SOURCE = """\
def parse(text):
    return [part.strip() for part in text.split(",")]


def count(text):
    return len(parse(text))


def unrelated(x):
    return x * 2
"""
PREIMAGE = SOURCE.replace('[part.strip() for part in text.split(",")]', 'text.split(",")')

# Comments, blank lines, a [gate] table, keys in an unusual order, a multi-line array,
# single quotes: everything here must come back byte for byte.
CATALOG_TEXT = """\
# The parser's named defects.
[gate]
tests = ["tests"]   # the whole suite

# --- parse ---------------------------------------------------------------

[[mutation]]
op = "replace"
name = "parse-keeps-spaces"      # why: the strip is the fix under test
note = '''
The strip() goes; "a, b" parses to ["a", " b"].
target = this line is part of the note, not a key
'''
target = "src/pkg/mod.py::parse"
old = "part.strip()"
new = "part"
kills = [
    "tests/test_mod.py::test_mod",
]


[[mutation]]
name = "parse-fix-reverted"
target = "src/pkg/mod.py"
op = "revert-patch"
patch = "fix.diff"
kills = ["tests/test_mod.py::test_mod"]
# trailing comment
"""


def unified(before: str, after: str, context: int = 3) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{MOD}",
            tofile=f"b/{MOD}",
            n=context,
        )
    )


@pytest.fixture
def pinned_project(km_project):
    km_project.module(SOURCE)
    km_project.write("mutations/fix.diff", unified(PREIMAGE, SOURCE), dedent=False)
    km_project.write(CATALOG, CATALOG_TEXT, dedent=False)
    return km_project


def run_pin(project, *names: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "-m", "killmap", "pin", *names], cwd=project.root, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done


def pin_in_process(project) -> None:
    """What `killmap pin` does, through the pins API: for the tests about check_pins."""
    catalog = load_catalog(project.root, project.root / CATALOG)
    updates = {m.name: pins_for(project.root, m, build_mutant(project.root, m)) for m in catalog.mutations}
    text = project.read(CATALOG)
    project.write(CATALOG, rewrite_pins(text, updates, CATALOG), dedent=False)


def mutations_of(project) -> dict:
    catalog = load_catalog(project.root, project.root / CATALOG)
    return {m.name: m for m in catalog.mutations}


def stale(project, name: str) -> str | None:
    mutation = mutations_of(project)[name]
    return check_pins(project.root, mutation, build_mutant(project.root, mutation))


def test_pin_writes_a_pin_for_every_mutation(pinned_project):
    run_pin(pinned_project)
    entries = {e["name"]: e for e in tomllib.loads(pinned_project.read(CATALOG))["mutation"]}
    for entry in entries.values():
        assert re.fullmatch(r"ast1:sha256:[0-9a-f]{64}", entry["pin"])
    parse_text = 'def parse(text):\n    return [part.strip() for part in text.split(",")]\n'
    assert entries["parse-keeps-spaces"]["pin"] == syntax_pin(parse_text)
    assert entries["parse-fix-reverted"]["pin"] == syntax_pin(SOURCE)
    # revert-patch's own pins stay byte pins: a patch's boundaries are bytes.
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", entries["parse-fix-reverted"]["patch_pin"])
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", entries["parse-fix-reverted"]["preimage_pin"])
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", entries["parse-fix-reverted"]["postimage_pin"])


def test_pin_changes_nothing_but_the_inserted_pin_lines(pinned_project):
    run_pin(pinned_project)
    after = pinned_project.read(CATALOG)
    inserted = [line for line in after.splitlines(keepends=True) if PIN_LINE.match(line)]
    kept = [line for line in after.splitlines(keepends=True) if not PIN_LINE.match(line)]
    assert "".join(kept) == CATALOG_TEXT
    assert sorted(line.split(" =")[0] for line in inserted) == [
        "patch_pin",
        "pin",
        "pin",
        "postimage_pin",
        "preimage_pin",
    ]


def test_pin_puts_the_pins_right_after_the_target_line(pinned_project):
    run_pin(pinned_project)
    lines = pinned_project.read(CATALOG).splitlines()
    first = lines.index('target = "src/pkg/mod.py::parse"')
    assert lines[first + 1].startswith("pin = ")
    second = lines.index('target = "src/pkg/mod.py"')
    assert [line.split(" =")[0] for line in lines[second + 1 : second + 5]] == [
        "pin",
        "patch_pin",
        "preimage_pin",
        "postimage_pin",
    ]


def test_pin_run_twice_gives_the_same_bytes(pinned_project):
    run_pin(pinned_project)
    once = pinned_project.read(CATALOG)
    run_pin(pinned_project)
    assert pinned_project.read(CATALOG) == once


def test_pin_of_one_name_pins_only_that_mutation(pinned_project):
    run_pin(pinned_project, "parse-keeps-spaces")
    entries = {e["name"]: e for e in tomllib.loads(pinned_project.read(CATALOG))["mutation"]}
    assert "pin" in entries["parse-keeps-spaces"]
    assert "pin" not in entries["parse-fix-reverted"]


def test_pin_of_an_unknown_name_is_an_error_and_writes_nothing(pinned_project):
    done = subprocess.run(
        [sys.executable, "-m", "killmap", "pin", "no-such"],
        cwd=pinned_project.root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("killmap: ")
    assert pinned_project.read(CATALOG) == CATALOG_TEXT


def test_pinning_in_process_writes_what_the_command_writes(pinned_project):
    pin_in_process(pinned_project)
    by_api = pinned_project.read(CATALOG)
    pinned_project.write(CATALOG, CATALOG_TEXT, dedent=False)
    run_pin(pinned_project)
    assert pinned_project.read(CATALOG) == by_api


def test_fresh_pins_hold(pinned_project):
    pin_in_process(pinned_project)
    assert stale(pinned_project, "parse-keeps-spaces") is None
    assert stale(pinned_project, "parse-fix-reverted") is None


def test_a_changed_target_symbol_makes_the_pin_stale(pinned_project):
    pin_in_process(pinned_project)
    pinned_project.module(SOURCE.replace("part.strip()", "part.strip(' ')"))
    message = stale(pinned_project, "parse-keeps-spaces")
    assert message is not None
    assert "killmap pin parse-keeps-spaces" in message
    assert f"{MOD}::parse changed" in message


def test_a_changed_sibling_function_does_not_make_a_symbol_pin_stale(pinned_project):
    pin_in_process(pinned_project)
    pinned_project.module(SOURCE.replace("return x * 2", "return x * 3"))
    assert stale(pinned_project, "parse-keeps-spaces") is None


def test_blank_lines_and_comments_above_the_target_do_not_make_its_pin_stale(pinned_project):
    # A formatter's spacing between functions is not a change to the function.
    pin_in_process(pinned_project)
    pinned_project.module("X = 1\n\n# The parser, one line per field.\n" + SOURCE)
    assert stale(pinned_project, "parse-keeps-spaces") is None


def test_a_changed_file_makes_a_whole_file_pin_stale(pinned_project):
    pin_in_process(pinned_project)
    # Only the syntax pin: the byte pins of this revert-patch would refuse first.
    without_byte_pins(pinned_project)
    pinned_project.module(SOURCE.replace("return x * 2", "return x * 3"))
    message = stale(pinned_project, "parse-fix-reverted")
    assert message is not None and "killmap pin parse-fix-reverted" in message


def without_byte_pins(project, *fields: str) -> None:
    """The catalog with these pin lines of parse-fix-reverted removed (default: every byte pin)."""
    catalog = project.read(CATALOG)
    for field in fields or ("patch_pin", "postimage_pin", "preimage_pin"):
        catalog = re.sub(rf'\n{field} = "sha256:[0-9a-f]{{64}}"', "", catalog)
    project.write(CATALOG, catalog, dedent=False)


def refusal(project, name: str) -> GateError:
    mutation = mutations_of(project)[name]
    with pytest.raises(GateError) as refused:
        check_pins(project.root, mutation, build_mutant(project.root, mutation))
    return refused.value


def test_revert_patch_pins_the_patch_the_preimage_and_the_postimage(pinned_project):
    pin_in_process(pinned_project)
    entry = mutations_of(pinned_project)["parse-fix-reverted"]
    patch_bytes = (pinned_project.root / "mutations/fix.diff").read_bytes()
    assert entry.param("patch_pin") == "sha256:" + hashlib.sha256(patch_bytes).hexdigest()
    assert entry.param("preimage_pin") == sha256_text(PREIMAGE)
    assert entry.param("postimage_pin") == "sha256:" + hashlib.sha256(SOURCE.encode()).hexdigest()
    assert stale(pinned_project, "parse-fix-reverted") is None


def test_a_changed_patch_file_is_refused_naming_the_patch_pin_not_judged_stale(pinned_project):
    pin_in_process(pinned_project)
    # Still a valid patch for the same file, giving the same preimage: only its bytes differ.
    pinned_project.write("mutations/fix.diff", unified(PREIMAGE, SOURCE, context=1), dedent=False)
    mutation = mutations_of(pinned_project)["parse-fix-reverted"]
    mutant = build_mutant(pinned_project.root, mutation)
    assert mutant.applied and mutant.mutated == PREIMAGE
    error = refusal(pinned_project, "parse-fix-reverted")
    assert (error.field, error.mutation) == ("patch_pin", "parse-fix-reverted")
    assert "the patch mutations/fix.diff is not the pinned patch" in str(error)
    assert "killmap pin parse-fix-reverted" in str(error)
    assert "\n" not in str(error)


def test_a_changed_byte_outside_the_hunks_is_refused_naming_the_postimage_pin(pinned_project):
    pin_in_process(pinned_project)
    # The patch still reverses (the change is in no hunk) and the syntax pin of a comment
    # would not move: only the byte pin sees it.
    pinned_project.module(SOURCE + "# a comment\n")
    error = refusal(pinned_project, "parse-fix-reverted")
    assert error.field == "postimage_pin"
    assert f"{MOD} is not the patch's pinned postimage" in str(error)


def test_a_changed_byte_inside_a_hunk_is_refused_naming_the_postimage_pin_not_judged_not_applied(pinned_project):
    pin_in_process(pinned_project)
    pinned_project.module(SOURCE.replace("[part.strip() for", "[part.strip()  for"))
    mutation = mutations_of(pinned_project)["parse-fix-reverted"]
    assert not build_mutant(pinned_project.root, mutation).applied
    assert refusal(pinned_project, "parse-fix-reverted").field == "postimage_pin"


def test_a_changed_preimage_is_refused_naming_the_preimage_pin(pinned_project):
    pin_in_process(pinned_project)
    # Pin only the patch and the preimage, so the preimage check is the one that speaks.
    without_byte_pins(pinned_project, "postimage_pin")
    catalog = re.sub(r'\npin = "ast1:sha256:[0-9a-f]{64}"(?=\npatch_pin)', "", pinned_project.read(CATALOG))
    pinned_project.write(CATALOG, catalog, dedent=False)
    pinned_project.module(SOURCE.replace("return x * 2", "return x * 3"))
    error = refusal(pinned_project, "parse-fix-reverted")
    assert error.field == "preimage_pin"
    assert "no longer gives the pinned preimage" in str(error)


def test_pins_for_a_mutation_that_does_not_apply_still_pins_the_target(pinned_project):
    pinned_project.module(SOURCE.replace("part.strip()", "part.lstrip()"))
    mutation = mutations_of(pinned_project)["parse-fix-reverted"]
    mutant = build_mutant(pinned_project.root, mutation)
    assert not mutant.applied
    assert set(pins_for(pinned_project.root, mutation, mutant)) == {"pin", "patch_pin"}


def test_rewrite_pins_replaces_only_the_value_of_an_existing_pin():
    pin_a, pin_b = "sha256:" + "a" * 64, "sha256:" + "b" * 64
    text = f'[[mutation]]\nname = "m"\n  pin="{pin_a}"  # reviewed 2024-05\ntarget = "x.py"\n'
    assert (
        rewrite_pins(text, {"m": {"pin": pin_b}}, CATALOG)
        == f'[[mutation]]\nname = "m"\n  pin="{pin_b}"  # reviewed 2024-05\ntarget = "x.py"\n'
    )


def test_rewrite_pins_ignores_a_pin_key_written_inside_a_multi_line_note():
    pin = "sha256:" + "c" * 64
    text = '[[mutation]]\nname = "m"\nnote = """\npin = not a key\n"""\ntarget = "x.py"\n'
    assert (
        rewrite_pins(text, {"m": {"pin": pin}}, CATALOG)
        == f'[[mutation]]\nname = "m"\nnote = """\npin = not a key\n"""\ntarget = "x.py"\npin = "{pin}"\n'
    )


def test_rewrite_pins_adds_a_newline_to_a_last_line_without_one():
    pin = "sha256:" + "d" * 64
    text = '[[mutation]]\nname = "m"\ntarget = "x.py"'
    assert rewrite_pins(text, {"m": {"pin": pin}}, CATALOG) == f'{text}\npin = "{pin}"\n'


def test_rewrite_pins_refuses_a_pin_it_cannot_edit_on_one_line():
    # A multi-line string value: editing its first line alone would break the TOML.
    pin = "sha256:" + "e" * 64
    text = '[[mutation]]\nname = "m"\ntarget = "x.py"\npin = """\nsha256:old\n"""\n'
    with pytest.raises(GateError) as caught:
        rewrite_pins(text, {"m": {"pin": pin}}, CATALOG)
    assert caught.value.field == "pin"
    assert caught.value.file == CATALOG
    assert caught.value.mutation == "m"


def test_rewrite_pins_refuses_an_edit_that_would_break_the_toml():
    # A quoted key is valid TOML the line scanner does not read: a second `pin` would be
    # inserted. The re-parse must turn that into a GateError, not a TOMLDecodeError.
    old, pin = "sha256:" + "0" * 64, "sha256:" + "f" * 64
    text = f'[[mutation]]\nname = "m"\ntarget = "x.py"\n"pin" = "{old}"\n'
    with pytest.raises(GateError) as caught:
        rewrite_pins(text, {"m": {"pin": pin}}, CATALOG)
    assert caught.value.field == "pin"
    assert "edit the pins by hand" in str(caught.value)
