"""Shared fixtures for the killmap unit tests.

Other engineers may append fixtures here; the ones below are all prefixed `km_` (and
their helper class `KmProject`) so they can be told apart from later additions.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from killmap.catalog.reader import Catalog, Mutation, load_catalog
from killmap.mutate.mutants import Mutant, build_mutant


class KmProject:
    """A throwaway project: pyproject.toml, src/pkg/mod.py and mutations/*.toml.

    Catalogs are written as TOML text and read back through `load_catalog`, so every
    test exercises the public catalog contract rather than building Mutation by hand.
    """

    MODULE = "src/pkg/mod.py"

    def __init__(self, root: Path):
        self.root = root
        self.write("pyproject.toml", '[project]\nname = "pkg"\nversion = "0"\n')
        self.write("src/pkg/__init__.py", "")
        self.write("tests/test_mod.py", "def test_mod():\n    pass\n")

    def write(self, rel: str, text: str, *, dedent: bool = True) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text) if dedent else text, encoding="utf-8")
        return path

    def read(self, rel: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def module(self, source: str, rel: str = MODULE) -> Path:
        return self.write(rel, source)

    def catalog(self, toml: str, name: str = "catalog.toml") -> Catalog:
        path = self.write(f"mutations/{name}", toml)
        return load_catalog(self.root, path)

    def mutation(self, toml: str, name: str = "catalog.toml") -> Mutation:
        catalog = self.catalog(toml, name)
        assert len(catalog.mutations) == 1, "helper expects a one-mutation catalog"
        return catalog.mutations[0]

    def mutant(self, toml: str) -> Mutant:
        return build_mutant(self.root, self.mutation(toml))

    @staticmethod
    def entry(
        target: str, op: str, *, name: str = "under-test", kills: str = "tests/test_mod.py::test_mod", **fields
    ) -> str:
        """One [[mutation]] table as TOML text. Strings are written as TOML basic strings
        (JSON string syntax is a subset of them); ints and bools as TOML ints and bools."""
        lines = [
            "[[mutation]]",
            f"name = {json.dumps(name)}",
            f"target = {json.dumps(target)}",
            f"op = {json.dumps(op)}",
            f"kills = [{json.dumps(kills)}]",
        ]
        for key, value in fields.items():
            if isinstance(value, bool):
                rendered = "true" if value else "false"
            elif isinstance(value, int):
                rendered = str(value)
            else:
                rendered = json.dumps(value)
            lines.append(f"{key} = {rendered}")
        return "\n".join(lines) + "\n"


@pytest.fixture
def km_project(tmp_path: Path) -> KmProject:
    return KmProject(tmp_path)


@pytest.fixture(scope="session")
def verdicts_run(tmp_path_factory):
    """One real gate run over the `verdicts` fixture project (test_verdicts.py reads every
    verdict from it; test_swap.py compares it with a --no-swap run): a run of a minute's CPU,
    made once for the whole suite."""
    from gatekit import copy_fixture, run_gate, tree_digest

    project = copy_fixture("verdicts", tmp_path_factory.mktemp("verdicts"))
    before = tree_digest(project)
    run = run_gate(project, "run", "--no-cache", "--jobs", "2")
    run.tree_unchanged = tree_digest(project) == before
    return run
