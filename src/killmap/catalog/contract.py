"""The catalog's vocabulary and its frozen data: the operators and their fields, the [gate]
settings, and the `Mutation` every validated [[mutation]] entry becomes.

Every other module reads a catalog through these types; catalog.py reads the files and
catalog_entries.py validates each table into them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from killmap.catalog.pytestargs import pytest_arguments
from killmap.errors import GateError

# Operator name -> (required fields, optional fields). The fields are strings except count.
OPERATORS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "replace": (frozenset({"old", "new"}), frozenset()),
    "delete-call": (frozenset({"call"}), frozenset()),
    "stub-call": (frozenset({"call", "value"}), frozenset()),
    "constant-return": (frozenset({"value"}), frozenset()),
    "merge-strings": (frozenset({"drop", "keep"}), frozenset()),
    "drop-operand": (frozenset({"operand"}), frozenset()),
    "negate": (frozenset({"condition"}), frozenset()),
    "revert-patch": (frozenset({"patch"}), frozenset({"patch_pin", "preimage_pin", "postimage_pin"})),
}
# Every operator field a command line can give (`killmap try`; the pins are written by
# --save, not given). Here, not in trying.py: the parser needs it, and a `killmap run`
# need not import the reviewer's commands to build its parser.
PATCH_PINS = ("patch_pin", "preimage_pin", "postimage_pin")  # a revert-patch's byte pins
OP_FIELDS = tuple(sorted({f for req, opt in OPERATORS.values() for f in req | opt} - set(PATCH_PINS)))
# Operator fields holding Python source text: they must parse as an expression.
EXPRESSION_FIELDS = ("value", "condition", "operand")
COMMON_FIELDS = frozenset(
    {
        "name",
        "target",
        "op",
        "kills",
        "may_kill",
        "invariant",
        "control",
        "require",
        "pin",
        "note",
        "count",
        "timeout",
        "werror",
    }
)
GATE_FIELDS = frozenset({"tests", "paths", "timeout", "exclude", "werror", "confine", "pytest_args"})
# The [sweep] table: the arid rules (mutants no reviewer acts on, never built; each on unless
# its `arid_RULE = false`), and the sweep mutants a reviewer marked, by id. `exceptions` (a
# raised exception's wording) is off unless `arid_exceptions = true`: a project whose callers
# tell its refusals apart by their messages (named refusals) tests them.
ARID_RULES = ("logging", "messages", "stacklevel", "docstrings", "annotations", "repr", "truth", "exceptions")
ARID_OFF_BY_DEFAULT = frozenset({"exceptions"})
MARKS = {"equivalent": "equivalent", "not_useful": "not-useful"}  # [sweep] field -> the mark
SWEEP_FIELDS = frozenset({f"arid_{rule}" for rule in ARID_RULES} | set(MARKS))
# Fields that may be empty: `replace` with new = "" deletes its text (a guard, say).
MAY_BE_EMPTY = frozenset({("replace", "new")})
REQUIREMENTS = ("assertion", "timeout")
# The largest timeout accepted, per mutation or in [gate]: one day. Any longer is a typo
# or a way to make a looping mutant hang the gate (README, "The catalog").
MAX_TIMEOUT = 86400.0
TIMEOUT_RULE = f"must be a number of seconds above 0 and at most {MAX_TIMEOUT:.0f} (one day)"
NAME_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
PIN_PATTERN = re.compile(r"^sha256:[0-9a-f]{64}$")  # bytes: PATCH_PINS
TARGET_PIN_PATTERN = re.compile(r"^(?:ast1:)?sha256:[0-9a-f]{64}$")  # pin: syntax, or old bytes


@dataclass(frozen=True)
class GateSettings:
    """The [gate] table: what runs under each mutation and where imports resolve."""

    tests: tuple[str, ...] = ("tests",)
    paths: tuple[str, ...] = ("src", ".")
    timeout: float | None = None
    exclude: tuple[str, ...] = ()
    # Dead code a mutant leaves behind is broken too. Not part of equality: the baseline
    # does not depend on it, so catalogs differing only here share one.
    werror: bool = field(default=False, compare=False)
    # Linux Landlock: test processes may write only beneath the sandbox, the temp folder
    # and /dev (landlock.py). Off for suites that must write elsewhere.
    confine: bool = True
    # More pytest arguments for every run, as a user's command line gives them
    # (catalog/pytestargs.py: after PYTEST_ADDOPTS, before the gate's own flags).
    pytest_args: tuple[str, ...] = ()

    @property
    def arguments(self) -> tuple[str, ...]:
        """PYTEST_ADDOPTS's arguments, then this table's: what every run under it is given."""
        return pytest_arguments(self.pytest_args)

    def ignored(self, root: Path) -> tuple[str, ...]:
        """The `exclude` entries that name a file or folder of the project: left out of the
        collection (`--ignore`), not deselected after it. A test module that cannot be
        imported can only be left out so (dacite: `exclude = ["tests/test_types.py"]` still
        failed on that file's ImportError, as the docs said it would not)."""
        return tuple(entry for entry in self.exclude if "::" not in entry and (root / entry).exists())


@dataclass(frozen=True)
class SweepSettings:
    """The [sweep] table: which arid rules are on, and the mutant ids a reviewer marked."""

    arid: frozenset[str] = frozenset(ARID_RULES) - ARID_OFF_BY_DEFAULT
    marked: tuple[tuple[str, str], ...] = ()  # (mutant id, "equivalent" or "not-useful")


@dataclass(frozen=True)
class Target:
    """A file, optionally narrowed to a qualified symbol inside it."""

    path: str
    symbol: str | None = None

    def __str__(self) -> str:
        return f"{self.path}::{self.symbol}" if self.symbol else self.path


@dataclass(frozen=True)
class Mutation:
    """One named, deliberate defect and the contract it must meet."""

    name: str
    target: Target
    op: str
    params: tuple[tuple[str, Any], ...]
    kills: tuple[str, ...]
    may_kill: tuple[str, ...] = ()
    invariant: bool = False
    control: str | None = None
    require: str | None = None
    pin: str | None = None
    note: str = ""
    count: int = 1
    timeout: float | None = None
    werror: bool | None = None  # None: as [gate] says
    catalog: str = ""  # the catalog file, relative to the project root
    settings: GateSettings = field(default_factory=GateSettings)
    # No contract at all: a sweep's anonymous mutant (sweep.py), never a catalog entry. The
    # judge reports what went red and whether the change was reached, instead of checking
    # kills: "its red set is the kill set". The catalog loader never sets it.
    uncontracted: bool = False
    # Only whether some test goes red matters (a sweep's mutant: killed or not), so its run
    # stops at the first red test and confirms that one; `killmap sweep --every-red` and
    # `--promote` run the whole selection, for the whole red set.
    first_red: bool = False
    # A timeout is run again at once with this many times its limits, and that run's verdict
    # stands (a sweep's mutants: a mutant that turns most of its tests red can outrun a limit
    # set from their green time without looping). None: a timeout is final.
    retry_timeout: float | None = None

    def param(self, key: str, default: Any = None) -> Any:
        return dict(self.params).get(key, default)

    def fail(self, message: str, field_name: str | None = None) -> GateError:
        return GateError(message, file=self.catalog, mutation=self.name, field=field_name)

    @property
    def lint_is_error(self) -> bool:
        return self.settings.werror if self.werror is None else self.werror

    def contract_tests(self) -> tuple[str, ...]:
        return self.kills + self.may_kill

    def fingerprint(self) -> dict[str, Any]:
        """Everything in the catalog entry that could change the verdict, as plain data."""
        return {
            "name": self.name,
            "target": str(self.target),
            "op": self.op,
            "params": [list(p) for p in self.params],
            "kills": list(self.kills),
            "may_kill": list(self.may_kill),
            "invariant": self.invariant,
            "control": self.control,
            "require": self.require,
            "pin": self.pin,
            "count": self.count,
            "timeout": self.timeout,
            "werror": self.lint_is_error,
            "settings": {
                "tests": list(self.settings.tests),
                "paths": list(self.settings.paths),
                "timeout": self.settings.timeout,
                "confine": self.settings.confine,
                "exclude": list(self.settings.exclude),
                # Only when given, so a catalog without them keeps the key it had.
                **({"pytest_args": list(arguments)} if (arguments := self.settings.arguments) else {}),
            },
            # Only when set, so every catalog entry keeps the fingerprint (and cache key) it had.
            **({"uncontracted": True} if self.uncontracted else {}),
            # A verdict from a run stopped at its first red has one red where a full run has
            # them all: the two are never each other's cache entry.
            **({"first_red": True} if self.first_red else {}),
            **({"retry_timeout": self.retry_timeout} if self.retry_timeout else {}),
        }


@dataclass(frozen=True)
class Catalog:
    path: str  # relative to the project root
    settings: GateSettings
    mutations: tuple[Mutation, ...]
    sweep: SweepSettings = field(default_factory=SweepSettings)
