"""The benchmarks' own venvs: each script re-executes itself inside one, made on first use.

A benchmark must never install into the project's .venv or the user's Python: it creates
its venv (gitignored, under benchmarks/), fills it when a probe import fails, then replaces
the current process with itself running there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def for_this_python(venv: Path) -> Path:
    """`venv`, or `venv-X.Y` beside it when `venv` was made by another Python (X.Y is this
    one's): the benchmarks run under 3.12 too, and must neither reuse nor replace the venv
    of another interpreter."""
    version = ".".join(map(str, sys.version_info[:2]))
    config = venv / "pyvenv.cfg"
    if not config.is_file():
        return venv
    for line in config.read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition("=")
        if key.strip() in ("version", "version_info") and ".".join(value.strip().split(".")[:2]) == version:
            return venv
    return venv.with_name(f"{venv.name}-{version}")


def run_inside(venv: Path, script: Path, *, probe: str, install: list[str], what: str) -> None:
    """Return when already inside `venv`; else create and fill it as needed and re-exec there.

    `probe`: Python code that fails unless the venv holds what the script needs;
    `install`: pip arguments that make it so; `what`: said while installing.
    """
    if Path(sys.prefix).resolve() == venv.resolve():
        return
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating {venv.name} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    if subprocess.run([str(python), "-c", probe], capture_output=True).returncode != 0:
        print(f"installing {what} into it ...", flush=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *install], check=True)
    os.execv(str(python), [str(python), str(script.resolve()), *sys.argv[1:]])


def snapshot_killmap(work: Path) -> Path:
    """killmap's source frozen for the whole run, and byte-compiled; the folder to put first on
    PYTHONPATH. Frozen: others may edit src/killmap meanwhile, and a changed source would both
    change what is measured and invalidate the verdict cache. Byte-compiled, as `pip install`
    leaves an installed package (and leaves mutgate and mutmut in these venvs): the benchmarks
    set PYTHONDONTWRITEBYTECODE, so the editable source would make each killmap process and
    worker compile its own source again (about 80 ms a start) while the peer's was compiled."""
    import compileall
    import shutil

    import killmap

    dest = work / "killmap-src"
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(Path(killmap.__file__).parent, dest / "killmap", ignore=shutil.ignore_patterns("__pycache__"))
    compileall.compile_dir(str(dest), quiet=1)
    return dest
