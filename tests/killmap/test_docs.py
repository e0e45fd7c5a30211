"""The README and docs point only inside the repository, the documentation site's nav names
every page and only pages that exist, the README stays a short user's guide whose former
sections all live on in docs/, and docs/draftroute.md explains every bundled mutation (a
mutation added to the catalog without its reason fails here)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

# The README's section headings before it became a user's guide (git show HEAD~3:README.md):
# each section moved to a page of docs/, none was deleted.
MOVED_SECTIONS = [
    "Quick start",
    "Use it in your project",
    "In CI: GitHub Actions",
    "Before commit and push: pre-commit",
    "The catalog",
    "Pins",
    "Operators",
    "Verdicts",
    "Command line",
    "For reviewers",
    "`killmap red-first [BASE]`: the fix reverted, the tests kept",
    "`killmap try TARGET --op OP [--FIELD VALUE ...]`: what does this defect turn red?",
    "`killmap prove TEST ...`: is this test non-vacuous?",
    "Reports",
    "`killmap.json` schema (`killmap-report/1`)",
    "Finding what the catalog misses",
    "What the sweep found in draftroute",
    "Promotion",
    "Against mutmut",
    "Why a verdict can be trusted",
    "Speed",
    "Measured (benchmarks, not timed tests)",
    "Verdicts on code nobody here wrote: the real-world corpus",
    "The bundled subject: draftroute",
    "Layout",
]


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def headings(text: str) -> list[str]:
    """ATX headings outside fenced code blocks (a shell transcript may print '## ...')."""
    found, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.+)", line)):
            found.append(m.group(1).strip())
    return found


class _IgnoreTags(yaml.SafeLoader):
    """mkdocs.yml may carry material's !!python/name tags; the nav needs none of them."""


_IgnoreTags.add_multi_constructor("", lambda loader, suffix, node: None)
_IgnoreTags.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def nav_files(nav) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [f for item in nav for f in nav_files(item)]
    if isinstance(nav, dict):
        return [f for value in nav.values() for f in nav_files(value)]
    return []


def test_relative_links_resolve_inside_the_repository():
    for doc in markdown_files():
        for target in re.findall(r"\]\(([^)#\s]+)", doc.read_text()):
            if re.match(r"[a-z]+://", target) or target.startswith("mailto:"):
                continue
            resolved = (doc.parent / target).resolve()
            assert resolved.is_relative_to(ROOT), f"{doc.name} points outside the repository: {target}"
            assert resolved.exists(), f"{doc.relative_to(ROOT)} links a missing file: {target}"
    assert "../shared" not in (ROOT / "README.md").read_text()


def test_the_nav_names_only_pages_that_exist_and_every_page_is_in_it():
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=_IgnoreTags)
    assert config["docs_dir"] == "docs"
    named = nav_files(config["nav"])
    for page in named:
        assert (DOCS / page).is_file(), f"mkdocs.yml's nav names a missing page: {page}"
    pages = {p.name for p in DOCS.glob("*.md")}
    assert pages - set(named) == set(), "pages left out of mkdocs.yml's nav"


def test_the_readme_is_a_short_users_guide():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; move the detail to docs/"


def test_every_former_readme_section_is_a_heading_in_the_docs():
    found = {h for page in DOCS.rglob("*.md") for h in headings(page.read_text())}
    missing = [title for title in MOVED_SECTIONS if title not in found]
    assert missing == [], f"former README sections with no heading in docs/: {missing}"


def test_the_quick_start_runs_what_ci_runs():
    readme = (ROOT / "README.md").read_text()
    assert (
        "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest -n 2 --dist loadfile"
        in readme
    )


def test_docs_draftroute_explains_every_bundled_mutation():
    catalog = tomllib.loads((ROOT / "mutations" / "draftroute.toml").read_text())
    names = {m["name"] for m in catalog["mutation"]}
    rows = set(re.findall(r"^\| `([a-z0-9-]+)`", (ROOT / "docs" / "draftroute.md").read_text(), re.M))
    assert names == rows
