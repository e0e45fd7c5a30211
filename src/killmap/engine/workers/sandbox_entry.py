"""Entering the sandbox: what a forked run does first, to be a pytest run of the sandbox.

Its own process group (a timeout kills all it started), its output to its log, bytecode
cached outside the sandbox, the sandbox as its folder and first on `sys.path` with the user's
working tree nowhere on it, its writes confined (landlock.py), its memory limited
(reaper.py), and pytest's rewritten test modules shared with every other session
(assert_rewrites.py); then, for a traced run, the recorder of its lines started before it collects.
The collected session's server and a fresh child both enter this way; a fork of the server
inherits it.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

from killmap.engine.containment.landlock import confine_writes, drop_ptrace
from killmap.engine.reach.tracing import per_test_coverage, untraced_assertion_rewriting
from killmap.engine.workers import assert_rewrites
from killmap.engine.workers.reaper import limit_memory


def enter_sandbox(request: dict[str, Any], log_path: str, start_entry: str | None) -> None:
    """In a forked child: its own process group, output to its log, the sandbox's imports.

    `start_entry`: the folder the worker started in, where `python -m` put it on sys.path
    (None when PYTHONSAFEPATH left it out); the sandbox takes its place."""
    os.setsid()  # its own process group: a timeout kills everything it started
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    sys.stdout = open(1, "w", closefd=False)
    sys.stderr = open(2, "w", closefd=False)
    if request.get("pycache_prefix"):
        # Bytecode (and pytest's rewritten test modules) is cached outside the sandbox,
        # per worker; _write deletes a file's caches each time it changes.
        sys.pycache_prefix = request["pycache_prefix"]
        sys.dont_write_bytecode = False
    else:
        sys.dont_write_bytecode = True
    os.chdir(request["sandbox"])
    if start_entry is not None:
        sandbox = os.getcwd()  # resolved, as python -m would have put it
        sys.path[:] = [sandbox if entry == start_entry else entry for entry in sys.path]
    scrub_environment(os.getcwd(), request.get("blocked_root"), request.get("tmpdir"))
    drop_ptrace()  # as root, a test could still read the gate's folder through /proc
    if request.get("confine"):
        confine_writes(request["confine"])
    isolate_imports(request["sys_path"], request.get("blocked_root"))
    # The collected session's server and a fresh child alike; a fork of the server inherits it.
    limit_memory(request.get("memory_limit"))
    shared = request.get("rewrites")
    if shared:  # before pytest imports its first test module
        assert_rewrites.install(shared["write"], shared["read"])


def scrub_environment(sandbox: str, blocked_root: str | None, tmpdir: str | None) -> None:
    """Nothing in the environment a test (or what it starts) inherits names the working tree.

    PWD and OLDPWD are the sandbox: a mutant that wrote through `$PWD` wrote into the user's
    tree. Any other value naming the tree (PYTHONPATH=/project/src) names the sandbox in its
    place, except what names the interpreter's own installation (a `.venv` inside the tree:
    PATH and VIRTUAL_ENV must still find its tools, and `sys.prefix` says where it is anyway).
    `tmpdir`: the tests' private temporary folder, inside the gate's scratch, as TMPDIR, TEMP
    and TMP; the system's temporary folder is not writable under confinement (landlock.py)."""
    import tempfile

    os.environ["PWD"] = os.environ["OLDPWD"] = sandbox
    if tmpdir:
        os.makedirs(tmpdir, exist_ok=True)
        for name in ("TMPDIR", "TEMP", "TMP"):
            os.environ[name] = tmpdir
        tempfile.tempdir = tmpdir  # the worker may have asked tempfile already; it remembers
    if not blocked_root:
        return
    roots = sorted({blocked_root.rstrip(os.sep), os.path.realpath(blocked_root)}, key=len, reverse=True)
    # A venv's own folder too (its bin/ is on PATH), but never a whole system prefix.
    venv = [sys.prefix] if sys.prefix != sys.base_prefix else []
    installed = {q.rstrip(os.sep) for p in _installation_paths() + venv for q in (p, os.path.realpath(p))}

    def rewritten(entry: str) -> str:
        if any(entry == p or entry.startswith(p + os.sep) for p in installed):
            return entry
        for root in roots:  # the root itself, or below it: never a sibling (/project2)
            entry = re.sub(re.escape(root) + f"(?=$|{re.escape(os.sep)})", lambda _: sandbox, entry)
        return entry

    for name, value in list(os.environ.items()):
        if name not in ("PWD", "OLDPWD") and any(root in value for root in roots):
            os.environ[name] = os.pathsep.join(rewritten(entry) for entry in value.split(os.pathsep))


