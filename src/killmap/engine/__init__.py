"""The engine's face: every name another layer uses, and the one module of the engine it imports.

Outside `killmap.engine`, code imports from here and nowhere deeper (an import-linter
`protected` contract in pyproject.toml holds it); the folders beneath are the engine's own.

A name is loaded on its first use (PEP 562), not when this package is imported: every
process of the gate imports this package on its way to any module of the engine (a worker,
a run's pytest plugin), and none of them may pay for the parts it does not use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from killmap.engine.containment.cache_folders import baseline_red_file, cache_base
    from killmap.engine.containment.guard import escaped_note
    from killmap.engine.core import Engine, memory_limit
    from killmap.engine.inrun.exclude import exclusion_arguments
    from killmap.engine.inrun.missing_names import read_records
    from killmap.engine.outcome import (
        ASSERTION,
        BROKEN,
        CRASH,
        RunOutcome,
        TestResult,
        error_line,
        nothing_collected,
        refused_arguments,
        tracers_of,
    )
    from killmap.engine.reach.probes import UNPROVEN
    from killmap.engine.runner import Scenario
    from killmap.engine.workers.launch import Launch
    from killmap.engine.workers.pool import Worker
    from killmap.engine.workers.reaper import workers_the_machine_holds
    from killmap.engine.workers.timeout_cpu import limits_count_cpu_wait

# The pytest plugin that records which missing name turned a test red, for `-p` (red-first).
MISSING_NAMES_PLUGIN = "killmap.engine.inrun.missing_names"

# Each name the face hands on -> the module that defines it.
_HOMES = {
    "read_records": "killmap.engine.inrun.missing_names",
    "exclusion_arguments": "killmap.engine.inrun.exclude",
    "baseline_red_file": "killmap.engine.containment.cache_folders",
    "cache_base": "killmap.engine.containment.cache_folders",
    "Engine": "killmap.engine.core",
    "memory_limit": "killmap.engine.core",
    "escaped_note": "killmap.engine.containment.guard",
    "Launch": "killmap.engine.workers.launch",
    "ASSERTION": "killmap.engine.outcome",
    "BROKEN": "killmap.engine.outcome",
    "CRASH": "killmap.engine.outcome",
    "RunOutcome": "killmap.engine.outcome",
    "TestResult": "killmap.engine.outcome",
    "error_line": "killmap.engine.outcome",
    "nothing_collected": "killmap.engine.outcome",
    "refused_arguments": "killmap.engine.outcome",
    "tracers_of": "killmap.engine.outcome",
    "Worker": "killmap.engine.workers.pool",
    "UNPROVEN": "killmap.engine.reach.probes",
    "workers_the_machine_holds": "killmap.engine.workers.reaper",
    "limits_count_cpu_wait": "killmap.engine.workers.timeout_cpu",
    "Scenario": "killmap.engine.runner",
}

__all__ = [
    "MISSING_NAMES_PLUGIN",
    "read_records",
    "exclusion_arguments",
    "baseline_red_file",
    "cache_base",
    "Engine",
    "memory_limit",
    "escaped_note",
    "Launch",
    "ASSERTION",
    "BROKEN",
    "CRASH",
    "RunOutcome",
    "TestResult",
    "error_line",
    "nothing_collected",
    "refused_arguments",
    "tracers_of",
    "Worker",
    "UNPROVEN",
    "workers_the_machine_holds",
    "limits_count_cpu_wait",
    "Scenario",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
