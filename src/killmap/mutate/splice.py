"""Mutant texts in time linear in the file: change one function, splice it back.

A sweep makes hundreds of mutants of one file. Transforming and re-rendering the whole
module for each (libcst's deep_replace) costs the whole file per mutant: 17 s for the 592
mutants of draftroute's resolver. Here each top-level function and each method of a
top-level class is located once in the file's text; a mutant transforms and renders that
definition only, and splices its text in where the original's stands. libcst renders a
node byte for byte, so the rest of the file is untouched by construction.

A method is rendered inside a one-line stand-in class carrying its class's body (same
indent), so it gets exactly the indentation it has in the file. Most mutants change one
node on one line (an operator, a number, a name): those are spliced at the node itself,
when its rendering alone is exactly the file's text at its whitespace-inclusive span and
neither side holds a line break (so no indentation is involved). Every location is
verified against the file's text; a definition that cannot be located is reported
(never guessed at) and its mutants are left out.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, WhitespaceInclusivePositionProvider

from killmap.mutate.cst_tree import fill_empty_block
from killmap.mutate.mutants import changed_lines
from killmap.mutate.patching import split_lines

MODULE = "<module>"  # the qualname of a module-level statement


@dataclass(frozen=True)
class Definition:
    """A top-level function, a method of a top-level class, or a simple statement of the
    module or of a top-level class's body (`statements`), where it stands in the file."""

    node: cst.FunctionDef | cst.SimpleStatementLine
    qualname: str  # "f", "Class.method"; of a statement, MODULE or "Class"
    owner: cst.ClassDef | None  # the class of a method
    offset: int  # where its text (leading comments included) starts
    text: str
    first_line: int  # 1-based line of `offset`


class Replace(cst.CSTTransformer):
    """Swap nodes by identity; a block left empty gets `pass`."""

    def __init__(self, replacements: dict[int, cst.CSTNode | cst.RemovalSentinel]):
        super().__init__()
        self.replacements = replacements

    def on_visit(self, node: cst.CSTNode) -> bool:
        return id(node) not in self.replacements  # nothing below a replaced node needs a visit

    def on_leave(self, original_node, updated_node):
        if id(original_node) in self.replacements:
            return self.replacements[id(original_node)]
        return fill_empty_block(updated_node)


