"""The gate's own process never imports pytest: only its workers run tests.

Importing pytest costs a fifth of a second of the one core the gate's start runs on (a
sweep of a small module is three seconds); a report that records pytest's version reads
it from the installed package's metadata (killmap.pytest_version) instead; test_sweep's
report test holds the version it writes to the one that ran.
"""

from __future__ import annotations

import subprocess
import sys

GATE_MODULES = [
    "killmap.cli",
    "killmap.commands.run",
    "killmap.commands.sweep_cli",
    "killmap.report.sweep_report",
    "killmap.report.document",
    "killmap.verdict.lab",
    "killmap.verdict.sweep",
]


def test_the_modules_of_run_and_sweep_leave_pytest_unimported():
    probe = "import importlib, sys\n" + "".join(f"importlib.import_module({m!r})\n" for m in GATE_MODULES)
    probe += "print(sorted(m for m in sys.modules if m == 'pytest' or m.startswith('_pytest')))\n"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_building_the_command_line_leaves_the_http_client_unimported():
    # Every command builds every command's parser; only `comment` talks to GitHub, and
    # urllib.request (http.client, email) was 20 ms of a cached gate's 0.25 s.
    probe = "import sys\nfrom killmap.cli import build_parser\nbuild_parser()\n"
    probe += "print(sorted(m for m in ('urllib.request', 'http.client') if m in sys.modules))\n"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_building_the_command_line_leaves_the_lab_and_libcst_unimported():
    # Every command's module is imported to build its parser: what only running needs (the
    # lab, the engine's core, libcst) waits for the command that runs.
    probe = "import sys\nfrom killmap.cli import build_parser\nbuild_parser()\n"
    probe += "print(sorted(m for m in ('killmap.verdict.lab', 'killmap.engine.core', 'libcst') if m in sys.modules))\n"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
