"""A fresh session given the selected tests by id takes its initial paths from the gate's tests.

pytest treats the paths on its command line as initial paths: it rewrites the asserts of any
module among them (not only of test modules), and collects a file there whatever
`python_files` says. A fresh session is given the selected ids (`zipp/glob.py::zipp.glob.
Translator`), so it rewrote the asserts of zipp/glob.py, a source module whose doctest shows
an AssertionError's message: the doctest failed under every mutant that ran in a fresh
session, where plain pytest on the gate's tests (`zipp`) passes it. The session answers
"is this an initial path" for the paths the gate gives pytest, as the collected session and
plain pytest do; the ids still say which tests run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


class GateInitialPaths:
    """The plugin: `tests`, the gate's own pytest targets (paths, or ids whose files count)."""

    def __init__(self, tests: list[str]):
        self.tests = tests

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session) -> None:
        here = session.config.invocation_params.dir
        paths = frozenset(Path(os.path.abspath(here / test.split("::", 1)[0])) for test in self.tests)
        parents = paths | {parent for path in paths for parent in path.parents}

        def isinitpath(path, *, with_parents: bool = False) -> bool:
            return Path(path) in (parents if with_parents else paths)

        session.isinitpath = isinitpath
