"""Do sys.monitoring and coverage's C tracer give the baseline the same lines, on real code?

    python3.12 benchmarks/tracer_agreement.py [--work DIR] [--only packaging|click]

The baseline's per-test lines of the target files select every mutant's tests, so the line
monitor (src/killmap/monitor.py, Python 3.12+) may only replace the C tracer if it records
exactly what the C tracer records. For each real-world corpus (realworld.py's venv, pinned
sdists and catalogs, prepared by realworld.py's own functions) this runs killmap's baseline
twice in the corpus venv, once with each tracer, and compares every test's lines of every
target file. It prints the tests and lines compared, both baselines' walls and every test
whose lines differ; exit 0 when none does.

The venv is made with the interpreter that runs this script, so run it with Python 3.12+,
and give it its own --work folder (default: realworld/.work-agreement) so that it never
replaces realworld.py's venv of another Python.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _inner(root: Path) -> int:
    """In the corpus venv: both baselines, compared. Prints one JSON line."""
    from killmap.catalog.plan import LabOptions, load
    from killmap.catalog.project import project_files
    from killmap.engine.core import Engine
    from killmap.verdict.baseline import run_baseline

    _, mutations = load(root, LabOptions())
    files = project_files(root)
    settings = mutations[0].settings
    group = [m for m in mutations if m.settings == settings]
    found = {}
    for tracer in ("auto", "coverage"):
        with Engine(root, files, 2, tracer=tracer) as engine:
            found[tracer] = run_baseline(root, files, settings, group, engine, runs=2, timeout=900.0)
    monitored, traced = found["auto"], found["coverage"]

    def per_test(baseline):
        return {
            (path, context): set(lines)
            for path, contexts in baseline.coverage.items()
            for context, lines in contexts.items()
        }

    a, b = per_test(monitored), per_test(traced)
    differ = sorted(
        f"{path}::{context or '<collection>'}"
        for path, context in set(a) | set(b)
        if a.get((path, context), set()) != b.get((path, context), set())
    )
    print(
        json.dumps(
            {
                "recorded_by": [monitored.tracer, traced.tracer],
                "walls": [round(monitored.wall, 2), round(traced.wall, 2)],
                "tests": len({context for _, context in b if context}),
                "lines": sum(len(lines) for lines in b.values()),
                "targets": sorted({path for path, _ in b}),
                "differ": differ,
            }
        )
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(HERE))
    import realworld as rw

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=[c.name for c in rw.CORPORA], action="append")
    parser.add_argument("--work", type=Path, default=rw.CORPUS_DIR / ".work-agreement")
    args = parser.parse_args(argv)
    if sys.version_info < (3, 12):
        sys.exit("sys.monitoring needs Python 3.12+: run this with python3.12 or newer")
    env = rw.prepare_env(args.work.resolve(), rw.REPO)
    failed = False
    for corpus in [c for c in rw.CORPORA if not args.only or c.name in args.only]:
        root = rw.extract(env, corpus, env.work / "projects")
        catalog = root / "mutations" / f"{corpus.name}.toml"
        catalog.parent.mkdir(exist_ok=True)
        catalog.write_text(corpus.catalog.read_text(encoding="utf-8"), encoding="utf-8")
        process_env = rw.clean_env()
        process_env["XDG_CACHE_HOME"] = str(env.work / "cache")
        done = subprocess.run(
            [str(env.python), __file__, "--inner", str(root)], cwd=root, env=process_env, capture_output=True, text=True
        )
        if done.returncode != 0:
            print(f"{corpus.folder}: the baselines did not run (exit {done.returncode}):\n{done.stderr[-2000:]}")
            failed = True
            continue
        result = json.loads(done.stdout.strip().splitlines()[-1])
        print(
            f"{corpus.folder}: {result['tests']} tests, {result['lines']} test-lines in "
            f"{len(result['targets'])} target files; recorded by {result['recorded_by'][0]} in "
            f"{result['walls'][0]}s and by {result['recorded_by'][1]} in {result['walls'][1]}s; "
            f"{len(result['differ'])} differ"
        )
        for entry in result["differ"][:10]:
            print(f"  differs: {entry}")
        failed |= bool(result["differ"]) or result["recorded_by"] != ["sys.monitoring", "coverage"]
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--inner"]:
        sys.exit(_inner(Path(sys.argv[2])))
    sys.exit(main())
