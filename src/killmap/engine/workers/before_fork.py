"""What a worker does once, before it forks anything, so that no fork does it again.

Every session the worker starts is a fork of it, and so is every run; whatever the worker
has done by then, none of them pays for. What it cannot do is import the project: each
session must import the sandbox's copy (worker.py says why).
"""

from __future__ import annotations

import importlib
import inspect

from killmap.engine.reach.real_paths import resolve_loaded_paths
from killmap.engine.swap.code_swap import harness_frozen


def preload_for_forks() -> None:
    """Do once, before the worker forks anything, what every session would do again.

    - pytest's built-in plugins, and the modules they import only once a session starts
      (the debugging plugin imports pdb as it is configured: 27 ms of each session);
    - the real path of every module loaded so far, which every origin proof resolves
      (real_paths.real_path), and the file of each, which `inspect` looks up for every
      module the first time it is asked about a frame: coverage's collector records the
      stack it was made in (coverage.debug.short_stack), which cost each session that
      traces 39 ms before it could collect;
    - the heap, frozen: the garbage collector no longer walks what the worker built, in
      any fork of it, so a collection in a session costs what the session itself made;
      and `gc.get_objects` no longer lists it, so the session server's scan for the
      functions a mutant is swapped into (swap.LiveFunctions) looks at the objects its
      collection made, among which are all of them: no project module is imported before
      a session starts (baseline.check_runner_imports refuses a target that is).
    """
    from _pytest.config import default_plugins

    for name in [*(f"_pytest.{plugin}" for plugin in default_plugins), "pdb"]:
        try:
            importlib.import_module(name)
        except ImportError:  # a plugin this pytest version does not ship
            pass
    resolve_loaded_paths()
    inspect.stack()
    harness_frozen()  # gc.freeze(), and every later freeze by the project noted (code_swap.py)
