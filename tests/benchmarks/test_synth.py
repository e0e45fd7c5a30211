"""The benchmark's synthetic subject is what it claims: every contract exact, so it holds.

Not a timing test: the benchmark itself is benchmarks/run.py.
"""

from __future__ import annotations

from pathlib import Path

from benchkit import bench_module

from killmap.mutate.mutants import build_mutant
from killmap.verdict.lab import LabOptions, run_lab


def _load(name: str):
    return bench_module(name)


synth = _load("synth")
translate = _load("translate")

SMALL = synth.Spec(functions=3, tests_per_function=4, mutations=6, non_reaching=3, work=300)


def test_every_generated_contract_holds_under_killmap(tmp_path):
    summary = synth.generate(tmp_path / "subject", SMALL, mutgate=False)
    result = run_lab(tmp_path / "subject", LabOptions(jobs=2, use_cache=False, baseline_runs=1))
    verdicts = {v.name: v for v in result.verdicts}
    assert {m["kind"] for m in summary["mutations"]} == {"mixer", "even", "odd"}
    for m in summary["mutations"]:
        verdict = verdicts[m["name"]]
        assert verdict.verdict == "held", (m["name"], verdict.detail)
        assert sorted(r.id for r in verdict.red) == sorted(m["kills"])
        # the selection reaches exactly the red set: no non-reaching test ran
        assert sorted(verdict.selected) == sorted(m["kills"])


def test_generation_is_deterministic(tmp_path):
    def snapshot(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}

    synth.generate(tmp_path / "a", SMALL, mutgate=False)
    synth.generate(tmp_path / "b", SMALL, mutgate=False)
    assert snapshot(tmp_path / "a") == snapshot(tmp_path / "b")


def test_mutgate_pairs_reproduce_killmap_mutants_and_are_unique(tmp_path):
    synth.generate(tmp_path / "subject", SMALL, mutgate=False)
    root = tmp_path / "subject"
    groups = translate.translate(root, [root / "mutations" / "synth.toml"])
    assert len(groups) == 1 and not groups[0]["skipped"]
    for entry in groups[0]["mutations"]:
        original = (root / entry["file"]).read_text(encoding="utf-8")
        assert original.count(entry["old"]) == 1
    from killmap.verdict.lab import load

    _, mutations = load(root, LabOptions(catalogs=(root / "mutations" / "synth.toml",)))
    by_name = {e["name"]: e for e in groups[0]["mutations"]}
    for mutation in mutations:
        mutant = build_mutant(root, mutation)
        entry = by_name[mutation.name]
        assert mutant.original.replace(entry["old"], entry["new"]) == mutant.mutated
        assert list(entry["fires"]) == list(mutation.kills)


def test_pair_widens_until_unique():
    original = "a = 1\nx = f(1)\nb = 2\nx = f(1)\nc = 3\n"
    mutated = "a = 1\nx = f(1)\nb = 2\nx = f(2)\nc = 3\n"
    old, new = translate.mutgate_pair(original, mutated)
    assert original.count(old) == 1
    assert original.replace(old, new) == mutated
