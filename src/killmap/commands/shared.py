"""What several commands share: exit codes, where reports go, the catalog options.

Exit codes are the gate's answer to CI, never a data channel: 0 every contract held, 1 a
contract failed, 2 bad input, 130 interrupted. Everything a command found is in its reports.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from killmap.catalog.plan import LabOptions
    from killmap.verdict.lab import LabResult

EXIT_HELD, EXIT_FAILED, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130


def project_root() -> Path:
    """The project the user stands in: the nearest folder at or above it with a project marker."""
    from killmap.catalog.project import find_root

    return find_root(Path.cwd())


def checked_timeout(timeout: float | None) -> None:
    """--timeout, when given, is a usable number of seconds."""
    from killmap.errors import GateError

    if timeout is not None and not 0 < timeout <= 86400:
        raise GateError("--timeout must be above 0 and at most 86400 seconds", field="--timeout")


def checked_report_dir(given: Path | None, root: Path) -> Path | None:
    """--report-dir for a command that writes reports only when asked (try, prove): the folder,
    refused before anything runs if it cannot be written; None when not given."""
    from killmap.report.document import check_report_dir

    if given is None:
        return None
    folder = report_dir(given, root)
    check_report_dir(folder)
    return folder


def sweep_ops(text: str) -> tuple[str, ...]:
    """--ops: a comma-separated list of the sweep's operator families, checked."""
    from killmap.errors import GateError
    from killmap.verdict.sweep import OPS

    ops = tuple(dict.fromkeys(op.strip() for op in text.split(",") if op.strip()))
    if not ops or any(op not in OPS for op in ops):
        raise GateError(f"--ops takes a comma-separated list of {', '.join(OPS)}, got {text!r}", field="--ops")
    return ops


def report_dir(given: Path | None, root: Path) -> Path:
    """The reports' folder: the one given (relative to where the user stands), else reports/."""
    folder = given or root / "reports"
    return folder if folder.is_absolute() else Path.cwd() / folder


REPORTS_HELP = "where reports go (default: reports/)"
# A reviewer's experiment (try, prove) leaves the working tree as it was unless asked.
REPORTS_ON_REQUEST_HELP = "write the reports (run's formats) into this folder (default: none written)"


def add_report_options(command: argparse.ArgumentParser, jobs: int | None = None, reports: str = REPORTS_HELP) -> None:
    """--report-dir and --jobs, declared once for every command that prints verdicts."""
    command.add_argument("--report-dir", type=Path, default=None, help=reports)
    default = jobs if jobs is not None else os.cpu_count() or 1
    command.add_argument("--jobs", "-j", type=int, default=default, help="parallel sandboxes")


def usable_jobs(jobs: int) -> int:
    """--jobs, checked, and capped at the workers this machine can hold, which is said in one
    line: asked for more, the gate failed midway with a traceback and left its start folder."""
    from killmap.engine import workers_the_machine_holds
    from killmap.errors import GateError

    if jobs < 1:
        raise GateError("--jobs must be at least 1", field="--jobs")
    most, why = workers_the_machine_holds()
    if most is None or jobs <= most:
        return jobs
    print(f"killmap: --jobs {jobs} is more workers than this machine holds ({why}): running {most}", file=sys.stderr)
    return most


def add_cache_options(command: argparse.ArgumentParser) -> None:
    """--no-cache, --no-cache-write and --cache-dir: reading the cache and writing it are two
    choices, so that a run that trusts nothing old still leaves its verdicts for the next."""
    command.add_argument(
        "--no-cache",
        action="store_true",
        help="reuse no cached verdict or mutant: work every one out again, and store the fresh "
        "verdicts for the next run (add --no-cache-write to store nothing)",
    )
    command.add_argument(
        "--no-cache-write",
        action="store_true",
        help="store nothing in the cache (cached verdicts are still reused unless --no-cache: "
        "both flags together neither read nor write it)",
    )
    command.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="killmap's cache folder, the verdict cache in it: keep it between CI runs "
        "(default: $KILLMAP_CACHE_DIR, else $XDG_CACHE_HOME/killmap)",
    )


def cache_dir(given: Path | None) -> Path | None:
    """--cache-dir, from where the user stands; None leaves the choice to cachedirs."""
    return given.absolute() if given is not None else None


def write_lab_reports(result: LabResult, root: Path, folder: Path, extra: dict[str, Any] | None = None) -> str:
    """A command's verdicts written as the gate's reports (run's writer, run's formats);
    returns the line that says where."""
    from killmap.report.document import to_json, write_reports

    document = to_json(result, root)
    document.update(extra or {})
    paths = write_reports(document, folder)
    return reports_line(paths)


def reports_line(paths: dict[str, Path]) -> str:
    """Where a command wrote its reports: the JSON's path as the user would type it (relative
    to where they stand, when it lies beneath), then the other files' names."""
    first = paths["json"]
    try:
        shown = str(first.absolute().relative_to(Path.cwd()))
    except ValueError:
        shown = str(first)
    others = ", ".join(p.name for k, p in paths.items() if k != "json")
    return f"reports: {shown} (+ {others})" if others else f"reports: {shown}"


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


def refuse_unknown_names(names, catalogs, mutations) -> None:
    """Each NAME a command was given must be a mutation of the catalogs it read: one a letter
    off listed nothing and exited 0. The error names the catalogs searched and the nearest name."""
    from killmap.catalog.entries import did_you_mean
    from killmap.errors import GateError

    known = [m.name for m in mutations]
    for name in names:
        if name not in known:
            searched = ", ".join(c.path for c in catalogs) or "no catalog"
            raise GateError(f"no mutation named {name!r} in {searched}{did_you_mean(name, known)}", field="NAME")
