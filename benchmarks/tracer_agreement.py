"""Do the baseline's recorders credit each test with what coverage's C tracer credits it with?

    python3 benchmarks/tracer_agreement.py [--work DIR] [--only packaging|click]

The baseline's per-test lines of the target files select every mutant's tests, so a recorder
may only replace the C tracer if it records what the tracer records: the line monitor
(engine/reach/line_monitor.py, Python 3.12+) line for line, the probes (engine/reach/probes.py, before 3.12)
at the grain reach reads, every statement credited to the same tests. For each real-world
corpus (realworld.py's venv, pinned sdists and catalogs, prepared by realworld.py's own
functions) this runs one traced pass of every test over every source file of the project,
once with each recorder, on one worker (so a module a test imports is that test's under
both), and compares. It prints the tests compared, both walls, the (statement, test) pairs
only one of them saw and, on 3.12+, every test whose lines differ; exit 0 when the
interpreter's recorder agrees (and was the one used).

The venv is made with the interpreter that runs this script; give each Python its own --work
folder (default: realworld/.work-agreement) so that it never replaces another's venv.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _inner(root: Path) -> int:
    """In the corpus venv: both traced passes, compared. Prints one JSON line.

    Traced: every source file of the project, not only the catalog's targets, so that the
    comparison sees as much real code as the corpus's tests run."""
    from killmap.catalog.plan import LabOptions, load
    from killmap.catalog.project import project_files
    from killmap.engine.core import Engine
    from killmap.verdict.baseline import _Passes, _union, source_files

    _, mutations = load(root, LabOptions())
    files = project_files(root)
    settings = mutations[0].settings
    targets = tuple(sorted(source_files(files, settings)))
    found, walls, names = {}, {}, {}
    for tracer in ("auto", "coverage"):
        # One worker: every test in pytest's order in one session, so that a module a test
        # imports is that test's under either tracer (shared out, it is whoever came first's).
        with Engine(root, files, 1, tracer=tracer) as engine:
            engine.workers[0].wait_ready()
            outcomes = _Passes(engine, settings, targets, 900.0).run("agreement", None, traced=True, shared=False)
        found[tracer] = _union([o.coverage or {} for o in outcomes])
        walls[tracer] = round(max(o.wall for o in outcomes), 2)
        names[tracer] = sorted({o.tracer for o in outcomes})
    a, b = found["auto"], found["coverage"]
    print(
        json.dumps(
            {
                "recorded_by": [" + ".join(names["auto"]), " + ".join(names["coverage"])],
                "walls": [walls["auto"], walls["coverage"]],
                "tests": len({c for contexts in b.values() for c in contexts if c}),
                "lines": sum(len(lines) for contexts in b.values() for lines in contexts.values()),
                "targets": sorted(b),
                "differ": _lines_differ(a, b),
                "statements": _statements_differ(root, a, b),
            }
        )
    )
    return 0


def _lines_differ(a: dict, b: dict) -> list[str]:
    """Every (file, test) whose recorded lines differ."""
    keys = {(path, c) for side in (a, b) for path, contexts in side.items() for c in contexts}
    return sorted(
        f"{path}::{context or '<collection>'}"
        for path, context in keys
        if set(a.get(path, {}).get(context, ())) != set(b.get(path, {}).get(context, ()))
    )


def _statements_differ(root: Path, a: dict, b: dict) -> dict[str, list[str]]:
    """What reach reads: for every statement of every traced file, the tests that ran it
    (reach.region_of, Region.reached_by) and whether it ran while tests were collected.
    "under" lists what only the C tracer saw (a selection short of a test: unsound), "over"
    what only the first saw (a test selected in vain)."""
    import ast

    from killmap.verdict.reach import region_of

    under, over, phantom = [], [], []
    for path in sorted(set(a) | set(b)):
        source = (root / path).read_text(encoding="utf-8")
        tree = ast.parse(source)
        tails = _finally_tails(tree)
        starts = sorted({n.lineno for n in ast.walk(tree) if isinstance(n, ast.stmt)})
        for line in starts:
            region = region_of(source, (line,))
            first, second = (_ran(region, side.get(path)) for side in (a, b))
            missed = [f"{path}:{line} {t or '<collection>'}" for t in sorted(second - first)]
            if line in tails:
                phantom += missed
            else:
                under += missed
            over += [f"{path}:{line} {t or '<collection>'}" for t in sorted(first - second)]
    return {"under": under, "over": over, "phantom": phantom}


def _finally_tails(tree) -> set[int]:
    """The lines of the last statements a `finally` block can end on. CPython 3.10 and 3.11
    give the RERAISE that ends a finally run by an exception the line of the block's last
    statement, so the C tracer credits that line to the test even where an `if` took another
    branch and it never ran: a line the probes rightly leave out."""
    import ast

    def last(statements) -> set[int]:
        tail = statements[-1]
        ends = {tail.lineno}
        for branch in ("body", "orelse"):
            inner = getattr(tail, branch, None)
            if isinstance(inner, list) and inner:
                ends |= last(inner)
        return ends

    return {line for n in ast.walk(tree) for line in (last(n.finalbody) if getattr(n, "finalbody", None) else ())}


def _ran(region, contexts) -> set[str]:
    ran = set(region.reached_by(contexts))
    if region.lines.intersection((contexts or {}).get("", ())):
        ran.add("")
    return ran


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(HERE))
    import realworld as rw

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=[c.name for c in rw.CORPORA], action="append")
    parser.add_argument("--work", type=Path, default=rw.CORPUS_DIR / ".work-agreement")
    args = parser.parse_args(argv)
    monitor = sys.version_info >= (3, 12)
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
        under, over = result["statements"]["under"], result["statements"]["over"]
        for entry in result["statements"]["phantom"]:
            print(f"  the C tracer's phantom (the last line of a finally block an exception ran): {entry}")
        print(
            f"  statements: {len(under)} (statement, test) seen by the C tracer alone, {len(over)} by the other alone"
        )
        for entry in (result["differ"] if monitor else under + over)[:10]:
            print(f"  differs: {entry}")
        # The monitor must match the tracer line for line; probes at the grain reach reads.
        expected = ["sys.monitoring" if monitor else "probes", "coverage"]
        failed |= bool(result["differ"] if monitor else under) or result["recorded_by"] != expected
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--inner"]:
        sys.exit(_inner(Path(sys.argv[2])))
    sys.exit(main())
