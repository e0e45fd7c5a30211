"""Reading the verdict cache and writing it are two choices: `--no-cache` reads nothing but
stores the fresh verdicts, so the next plain run reuses them; `--no-cache-write` stores
nothing; both leave the cache as it was. `--help` says so for every command that has them."""

from __future__ import annotations

import subprocess
import sys

import pytest
from gatekit import copy_fixture, run_gate


def cached(run) -> list[bool]:
    assert run.code == 0, run.stdout + run.stderr
    return [m["cached"] for m in run.report["mutations"]]


def cache_files(project) -> dict[str, bytes]:
    folder = project.parent / "xdg-cache"
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("verdicts.json")}


def test_no_cache_reads_nothing_but_stores_the_fresh_verdicts_for_the_next_run(tmp_path):
    project = copy_fixture("basic", tmp_path)
    assert cached(run_gate(project, "run")) == [False, False]
    assert cached(run_gate(project, "run", "--no-cache")) == [False, False]  # cached, not read
    (project.parent / "xdg-cache").rename(project.parent / "elsewhere")
    assert cached(run_gate(project, "run", "--no-cache")) == [False, False]
    assert cached(run_gate(project, "run")) == [True, True]  # stored by the --no-cache run


def test_no_cache_write_stores_nothing_and_with_no_cache_the_cache_is_left_as_it_was(tmp_path):
    project = copy_fixture("basic", tmp_path)
    assert cached(run_gate(project, "run", "--no-cache", "--no-cache-write")) == [False, False]
    assert cache_files(project) == {}
    assert cached(run_gate(project, "run", "--no-cache-write")) == [False, False]
    assert cache_files(project) == {}
    assert cached(run_gate(project, "run")) == [False, False]
    kept = cache_files(project)
    assert cached(run_gate(project, "run", "--no-cache-write")) == [True, True]  # still read
    assert cached(run_gate(project, "run", "--no-cache", "--no-cache-write")) == [False, False]
    assert cache_files(project) == kept


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_help_says_what_each_cache_flag_does(command):
    done = subprocess.run(
        [sys.executable, "-m", "killmap", command, "--help"], capture_output=True, text=True, timeout=60
    )
    text = " ".join(done.stdout.split())
    assert "--no-cache reuse no cached verdict or mutant" in text
    assert "store the fresh verdicts for the next run" in text
    assert "--no-cache-write store nothing in the cache" in text
    assert "neither read nor write it" in text
