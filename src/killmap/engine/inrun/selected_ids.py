"""A fresh session runs the selected tests by their ids, not by naming them to pytest.

pytest refuses a whole run when one id on its command line names no test it collects: a
mutant that changes a parametrize id (python-json-logger: a module flag read by a parametrize
list; prettytable: an enum's value in the ids) ran nothing, and only the first id missing was
said. A fresh session is given the files of its ids instead (runner.as_arguments), and this plugin
keeps the items whose id was selected, in the order selected, before any other plugin sees the
list, as pytest's own matching of ids would have left it. An id that no longer exists is not
run, as any other: the judge sees each one missing.
"""

from __future__ import annotations

from typing import Any

import pytest


class SelectedIds:
    """The plugin: only the items whose id is one of `ids`, in their order."""

    def __init__(self, ids: list[str]):
        self.order: dict[str, int] = {}
        for place, test in enumerate(ids):
            self.order.setdefault(test, place)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[Any]) -> None:
        kept = [item for item in items if item.nodeid in self.order]
        kept.sort(key=lambda item: self.order[item.nodeid])  # stable: items sharing an id keep theirs
        items[:] = kept
