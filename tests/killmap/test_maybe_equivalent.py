"""A vacuous mutant whose change is of a kind that is often equivalent says so, as a possibility."""

from __future__ import annotations

import pytest
from gatekit import run_gate, write_project

from killmap.catalog.reader import load_catalog
from killmap.verdict.equivalence import maybe_equivalent

SOURCE = """\
import re

WORD = re.compile(r"[a-z]+$")


def is_word(text):
    return WORD.match(text) is not None
"""

TESTS = """\
from pkg import is_word


def test_word():
    assert is_word("abc")


def test_not_a_word():
    assert not is_word("ab1")
"""


def _project(root, old, new, source=SOURCE):
    return write_project(
        root,
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": source,
            "tests/test_pkg.py": TESTS,
            "mutations/pkg.toml": (
                '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "word-changed"\n'
                f'target = "pkg/__init__.py::is_word"\nop = "replace"\nold = {old!r}\nnew = {new!r}\n'
                'kills = ["tests/test_pkg.py::test_not_a_word"]\n'
            ),
        },
    )


def test_a_vacuous_match_to_fullmatch_on_an_anchored_pattern_says_it_may_be_equivalent(tmp_path):
    project = _project(tmp_path / "p", "WORD.match(text)", "WORD.fullmatch(text)")
    done = run_gate(project, "run", "--no-cache")
    assert done.verdicts() == {"word-changed": "vacuous"}, done.stdout + done.stderr
    [verdict] = done.report["mutations"]
    assert "stayed green: tests/test_pkg.py::test_not_a_word" in verdict["detail"]
    assert "the change may be equivalent: match and fullmatch are near-synonyms" in verdict["detail"], verdict


@pytest.mark.parametrize(
    "old, new, said",
    [
        ("WORD.match(text)", "WORD.fullmatch(text)", "near-synonyms"),
        ("text.strip()", "text.rstrip()", "near-synonyms"),
        ("method == 'GET'", "method == 'get'", "only in case"),
        ("a + b", "b + a", "commutative"),
        ("x == limit", "limit == x", "commutative"),
        ("ready and allowed", "allowed and ready", "commutative"),
        ("return None", "return 0", None),
        ("WORD.match(text)", "WORD.split(text)", None),
        ("'a' + name", "name + 'a'", None),  # strings concatenate: the order matters
        ("a - b", "b - a", None),
        ("limit + 1", "limit", None),
    ],
)
def test_which_changes_are_often_equivalent(km_project, old, new, said):
    km_project.module("def value(a, b):\n    return a\n")
    text = (
        '[[mutation]]\nname = "m"\ntarget = "src/pkg/mod.py::value"\nop = "replace"\n'
        f'old = "{old}"\nnew = "{new}"\nkills = ["tests/test_mod.py::test_mod"]\n'
    )
    mutation = load_catalog(km_project.root, km_project.write("mutations/c.toml", text)).mutations[0]
    why = maybe_equivalent(mutation)
    assert (why is None) if said is None else (why is not None and said in why), why
