"""Pages whose commands are tested: ```console blocks, each `$ command` followed by its output.

A page shows what a command prints; test_tour.py runs every command of the page in a fresh copy
of the repository and compares. What differs from run to run is normalized on both sides before
the comparison (durations, the job count and the run settings beside it, git hashes, the copy's
path, the padding of a table),
and a line `...` in the page stands for any number of lines the page leaves out. Nothing else
is forgiven: a verdict, a count, a test id or a line that drifted fails.

    python tests/killmap/consoledoc.py docs/tour.md   # rewrite the page's outputs from real runs
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ELISION = "..."
# The live progress lines of `run`, one per verdict as it lands: their order is the order the
# sandboxes finished in, so a block of them is compared as a set.
PROGRESS_LINE = re.compile(r"^ *[a-z][a-z-]* [a-z0-9][a-z0-9-]*$")
VOLATILE = (
    # The baseline's collection, said only where it took longer than its runs: on a loaded
    # machine, or a slow one, it does (the page shows a quiet machine's line).
    (re.compile(r", after \d+\.\d+s collecting them"), ""),
    (re.compile(r"\b\d+\.\d+s\b"), "<secs>"),  # durations: "0.12s", "in 3.5s"
    # The machine's cores, and the run's settings said beside them (issue 35's seed, say).
    (re.compile(r"\(\d+ jobs?\b[^)]*\)"), "(<jobs> jobs)"),
    (re.compile(r"\b[0-9a-f]{10}\b"), "<commit>"),  # red-first's short hashes of replayed commits
    (re.compile(r"[━─═]+"), "─"),  # a table's rules, as wide as its widest cell
    (re.compile(r"[ \t]+"), " "),  # a table cell's padding
)


@dataclass(frozen=True)
class Command:
    """One `$ command` of a page, with the output the page shows for it."""

    page: str
    line: int  # 1-based, of the `$` line
    command: str
    expected: tuple[str, ...]
    span: int = 1  # lines the command takes on the page (continued with a backslash)


def parse_page(text: str, page: str) -> list[Command]:
    """Every command of every ```console block, in page order. A command may continue over
    lines that end in a backslash, as in a shell."""
    commands: list[Command] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        if lines[index].strip() != "```console":
            index += 1
            continue
        index += 1
        current: list[str] = []
        start = 0
        output: list[str] = []
        while index < len(lines) and lines[index].strip() != "```":
            line = lines[index]
            if line.startswith("$ "):
                if current:
                    commands.append(Command(page, start, " ".join(current), tuple(output), len(current)))
                start, current, output = index + 1, [line[2:].rstrip("\\").strip()], []
                while line.endswith("\\") and index + 1 < len(lines):
                    index += 1
                    line = lines[index]
                    current.append(line.rstrip("\\").strip())
            elif not current:
                raise ValueError(f"{page}:{index + 1}: a console block must start with a '$ ' command")
            else:
                output.append(line)
            index += 1
        if current:
            commands.append(Command(page, start, " ".join(current), tuple(output), len(current)))
        index += 1
    return commands


def normalize(lines: list[str] | tuple[str, ...], root: Path | None = None) -> list[str]:
    """The lines with what varies between runs made equal, trailing blank lines dropped."""
    out = []
    for line in lines:
        if root is not None:
            line = line.replace(f"{root}/", "").replace(str(root), ".")
        for pattern, replacement in VOLATILE:
            line = pattern.sub(replacement, line)
        out.append(line.rstrip())
    while out and not out[-1]:
        out.pop()
    return _progress_sorted(out)


