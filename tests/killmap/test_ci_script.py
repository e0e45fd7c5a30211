"""`.ci/run` fails when any of its steps fails: a check whose failure CI ignores is no check."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CI = ROOT / ".ci" / "run"


def _commands() -> list[str]:
    """The script's lines that run something (comments and blank lines left out)."""
    return [line.strip() for line in CI.read_text().splitlines() if line.strip() and not line.strip().startswith("#")]


def test_no_step_of_ci_is_chained_where_set_e_would_ignore_its_failure():
    # Under `set -e`, bash does not stop at a failing command that is followed by `&&` or
    # `||`: `ruff check ... && ruff format --check ...` let a lint error through, and CI passed.
    chained = [line for line in _commands() if re.search(r"&&|\|\|", line)]
    assert chained == []


def test_a_failing_step_of_the_same_shape_stops_bash():
    # What the rule above rests on, shown with bash itself: a failure on a line of its own
    # ends the script; the same failure before `&&` does not.
    own_line = subprocess.run(["bash", "-c", "set -euo pipefail\nfalse\necho reached"], capture_output=True, text=True)
    chained = subprocess.run(
        ["bash", "-c", "set -euo pipefail\nfalse && true\necho reached"], capture_output=True, text=True
    )
    assert (own_line.returncode, own_line.stdout) == (1, "")
    assert (chained.returncode, chained.stdout) == (0, "reached\n")


def test_ci_runs_every_step_of_the_readmes_test_command_in_its_order():
    readme = (ROOT / "README.md").read_text()
    command = next(line for line in readme.splitlines() if ".venv/bin/python -m pytest" in line)
    steps = [step.strip().replace("pip install -e", "pip install -q -e") for step in command.split("&&")]
    lines = _commands()
    where = [lines.index(step) for step in steps]
    assert where == sorted(where)
    assert "set -euo pipefail" in lines
