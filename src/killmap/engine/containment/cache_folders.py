"""Where killmap keeps what outlives one gate: under one cache folder, outside every project.

The engine needs two of its places (displaced files, rewritten test modules) and the verdict
cache a third, so the folder is named here, below both.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_base(folder: Path | None) -> Path:
    """killmap's own cache folder: the one given (--cache-dir), else KILLMAP_CACHE_DIR (what a
    CI job keeps between runs), else under XDG_CACHE_HOME."""
    if folder is not None:
        return folder
    named = os.environ.get("KILLMAP_CACHE_DIR")
    if named:
        return Path(named).absolute()
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "killmap"


def displaced_folder(folder: Path | None) -> Path:
    """Where what a mutant wrote over a working-tree file is kept, once the file is restored:
    outside the project, and outliving the gate's scratch folder."""
    import time

    return cache_base(folder) / "displaced" / time.strftime("%Y%m%d-%H%M%S")


def rewrites_folder(folder: Path | None) -> Path:
    """Where pytest's rewritten test modules are kept between gates (assert_rewrites.py)."""
    return cache_base(folder) / "rewrites"


def baseline_red_file(folder: Path | None) -> Path:
    """Where a red baseline's every failing test id is listed: the refusal names a few."""
    import time

    return cache_base(folder) / "baseline-red" / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt"
