"""Every command reaches the engine through the lab: outside the engine itself, verdict/lab.py
alone builds an Engine, so every run (a mutant's, a baseline's, a whole tree's, a collection)
starts from one builder's sandboxes, tracer, cache folder, seed and launched workers."""

from __future__ import annotations

import ast
from pathlib import Path

import killmap

SOURCE = Path(killmap.__file__).parent


def engines_built(source: Path) -> list[str]:
    """Where a module of `source` outside the engine calls `Engine(...)`, as path:line."""
    found = []
    for path in sorted(source.rglob("*.py")):
        rel = path.relative_to(source).as_posix()
        if rel.startswith("engine/"):
            continue
        lines = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                called = node.func
                name = called.id if isinstance(called, ast.Name) else getattr(called, "attr", None)
                if name == "Engine":
                    lines.append(node.lineno)
        found += [f"{rel}:{line}" for line in sorted(lines)]
    return found


def test_outside_the_engine_only_the_lab_builds_an_engine():
    assert [where.split(":")[0] for where in engines_built(SOURCE)] == ["verdict/lab.py"]


def test_an_engine_built_by_a_command_is_found(tmp_path):
    # The scan itself must see a command that builds its own engine, however it names it.
    (tmp_path / "commands").mkdir()
    (tmp_path / "commands" / "own.py").write_text(
        "import killmap.engine as e\nfrom killmap.engine import Engine\n\n"
        "def main(root):\n    with Engine(root, [], 1):\n        pass\n    return e.Engine(root, [], 1)\n"
    )
    assert engines_built(tmp_path) == ["commands/own.py:5", "commands/own.py:7"]
