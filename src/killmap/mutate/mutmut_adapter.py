"""The only module that touches mutmut: its operators, through its library API, as data.

`killmap sweep` enumerates mutmut's mutants with `create_mutations` and nothing else of
mutmut (not its runner, trampolines or `mutants/` folder): each mutant becomes an ordinary
killmap mutant and runs on the engine. That entry point is not a public API. It moved in
almost every 3.x minor release (3.3 to libcst, 3.6 to `mutmut.mutation.*`, 3.7 and 3.8
changed its return shape), so one minor series is supported, and anything else, or an API
that moved within it, is one line and exit 2 (a GateError), never a traceback.

`create_mutations` reads mutmut's global configuration, which it loads from the current
folder's `[tool.mutmut]` and fails without one. It is set up in-process here, for the call
only, and the user's files are never written.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import libcst as cst

from killmap.errors import GateError

SUPPORTED = (3, 8)  # mutmut 3.8.x: `create_mutations` returns a 4-tuple
SUPPORTED_TEXT = "mutmut 3.8.x"
INSTALL_HINT = "pip install 'killmap[sweep]' (mutmut>=3.8,<3.9)"

# mutmut 3.8's Config fields. create_mutations reads only do_not_mutate_patterns; the rest
# are given neutral values so that nothing mutmut might read finds a missing attribute.
_CONFIG_FIELDS = {
    "also_copy": [],
    "only_mutate": [],
    "do_not_mutate": [],
    "do_not_mutate_patterns": [],
    "max_stack_depth": -1,
    "debug": False,
    "source_paths": [],
    "resolved_mutated_source_paths": [],
    "pytest_add_cli_args": [],
    "pytest_add_cli_args_test_selection": [],
    "mutate_only_covered_lines": False,
    "timeout_multiplier": 15.0,
    "timeout_constant": 1.0,
    "type_check_command": [],
    "use_setproctitle": False,
    "track_dependencies": False,
    "dependency_tracking_depth": -1,
    "cache_invalidation_files": [],
    "cache_invalidation_exclude": [],
    "on_dependency_change": "warn",
    "use_git_change_detection": False,
    "process_isolation": "fork",
    "forkserver_warmup": "none",
    "max_forkserver_restarts": 0,
    "preload_modules_file": None,
    "log_to_file": False,
    "log_file_path": "",
}


@dataclass(frozen=True)
class MutmutMutation:
    """One of mutmut's mutants: `original` (a node of the module) becomes `mutated`."""

    original: cst.CSTNode
    mutated: cst.CSTNode
    function: cst.FunctionDef  # the top-level function or method that holds it
    operator: str  # "swap_op", "number", ...: which of mutmut's operators
    mutmut_name: str  # what mutmut calls it: x_f__mutmut_3, xǁCǁm__mutmut_1


@dataclass(frozen=True)
class MutmutFile:
    filename: str
    code: str
    module: cst.Module  # the parse the mutations' nodes belong to
    mutations: tuple[MutmutMutation, ...]

    @functools.cached_property
    def pragma_lines(self) -> frozenset[int]:
        """Lines `# pragma: no mutate` (and its block forms) cover. Only killmap's own operators
        ask (mutmut's leave those lines out themselves), so it is worked out when they do: it
        walks the whole module again, a fifth of a mutmut-only file's enumeration."""
        with _configured() as (_, pragma_handling):
            try:
                wrapper = cst.MetadataWrapper(self.module, unsafe_skip_copy=True)
                ignored = pragma_handling.get_ignored_lines(self.filename, self.code, wrapper)
                return frozenset(ignored.no_mutate_lines | ignored.ignore_node_lines)
            except AttributeError as exc:
                raise _moved("its IgnoredCode fields changed", exc) from None


def version() -> str:
    """The installed mutmut's version, once it is known to be supported."""
    try:
        found = metadata.version("mutmut")
    except metadata.PackageNotFoundError:
        # With --ops killmap too: the sweep reads every file through mutmut, so that its mutants
        # and mutmut's are of the same definitions, with the same pragmas honoured.
        raise GateError(
            f"killmap sweep needs {SUPPORTED_TEXT}, even with --ops killmap (every file is "
            f"read through it), and it is not installed: {INSTALL_HINT}"
        ) from None
    parts = tuple(int(p) for p in found.split(".")[:2] if p.isdigit())
    if parts != SUPPORTED:
        raise GateError(
            f"killmap sweep supports {SUPPORTED_TEXT}, found mutmut {found}: its mutation API "
            f"moves between minor releases; {INSTALL_HINT}",
            field="mutmut",
        )
    return found


