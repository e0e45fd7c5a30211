"""Validity's quick path against its whole-module check, on every sweep mutant of real files.

    python3 benchmarks/validity_equality.py [FILE.py | FOLDER ...]

With no argument: every module of packaging 24.2 and click 8.1.8, from the sdists the
real-world corpus downloads (benchmarks/realworld/.work/sdists/). Each file's sweep mutants
(`--ops mutmut,killmap`, as `killmap sweep` enumerates them) are checked twice by
`mutate.validity.check.check_mutant`: with `quick=True` (the function the change lies in, alone:
mutate/validity/fragment.py) and `quick=False` (the module, reduced outside the change). Printed: per
file the mutants, how many the quick path answered, every disagreement (verdict, problem or
warnings), and the time each way. Exit 1 on any disagreement. Never run in CI: it reads
sdists and takes a minute or two.
"""

from __future__ import annotations

import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from killmap.mutate.validity import check, fragment  # noqa: E402
from killmap.verdict.sweep import SweepTarget, enumerate_mutants  # noqa: E402

SDISTS = HERE / "realworld" / ".work" / "sdists"
DEFAULT = ("packaging-24.2.tar.gz", "click-8.1.8.tar.gz")


def files_of(arguments: list[str], scratch: Path) -> list[tuple[Path, str]]:
    """(root, path relative to it) for each Python file to sweep."""
    roots: list[Path] = []
    if arguments:
        roots = [Path(a).resolve() for a in arguments]
    else:
        for name in DEFAULT:
            with tarfile.open(SDISTS / name) as archive:
                archive.extractall(scratch, filter="data")
            roots.append(scratch / name.removesuffix(".tar.gz") / "src")
    found: list[tuple[Path, str]] = []
    for root in roots:
        if root.is_file():
            found.append((root.parent, root.name))
        else:
            found += [(root, p.relative_to(root).as_posix()) for p in sorted(root.rglob("*.py"))]
    return found


def compare(root: Path, path: str) -> tuple[int, int, float, float, list[str]]:
    enumeration = enumerate_mutants(root, [SweepTarget(path, None, _settings())], ("mutmut", "killmap"))
    quick_time = whole_time = 0.0
    answered, differ = 0, []
    for sweep_mutant in enumeration.mutants:
        mutant = sweep_mutant.mutant
        mutated = mutant.mutated or ""
        started = time.perf_counter()
        quick = check.check_mutant(mutant.original, mutated, mutant.file, quick=True)
        quick_time += time.perf_counter() - started
        started = time.perf_counter()
        whole = check.check_mutant(mutant.original, mutated, mutant.file, quick=False)
        whole_time += time.perf_counter() - started
        answered += fragment.is_valid_quickly(mutant.original, mutated, mutant.file)
        if quick != whole:
            differ.append(f"{sweep_mutant.id} ({sweep_mutant.op}): quick {quick} != whole {whole}")
    return len(enumeration.mutants), answered, quick_time, whole_time, differ


def _settings():
    from killmap.catalog.contract import GateSettings

    return GateSettings()


def main(arguments: list[str]) -> int:
    totals = [0, 0, 0.0, 0.0]
    differ: list[str] = []
    with tempfile.TemporaryDirectory() as scratch:
        for root, path in files_of(arguments, Path(scratch)):
            count, answered, quick, whole, wrong = compare(root, path)
            if count:
                print(f"{path}: {count} mutants, {answered} answered quickly, {quick:.2f} s against {whole:.2f} s")
            for line in wrong:
                print(f"  {path}: {line}", flush=True)
            for slot, value in enumerate((count, answered, quick, whole)):
                totals[slot] += value
            differ += [f"{path}: {line}" for line in wrong]
    count, answered, quick, whole = totals
    print(
        f"\n{int(count)} mutants; {int(answered)} ({answered / max(count, 1):.0%}) answered by the function alone; "
        f"validity {quick:.1f} s with the quick path against {whole:.1f} s without ({whole / max(quick, 1e-9):.1f}x); "
        f"{len(differ)} disagreements"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
