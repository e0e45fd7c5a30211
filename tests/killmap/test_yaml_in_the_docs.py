"""The YAML a reader copies out of README.md and docs/ is YAML, and the YAML it is.

Every ```yaml (or ```yml) fenced block of README.md and docs/**/*.md is read with PyYAML.
A block with `jobs:` is a GitHub workflow: it says when it runs (`on:`), and each job where
(`runs-on:`) and what (`steps:`). A block with `repos:` is a .pre-commit-config.yaml: the
hook ids it takes from killmap's repository are the ones .pre-commit-hooks.yaml declares.
The docs are read as they are when the test runs, whatever blocks they hold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
# An opening code fence (CommonMark): three or more backticks or tildes, then an info string
# whose first word names the language. Indented fences (inside a list item) count too.
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\s`]*)")


@dataclass
class Block:
    doc: str  # the file, relative to the repository
    line: int  # the line the block's text starts on, 1-based
    text: str

    @property
    def where(self) -> str:
        first = next((line.strip() for line in self.text.splitlines() if line.strip()), "(empty)")
        return f"{self.doc}:{self.line} (the yaml block starting {first!r})"


def yaml_blocks(doc: str, text: str) -> list[Block]:
    """The yaml and yml fenced blocks of a Markdown text, with their indentation removed.
    Every other fenced block is stepped over whole, so a fence shown inside one is not taken
    for a block; a block left open runs to the end of the text, as in CommonMark."""
    lines = text.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        body = []
        j = i + 1
        while j < len(lines):
            closing = lines[j].strip()
            if len(closing) >= len(fence) and set(closing) == {fence[0]}:
                break
            line = lines[j]
            body.append(line[indent:] if not line[:indent].strip() else line.lstrip())
            j += 1
        if opening["info"].lower() in ("yaml", "yml"):
            blocks.append(Block(doc, i + 2, "\n".join(body) + "\n"))
        i = j + 1
    return blocks


def _workflow_problems(workflow: dict) -> list[str]:
    problems = []
    # YAML 1.1, which PyYAML reads, takes the bare key `on` for the boolean true.
    if "on" not in workflow and True not in workflow:
        problems.append("a workflow (it has jobs:) without on: GitHub refuses it: say which events run it")
    jobs = workflow["jobs"]
    if not isinstance(jobs, dict) or not jobs:
        return [*problems, "jobs: is not a mapping of jobs"]
    for name, job in jobs.items():
        if not isinstance(job, dict):
            problems.append(f"job {name!r} is not a mapping")
        elif "uses" in job:  # a call to a reusable workflow: its runner and steps are that workflow's
            continue
        else:
            missing = [key for key in ("runs-on", "steps") if key not in job]
            if missing:
                problems.append(f"job {name!r} has no {' and no '.join(missing)}")
            elif not isinstance(job["steps"], list) or not job["steps"]:
                problems.append(f"job {name!r}: steps: is not a list of steps")
    return problems


def _is_killmap(repo: object) -> bool:
    return str(repo).rstrip("/").removesuffix(".git").rsplit("/", 1)[-1] == "killmap"


def _pre_commit_config_problems(config: dict, hook_ids: set[str]) -> list[str]:
    repos = config["repos"]
    if not isinstance(repos, list):
        return ["repos: is not a list"]
    problems, named = [], []
    for repo in repos:
        if not isinstance(repo, dict) or not _is_killmap(repo.get("repo", "")):
            continue
        for hook in repo.get("hooks") or []:
            hook_id = hook.get("id") if isinstance(hook, dict) else hook
            named.append(hook_id)
            if hook_id not in hook_ids:
                problems.append(
                    f"hook id {hook_id!r} is not in .pre-commit-hooks.yaml, which declares {sorted(hook_ids)}"
                )
    if not named:
        problems.append("a .pre-commit-config (it has repos:) that takes no hook from killmap's repository")
    return problems


def block_problems(block: Block, hook_ids: set[str]) -> list[str]:
    try:
        value = yaml.safe_load(block.text)
    except yaml.YAMLError as exc:
        reason = " ".join(str(exc).split())
        return [f"{block.where}: not YAML: {reason}"]
    problems = []
    if isinstance(value, dict) and "jobs" in value:
        problems += _workflow_problems(value)
    if isinstance(value, dict) and "repos" in value:
        problems += _pre_commit_config_problems(value, hook_ids)
    return [f"{block.where}: {problem}" for problem in problems]


def _docs() -> list[Path]:
    docs = ROOT / "docs"
    return [ROOT / "README.md", *(sorted(docs.rglob("*.md")) if docs.is_dir() else [])]


def _blocks_of_the_docs() -> list[Block]:
    return [
        block
        for path in _docs()
        for block in yaml_blocks(path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8"))
    ]


def _hook_ids() -> set[str]:
    return {hook["id"] for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}


def test_the_docs_show_yaml_blocks():
    # Without any, every check below would pass on nothing.
    assert _blocks_of_the_docs(), f"no ```yaml block in {[p.relative_to(ROOT).as_posix() for p in _docs()]}"


def test_every_yaml_block_in_the_docs_parses_and_every_workflow_and_pre_commit_config_in_them_is_whole():
    hook_ids = _hook_ids()
    problems = [problem for block in _blocks_of_the_docs() for problem in block_problems(block, hook_ids)]
    assert not problems, "\n".join(problems)


def test_a_broken_yaml_block_a_workflow_without_on_or_a_job_without_steps_and_an_unknown_hook_id_are_reported():
    text = "\n".join(
        [
            "# A page",
            "```yaml",
            "key: [never closed",
            "```",
            "```yml",
            "jobs:",
            "  build:",
            "    runs-on: ubuntu-latest",
            "```",
            "```yaml title=ok",
            "on: push",
            "jobs:",
            "  test: {runs-on: ubuntu-latest, steps: [{run: pytest}]}",
            "  reuse: {uses: OWNER/repo/.github/workflows/ci.yml@main}",
            "```",
            "~~~~markdown",
            "```yaml",
            "key: [shown inside another block, not a block]",
            "```",
            "~~~~",
            "1. In a list:",
            "   ```YAML",
            "   repos:",
            "     - repo: https://github.com/OWNER/killmap.git",
            "       hooks: [{id: killmap-catalog}, {id: killmap-catalogue}]",
            "     - repo: local",
            "       hooks: [{id: anything}]",
            "   ```",
            "```yaml",
            "repos: [{repo: https://github.com/OWNER/other, hooks: [{id: killmap}]}]",
            "```",
        ]
    )
    blocks = yaml_blocks("page.md", text)
    assert [block.line for block in blocks] == [3, 6, 11, 23, 30]
    problems = [problem for block in blocks for problem in block_problems(block, {"killmap", "killmap-catalog"})]
    assert len(problems) == 5, "\n".join(problems)
    assert problems[0].startswith("page.md:3 (the yaml block starting 'key: [never closed'): not YAML: ")
    assert problems[1] == (
        "page.md:6 (the yaml block starting 'jobs:'): a workflow (it has jobs:) without on: "
        "GitHub refuses it: say which events run it"
    )
    assert problems[2] == "page.md:6 (the yaml block starting 'jobs:'): job 'build' has no steps"
    assert problems[3] == (
        "page.md:23 (the yaml block starting 'repos:'): hook id 'killmap-catalogue' is not in "
        ".pre-commit-hooks.yaml, which declares ['killmap', 'killmap-catalog']"
    )
    assert problems[4].startswith("page.md:30 (the yaml block starting 'repos: [")
    assert problems[4].endswith("a .pre-commit-config (it has repos:) that takes no hook from killmap's repository")
    assert "job 'test'" not in "\n".join(problems) and "job 'reuse'" not in "\n".join(problems)
