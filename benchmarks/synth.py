"""Generate a synthetic subject project for the gate benchmarks.

    python3 benchmarks/synth.py DEST [--functions 50] [--tests-per-function 10]
                                     [--mutations 50] [--non-reaching 500] [--work 30000]

writes DEST/pyproject.toml, DEST/src/synthpkg/, DEST/tests/, DEST/mutations/synth.toml (a
killmap catalog) and DEST/mutgate_decl.py (the same mutations for mutgate 0.1.1, made by
benchmarks/translate.py from killmap's own mutant texts, when killmap is importable).

The subject
-----------
* `--functions` N mutable functions `f_NNN(n)`, five to a module (src/synthpkg/mod_MM.py).
  Each runs a small mixing loop of `n` iterations (pure Python, about 50 ns an iteration,
  so `--work 30000` is about 1.5 ms) and then a per-function even/odd tail.
* `--tests-per-function` M tests per function, one test file each (tests/test_fNNN.py);
  test j calls `f_NNN(work + j)` and compares with the value computed here.
* `--non-reaching` X tests of *helper* functions that no mutation touches
  (src/synthpkg/helpers_MM.py, tests/test_hNNN.py), doing the same amount of work: the
  tests a gate should not need to run for any mutation. Growing X tenfold is the
  "non-reaching tests" scaling axis.
* `--mutations` K named mutations, one per function first (K <= N), then a second and a
  third per function (K <= 3N). Kinds, cycling by function index:
    mixer  - the loop multiplier 31 -> 37: every test of the function goes red;
    even   - the even-n tail offset +1: exactly the tests with even n go red;
    odd    - the odd-n tail offset -1: exactly the tests with odd n go red.
  Each mutation's `kills` is computed by evaluating the original and the mutated
  arithmetic for every test input (`_mirror` below mirrors the generated source), so the
  red set is exact and deterministic; tests/benchmarks/test_synth.py checks the mirror
  against a real killmap run.

Everything is deterministic: the same arguments give byte-identical projects.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "synthpkg"
PER_MODULE = 5
MODULUS = 1_000_003
MULTIPLIER = 31
MUTANT_MULTIPLIER = 37
KINDS = ("mixer", "even", "odd")


@dataclass(frozen=True)
class Spec:
    functions: int = 50
    tests_per_function: int = 10
    mutations: int = 50
    non_reaching: int = 500
    work: int = 30_000  # loop iterations per test call
    helper_tests_per_file: int = 20

    def __post_init__(self):
        if self.functions < 1 or self.tests_per_function < 2:
            raise ValueError("need at least 1 function and 2 tests per function (an even and an odd)")
        if not 1 <= self.mutations <= 3 * self.functions:
            raise ValueError(f"--mutations must be 1..{3 * self.functions} (three kinds per function)")
        if self.non_reaching < 0 or self.work < 1:
            raise ValueError("--non-reaching must be >= 0 and --work >= 1")


@dataclass
class SynthMutation:
    name: str
    function: int
    kind: str
    target: str
    old: str
    new: str
    kills: list[str] = field(default_factory=list)


# --- the arithmetic, mirrored -----------------------------------------------------------

_loop_memo: dict[tuple[int, int], int] = {}


def _loop(n: int, multiplier: int) -> int:
    key = (n, multiplier)
    if key not in _loop_memo:
        acc = 1
        for k in range(n):
            acc = (acc * multiplier + k) % MODULUS
        _loop_memo[key] = acc
    return _loop_memo[key]


def _salt(index: int) -> int:
    return 1000 + 7 * index


def _mirror(index: int, n: int, kind: str | None = None) -> int:
    """What f_<index>(n) returns, unmutated (kind None) or under the mutation `kind`.

    Must mirror `_function_source` exactly; the smoke test runs killmap to prove it does.
    """
    acc = _loop(n, MUTANT_MULTIPLIER if kind == "mixer" else MULTIPLIER)
    salt = _salt(index)
    if n % 2 == 0:
        return (acc + salt + (1 if kind == "even" else 0)) % MODULUS
    return (acc + MODULUS - salt - (1 if kind == "odd" else 0)) % MODULUS


def _function_source(name: str, index: int) -> str:
    salt = _salt(index)
    return (
        f"def {name}(n):\n"
        f'    """Mix n steps, then apply the tail of unit {index}."""\n'
        f"    acc = 1\n"
        f"    for k in range(n):\n"
        f"        acc = (acc * {MULTIPLIER} + k) % MODULUS\n"
        f"    if n % 2 == 0:\n"
        f"        return (acc + {salt}) % MODULUS\n"
        f"    return (acc + MODULUS - {salt}) % MODULUS\n"
    )


def _mutation_text(index: int, kind: str) -> tuple[str, str]:
    salt = _salt(index)
    if kind == "mixer":
        return f"acc * {MULTIPLIER} + k", f"acc * {MUTANT_MULTIPLIER} + k"
    if kind == "even":
        return f"return (acc + {salt}) % MODULUS", f"return (acc + {salt} + 1) % MODULUS"
    return f"return (acc + MODULUS - {salt}) % MODULUS", f"return (acc + MODULUS - {salt} - 1) % MODULUS"


# --- names --------------------------------------------------------------------------------


def _width(count: int) -> int:
    return max(3, len(str(max(count - 1, 0))))


def _function_name(index: int, spec: Spec) -> str:
    return f"f_{index:0{_width(spec.functions)}d}"


def _module_of(index: int, spec: Spec) -> str:
    return f"mod_{index // PER_MODULE:0{_width(spec.functions // PER_MODULE + 1)}d}"


def _test_name(j: int, spec: Spec) -> str:
    return f"test_case_{j:0{max(2, len(str(spec.tests_per_function - 1)))}d}"


def _test_file(index: int, spec: Spec) -> str:
    return f"tests/test_{_function_name(index, spec).replace('_', '')}.py"


# --- the project --------------------------------------------------------------------------


def plan_mutations(spec: Spec) -> list[SynthMutation]:
    found: list[SynthMutation] = []
    round_ = 0
    while len(found) < spec.mutations:
        for index in range(spec.functions):
            if len(found) == spec.mutations:
                break
            kind = KINDS[(index + round_) % len(KINDS)]
            fname = _function_name(index, spec)
            old, new = _mutation_text(index, kind)
            m = SynthMutation(
                name=f"{fname.replace('_', '')}-{kind}",
                function=index,
                kind=kind,
                target=f"src/{PACKAGE}/{_module_of(index, spec)}.py::{fname}",
                old=old,
                new=new,
            )
            for j in range(spec.tests_per_function):
                n = spec.work + j
                if _mirror(index, n, kind) != _mirror(index, n):
                    m.kills.append(f"{_test_file(index, spec)}::{_test_name(j, spec)}")
            if not m.kills:  # a collision modulo MODULUS; never seen, but never silent
                raise RuntimeError(f"{m.name}: no test would go red; change --work")
            found.append(m)
        round_ += 1
    return found


def generate(dest: Path, spec: Spec, *, mutgate: bool = True) -> dict:
    """Write the project into `dest` (emptied first). Returns a summary (also in synth.json)."""
    dest = Path(dest).resolve()
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "src" / PACKAGE).mkdir(parents=True)
    (dest / "tests").mkdir()
    (dest / "mutations").mkdir()
    _write(
        dest / "pyproject.toml",
        '[project]\nname = "synthpkg"\nversion = "0.0.0"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
    )
    _write(dest / "src" / PACKAGE / "__init__.py", '"""A synthetic subject for the killmap benchmarks."""\n')

    modules: dict[str, list[str]] = {}
    for index in range(spec.functions):
        modules.setdefault(_module_of(index, spec), []).append(_function_source(_function_name(index, spec), index))
    for module, sources in modules.items():
        _write(
            dest / "src" / PACKAGE / f"{module}.py",
            f'"""Mutable units {module} (generated)."""\n\nMODULUS = {MODULUS}\n\n\n' + "\n\n".join(sources),
        )

    for index in range(spec.functions):
        fname = _function_name(index, spec)
        lines = [
            f'"""Tests of {PACKAGE}.{_module_of(index, spec)}.{fname} (generated)."""',
            "",
            f"from {PACKAGE}.{_module_of(index, spec)} import {fname}",
            "",
        ]
        for j in range(spec.tests_per_function):
            n = spec.work + j
            lines += ["", f"def {_test_name(j, spec)}():", f"    assert {fname}({n}) == {_mirror(index, n)}", ""]
        _write(dest / _test_file(index, spec), "\n".join(lines))

    # Helpers: same work, never mutated, never reached by a mutation.
    helper_files = (spec.non_reaching + spec.helper_tests_per_file - 1) // spec.helper_tests_per_file
    hw = _width(max(helper_files, 1))
    helper_modules: dict[str, list[str]] = {}
    remaining = spec.non_reaching
    for h in range(helper_files):
        index = 100_000 + h  # salts distinct from every mutable function
        hname = f"h_{h:0{hw}d}"
        module = f"helpers_{h // PER_MODULE:0{hw}d}"
        helper_modules.setdefault(module, []).append(_function_source(hname, index))
        count = min(spec.helper_tests_per_file, remaining)
        remaining -= count
        lines = [
            f'"""Tests of {PACKAGE}.{module}.{hname}: no mutation reaches them (generated)."""',
            "",
            f"from {PACKAGE}.{module} import {hname}",
            "",
        ]
        for j in range(count):
            n = spec.work + (j % spec.tests_per_function)
            lines += ["", f"def test_case_{j:03d}():", f"    assert {hname}({n}) == {_mirror(index, n)}", ""]
        _write(dest / "tests" / f"test_h{h:0{hw}d}.py", "\n".join(lines))
    for module, sources in helper_modules.items():
        _write(
            dest / "src" / PACKAGE / f"{module}.py",
            f'"""Helpers {module}: never mutated (generated)."""\n\nMODULUS = {MODULUS}\n\n\n' + "\n\n".join(sources),
        )

    mutations = plan_mutations(spec)
    _write(dest / "mutations" / "synth.toml", catalog_text(mutations))
    summary = {
        "spec": spec.__dict__,
        "tests": spec.functions * spec.tests_per_function + spec.non_reaching,
        "reaching_tests": spec.functions * spec.tests_per_function,
        "non_reaching_tests": spec.non_reaching,
        "mutations": [{"name": m.name, "kind": m.kind, "target": m.target, "kills": m.kills} for m in mutations],
    }
    if mutgate:
        summary["mutgate_declaration"] = write_mutgate_declaration(dest)
    _write(dest / "synth.json", json.dumps(summary, indent=1) + "\n")
    return summary


def catalog_text(mutations: list[SynthMutation]) -> str:
    out = [
        "# Generated by benchmarks/synth.py: one named defect per entry, with its exact red set.",
        "",
        "[gate]",
        'tests = ["tests"]',
        'paths = ["src"]',
        "",
    ]
    for m in mutations:
        out += [
            "[[mutation]]",
            f"name = {json.dumps(m.name)}",
            f"target = {json.dumps(m.target)}",
            'op = "replace"',
            f"old = {json.dumps(m.old)}",
            f"new = {json.dumps(m.new)}",
            'require = "assertion"',
            f"note = {json.dumps(f'{m.kind} mutation of unit {m.function}')}",
            "kills = [" + ", ".join(json.dumps(k) for k in m.kills) + "]",
            "",
        ]
    return "\n".join(out)


def write_mutgate_declaration(root: Path) -> str | None:
    """DEST/mutgate_decl.py from killmap's own mutants; None if killmap is not importable."""
    if importlib.util.find_spec("killmap") is None:  # the translation uses killmap's mutants
        return None
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        from translate import write_declaration
    finally:
        sys.path.pop(0)
    out = root / "mutgate_decl.py"
    write_declaration(root, [root / "mutations" / "synth.toml"], out)
    return out.name


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dest", type=Path)
    ap.add_argument("--functions", type=int, default=Spec.functions)
    ap.add_argument("--tests-per-function", type=int, default=Spec.tests_per_function)
    ap.add_argument("--mutations", type=int, default=Spec.mutations)
    ap.add_argument("--non-reaching", type=int, default=Spec.non_reaching)
    ap.add_argument("--work", type=int, default=Spec.work, help="loop iterations per test call")
    ap.add_argument("--no-mutgate", action="store_true", help="do not write mutgate_decl.py")
    args = ap.parse_args(argv)
    spec = Spec(args.functions, args.tests_per_function, args.mutations, args.non_reaching, args.work)
    summary = generate(args.dest, spec, mutgate=not args.no_mutgate)
    print(
        f"{args.dest}: {summary['tests']} tests ({summary['reaching_tests']} reaching, "
        f"{summary['non_reaching_tests']} not), {len(summary['mutations'])} mutations"
    )
    if not args.no_mutgate and not summary.get("mutgate_declaration"):
        print("no mutgate_decl.py: killmap is not importable here (use benchmarks/.venv/bin/python)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
