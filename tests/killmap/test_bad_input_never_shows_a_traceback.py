"""More bad input that must come out as one line and exit 2, never a traceback.

Each of these once escaped as a Python traceback: a target or patch that is not UTF-8,
TOML nested deeply enough to exhaust the parser's recursion, a shard written with
superscript digits, a report folder that is a file (found only after the whole run),
and a worker's BrokenPipeError when the gate is interrupted while its workers start.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from gatekit import copy_fixture, gate_env, killmap_command, run_gate

LATIN1 = "# caf\xe9: written by an editor set to latin-1\n".encode("latin-1")


def one_line_error(code: int, stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert code == 2, stderr
    assert len(lines) == 1 and lines[0].startswith("killmap: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.fixture
def basic(tmp_path):
    return copy_fixture("basic", tmp_path)


def test_a_target_file_that_is_not_utf8_is_one_line_naming_the_target(basic):
    core = basic / "src" / "basicpkg" / "core.py"
    core.write_bytes(LATIN1 + core.read_bytes())
    for command in (("run", "--no-cache"), ("list",), ("pin",), ("show", "classify-call-deleted")):
        run = run_gate(basic, *command)
        line = one_line_error(run.code, run.stderr)
        assert "mutations/basic.toml" in line and "'classify-call-deleted'" in line and "'target'" in line
        assert "src/basicpkg/core.py" in line and "not UTF-8" in line


def test_a_patch_file_that_is_not_utf8_is_one_line_naming_the_patch(basic):
    patch = basic / "mutations" / "odd-refusal-fix.patch"
    patch.write_bytes(patch.read_bytes() + b" \xff\xfe\n")
    run = run_gate(basic, "run", "--no-cache")
    line = one_line_error(run.code, run.stderr)
    assert "'odd-refusal-fix-reverted'" in line and "'patch'" in line and "not UTF-8" in line


def test_a_toml_syntax_error_names_the_file_and_its_line_and_no_field(basic):
    # A user's catalog: "field 'name': not valid TOML: Illegal character '\\n' (at line 6, column 20)".
    catalog = basic / "mutations" / "basic.toml"
    catalog.write_text('[gate]\ntests = ["tests"]\n\n[[mutation]]\nop = "replace"\nname = "one-two\n')
    for command in (("run", "--no-cache"), ("check",)):
        done = run_gate(basic, *command)
        [line] = done.stderr.splitlines()
        assert done.code == 2 and line.startswith(f"killmap{' check' if command == ('check',) else ''}: "), line
        assert line.endswith("mutations/basic.toml: not valid TOML at line 6, column 16: Illegal character '\\n'"), line


@pytest.mark.parametrize(
    "nested",
    ["x = " + "[" * 2000 + "]" * 2000, '[[mutation]]\nname = "deep"\nnote = ' + "{a = " * 1000 + "1" + "}" * 1000],
)
def test_deeply_nested_toml_is_one_line_naming_the_catalog(basic, nested):
    (basic / "mutations" / "deep.toml").write_text(nested + "\n")
    run = run_gate(basic, "run", "--no-cache")
    line = one_line_error(run.code, run.stderr)
    assert "mutations/deep.toml" in line and "nested too deeply" in line


@pytest.mark.parametrize("shard", ["²/³", "1/³", "١/٢", "1/" + "9" * 5000, "+1/2", " 1/2", "1/2/3", "0x1/2"])
def test_a_shard_that_is_not_ascii_digits_is_one_line(basic, shard):
    run = killmap_command(basic, "run", "--shard", shard)
    line = one_line_error(run.returncode, run.stderr)
    assert "--shard" in line


def test_a_report_dir_naming_a_file_is_refused_before_anything_runs(basic):
    existing = basic.parent / "not-a-folder"
    existing.write_text("mine\n")
    started = time.perf_counter()
    run = killmap_command(basic, "run", "--no-cache", "--report-dir", str(existing))
    line = one_line_error(run.returncode, run.stderr)
    assert "--report-dir" in line and "not-a-folder" in line and "existing file" in line
    assert "baseline" not in run.stdout  # refused up front: no test ran
    assert time.perf_counter() - started < 20
    assert existing.read_text() == "mine\n"


def test_a_report_dir_inside_a_file_is_refused_before_anything_runs(basic):
    existing = basic.parent / "not-a-folder"
    existing.write_text("mine\n")
    run = killmap_command(basic, "run", "--no-cache", "--report-dir", str(existing / "reports"))
    line = one_line_error(run.returncode, run.stderr)
    assert "--report-dir" in line and "baseline" not in run.stdout


def test_merge_refuses_a_report_dir_naming_a_file(basic, tmp_path):
    existing = tmp_path / "not-a-folder"
    existing.write_text("mine\n")
    run = killmap_command(basic, "merge", str(tmp_path / "missing.json"), "--report-dir", str(existing))
    assert "--report-dir" in one_line_error(run.returncode, run.stderr)


def test_red_first_refuses_a_report_dir_that_is_a_dangling_link_as_run_does(basic, tmp_path):
    # One report-folder check for every command: a link to nowhere is no folder to write in.
    link = tmp_path / "reports"
    link.symlink_to(tmp_path / "nowhere")
    for command in (["run", "--no-cache"], ["red-first"]):
        run = killmap_command(basic, *command, "--report-dir", str(link))
        line = one_line_error(run.returncode, run.stderr)
        assert "--report-dir" in line and "existing file" in line
    assert not (tmp_path / "nowhere").exists()


def test_red_first_refuses_a_report_dir_where_its_own_report_is_a_folder(basic, tmp_path):
    (tmp_path / "reports" / "red-first.md").mkdir(parents=True)
    run = killmap_command(basic, "red-first", "--report-dir", str(tmp_path / "reports"))
    line = one_line_error(run.returncode, run.stderr)
    assert "red-first.md is a folder" in line


def test_a_worker_whose_gate_has_gone_leaves_without_a_traceback(tmp_path):
    # The gate's end of the protocol pipe is closed before the worker says it is ready:
    # what a gate interrupted (or killed) while its workers start leaves them with.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "killmap.engine.workers.worker"],
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert done.returncode == 0


# Makes every killmap worker start slowly, and say so, so that the gate can be
# interrupted at the one moment that matters: while its workers are starting.
SLOW_START = """\
import os, sys, time
if "killmap.engine.workers.worker" in getattr(sys, "orig_argv", ()):
    with open(os.environ["KM_STARTING"], "a") as marker:
        marker.write(f"{os.getpid()}\\n")
    time.sleep(float(os.environ["KM_START_DELAY"]))