def _moved(what: str, exc: BaseException | None = None) -> GateError:
    detail = f" ({type(exc).__name__}: {exc})" if exc is not None else ""
    return GateError(
        f"mutmut {metadata.version('mutmut')}'s mutation API moved: {what}{detail}; killmap sweep "
        f"supports {SUPPORTED_TEXT}: {INSTALL_HINT}",
        field="mutmut",
    )


class _InspectWithoutSignatures:
    """`inspect` as the dataclasses module sees it while mutmut is imported: the real module's
    every attribute, but a class's signature renders as nothing."""

    def __init__(self, real: Any):
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    @staticmethod
    def signature(*args: Any, **kwargs: Any) -> str:
        return ""


@contextlib.contextmanager
def _dataclass_docs_unrendered() -> Iterator[None]:
    """While mutmut's modules are first imported: a dataclass without a docstring gets its bare
    name as one, not its name and signature.

    The dataclasses module (3.10 to 3.13) writes such a class a docstring from
    `inspect.signature`, and libcst.matchers, which mutmut's operators import, declares 174 of
    them over long Union annotations: rendering those signatures was 60 ms of its 175 ms
    import, on the sweep's path before its first mutant (the workers wait for it). Nothing
    reads those docstrings. A dataclass another thread makes meanwhile gets a bare name too.
    A dataclasses module that does not go through `inspect` is left alone: this is a saving,
    and its absence must not read as mutmut's API having moved (`_configured`)."""
    real = getattr(dataclasses, "inspect", None)
    if real is None:
        yield
        return
    dataclasses.inspect = _InspectWithoutSignatures(real)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        dataclasses.inspect = real  # type: ignore[attr-defined]


def _mutmut_modules() -> tuple[Any, Any, Any]:
    """mutmut's configuration, file_mutation and pragma_handling modules."""
    with _dataclass_docs_unrendered():
        from mutmut import configuration
        from mutmut.mutation import file_mutation, pragma_handling
    return configuration, file_mutation, pragma_handling


@contextlib.contextmanager
def _configured() -> Iterator[Any]:
    """mutmut's global configuration, set in-process for one call, then put back."""
    try:
        configuration, file_mutation, pragma_handling = _mutmut_modules()
        fields = {f.name for f in dataclasses.fields(configuration.Config)}
    except (ImportError, AttributeError, TypeError) as exc:
        raise _moved("mutmut.configuration.Config or mutmut.mutation.file_mutation is gone", exc) from None
    if fields != set(_CONFIG_FIELDS):
        raise _moved(f"its Config fields changed ({', '.join(sorted(fields ^ set(_CONFIG_FIELDS)))})")
    values: dict[str, Any] = dict(_CONFIG_FIELDS)  # a value of its own type per Config field
    values["process_isolation"] = configuration.ProcessIsolation(values["process_isolation"])
    values["forkserver_warmup"] = configuration.ForkServerWarmup(values["forkserver_warmup"])
    saved = configuration._config
    configuration._config = configuration.Config(**values)
    try:
        yield file_mutation, pragma_handling
    finally:
        configuration._config = saved


def mutations(filename: str, code: str) -> MutmutFile:
    """mutmut's mutants of one file, in mutmut's order, limited to what `mutmut run` runs.

    mutmut also returns mutations of module-level code and of class bodies, which its
    trampolines never run (combine_mutations_to_source drops them): they are left out
    here too, so that the sweep's mutmut mutants are exactly mutmut's.
    """
    version()
    with _configured() as (file_mutation, _):
        try:
            created = file_mutation.create_mutations(filename, code)
        except cst.ParserSyntaxError as exc:
            raise GateError(f"does not parse: {exc.message} (line {exc.raw_line})", file=filename) from None
        except Exception as exc:  # noqa: BLE001 - mutmut's own errors (a bad pragma) or a moved API
            if type(exc).__name__ == "PragmaParseError":
                raise GateError(f"mutmut pragma: {str(exc).splitlines()[0]}", file=filename) from None
            raise _moved("create_mutations(filename, code) failed", exc) from None
        if not (isinstance(created, tuple) and len(created) == 4 and isinstance(created[0], cst.Module)):
            raise _moved("create_mutations no longer returns (module, mutations, classes, functions)")
        module, found = created[0], created[1]
        try:
            triples = [(m.original_node, m.mutated_node, m.contained_by_top_level_function) for m in found]
        except AttributeError as exc:
            raise _moved("its Mutation fields changed", exc) from None
    runnable = _runnable_functions(module)
    numbered: dict[int, int] = {}
    result = []
    for original, mutated, function in triples:
        key = runnable.get(id(function))
        if key is None:
            continue
        numbered[id(function)] = numbered.get(id(function), 0) + 1
        result.append(
            MutmutMutation(
                original, mutated, function, _operator(original, mutated), f"{key}__mutmut_{numbered[id(function)]}"
            )
        )
    return MutmutFile(filename, code, module, tuple(result))