class SplicedFile:
    """One file's definitions, located once; then any number of mutants of them."""

    def __init__(self, module: cst.Module, code: str, located_in: str | None = None):
        """`located_in`: the text `module` was parsed from, where it is not `code` itself but
        a stand-in of the same length whose located definitions read as in `code` (the
        sweep's, with the definitions it does not sweep blanked: sweep._only_what_is_swept)."""
        self.module = module
        self.code = code
        located = code if located_in is None else located_in
        assert len(located) == len(code), "a stand-in text keeps every offset of the file's"
        self.unlocated: list[str] = []
        self._line_starts = _line_starts(code)
        self._spans = MetadataWrapper(module, unsafe_skip_copy=True).resolve(WhitespaceInclusivePositionProvider)
        self.definitions: list[Definition] = []
        self.statements: list[Definition] = []  # module-level simple statements
        offset = sum(len(module.code_for_node(line)) for line in module.header)
        for statement in module.body:
            text = module.code_for_node(statement)
            if located[offset : offset + len(text)] != text:
                self.unlocated.append(module.code_for_node(statement).strip().split("\n")[0][:60])
                return  # the texts no longer line up: locate nothing after this point
            if code[offset : offset + len(text)] != text:
                pass  # a stand-in for a definition `code` holds there: nothing of it to mutate
            elif isinstance(statement, cst.FunctionDef):
                self._add(statement, statement.name.value, None, offset, text)
            elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
                self._add_methods(statement, offset, text)
            elif isinstance(statement, cst.SimpleStatementLine):
                self.statements.append(Definition(statement, MODULE, None, offset, text, self._line_of(offset)))
            offset += len(text)

    def _add(self, node, qualname, owner, offset, text) -> None:
        line = self._line_of(offset)
        self.definitions.append(Definition(node, qualname, owner, offset, text, line))

    def _add_methods(self, owner: cst.ClassDef, offset: int, class_text: str) -> None:
        texts = [self.render(owner, child) for child in owner.body.body]
        if not texts:
            return
        start = class_text.find(texts[0])
        for child, text in zip(owner.body.body, texts, strict=True):
            if start < 0 or class_text[start : start + len(text)] != text:
                self.unlocated.append(f"class {owner.name.value}")
                return
            if isinstance(child, cst.FunctionDef):
                self._add(child, f"{owner.name.value}.{child.name.value}", owner, offset + start, text)
            elif isinstance(child, cst.SimpleStatementLine):
                at = offset + start
                self.statements.append(Definition(child, owner.name.value, owner, at, text, self._line_of(at)))
            start += len(text)

    def render(self, owner: cst.ClassDef | None, node: cst.CSTNode) -> str:
        """The definition's text as it stands in the file, indentation included."""
        if owner is None:
            return self.module.code_for_node(node)
        stand_in = cst.ClassDef(
            name=cst.Name("_"), body=owner.body.with_changes(body=[node], footer=[], header=cst.TrailingWhitespace())
        )
        text = self.module.code_for_node(stand_in)
        prefix = "class _:" + self.module.default_newline
        assert text.startswith(prefix), text[:40]
        return text[len(prefix) :]

    def _line_of(self, offset: int) -> int:
        return bisect.bisect_right(self._line_starts, offset)

    def _offset(self, position) -> int:
        return self._line_starts[position.line - 1] + position.column

    def mutant(
        self, definition: Definition, original: cst.CSTNode, replacement: cst.CSTNode | cst.RemovalSentinel
    ) -> tuple[str, str, tuple[int, ...], tuple[int, ...]] | None:
        """(file text, the definition's new text, changed lines in the original, in the
        mutant), or None when the change renders to the same text."""
        span = self._spans.get(original) if isinstance(replacement, cst.CSTNode) else None
        if span is not None and span.start.line == span.end.line:
            start, end = self._offset(span.start), self._offset(span.end)
            old = self.code[start:end]
            if "\n" not in old and "\r" not in old and self.module.code_for_node(original) == old:
                assert isinstance(replacement, cst.CSTNode)  # a span is looked up for a node, not a removal
                new = self.module.code_for_node(replacement)
                if "\n" not in new and "\r" not in new:
                    if new == old:
                        return None
                    relative = start - definition.offset
                    text = definition.text[:relative] + new + definition.text[relative + len(old) :]
                    return (self.code[:start] + new + self.code[end:], text, (span.start.line,), (span.start.line,))
        return self.mutant_of(definition, {id(original): replacement})

    def mutant_of(
        self, definition: Definition, replacements: dict[int, cst.CSTNode | cst.RemovalSentinel]
    ) -> tuple[str, str, tuple[int, ...], tuple[int, ...]] | None:
        """The same, for any replacements inside the definition: it is transformed and
        rendered whole."""
        changed = definition.node.visit(Replace(replacements))
        if isinstance(changed, cst.RemovalSentinel):
            return None
        assert not isinstance(changed, cst.FlattenSentinel)  # Replace puts in a node or a removal only
        text = self.render(definition.owner, changed)
        if text == definition.text:
            return None
        start, end = definition.offset, definition.offset + len(definition.text)
        # With the file's next line after both, the lines come out as the whole file's diff
        # gives them (a deletion at the end of the definition marks the line after it).
        newline = self.code.find("\n", end)
        after = self.code[end : newline + 1 if newline >= 0 else len(self.code)]
        old, new = changed_lines(definition.text + after, text + after)
        shift = definition.first_line - 1
        return (
            self.code[:start] + text + self.code[end:],
            text,
            tuple(line + shift for line in old),
            tuple(line + shift for line in new),
        )


def _line_starts(code: str) -> list[int]:
    starts, total = [], 0
    for line in split_lines(code):
        starts.append(total)
        total += len(line)
    return starts or [0]