def _progress_sorted(lines: list[str]) -> list[str]:
    out: list[str] = []
    block: list[str] = []
    for line in [*lines, ""]:
        if PROGRESS_LINE.match(line) and line.strip() != ELISION:
            block.append(line)
            continue
        out.extend(sorted(block))
        block = []
        out.append(line)
    return out[:-1]


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether the actual lines are the expected ones, an `...` line standing for any lines."""
    if not expected:
        return not actual
    if expected[0].strip() == ELISION:
        return any(matches(expected[1:], actual[skip:]) for skip in range(len(actual) + 1))
    return bool(actual) and expected[0] == actual[0] and matches(expected[1:], actual[1:])


def drift(command: Command, actual: str, root: Path | None = None) -> str | None:
    """None when the page shows what the command printed; else what differs, to read in a failure."""
    want = normalize(command.expected)
    got = normalize(actual.splitlines(), root)
    if matches(want, got):
        return None
    import difflib

    diff = "\n".join(difflib.unified_diff(want, got, "the page", "the command", lineterm="", n=2))
    return f"{command.page}:{command.line}: $ {command.command}\n{diff}"


# --- the fresh copy the commands run in ---------------------------------------------------------


def fresh_copy(dest: Path) -> Path:
    """The repository's files (tracked, and untracked but not ignored: what killmap itself
    copies) in `dest`, as the one commit of a new git repository on `main`."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in sorted(set(filter(None, listed.split("\0")))):
        source = ROOT / rel
        if source.is_file():  # a tracked file deleted in the working tree is listed too
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)
    env = git_env()
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "a fresh clone"]):
        subprocess.run(["git", *args], cwd=dest, env=env, check=True, capture_output=True)
    return dest


def git_env() -> dict[str, str]:
    ident = {"GIT_AUTHOR_NAME": "Tour", "GIT_AUTHOR_EMAIL": "tour@example.invalid"}
    ident |= {"GIT_COMMITTER_NAME": "Tour", "GIT_COMMITTER_EMAIL": "tour@example.invalid"}
    return {**os.environ, **ident, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


class Shell:
    """Runs a page's commands one after another in one copy, as a reader would type them:
    `killmap` is this interpreter's killmap from the copy's own src/, `$?` is the exit code of
    the command before, and stderr is interleaved with stdout as a terminal shows it."""

    def __init__(self, root: Path, scratch: Path):
        self.root = root
        self.last_code = 0
        bin_dir = scratch / "bin"
        bin_dir.mkdir(parents=True, exist_ok=True)
        shim = bin_dir / "killmap"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m killmap "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
        env = {k: v for k, v in git_env().items() if not k.startswith("KILLMAP_")}
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        env["PYTHONPATH"] = str(root / "src")
        env["COLUMNS"] = "120"
        env["PYTHONUNBUFFERED"] = "1"  # stdout and stderr in the order written, as on a terminal
        env.pop("GITHUB_ACTIONS", None)  # annotations would join the output
        self.env = env

    def run(self, command: str, cache: Path, timeout: float = 300) -> str:
        # .venv/bin/killmap in the README is this shell's killmap.
        line = command.replace(".venv/bin/killmap", "killmap")
        done = subprocess.run(
            ["bash", "-c", f"(exit {self.last_code}); {line}"],
            cwd=self.root,
            env={**self.env, "XDG_CACHE_HOME": str(cache)},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
        )
        self.last_code = done.returncode
        return done.stdout


def rewrite_page(page: Path, scratch: Path) -> None:
    """Put each command's real output into the page (a maintainer's tool; `...` lines are lost)."""
    text = page.read_text(encoding="utf-8")
    root = fresh_copy(scratch / "repo")
    shell = Shell(root, scratch)
    commands = parse_page(text, page.name)
    lines = text.splitlines()
    outputs = [shell.run(c.command, scratch / "cache") for c in commands]
    # From the end, so that the line numbers of the commands before stay right.
    for command, output in reversed(list(zip(commands, outputs, strict=True))):
        first = command.line - 1 + command.span
        end = first + len(command.expected)
        real = [line.replace(f"{root}/", "").replace(str(root), ".") for line in output.splitlines()]
        lines[first:end] = real
    page.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch_dir:
        rewrite_page(Path(sys.argv[1]).resolve(), Path(scratch_dir))
