"""worker._unit_for_fork: the worker compiles the mutant's function (or the whole mutant) for the
fork that swaps it in, and hands over nothing, rather than fail the run, where it cannot."""

from __future__ import annotations

from pathlib import Path

from killmap.engine.swap.unit_compile import CompiledUnit
from killmap.engine.workers.worker import _unit_for_fork

ORIGINAL = "import os\n\n\ndef f():\n    return 1\n\n\ndef g():\n    return 2\n"


def request_for(tmp_path: Path, mutant_text: str) -> tuple[dict, dict]:
    sandbox, pristine = tmp_path / "sandbox", tmp_path / "pristine"
    for folder in (sandbox, pristine, tmp_path / "run"):
        folder.mkdir()
    (pristine / "m.py").write_text(ORIGINAL, encoding="utf-8")
    swap = {"module": "m", "file": str(sandbox / "m.py"), "original": str(pristine / "m.py")}
    request = {
        "sandbox": str(sandbox),
        "writes": {"m.py": mutant_text},
        "events": str(tmp_path / "run" / "events.jsonl"),
    }
    return swap, request


def test_a_mutant_of_one_function_is_handed_over_as_that_function_alone(tmp_path):
    swap, request = request_for(tmp_path, ORIGINAL.replace("return 1", "return 3"))
    handed = _unit_for_fork(swap, request)
    assert handed is not None
    unit = CompiledUnit.from_bytes(Path(handed).read_bytes())
    assert unit.depth == 1
    functions = [c.co_name for c in unit.code.co_consts if hasattr(c, "co_name")]
    assert functions == ["f"]  # g is the original's, which the fork already has


def test_a_mutant_that_moves_lines_is_handed_over_whole(tmp_path):
    swap, request = request_for(tmp_path, ORIGINAL.replace("    return 1\n", "    x = 1\n    return x\n"))
    unit = CompiledUnit.from_bytes(Path(_unit_for_fork(swap, request) or "").read_bytes())
    assert unit.depth == 0


def test_a_mutant_that_does_not_compile_is_left_to_the_fork_to_refuse(tmp_path):
    swap, request = request_for(tmp_path, ORIGINAL.replace("return 1", "return 1 +"))
    assert _unit_for_fork(swap, request) is None


def test_a_mutant_too_deep_to_compile_is_left_to_the_fork_rather_than_failing_the_run(tmp_path):
    # The compiler gives up with a RecursionError, not a SyntaxError: the fork meets it in its
    # own compile and says why, as it did before the worker compiled anything.
    deep = "+".join(["1"] * 200_000)
    swap, request = request_for(tmp_path, ORIGINAL.replace("return 1", f"return {deep}"))
    assert _unit_for_fork(swap, request) is None


def test_nothing_is_handed_over_when_the_worker_holds_no_mutant_or_no_original_of_the_file(tmp_path):
    # The fork then reads and compiles what is on disk itself, as it did before the worker compiled.
    swap, request = request_for(tmp_path, ORIGINAL.replace("return 1", "return 3"))
    assert _unit_for_fork(swap, {**request, "writes": {"other.py": "x = 1\n"}}) is None
    assert _unit_for_fork({**swap, "original": ""}, request) is None
    Path(swap["original"]).unlink()
    assert _unit_for_fork(swap, request) is None


def test_an_original_that_does_not_compile_is_left_to_the_fork(tmp_path):
    swap, request = request_for(tmp_path, ORIGINAL.replace("return 1", "return 3"))
    Path(swap["original"]).write_text(ORIGINAL + "def broken(:\n", encoding="utf-8")
    assert _unit_for_fork(swap, request) is None
