"""Project modules a run imported from the user's working tree instead of its sandbox.

The origin proof (plugin.origin_proof) names them: a test that put the working tree on
sys.path ran the user's code, not the mutant. Looking is not free in a fork of the collected
session: reading each of sys.modules' entries writes its reference count, and every module
object sits on a page the fork then copies (some 300 pages a fork, a third of what running
one test copies). `ImportWatch` lets a fork skip the look when nothing could have loaded a
module since the session server looked.

This module is imported by the warm worker before it forks; it must not import the project
under test.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import killmap
from killmap.engine.reach.real_paths import real_path

# The audit events by which code from a file becomes a module: the import statement of a
# module not yet loaded ("import", raised before the finders run), and the execution of a
# module's code by its loader or by hand ("exec": importlib.import_module, reload, runpy,
# spec_from_file_location with exec_module).
_LOADING = frozenset({"import", "exec"})


class ImportWatch:
    """Whether anything could have brought a module into sys.modules since the look it was
    made after: an audit hook (forks inherit it; a hook cannot be removed, so it is made once
    per session server) that hears every import and exec, and the size of sys.modules.

    Quiet means: no module was imported or executed and sys.modules holds as many entries, so
    the look would find what it found then. Only an empty finding is reused: a module from
    the working tree that a test removed would still be named by a stale one. (A module
    object made from a working-tree file before the look but kept outside sys.modules, then
    put in by hand in place of another, would go unseen: nothing does that by accident.)
    """

    def __init__(self, found: list[str]) -> None:
        self.found = tuple(found)
        self.size = len(sys.modules)
        self.stirred = False
        sys.addaudithook(self._hear)

    def _hear(self, event: str, args: tuple) -> None:
        if event in _LOADING:
            self.stirred = True

    def quiet(self) -> bool:
        return not self.stirred and not self.found and len(sys.modules) == self.size


def modules_from_working_tree(blocked_root: str, watch: ImportWatch | None, sandbox: str) -> list[str]:
    """Project modules imported from the user's working tree instead of the sandbox.

    A module counts when its file lies in the working tree and the same relative path was
    copied into the sandbox (the cwd): that is a shadowing copy. The gate's own package is
    exempt, since it is the harness, not the subject. `watch`: none is looked at when it is
    quiet (see ImportWatch). `sandbox`: the run's, as it started (a test may have left it).

    Each module object is looked at once per process and remembered (`_looked_at`): the
    collected session looks at everything collection imported before it forks, so a fork
    looks only at what its own tests imported. A module object keeps its file for life; a
    module replaced under the same name is another object, and is looked at afresh. A
    project with its venv inside it had every installed module's path tested, in every run.
    """
    if watch is not None and watch.quiet():
        return []
    blocked = os.path.realpath(blocked_root) + os.sep
    # killmap/ as a whole, found from the package, not from this file's depth inside it.
    harness = os.path.dirname(os.path.realpath(killmap.__file__)) + os.sep
    looked_at = _looked_at.setdefault((blocked, sandbox), {})
    found = []
    for name, mod in list(sys.modules.items()):
        known = looked_at.get(name)
        if known is None or known[0] is not mod:
            known = looked_at[name] = (mod, _shadowed(mod, blocked, harness, sandbox))
        if known[1]:
            found.append(name)
    return sorted(found)


# (working tree, sandbox) -> module name -> (the module object, whether it is a shadowing copy)
_looked_at: dict[tuple[str, str], dict[str, tuple[Any, bool]]] = {}


def _shadowed(module: Any, blocked: str, harness: str, sandbox: str) -> bool:
    path = real_path(getattr(module, "__file__", None) or "")
    # The gate's own modules (the worker runs as __main__) are the harness, not the subject.
    if path.startswith(harness) or not path.startswith(blocked):
        return False
    return os.path.exists(os.path.join(sandbox, path[len(blocked) :]))
