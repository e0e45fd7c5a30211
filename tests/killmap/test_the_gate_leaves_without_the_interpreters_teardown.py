"""A command that has finished leaves at once (cli.entry), skipping the interpreter's teardown,
but only when that loses nothing: its output is all written, every atexit callback still runs,
and a thread still at work is waited for. Each case runs the real console entry in a child
interpreter, on `killmap list` over this repository's catalog (a command that writes stdout)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# os._exit is how it leaves at once: the child says when it is called.
CHILD = """
import os, sys
_exit = os._exit
def leave(code):
    os.write(2, b"left at once\\n")
    _exit(code)
os._exit = leave
{setup}
sys.argv = ["killmap", "list"]
from killmap.cli import entry
entry()
"""


WRITES_A_LAST_LINE = """
import killmap.cli
command = killmap.cli.main
def main(argv=None):
    code = command(argv)
    sys.stdout.write("written last\\n")
    return code
killmap.cli.main = main
"""


def run_child(setup: str = "") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered, as a user's
    return subprocess.run(
        [sys.executable, "-c", CHILD.format(setup=setup)], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )


def test_a_finished_command_leaves_without_the_teardown_and_with_all_its_output():
    # A last line the command leaves in stdout's buffer (block-buffered: a pipe).
    done = run_child(WRITES_A_LAST_LINE)
    assert done.returncode == 0, done.stderr
    assert "left at once" in done.stderr
    listed = subprocess.run(
        [sys.executable, "-m", "killmap", "list"], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert done.stdout == listed.stdout + "written last\n"
    assert "identity-call-deleted" in done.stdout


def test_an_atexit_callback_still_runs():
    done = run_child("import atexit\natexit.register(lambda: os.write(2, b'atexit ran\\n'))")
    assert done.returncode == 0, done.stderr
    assert "atexit ran" in done.stderr
    assert "left at once" not in done.stderr


def test_a_thread_still_at_work_is_waited_for():
    # The thread is still at work when entry asks whether it may leave at once: it starts its
    # last step only then, whatever the machine's pace.
    setup = (
        "import threading, time, killmap.cli\n"
        "asked = threading.Event()\n"
        "ask = killmap.cli._nothing_runs_at_exit\n"
        "killmap.cli._nothing_runs_at_exit = lambda: (asked.set(), ask())[1]\n"
        "threading.Thread(target=lambda: (asked.wait(), time.sleep(0.2), os.write(2, b'thread done\\n'))).start()"
    )
    done = run_child(setup)
    assert done.returncode == 0, done.stderr
    assert "thread done" in done.stderr
    assert "left at once" not in done.stderr
