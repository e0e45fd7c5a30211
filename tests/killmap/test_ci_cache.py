"""The verdict cache kept between CI runs (issue 29): a folder named by --cache-dir or
KILLMAP_CACHE_DIR, restored on a fresh runner where the project may sit at another path."""

from __future__ import annotations

import shutil
from pathlib import Path

from gatekit import gate_env, run_gate, write_project

CORE = """def double(x):
    return x * 2










def label(x):
    return "big" if x > 10 else "small"
"""

CATALOG = """[gate]
tests = ["tests"]
paths = ["pkg"]

[[mutation]]
name = "double-returns-zero"
target = "pkg/core.py::double"
op = "constant-return"
value = "0"
kills = ["tests/test_double.py::test_double"]

[[mutation]]
name = "double-adds"
target = "pkg/core.py::double"
op = "replace"
old = "x * 2"
new = "x + 2"
kills = ["tests/test_double.py::test_double"]

[[mutation]]
name = "label-flipped"
target = "pkg/core.py::label"
op = "replace"
old = "x > 10"
new = "x < 10"
kills = ["tests/test_label.py::test_label"]
"""


def two_function_project(root: Path) -> Path:
    """Two functions, each with its own test file and mutations: a change to one leaves the
    other's verdicts valid."""
    return write_project(
        root,
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": "",
            "pkg/core.py": CORE,
            "tests/test_double.py": "from pkg.core import double\n\n\ndef test_double():\n    assert double(3) == 6\n",
            "tests/test_label.py": (
                "from pkg.core import label\n\n\ndef test_label():\n"
                '    assert label(11) == "big"\n    assert label(1) == "small"\n'
            ),
            "mutations/pkg.toml": CATALOG,
        },
    )


def cached(run) -> dict[str, bool]:
    return {m["name"]: m["cached"] for m in run.report["mutations"]}


def test_a_cache_restored_in_another_directory_reuses_the_verdicts_and_a_changed_target_reruns_only_its_own(tmp_path):
    first_runner = tmp_path / "runner-1"
    project = two_function_project(first_runner / "work" / "pkgproject")
    env = gate_env(project, {"KILLMAP_CACHE_DIR": str(first_runner / "kept")})
    first = run_gate(project, "run", "--jobs", "1", env=env)
    assert first.code == 0, first.stdout + first.stderr
    assert first.report["reused"] == 0 and not any(cached(first).values())
    assert (first_runner / "kept").is_dir()  # the folder named by KILLMAP_CACHE_DIR, not XDG's

    # A fresh runner: the project checked out at another path, the cache folder restored
    # elsewhere, named this time by --cache-dir (relative to where the gate runs).
    second_runner = tmp_path / "runner-2"
    moved = second_runner / "checkout" / "pkgproject"
    shutil.copytree(project, moved)
    shutil.copytree(first_runner / "kept", second_runner / "restored")
    env = gate_env(moved)  # its own XDG cache folder, which is empty
    second = run_gate(moved, "run", "--jobs", "1", "--cache-dir", "../../restored", env=env)
    assert second.code == 0, second.stdout + second.stderr
    assert cached(second) == {"double-returns-zero": True, "double-adds": True, "label-flipped": True}
    assert second.report["reused"] == 3
    assert "3 of 3 verdicts reused from the cache" in second.stdout
    assert "_3 of 3 verdicts reused from the cache._" in (second.report_dir / "killmap.md").read_text()

    # One function changed: only its own mutation runs again.
    core = moved / "pkg" / "core.py"
    core.write_text(core.read_text().replace('else "small"', 'else "small"  # tuned'))
    third = run_gate(moved, "run", "--jobs", "1", "--cache-dir", "../../restored", env=env)
    assert third.code == 0, third.stdout + third.stderr
    assert cached(third) == {"double-returns-zero": True, "double-adds": True, "label-flipped": False}
    assert third.report["reused"] == 2
    assert "2 of 3 verdicts reused from the cache" in third.stdout
