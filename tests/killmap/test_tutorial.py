"""The getting-started tutorial (docs/tutorial.md) is run as a reader would follow it.

The page is read top to bottom. A code block titled with a path (```python title="src/x.py"```)
is a file the reader writes: the test writes it, whole, into an empty project folder; a title
ending in ", at the end" appends the block to that file instead. Each `$ command` of a
```console block runs there, in page order, and what it prints must be what the page shows, up
to what consoledoc.normalize says varies (durations, paths, a table's padding).

    python tests/killmap/test_tutorial.py   # rewrite the page's outputs from a real run
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from consoledoc import ROOT, Command, Shell, drift, parse_page
from sweepkit import require_mutmut

PAGE = ROOT / "docs" / "tutorial.md"
FENCE = re.compile(r'^```(\w+)(?: title="([^"]+)")?\n(.*?)^```\n', re.M | re.S)
APPEND = ", at the end"


@dataclass(frozen=True)
class Step:
    """A file the reader writes (path, text, appended or whole), or a command block."""

    path: str | None
    text: str
    append: bool = False
    commands: tuple[Command, ...] = ()


def steps(page: str) -> list[Step]:
    """The page's titled files and console blocks, in page order."""
    found = []
    for m in FENCE.finditer(page):
        language, title, body = m.group(1), m.group(2), m.group(3)
        if title:
            path = title.removesuffix(APPEND)
            found.append(Step(path, body, append=title.endswith(APPEND)))
        elif language == "console":
            offset = page[: m.start()].count("\n")
            block = "\n" * offset + m.group(0)
            found.append(Step(None, "", commands=tuple(parse_page(block, "docs/tutorial.md"))))
    return found


def follow(project: Path, scratch: Path) -> list[tuple[Command, str]]:
    """Every step done in `project`: files written, commands run; each command and its output."""
    project.mkdir(parents=True)
    shell = Shell(project, scratch)
    shell.env.pop("PYTHONPATH")  # the reader's killmap is installed; the project has its own src/
    printed = []
    for step in steps(PAGE.read_text(encoding="utf-8")):
        if step.path is not None:
            target = project / step.path
            target.parent.mkdir(parents=True, exist_ok=True)
            before = target.read_text(encoding="utf-8") + "\n" if step.append else ""
            target.write_text(before + step.text, encoding="utf-8")
        for command in step.commands:
            printed.append((command, shell.run(command.command, scratch / "cache")))
    return printed


@pytest.fixture(scope="module")
def followed(tmp_path_factory) -> tuple[Path, list[tuple[Command, str]]]:
    require_mutmut()  # the tutorial's last steps sweep
    scratch = tmp_path_factory.mktemp("tutorial")
    project = scratch / "shipping"
    return project, follow(project, scratch)


def test_every_tutorial_command_prints_what_the_page_shows(followed):
    project, printed = followed
    problems = [found for command, output in printed if (found := drift(command, output, project))]
    assert not problems, "\n\n".join(problems)


def test_the_tutorial_goes_from_init_to_a_held_a_vacuous_and_a_promoted_contract(followed):
    _, printed = followed
    commands = [c.command for c, _ in printed]
    assert commands[0].startswith("git init") and "killmap init" in commands
    said = "\n".join(output for _, output in printed)
    assert "vacuous zero-weight-accepted" in said
    assert any(c.startswith("killmap sweep --promote ") for c in commands)
    assert "a survivor may be a gap in the tests, or an equivalent mutant" in " ".join(said.split())
    last_run = [output for command, output in printed if command.command == "killmap run"][-1]
    assert "4/4 contracts held" in last_run


def test_a_file_step_and_an_appended_step_are_read_in_page_order():
    page = (
        'Write it:\n\n```toml title="a.toml"\nx = 1\n```\n\n'
        "```console\n$ cat a.toml\nx = 1\n```\n\n"
        '```toml title="a.toml, at the end"\ny = 2\n```\n'
    )
    found = steps(page)
    assert [(s.path, s.text, s.append) for s in found] == [
        ("a.toml", "x = 1\n", False),
        (None, "", False),
        ("a.toml", "y = 2\n", True),
    ]
    assert [(c.command, c.line, c.expected) for c in found[1].commands] == [("cat a.toml", 8, ("x = 1",))]


def rewrite(scratch: Path) -> None:
    """Put each command's real output into the page (a maintainer's tool; `...` lines are lost)."""
    project = scratch / "shipping"
    printed = follow(project, scratch)
    lines = PAGE.read_text(encoding="utf-8").splitlines()
    for command, output in reversed(printed):
        first = command.line - 1 + command.span
        end = first + len(command.expected)
        real = [line.replace(f"{project}/", "").replace(str(project), ".") for line in output.splitlines()]
        lines[first:end] = real
    PAGE.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch_dir:
        rewrite(Path(scratch_dir))
