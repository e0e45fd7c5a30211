"""The mutant memo: a cached mutant is reused only for the very text it was built from."""

from __future__ import annotations

import subprocess
import sys

from gatekit import copy_fixture, gate_env, run_gate

from killmap.mutate.memo import MutantBuilder, build_and_remember
from killmap.verdict.cache import VerdictCache


def test_a_remembered_mutant_is_rebuilt_when_its_target_text_changes(km_project, tmp_path):
    km_project.module("def check(x):\n    return validate(x) > 0\n")
    catalog = km_project.catalog(
        '[[mutation]]\nname = "check-flipped"\ntarget = "src/pkg/mod.py::check"\n'
        'op = "replace"\nold = ">"\nnew = "<"\nkills = ["tests/test_mod.py::test_mod"]\n'
    )
    [mutation] = catalog.mutations
    root = km_project.root
    cache = VerdictCache(root, tmp_path / "cache").mutants
    first = build_and_remember(root, mutation, MutantBuilder(root), cache)
    again = build_and_remember(root, mutation, MutantBuilder(root), cache)
    assert again.mutated == first.mutated and "< 0" in again.mutated
    km_project.module("def check(x):\n    return validate(x) > 1\n")
    changed = build_and_remember(root, mutation, MutantBuilder(root), cache)
    assert "< 1" in changed.mutated and changed.original.endswith("> 1\n")


SHOW_WITHOUT_LIBCST = (
    "import sys\n"
    "from killmap.cli import main\n"
    "code = main(['show', 'classify-call-deleted'])\n"
    "print('LIBCST', 'libcst' in sys.modules)\n"
    "raise SystemExit(code)\n"
)


def test_show_prints_the_mutant_a_gate_run_remembered_without_building_it_again(tmp_path):
    # `killmap show` is a reviewer's quick look: after a gate run it reads the remembered
    # mutant for the very same text instead of importing libcst and parsing the file.
    project = copy_fixture("basic", tmp_path)
    env = gate_env(project)
    before = subprocess.run(
        [sys.executable, "-c", SHOW_WITHOUT_LIBCST], cwd=project, env=env, capture_output=True, text=True, timeout=120
    )
    assert before.returncode == 0, before.stderr
    assert "LIBCST True" in before.stdout  # nothing remembered yet: built
    assert run_gate(project, "run", env=env).code == 0
    after = subprocess.run(
        [sys.executable, "-c", SHOW_WITHOUT_LIBCST], cwd=project, env=env, capture_output=True, text=True, timeout=120
    )
    assert after.returncode == 0, after.stderr
    assert "LIBCST False" in after.stdout
    diff = after.stdout.split("LIBCST")[0]
    assert diff == before.stdout.split("LIBCST")[0] and diff.startswith("--- a/src/basicpkg/core.py")
