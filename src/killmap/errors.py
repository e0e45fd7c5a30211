"""The one error type that reaches the user as a single line and exit code 2."""

from __future__ import annotations


class GateError(Exception):
    """Bad input or an unusable environment: never a verdict.

    It names where the problem is (file, mutation, field) so the one line printed is
    enough to fix it without a traceback.
    """

    def __init__(self, message: str, *, file: str | None = None, mutation: str | None = None, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.mutation = mutation
        self.field = field
        # The same entry's other fields at fault (a catalog entry's independent field groups):
        # `check` says each; one line says how many more there are.
        self.also: tuple[GateError, ...] = ()

    def __str__(self) -> str:
        where = []
        if self.file:
            where.append(self.file)
        if self.mutation:
            where.append(f"mutation {self.mutation!r}")
        if self.field and not self._names_its_option():
            # A command line has options, not fields (bidict: "field '--promote': cannot promote").
            where.append(f"{'option' if self.field.startswith('--') else 'field'} {self.field!r}")
        prefix = ": ".join(where)
        text = f"{prefix}: {self.message}" if prefix else self.message
        if self.also:
            fields = ", ".join(repr(other.field) for other in self.also)
            text += f" (and field{'s' if len(self.also) > 1 else ''} {fields}: killmap check says each)"
        # The promise is one line: some messages carry a log tail or a tool's multi-line
        # output, which would otherwise spill over several lines of stderr.
        return " | ".join(line.strip() for line in text.splitlines() if line.strip())

    def _names_its_option(self) -> bool:
        """A command-line option the message already names (`--jobs must be at least 1`): said
        once, not again as its field."""
        field = self.field or ""
        return not self.file and not self.mutation and field.startswith("-") and field in self.message
