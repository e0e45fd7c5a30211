"""What the README and the docs both say agrees with each other and with the code, and the
reference has a heading for every catalog field, operator, verdict, command and option.

The verdicts: the README's table, the reference's table and headings, and the judge's own list.
The extras: every extra a page installs exists, and a page that says what the `test` extra
holds names all of it or none. The commands: every command and option of the parser has its
heading on the reference page and its place in the synopsis, and every `killmap CMD --option`
a page shows is one the parser takes.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pytest

from killmap.catalog.contract import COMMON_FIELDS, GATE_FIELDS, OP_FIELDS, OPERATORS, SWEEP_FIELDS
from killmap.cli import build_parser
from killmap.verdict.judge import VERDICTS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


def verdict_rows(text: str) -> list[tuple[str, str]]:
    """(verdict, its line) of every `| [`verdict`](...) | ... |` or `| `verdict` | ... |` row."""
    rows = re.findall(r"^\| \[?`([a-z-]+)`\]?(?:\(#[a-z-]+\))? \| (.+?) \|$", text, re.M)
    return [(name, line) for name, line in rows if name in VERDICTS]


def subcommands() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def long_options(parser: argparse.ArgumentParser) -> set[str]:
    return {s for a in parser._actions for s in a.option_strings if s.startswith("--") and s != "--help"}


def section(text: str, heading: str) -> str:
    """The text under a `## heading`, up to the next `## `."""
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_the_readme_and_the_reference_list_the_judges_verdicts_in_the_same_words():
    readme = verdict_rows((ROOT / "README.md").read_text())
    reference_text = (DOCS / "verdicts.md").read_text()
    reference = verdict_rows(reference_text)
    assert sorted(name for name, _ in reference) == sorted(VERDICTS)
    assert readme == reference, "README.md's verdict table differs from docs/verdicts.md's"
    headings = re.findall(r"^## ([a-z-]+)$", reference_text, re.M)
    assert [h for h in headings if h in VERDICTS] == [name for name, _ in reference]


def test_every_catalog_field_and_operator_has_its_own_heading():
    catalog = (DOCS / "catalog.md").read_text()
    ids = set(re.findall(r"^#+ .*?\{#([a-z-]+)\}$", catalog, re.M))
    plain = set(re.findall(r"^### ([a-z_]+)$", catalog, re.M))
    # an anchor spells a field's underscore as a hyphen (pytest_args: #gate-pytest-args)
    assert {f"gate-{f.replace('_', '-')}" for f in GATE_FIELDS} <= ids, "a [gate] field with no heading in catalog.md"
    assert {f"sweep-{f.replace('_', '-')}" for f in SWEEP_FIELDS} <= ids, (
        "a [sweep] field with no heading in catalog.md"
    )
    assert set(COMMON_FIELDS) <= plain, f"[[mutation]] fields with no heading: {set(COMMON_FIELDS) - plain}"
    operators = set(re.findall(r"^## ([a-z-]+)$", (DOCS / "operators.md").read_text(), re.M))
    assert set(OPERATORS) <= operators, f"operators with no heading: {set(OPERATORS) - operators}"


def test_every_extra_a_page_installs_exists():
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    for page in PAGES:
        named = set(re.findall(r"(?:\.|killmap)\[([a-z,]+)\]", page.read_text()))
        unknown = {e for group in named for e in group.split(",")} - extras
        assert not unknown, f"{page.name} installs extras pyproject.toml does not define: {unknown}"


def test_a_page_that_says_what_the_test_extra_holds_names_all_of_it():
    wanted = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    packages = {re.split(r"[<>=!~;\[ ]", spec)[0].lower() for spec in wanted}
    for page in PAGES:
        for paragraph in page.read_text().split("\n\n"):
            if "`test` extra" not in paragraph:
                continue
            named = {p for p in packages if re.search(rf"\b{re.escape(p)}\b", paragraph, re.I)}
            assert named in (set(), packages), f"{page.name} names part of the test extra: {sorted(named)}"


def test_every_command_and_option_has_its_heading_and_its_synopsis_line():
    text = (DOCS / "commands.md").read_text()
    synopsis = re.search(r"```text\n(.*?)```", text, re.S).group(1)
    by_command: dict[str, str] = {}
    current = ""
    for line in synopsis.splitlines():
        if m := re.match(r"killmap ([a-z-]+)", line):
            current = m.group(1)
        by_command[current] = by_command.get(current, "") + line + "\n"
    for name, parser in subcommands().items():
        assert f"\n## killmap {name}\n" in text, f"commands.md has no heading for killmap {name}"
        body = section(text, f"killmap {name}")
        for option in long_options(parser):
            if name == "try" and option[2:] in OP_FIELDS:
                option = "--FIELD"  # the operator's fields, said once: `--op OP and its fields`
            assert option in by_command.get(name, ""), f"commands.md's synopsis leaves out {name} {option}"
            said = option.replace("--FIELD", "--op")
            assert said in body or said in section(text, "killmap run"), f"no word on {name} {option}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_option_a_page_shows_is_one_the_command_takes(page):
    commands = subcommands()
    text = page.read_text()
    for m in re.finditer(r"killmap ([a-z-]+)((?: +(?:\[?--?[a-z-]+|[^\s`|#]+))*)", text):
        name, rest = m.group(1), m.group(2)
        if name not in commands:
            continue
        known = long_options(commands[name]) | {"--FIELD"}
        for option in re.findall(r"(?<![\w-])--[a-zA-Z][a-z-]*", rest):
            assert option in known, f"{page.name}: killmap {name} takes no {option}"


def test_the_disagreements_are_caught():
    readme = (ROOT / "README.md").read_text().replace("| `randomized` |", "| `randomised` |")
    reference = verdict_rows((DOCS / "verdicts.md").read_text())
    assert verdict_rows(readme) != reference
