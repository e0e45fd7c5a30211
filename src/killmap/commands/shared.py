"""What several commands share: exit codes, where reports go, the catalog options, publishing.

Exit codes are the gate's answer to CI, never a data channel: 0 every contract held, 1 a
contract failed, 2 bad input, 130 interrupted. Everything a command found is in its reports.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from killmap.catalog.plan import LabOptions

EXIT_HELD, EXIT_FAILED, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130


def report_dir(given: Path | None, root: Path) -> Path:
    """The reports' folder: the one given (relative to where the user stands), else reports/."""
    folder = given or root / "reports"
    return folder if folder.is_absolute() else Path.cwd() / folder


def catalog_options(args: argparse.Namespace) -> LabOptions:
    from killmap.catalog.plan import LabOptions

    return LabOptions(catalogs=tuple(args.catalogs))


def add_catalog_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--catalog", action="append", type=Path, default=[], dest="catalogs")


def add_annotations_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--annotations",
        choices=("auto", "github", "none"),
        default="auto",
        help="github: workflow-command annotations per failed contract and the job "
        "summary; auto (default): github when GITHUB_ACTIONS=true",
    )


def publish(document: dict[str, Any], paths: dict[str, Path], mode: str) -> None:
    """Annotations and the job summary, after everything the command printed itself."""
    from killmap.report.annotations import publish as publish_annotations

    sys.stdout.flush()
    publish_annotations(document, paths["markdown"], mode)
