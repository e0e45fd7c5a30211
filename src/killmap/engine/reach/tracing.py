"""Per-test line coverage of the mutation targets, and what a session imported.

The baseline's evidence: which tests run which lines of the files the mutations change
(reach and selection, reach.py), which lines ran while the tests were collected (an
import-time change), and which project files the session imported (the cache's
dependencies). Used in a fresh child (worker.py) and in a fork of the collected session
(session.py), so it lives in neither.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import coverage

from killmap.engine.reach.real_paths import real_path


def per_test_coverage(include: list[str]) -> coverage.Coverage:
    """Coverage that can attribute lines to each test.

    coverage's sys.monitoring core (the default on Python 3.14+, or COVERAGE_CORE=sysmon)
    records a line once per process, not once per context: a second test running the same
    line would not be credited, and selection would miss a test that can overreach. The
    C tracer records per context, so the gate insists on it.
    """
    cov = coverage.Coverage(data_file=None, include=include, config_file=False, branch=False)
    try:
        cov.set_option("run:core", "ctrace")
    except coverage.CoverageException:  # a coverage too old to have cores: it has no sysmon either
        pass
    return cov


def untraced_assertion_rewriting(cov: coverage.Coverage) -> None:
    """Pause `cov` while pytest rewrites a test module's asserts.

    Coverage must run during collection (a target function run at import is reach
    evidence), but while it runs, the C tracer is called for every Python call, and
    pytest's assertion rewriting is an AST walk of every test module: traced, collection
    took up to twice as long. Rewriting runs none of the project's code (it parses and
    compiles; the module executes afterwards, traced), so pausing around it loses no
    line. pytest's `_rewrite_test` is private: if it is not there, nothing is patched and
    collection is only slower. This process only (the worker's child that collects).
    """
    try:
        from _pytest.assertion import rewrite

        original = rewrite._rewrite_test
    except (ImportError, AttributeError):
        return

    def rewrite_untraced(*args, **kwargs):
        tracing = getattr(cov, "_started", False)
        if tracing:
            cov.stop()
        try:
            return original(*args, **kwargs)
        finally:
            if tracing:
                cov.start()

    rewrite._rewrite_test = rewrite_untraced


def imported_files(sandbox: str) -> list[str]:
    """The sandbox's Python files that this session imported (the cache's dependencies)."""
    prefix = os.path.realpath(sandbox) + os.sep
    found = set()
    for module in list(sys.modules.values()):
        path = real_path(getattr(module, "__file__", None) or "")
        if path.startswith(prefix) and path.endswith(".py"):
            found.add(path[len(prefix) :])
    return sorted(found)


def coverage_contexts(cov: coverage.Coverage) -> dict[str, dict[str, list[int]]]:
    """{real path: {context: sorted lines}} of what `cov` measured."""
    data = cov.get_data()
    result: dict[str, dict[str, list[int]]] = {}
    for filename in data.measured_files():
        by_context: dict[str, list[int]] = {}
        for line, contexts in data.contexts_by_lineno(filename).items():
            for context in contexts:
                by_context.setdefault(context, []).append(line)
        result[os.path.realpath(filename)] = {c: sorted(lines) for c, lines in by_context.items()}
    return result


def write_coverage(tracer: Any, out: str) -> None:
    """What a traced run recorded, by coverage, a LineMonitor (line_monitor.py) or probes (probes.py).

    The project's warning filters are in force here (pluggy's `filterwarnings = error`), and
    coverage warns through `warnings` ("No data was collected" when a share ran no target
    line): the gate's own bookkeeping must not turn that into the run's crash.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", coverage.exceptions.CoverageWarning)
        found = coverage_contexts(tracer) if isinstance(tracer, coverage.Coverage) else tracer.contexts()
    Path(out).write_text(json.dumps(found), encoding="utf-8")


def tracer_name(tracer: Any) -> str:
    """Which recorder ran: told by its class's name, so that this module imports neither the
    line monitor nor the probes (probes imports this module for coverage_contexts)."""
    return _TRACER_NAMES.get(type(tracer).__name__, "coverage")


_TRACER_NAMES = {"LineMonitor": "sys.monitoring", "ProbeReach": "probes"}
