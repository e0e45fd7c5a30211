"""Tested docs: the Tour (docs/tour.md) and the README's Quick start show what their commands print.

Every `$ command` of a ```console block runs, in page order, in one fresh copy of the repository
(README first, then the Tour, each page with its own empty killmap cache, as a first run has), and
what it prints must be what the page shows, up to what consoledoc.normalize says varies. The
comparer's own tests are below, so that a drifted page is known to fail.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from consoledoc import ROOT, Command, Shell, drift, fresh_copy, matches, normalize, parse_page

TOUR = "docs/tour.md"
README = "README.md"
# The Quick start's `sh` block, part by part (split at `&&`): each is run by the README's
# console block that shows it, or not run here, for the reason given.
NOT_RUN = {
    "python3 -m venv .venv": "the environment: this test already runs in one with killmap's dependencies",
    ".venv/bin/pip install -e .": "an install (network, a minute): the test runs the copy's own src/",
    ".venv/bin/pip install -e '.[test]'": "an install (network, a minute): the test runs the copy's own src/",
    ".venv/bin/python -m pytest -n 2 --dist loadfile": "killmap's whole suite, which CI runs, this test among it",
}


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> tuple[Path, dict[str, list[tuple[Command, str]]]]:
    """(the copy's root, per page: each command and what it printed)."""
    scratch = tmp_path_factory.mktemp("tour")
    root = fresh_copy(scratch / "repo")
    shell = Shell(root, scratch)
    printed = {}
    for page in (README, TOUR):
        commands = parse_page((ROOT / page).read_text(encoding="utf-8"), page)
        cache = scratch / f"cache-{Path(page).stem}"
        printed[page] = [(command, shell.run(command.command, cache)) for command in commands]
    return root, printed


def drifts(ran, page: str) -> list[str]:
    root, printed = ran
    return [found for command, output in printed[page] if (found := drift(command, output, root))]


def test_every_command_on_the_tour_prints_what_the_page_shows(ran):
    problems = drifts(ran, TOUR)
    assert not problems, "\n\n".join(problems)


def test_the_readme_quick_start_prints_what_the_readme_shows(ran):
    assert ran[1][README], "the README shows no console block"
    problems = drifts(ran, README)
    assert not problems, "\n\n".join(problems)


def test_a_drifted_tour_output_fails_the_docs_test(ran):
    # The Tour as it would read had the catalog not grown: the real output no longer matches.
    root, printed = ran
    command, output = next((c, out) for c, out in printed[TOUR] if c.command == "killmap run")
    assert drift(command, output, root) is None
    page = (ROOT / TOUR).read_text(encoding="utf-8").replace("17/17 contracts held", "16/16 contracts held")
    drifted = next(c for c in parse_page(page, TOUR) if c.command == "killmap run")
    found = drift(drifted, output, root)
    assert found is not None and "-16/16 contracts held" in found and "+17/17 contracts held" in found


def test_the_tour_walks_run_show_check_red_first_and_prove():
    commands = [c.command for c in parse_page((ROOT / TOUR).read_text(encoding="utf-8"), TOUR)]
    subcommands = {c.split()[1] for c in commands if c.startswith("killmap ")}
    assert {"run", "show", "check", "red-first", "prove"} <= subcommands
    assert any(c.startswith("killmap red-first ") and "--revert src/draftroute/loader.py" in c for c in commands)


def test_every_quick_start_command_is_run_or_not_run_for_a_reason():
    readme = (ROOT / README).read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    shown = {c.command for c in parse_page(section, README)}
    for line in block.group(1).splitlines():
        for part in (p.strip() for p in line.split("&&")):
            assert part in NOT_RUN or part in shown, f"the Quick start's {part!r} is neither run nor excused"


# --- the comparer -------------------------------------------------------------------------------

PAGE = """\
Some prose.

```console
$ killmap run
baseline: 98 tests green in 2 runs, 1.10s
        held alpha
        held beta
┏━━━━━━━┳━━━━━━━┓
┃ name  ┃  time ┃
│ alpha │ 0.12s │
└───────┴───────┘
2/2 contracts held in 5.3s (2 jobs)
reports: reports/killmap.json
$ echo $?
0
```
"""
PRINTED = """\
baseline: 98 tests green in 2 runs, 3.87s
        held beta
        held alpha
┏━━━━━━━━┳━━━━━━━━┓
┃ name   ┃   time ┃
│ alpha  │ 12.40s │
└────────┴────────┘
2/2 contracts held in 19.0s (4 jobs, seed 20261201)
reports: /tmp/copy/reports/killmap.json
"""


def run_command(page: str = PAGE) -> Command:
    return parse_page(page, "page.md")[0]


def test_a_page_is_read_as_commands_each_with_the_lines_it_shows():
    commands = parse_page(PAGE, "page.md")
    assert [(c.command, c.line, len(c.expected)) for c in commands] == [("killmap run", 4, 9), ("echo $?", 14, 1)]


def test_a_command_continued_with_a_backslash_is_one_command():
    page = "```console\n$ killmap prove \\\n    'tests/a.py::t'\nout\n```\n"
    (command,) = parse_page(page, "page.md")
    assert (command.command, command.span, command.expected) == ("killmap prove 'tests/a.py::t'", 2, ("out",))


def test_durations_jobs_paths_progress_order_and_table_padding_do_not_count_as_drift():
    assert drift(run_command(), PRINTED, Path("/tmp/copy")) is None


@pytest.mark.parametrize(
    ("printed", "why"),
    [
        (PRINTED.replace("2/2 contracts held", "1/2 contracts held"), "a count"),
        (PRINTED.replace("        held beta", "     escaped beta"), "a verdict"),
        (PRINTED.replace("98 tests green", "97 tests green"), "the tests collected"),
        (PRINTED.replace("│ alpha  │", "│ gamma  │"), "a table cell"),
        (PRINTED + "a line more\n", "a line the page does not show"),
        (PRINTED.replace("reports: /tmp/copy/reports/killmap.json\n", ""), "a line the command no longer prints"),
    ],
    ids=["count", "verdict", "tests", "cell", "extra-line", "missing-line"],
)
def test_a_drifted_output_is_drift(printed, why):
    assert drift(run_command(), printed, Path("/tmp/copy")) is not None, why


def test_an_elision_stands_for_any_lines_but_the_lines_around_it_still_count():
    page = PAGE.replace("        held alpha\n        held beta\n", "...\n")
    assert drift(run_command(page), PRINTED, Path("/tmp/copy")) is None
    assert drift(run_command(page), PRINTED.replace("3.87s", "3.87s, 1 flaky"), Path("/tmp/copy")) is not None
    assert matches(["a", "...", "c"], ["a", "c"]) and not matches(["a", "...", "c"], ["a", "b"])


def test_normalizing_keeps_the_digits_of_a_count_and_of_a_pin():
    pin = "sha256:d28661a555f1bd2c9cd87e4828feb9f40dbed18f3a2ddbaa214a1414cfc75e9d"
    assert normalize([f"17/17 held, 98 tests, {pin}"]) == [f"17/17 held, 98 tests, {pin}"]
