"""A function a decorator caches (functools.lru_cache) answers a repeated call from its cache,
running none of its lines: reach sees only the first caller of each argument, and a test
that reads the mutant's cached answer later is never selected. Every test runs under a
change inside one (wcwidth's width table; a sweep called such mutants survivors)."""

from __future__ import annotations

from gatekit import pkg_project, replace_catalog, run_gate

from killmap.verdict.reach import region_of

SOURCE = (
    "import functools\n\n\n"
    "@functools.lru_cache(maxsize=None)\n"
    "def width(char):\n"
    "    if char == 'x':\n"
    "        return 2\n"
    "    return 1\n\n\n"
    "def plain(char):\n"
    "    return 1\n"
)


def test_a_change_in_a_cached_function_is_marked_cached_and_one_elsewhere_is_not():
    assert region_of(SOURCE, (7,)).cached
    assert not region_of(SOURCE, (12,)).cached


def test_a_bare_cache_decorator_counts_too():
    source = "from functools import cache\n\n\n@cache\ndef f(x):\n    return x + 1\n"
    assert region_of(source, (6,)).cached


TESTS = (
    "from pkg import width\n\n\n"
    "def test_first_asks():\n    assert width('x') == 2\n\n\n"
    "def test_later_reads_the_cache():\n    assert width('x') > 1\n"
)
CATALOG = replace_catalog("narrow", "width", "return 2", "return 1", "tests/test_width.py::test_first_asks")


def test_a_test_that_reads_the_cached_answer_is_run_and_its_red_is_overreach(tmp_path):
    project = pkg_project(tmp_path / "p", SOURCE, {"tests/test_width.py": TESTS}, CATALOG)
    done = run_gate(project, "run", "--no-cache", "--jobs", "1")
    entry = done.mutation("narrow")
    assert entry["verdict"] == "overreach", entry["detail"]
    assert sorted(r["id"] for r in entry["red"]) == [
        "tests/test_width.py::test_first_asks",
        "tests/test_width.py::test_later_reads_the_cache",
    ]


def test_prove_still_says_missed_of_a_test_that_runs_the_cached_function_and_stays_green(tmp_path):
    catalog = CATALOG.replace('old = "return 2"\nnew = "return 1"', 'old = "return 1"\nnew = "return 0"')
    project = pkg_project(
        tmp_path / "p",
        SOURCE.replace("def plain(char):\n    return 1", "def plain(char):\n    return 3"),
        {"tests/test_width.py": TESTS + "\n\ndef test_other_char():\n    assert width('y') >= 0\n"},
        catalog,
    )
    done = run_gate(project, "prove", "tests/test_width.py::test_other_char")
    assert "missed" in done.stdout and "narrow" in done.stdout, done.stdout + done.stderr
    assert "not measured" not in done.stdout, done.stdout
