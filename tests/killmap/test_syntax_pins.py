"""Pins bind a target's syntax: a formatter or a comment keeps them, a real change does not.

`pin = "ast1:sha256:..."` is written by `killmap pin`; the older `pin = "sha256:..."` (the
target's exact bytes) is still read and checked as bytes, and `killmap pin` upgrades it.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from killmap.catalog.reader import load_catalog, tomllib
from killmap.errors import GateError
from killmap.mutate.mutants import build_mutant
from killmap.mutate.pins import check_pins, pins_for, rewrite_pins
from killmap.mutate.syntax import syntax_pin

MOD = "src/pkg/mod.py"
CATALOG = "mutations/catalog.toml"

SOURCE = '''\
LIMIT = 10


def parse(text, sep=","):
    """Split on sep.

    Spaces around each part go.
    """
    parts = [part.strip() for part in text.split(sep)]
    return [p for p in parts if p and len(p) < LIMIT]


def unrelated(x):
    return x * 2
'''

# What black (or ruff format) with a narrow line length, and a person, might do to parse:
# wrapped lines, other quotes, a magic trailing comma, parentheses, blank lines, comments,
# a docstring re-indented with trailing spaces (written \x20, which no editor strips).
# Nothing a program can observe changes.
REFORMATTED = '''\
LIMIT = 10
def parse(
    text,
    sep=',',
):
    """Split on sep.

        Spaces around each part go.\x20\x20\x20
        """

    parts = [
        part.strip()
        for part in text.split(sep)
    ]
    return [
        p for p in parts
        if (p and len(p) < LIMIT)
    ]
def unrelated(x):
    return x * 2
'''

ENTRY = f'''\
[[mutation]]
name = "parse-keeps-spaces"
target = "{MOD}::parse"
op = "replace"
old = "part.strip()"
new = "part"
kills = ["tests/test_mod.py::test_mod"]
'''


@pytest.fixture
def project(km_project):
    km_project.module(SOURCE)
    km_project.write(CATALOG, ENTRY, dedent=False)
    return km_project


def pin_now(project) -> None:
    catalog = load_catalog(project.root, project.root / CATALOG)
    updates = {m.name: pins_for(project.root, m, build_mutant(project.root, m)) for m in catalog.mutations}
    project.write(CATALOG, rewrite_pins(project.read(CATALOG), updates, CATALOG), dedent=False)


def stale(project) -> str | None:
    mutation = load_catalog(project.root, project.root / CATALOG).mutations[0]
    return check_pins(project.root, mutation, build_mutant(project.root, mutation))


def written_pin(project) -> str:
    return tomllib.loads(project.read(CATALOG))["mutation"][0]["pin"]


def test_pin_writes_the_versioned_syntax_format(project):
    pin_now(project)
    assert re.fullmatch(r"ast1:sha256:[0-9a-f]{64}", written_pin(project))
    assert stale(project) is None


def test_a_reformatted_target_keeps_its_pin(project):
    pin_now(project)
    mutation = load_catalog(project.root, project.root / CATALOG).mutations[0]
    bytes_before = build_mutant(project.root, mutation).target_sha256
    project.module(REFORMATTED)
    # The premise: the bytes did change, so a byte pin would have gone stale.
    assert build_mutant(project.root, mutation).target_sha256 != bytes_before
    assert stale(project) is None


def test_a_comment_inside_the_target_keeps_its_pin(project):
    pin_now(project)
    project.module(SOURCE.replace("    parts = [", "    # why: a blank part is not a field\n    parts = ["))
    assert stale(project) is None


def test_a_changed_constant_makes_the_pin_stale(project):
    pin_now(project)
    project.module(SOURCE.replace("len(p) < LIMIT", "len(p) < 11"))
    assert "killmap pin parse-keeps-spaces" in (stale(project) or "")


def test_a_changed_default_argument_makes_the_pin_stale(project):
    pin_now(project)
    project.module(SOURCE.replace('sep=","', 'sep=";"'))
    assert stale(project) is not None


def test_a_changed_docstring_makes_the_pin_stale(project):
    # __doc__ is observable (help(), doctests, a test reading it): its words are bound.
    pin_now(project)
    project.module(SOURCE.replace("Spaces around each part go.", "Spaces stay."))
    assert stale(project) is not None


@pytest.mark.parametrize(
    "before, after",
    [
        ("x = 1", "x = 1.0"),
        ("x = 1", "x = True"),
        ("x = 'a'", "x = b'a'"),
        ("x = a + b", "x = b + a"),
        ("x = f(a)", "x = f(a=a)"),
        ("x = a.b", "x = a['b']"),
        ("x = None", "x = ..."),
        ("def f(a, b): pass", "def f(a, *, b): pass"),
        ("@d\ndef f(): pass", "def f(): pass"),
    ],
)
def test_any_change_a_program_can_observe_changes_the_syntax_pin(before, after):
    assert syntax_pin(before) != syntax_pin(after)


@pytest.mark.parametrize(
    "before, after",
    [
        ("x = 'ab'", 'x = ("a"\n     "b")'),
        ("x = [1, 2]", "x = [\n    1,\n    2,\n]"),
        ("x = (a)", "x = a"),
        ("x = u'a'", "x = 'a'"),
        ("x = 1  # one", "x = 1"),
        ("def f(a):\n  return a", "def f(a):\n\n    return a\n"),
        ("x = 0x10", "x = 16"),
    ],
)
def test_spelling_a_program_cannot_observe_keeps_the_syntax_pin(before, after):
    assert syntax_pin(before) == syntax_pin(after)


def test_an_old_byte_pin_is_still_checked_as_bytes(project):
    mutation = load_catalog(project.root, project.root / CATALOG).mutations[0]
    byte_pin = build_mutant(project.root, mutation).target_sha256
    project.write(CATALOG, ENTRY.replace("op = ", f'pin = "{byte_pin}"\nop = ', 1), dedent=False)
    assert stale(project) is None
    project.module(SOURCE.replace("    parts = [", "    # a comment\n    parts = ["))
    assert stale(project) is not None  # bytes, as before: even a comment changes them


def test_pin_upgrades_an_old_byte_pin_to_the_syntax_format(project):
    mutation = load_catalog(project.root, project.root / CATALOG).mutations[0]
    byte_pin = build_mutant(project.root, mutation).target_sha256
    project.write(CATALOG, ENTRY.replace("op = ", f'pin = "{byte_pin}"   # reviewed\nop = ', 1), dedent=False)
    done = subprocess.run(
        [sys.executable, "-m", "killmap", "pin"], cwd=project.root, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    upgraded = written_pin(project)
    assert upgraded.startswith("ast1:sha256:") and upgraded != byte_pin
    assert f'pin = "{upgraded}"   # reviewed\n' in project.read(CATALOG)  # in place, comment kept
    project.module(REFORMATTED)
    assert stale(project) is None


@pytest.mark.parametrize("pin", ["ast1:sha256:" + "0" * 63, "ast2:sha256:" + "0" * 64, "ast1:" + "0" * 64])
def test_a_malformed_pin_is_a_catalog_error(project, pin):
    project.write(CATALOG, ENTRY.replace("op = ", f'pin = "{pin}"\nop = ', 1), dedent=False)
    with pytest.raises(GateError) as caught:
        load_catalog(project.root, project.root / CATALOG)
    assert caught.value.field == "pin"