def isolate_imports(prepend: list[str], blocked_root: str | None) -> None:
    """Sandbox first on sys.path; the user's working tree nowhere on it.

    An editable install of the project points back at the working tree, either as a path
    entry (.pth) or as a meta-path finder; both would let the original shadow the mutant.
    """
    blocked = os.path.realpath(blocked_root) + os.sep if blocked_root else None
    # The interpreter's own installation stays, even inside the working tree: the README's
    # `python3 -m venv .venv` puts every test dependency there, and removing it lost each one
    # not yet imported (hypothesis, six: "No module named ..." in every test file).
    installed = tuple({os.path.realpath(p) + os.sep for p in _installation_paths()})

    def allowed(entry: str) -> bool:
        real = os.path.realpath(entry or ".") + os.sep
        return not (blocked and real.startswith(blocked)) or real.startswith(installed)

    others = [p for p in sys.path if p not in prepend]
    kept = [p for p in others if allowed(p)]
    finders = [
        f
        for f in sys.meta_path
        if not type(f).__module__.startswith("__editable__")
        and not getattr(f, "__module__", "").startswith("__editable__")
    ]
    shadowed = len(kept) < len(others) or len(finders) < len(sys.meta_path)
    sys.path[:] = list(prepend) + kept
    sys.meta_path[:] = finders
    sys.path_importer_cache.clear()
    if shadowed:
        _subprocesses_import(prepend)


def _subprocesses_import(prepend: list[str]) -> None:
    """The sandbox first on PYTHONPATH, for every Python a test starts: site reads the same
    editable install in it and would import the working tree's code (python-dotenv runs
    `load_dotenv` in a script: the subprocess ran the original, and its test read green).
    Ahead of site-packages, a PYTHONPATH entry wins over the install's path entry and over
    its finder, which comes after the path finder."""
    present = [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    os.environ["PYTHONPATH"] = os.pathsep.join(list(prepend) + [e for e in present if e not in prepend])


def _installation_paths() -> list[str]:
    """Where this interpreter keeps the standard library and installed distributions (a venv's
    site-packages), never a whole prefix: a project may live under /usr/local too."""
    import site
    import sysconfig

    paths = [sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")]
    paths += site.getsitepackages() if hasattr(site, "getsitepackages") else []
    return [p for p in paths if p]


def collection_recorder(include: list[str], tracer: str, collection: bool = True) -> Any:
    """What records a session's lines (collected or fresh), started before it collects: the
    line monitor on Python 3.12+ (line_monitor.py; collection then runs untraced too), else
    coverage's C tracer, paused while pytest rewrites asserts.

    `collection=False`: another session of the same baseline records the collection, and
    the C tracer would only slow this one's (the whole interpreter runs on its slow path
    while any trace function is set). It is set up, then paused until a test it claims;
    the monitor costs collection little and records it anyway."""
    if tracer != "coverage":
        from killmap.engine.reach.line_monitor import line_monitor

        monitor = line_monitor(include)  # every target module is yet to be imported
        if monitor is not None:
            monitor.start()
            return monitor
    cov = per_test_coverage(include)
    untraced_assertion_rewriting(cov)
    cov.start()
    if not collection:
        cov.stop()  # started once, so that resuming it in a fork is what it always was
    return cov