"""


def test_interrupting_the_gate_while_workers_start_is_a_clean_interrupted_exit(basic, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SLOW_START)
    marker = tmp_path / "starting"
    env = gate_env(basic, {"PYTHONPATH": str(site), "KM_STARTING": str(marker), "KM_START_DELAY": "3"})
    gate_process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "killmap",
            "run",
            "--no-cache",
            "--jobs",
            "2",
            "--report-dir",
            str(tmp_path / "reports"),
        ],
        cwd=basic,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    # One process starts (the other workers would be its forks, once it has imported pytest).
    while not (marker.exists() and marker.read_text().split()):
        assert gate_process.poll() is None and time.monotonic() < deadline, gate_process.communicate()
        time.sleep(0.02)
    gate_process.send_signal(signal.SIGINT)
    # stderr reaches EOF only when every holder closed it, the workers included: whatever
    # a worker prints on its way out is in here.
    stdout, stderr = gate_process.communicate(timeout=60)
    assert gate_process.returncode == 130, (stdout, stderr)
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
    assert "interrupted" in stderr
    # The workers were stopped by the gate, not left to finish starting on their own.
    for pid in map(int, marker.read_text().split()):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not (tmp_path / "reports").exists()


INTERRUPT_INSIDE_EXEC = """\
import sys
import killmap.cli as cli

def dispatch(args):
    # Where ^C often lands while the workers start: inside exec()'d code (a dataclass's
    # generated methods, libcst's import), which CPython 3.11 then calls unhandled.
    exec("raise KeyboardInterrupt")

def dispatch_wrapped(args):
    try:
        exec("raise KeyboardInterrupt")
    except KeyboardInterrupt as interrupt:  # what 3.11's __set_name__ does with it
        raise RuntimeError("Error calling __set_name__") from interrupt

cli._dispatch = dispatch if sys.argv.pop(1) == "plain" else dispatch_wrapped
cli.entry()
"""


@pytest.mark.parametrize("shape", ["plain", "wrapped"])
def test_an_interrupt_raised_inside_exec_code_still_exits_130(tmp_path, shape):
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPT_INSIDE_EXEC, shape, "list"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert done.stderr.strip() == "killmap: interrupted; the working tree was not touched"


INTERRUPT_WITH_OUTPUT_PENDING = """\
import sys, time
import killmap.cli as cli

def dispatch(args):
    time.sleep(0.5)  # the reader is gone by now
    sys.stdout.write("a table nobody will read\\n")  # block-buffered: a pipe
    raise KeyboardInterrupt

cli._dispatch = dispatch
cli.entry()
"""


def test_an_interrupt_whose_reader_is_gone_still_exits_130_without_a_traceback(tmp_path):
    # ^C on `killmap run | less`: less ends first, and the output left to flush has nowhere to go.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    child = subprocess.Popen(
        [sys.executable, "-c", INTERRUPT_WITH_OUTPUT_PENDING, "list"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    child.stdout.close()
    _, err = child.communicate(timeout=60)
    assert child.returncode == 130, (child.returncode, err)
    assert "Traceback" not in err and err.strip() == "killmap: interrupted; the working tree was not touched"
