"""The README and docs point only inside the repository, and docs/draftroute.md explains
every bundled mutation (a mutation added to the catalog without its reason fails here)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def test_relative_links_resolve_inside_the_repository():
    for doc in (ROOT / "README.md", ROOT / "docs" / "draftroute.md", ROOT / "docs" / "DESIGN.md"):
        for target in re.findall(r"\]\(([^)#\s]+)", doc.read_text()):
            if re.match(r"[a-z]+://", target):
                continue
            resolved = (doc.parent / target).resolve()
            assert resolved.is_relative_to(ROOT), f"{doc.name} points outside the repository: {target}"
            assert resolved.exists(), f"{doc.name} links a missing file: {target}"
    assert "../shared" not in (ROOT / "README.md").read_text()


def test_docs_draftroute_explains_every_bundled_mutation():
    catalog = tomllib.loads((ROOT / "mutations" / "draftroute.toml").read_text())
    names = {m["name"] for m in catalog["mutation"]}
    rows = set(re.findall(r"^\| `([a-z0-9-]+)`", (ROOT / "docs" / "draftroute.md").read_text(), re.M))
    assert names == rows
