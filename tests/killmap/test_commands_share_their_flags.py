"""Every command that prints verdicts takes the same --report-dir and --jobs; every command is
declared by its own module, parser and main together."""

from __future__ import annotations

import subprocess
import sys

import pytest

# red-first runs two trees, one sandbox each: a --jobs would not change how many it uses.
SHARED = [(c, f) for c in ("run", "try", "prove", "sweep", "red-first") for f in ("--report-dir", "--jobs")]
SHARED.remove(("red-first", "--jobs"))


@pytest.mark.parametrize(("command", "flag"), SHARED)
def test_every_command_that_prints_verdicts_lists_report_dir_and_jobs_in_its_help(command, flag):
    done = subprocess.run(
        [sys.executable, "-m", "killmap", command, "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert flag in done.stdout


# The cache's flags, declared once (shared.add_cache_options) for both commands that keep verdicts.
CACHE = [(c, f) for c in ("run", "sweep") for f in ("--no-cache", "--no-cache-write", "--cache-dir")]


@pytest.mark.parametrize(("command", "flag"), CACHE)
def test_every_command_that_keeps_verdicts_lists_the_cache_flags_in_its_help(command, flag):
    done = subprocess.run(
        [sys.executable, "-m", "killmap", command, "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert flag in done.stdout


def test_every_command_is_declared_by_its_own_module_with_its_main():
    # One way to add a command: its module in cli.COMMANDS declares the parser and sets
    # `main`, which cli.py calls in one line; a parser without a main would fail only when run.
    import argparse
    from importlib import import_module

    from killmap import cli

    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) >= {"run", "red-first", "try", "prove", "sweep", "check", "init", "list", "show"}
    for name, command in sub.choices.items():
        main = command.get_default("main")
        assert callable(main), name
        assert main.__module__.removeprefix("killmap.commands.") in cli.COMMANDS, name
    for module in cli.COMMANDS:
        assert callable(import_module(f"killmap.commands.{module}").add_parser), module


# What a command needs only to run: the catalogs' reader, libcst, the lab and its judge, the
# reports, the engine's insides. A gate starts its first worker after its parser is built, and
# every module imported to build it delayed that worker (the judge alone: a quarter of a second).
NOT_TO_PARSE = ("killmap.verdict", "killmap.report", "killmap.mutate", "killmap.engine.", "killmap.catalog.reader")


def test_building_the_parser_imports_nothing_a_command_needs_only_to_run():
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\nfrom killmap.cli import build_parser\nbuild_parser()\nprint(' '.join(sorted(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    imported = done.stdout.split()
    assert "killmap.commands.run" in imported  # the parser was built of every command's module
    assert [m for m in imported if m.startswith(NOT_TO_PARSE) or m in ("libcst", "pytest")] == []


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["try", "m.py::f", "--op", "negate", "--conditon", "x"], "; did you mean --condition?"),
        (["run", "--no-cahce"], "; did you mean --no-cache?"),
        (["run", "--zzz"], ""),
    ],
)
def test_an_option_a_letter_off_is_told_the_nearest_of_its_command(argv, said, tmp_path):
    # pycodestyle: `try --conditon x` got "unrecognized arguments" alone, where a catalog's
    # misspelt field is told the nearest one.
    done = subprocess.run([sys.executable, "-m", "killmap", *argv], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("killmap: unrecognized arguments: ") and line.endswith(said or argv[-1]), line
