"""The target's top-level statement, resolved alone and once per gate run (cst_tree.py).

Positions and expression contexts are worked out on the target's top-level statement as a
module of its own, made once and shared by every mutation of that statement: a class of
600 lines was rendered and resolved again for each of its mutations. What the statement
alone gives must be what the whole module gives, node for node.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ExpressionContextProvider, MetadataWrapper, PositionProvider

from killmap.mutate.cst_tree import Sources, expression_contexts, statement_positions
from killmap.mutate.mutants import build_mutant

BIG_CLASS = '''\
import os

LIMIT = 3


class Router:
    """Routes."""

    def __init__(self, rules):
        self.rules = list(rules)
        (first, *rest) = self.rules or [None]
        self.first = first

    def match(self, path):
        for rule in self.rules:
            if (found := rule.match(path)) is not None:
                return found
        del path
        return None

    def build(self, name, **values):
        parts = [f"{k}={v}" for k, v in values.items() if v is not None]
        values["name"] = name
        total = 0
        total += len(parts)
        with open(os.devnull) as sink, open(os.devnull) as other:
            sink.read(0), other.read(0)
        try:
            return "&".join(parts)
        except TypeError as error:
            raise ValueError(str(error)) from None


def helper(x):
    return x > LIMIT
'''


def _mutations(km_project, *entries: tuple[str, str, dict]) -> list:
    toml = "\n".join(
        km_project.entry(target, op, name=f"m{i}", **fields) for i, (target, op, fields) in enumerate(entries)
    )
    return list(km_project.catalog(toml).mutations)


def test_two_mutations_of_one_class_share_its_positions_and_contexts(km_project):
    km_project.module(BIG_CLASS)
    first, second = _mutations(
        km_project,
        ("src/pkg/mod.py::Router.match", "replace", {"old": "is not None", "new": "is None"}),
        ("src/pkg/mod.py::Router.build", "negate", {"condition": "v is not None"}),
    )
    sources = Sources(km_project.root)
    original, wrapper = sources.parsed(first)
    assert sources.parsed(second)[1] is wrapper

    positions, offset = statement_positions(wrapper, first, original)
    again, offset_again = statement_positions(wrapper, second, original)
    assert again is positions and offset_again == offset  # resolved once, not per mutation
    assert expression_contexts(wrapper, second) is expression_contexts(wrapper, first)


def test_the_statement_alone_gives_every_node_the_positions_and_contexts_of_the_whole_module(km_project):
    km_project.module(BIG_CLASS)
    (mutation,) = _mutations(km_project, ("src/pkg/mod.py::Router.build", "replace", {"old": "0", "new": "1"}))
    original, wrapper = Sources(km_project.root).parsed(mutation)
    whole = MetadataWrapper(wrapper.module, unsafe_skip_copy=True)
    whole_positions = whole.resolve(PositionProvider)
    whole_contexts = whole.resolve(ExpressionContextProvider)

    positions, offset = statement_positions(wrapper, mutation, original)
    contexts = expression_contexts(wrapper, mutation)
    line_shift = original.count("\n", 0, offset)
    router = next(n for n in wrapper.module.body if isinstance(n, cst.ClassDef))
    assert positions[router].start.line + line_shift == BIG_CLASS.splitlines().index("class Router:") + 1
    nodes = [n for n in whole_positions if _inside(n, router)]
    assert len(nodes) > 200
    for node in nodes:
        mine, theirs = positions[node], whole_positions[node]
        assert (mine.start.line + line_shift, mine.start.column) == (theirs.start.line, theirs.start.column)
        assert (mine.end.line + line_shift, mine.end.column) == (theirs.end.line, theirs.end.column)
    stored = [n for n in nodes if n in whole_contexts]
    assert {whole_contexts[n] for n in stored} >= {
        cst.metadata.ExpressionContext.STORE,
        cst.metadata.ExpressionContext.DEL,
    }
    assert {n: contexts.get(n) for n in stored} == {n: whole_contexts[n] for n in stored}


def test_mutants_of_one_class_built_from_one_parse_are_the_mutants_built_alone(km_project):
    km_project.module(BIG_CLASS)
    entries = (
        ("src/pkg/mod.py::Router.match", "replace", {"old": "is not None", "new": "is None"}),
        ("src/pkg/mod.py::Router.build", "negate", {"condition": "v is not None"}),
        ("src/pkg/mod.py::Router.build", "replace", {"old": "total += len(parts)", "new": "total -= len(parts)"}),
    )
    mutations = _mutations(km_project, *entries)
    shared = Sources(km_project.root)
    together = [build_mutant(km_project.root, m, shared) for m in mutations]
    alone = [build_mutant(km_project.root, m) for m in mutations]
    assert [m.mutated for m in together] == [m.mutated for m in alone]
    assert all(m.applied for m in together)
    assert "if (found := rule.match(path)) is None:" in together[0].mutated
    assert "if not (v is not None)" in together[1].mutated
    assert "total -= len(parts)" in together[2].mutated


def _inside(node: cst.CSTNode, top: cst.CSTNode) -> bool:
    found = []

    class Find(cst.CSTVisitor):
        def on_visit(self, candidate: cst.CSTNode) -> bool:
            if candidate is node:
                found.append(candidate)
            return not found

    top.visit(Find())
    return bool(found)