def skipped_by_mutmut(function: cst.FunctionDef) -> bool:
    """A decorated function, which mutmut never mutates (its trampolines cannot wrap one),
    but for one whose only decorator is `staticmethod` or `classmethod`."""
    if not function.decorators:
        return False
    only = function.decorators[0].decorator if len(function.decorators) == 1 else None
    return not (isinstance(only, cst.Name) and only.value in ("staticmethod", "classmethod"))


def operator_mutations(roots: list[cst.CSTNode]) -> Iterator[tuple[cst.CSTNode, cst.CSTNode, str]]:
    """mutmut's operators over code mutmut itself does not mutate (a decorated function's
    parameters and body, a statement of a class body), as its visitor applies them elsewhere:
    (original, mutated, operator) of every node under `roots` but decorators, annotations,
    the calls it never mutates (`len`, `isinstance`), and defaults that are not a name,
    number or string. `# pragma: no mutate` is the caller's to honour (by line)."""
    try:
        from mutmut.mutation.file_mutation import NEVER_MUTATE_FUNCTION_CALLS
        from mutmut.mutation.mutators import mutation_operators
    except ImportError as exc:
        raise _moved("mutmut.mutation.mutators.mutation_operators is gone", exc) from None
    stack: list[cst.CSTNode] = list(reversed(roots))
    while stack:
        node = stack.pop()
        if _never_mutated(node, NEVER_MUTATE_FUNCTION_CALLS):
            continue
        for kind, operator in mutation_operators:
            if isinstance(node, kind):
                for mutated in operator(node):
                    yield node, mutated, _operator(node, mutated)
        stack.extend(reversed(node.children))


def _never_mutated(node: cst.CSTNode, calls: Any) -> bool:
    if isinstance(node, (cst.Annotation, cst.Decorator)):
        return True
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in calls:
        return True
    return (
        isinstance(node, cst.Param)
        and node.default is not None
        and not isinstance(node.default, (cst.Name, cst.BaseNumber, cst.BaseString))
    )


def _runnable_functions(module: cst.Module) -> dict[int, str]:
    """Top-level functions and the methods of top-level classes (what mutmut trampolines),
    by identity, with mutmut's mangled names."""
    found: dict[int, str] = {}
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            found[id(statement)] = f"x_{statement.name.value}"
        elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            for method in statement.body.body:
                if isinstance(method, cst.FunctionDef):
                    found[id(method)] = f"xǁ{statement.name.value}ǁ{method.name.value}"
    return found


def _operator(original: cst.CSTNode, mutated: cst.CSTNode) -> str:
    """Which of mutmut's operators made this mutant, read from the node types (mutmut does
    not record it)."""
    if isinstance(original, cst.BaseNumber):
        return "number"
    if isinstance(original, cst.BaseString):
        return "string"
    if isinstance(original, cst.Name):
        return "name"
    if isinstance(original, (cst.Assign, cst.AnnAssign)):
        return "assignment"
    if isinstance(original, cst.AugAssign):
        return "augmented_assignment" if isinstance(mutated, cst.Assign) else "swap_op"
    if isinstance(original, cst.UnaryOperation):
        return "swap_op" if isinstance(mutated, cst.UnaryOperation) else "remove_unary_ops"
    if isinstance(original, cst.Call) and isinstance(mutated, cst.Call):
        if len(original.args) != len(mutated.args) or any(
            isinstance(a.value, cst.Name)
            and a.value.value == "None"
            and not (isinstance(b.value, cst.Name) and b.value.value == "None")
            for b, a in zip(original.args, mutated.args, strict=True)
        ):
            return "arg_removal"
        if not original.func.deep_equals(mutated.func):
            return "string_methods_swap"
        return "dict_arguments"
    if isinstance(original, cst.Lambda):
        return "lambda"
    if isinstance(original, cst.Match):
        return "match"
    if isinstance(original, cst.IfExp):
        return "if_exp"
    if isinstance(original, (cst.BinaryOperation, cst.BooleanOperation, cst.ComparisonTarget)):
        return "swap_op"
    return "keywords"
