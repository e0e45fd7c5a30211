"""Module files by their real path, resolved once per process and shared by its forks.

Reach, the origin proof and a red test's traceback all name files by real path.
"""

from __future__ import annotations

import os
import sys

real_paths_seen: dict[str, str] = {}


def real_path(path: str) -> str:
    """os.path.realpath, remembered for the life of the process (and its forks).

    Every red test and every origin proof resolves the same few hundred module paths;
    resolving each again cost tens of milliseconds per mutant. The session server fills
    this before it forks (`resolve_loaded_paths`), from the unmutated sandbox, so each fork
    starts with the answers. A path a mutant introduces is a new string: resolved afresh.
    """
    found = real_paths_seen.get(path)
    if found is None:
        found = real_paths_seen[path] = os.path.realpath(path)
    return found


def resolve_loaded_paths() -> None:
    for module in list(sys.modules.values()):
        real_path(getattr(module, "__file__", None) or "")
