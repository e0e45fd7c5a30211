"""A pytest plugin: the [gate]'s `exclude` test ids deselected as a contract names tests, up
to a boundary ('::', '[', a folder's '/'), never as a loose prefix of the id's text.

pytest's `--deselect` takes any prefix: glom's `exclude = ["...::test_main"]`, as the gate's
own hint for one red test wrote it, deselected test_main_basic and three more besides, and
nothing said so. An entry naming a file or folder is left out of the collection instead
(`--ignore`, GateSettings.ignored): pytest never imports it.

Loaded into a run with `-p killmap.engine.inrun.exclude --killmap-exclude=ENTRY ...`
(`exclusion_arguments`, the gate's side); it deselects in `pytest_collection_modifyitems`
and says so through `pytest_deselected`, as `--deselect` does.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from killmap.catalog.testids import matches

if TYPE_CHECKING:
    from killmap.catalog.contract import GateSettings

PLUGIN = "killmap.engine.inrun.exclude"


def exclusion_arguments(settings: GateSettings, root: Path) -> tuple[str, ...]:
    """pytest's arguments for a [gate]'s `exclude`: `--ignore` for each file or folder it
    names, this plugin for its test ids."""
    ignored = settings.ignored(root)
    ids = [entry for entry in settings.exclude if entry not in ignored]
    arguments = [arg for path in ignored for arg in ("--ignore", path)]
    if ids:
        arguments += ["-p", PLUGIN, *(f"--killmap-exclude={entry}" for entry in ids)]
    return tuple(arguments)


def pytest_addoption(parser) -> None:
    parser.addoption("--killmap-exclude", action="append", default=[], help=argparse.SUPPRESS)


def pytest_collection_modifyitems(config, items) -> None:
    entries = config.getoption("killmap_exclude")
    if not entries:
        return
    kept: list[Any] = []
    dropped: list[Any] = []
    for item in items:
        (dropped if any(matches(entry, item.nodeid) for entry in entries) else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
