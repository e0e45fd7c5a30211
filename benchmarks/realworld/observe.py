"""Observe the ground truth of a corpus catalog with plain pytest, never through killmap's runner.

    python3 benchmarks/realworld/observe.py packaging|click|werkzeug|markupsafe [NAME ...] [--runs 2]

For each mutation of benchmarks/realworld/<corpus>/catalog.toml (or only those named):

1. the mutant: killmap's own operator turns the catalog entry into a mutant text (the
   libcst transform is the definition of what the entry means), shown as a unified diff.
   Nothing else of killmap is used: no validity check, no sandbox, no runner, no judge.
   A diff already in ground_truth.toml is what was observed; if the operator now makes
   a different one, that is printed and the new one is observed.
2. a fresh scratch copy of the extracted sdist, the diff applied with `patch -p1`;
3. `python -m pytest <[gate] tests> -c pyproject.toml --rootdir=. -p no:randomly -q -rfE
   --tb=native --junitxml=...` there, PYTHONPATH=<[gate] paths>,
   under `timeout`, `--runs` times (default 2); the red set is read from the short test
   summary (its FAILED and ERROR lines), each id checked against the unmutated collection,
   and its size against pytest's own "N failed, M errors" count. (-rfE, not -rA: -rA also
   prints a line per passing test, which on packaging's 8,400 tests makes a run 3x slower.)
   Where each red test went red (red_at: the deepest frame inside the project, issue 8
   item 5) is read from the JUnit report's native tracebacks.

It writes observed_red, red_at, outcome, runs, reached, diff and first_failure into
benchmarks/realworld/<corpus>/ground_truth.toml. expected_verdict and why are a person's
judgement, kept from the file as they are; a new mutation gets expected_verdict = "?",
which benchmarks/realworld.py refuses until someone has looked.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/, for realworld
import realworld  # noqa: E402

tomllib = realworld.tomllib


@dataclass(frozen=True)
class Observation:
    """One plain pytest run."""

    outcome: str  # "completed", "timeout" or "collection-error"
    red: tuple[str, ...]
    first_failure: str
    seconds: float
    red_at: tuple[tuple[str, str], ...] = ()  # (node id, deepest project frame "file:line")


# --- the mutant ---------------------------------------------------------------------------


def mutant_diff(root: Path, entry: dict) -> str:
    """killmap's operator applied to the catalog entry, as a unified diff.

    The Mutation is built directly rather than through the catalog loader, so that an entry
    an older killmap refuses to load (issue 8 items 3 and 4) can still be observed.
    """
    from killmap.catalog.reader import OPERATORS, Mutation, Target
    from killmap.mutate.mutants import build_mutant

    required, optional = OPERATORS[entry["op"]]
    params = tuple((key, entry[key]) for key in sorted(required | optional) if key in entry)
    path, _, symbol = entry["target"].partition("::")
    mutation = Mutation(
        name=entry["name"],
        target=Target(path, symbol or None),
        op=entry["op"],
        params=params,
        kills=(),
        count=entry.get("count", 1),
    )
    mutant = build_mutant(root, mutation)
    if not mutant.applied:
        raise SystemExit(f"{entry['name']}: not applied: {mutant.reason}")
    return mutant.diff


def scratch_copy(pristine: Path, dest: Path, diff: str) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(pristine, dest, ignore=shutil.ignore_patterns(".git"))
    applied = subprocess.run(
        ["patch", "-p1", "--forward", "--batch", "--quiet"], cwd=dest, input=diff, text=True, capture_output=True
    )
    if applied.returncode != 0:
        raise SystemExit(f"patch failed in {dest}: {applied.stdout}{applied.stderr}")
    return dest


# --- plain pytest -------------------------------------------------------------------------


def pytest_env(root: Path, paths: list[str]) -> dict[str, str]:
    env = realworld.clean_env()
    # The project's own source first, before site-packages: pytest itself depends on
    # packaging, so without this the installed packaging would be the one tested.
    env["PYTHONPATH"] = os.pathsep.join(str(root / p) for p in paths)
    env["COLUMNS"] = "300"  # pytest cuts summary lines at the terminal width: keep the reason
    return env


def pytest_options(root: Path) -> list[str]:
    """The project's own configuration and rootdir, nothing inherited.

    Why -c: the scratch copies live inside this repository, and packaging's pyproject.toml
    has no [tool.pytest.ini_options], so pytest would walk up and take killmap's own
    pyproject.toml as its configuration (and /work/... as rootdir). In a clone of the
    project, as in killmap's sandbox, the project's root is the rootdir.
    """
    return ["-c", str(root / "pyproject.toml"), f"--rootdir={root}", "-p", "no:randomly", "-p", "no:cacheprovider"]


def collect(python: Path, root: Path, tests: list[str], paths: list[str]) -> list[str]:
    done = subprocess.run(
        [str(python), "-m", "pytest", *tests, *pytest_options(root), "--collect-only", "-q"],
        cwd=root,
        env=pytest_env(root, paths),
        capture_output=True,
        text=True,
    )
    ids = [line for line in done.stdout.splitlines() if "::" in line and not line.startswith(" ")]
    if done.returncode != 0 or not ids:
        raise SystemExit(f"collection of the unmutated project failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return ids


def origin(python: Path, root: Path, paths: list[str], module: str) -> str:
    done = subprocess.run(
        [str(python), "-c", f"import {module}; print({module}.__file__)"],
        cwd=root,
        env=pytest_env(root, paths),
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def run_pytest(
    python: Path, root: Path, tests: list[str], paths: list[str], known: set[str], limit: float
) -> Observation:
    junit = root.parent / f"{root.name}.junit.xml"
    command = [
        "timeout",
        "--kill-after=10",
        str(int(limit)),
        str(python),
        "-m",
        "pytest",
        *tests,
        *pytest_options(root),
        "-q",
        "-rfE",
        "--tb=native",
        f"--junitxml={junit}",
    ]
    start = time.monotonic()
    done = subprocess.run(command, cwd=root, env=pytest_env(root, paths), capture_output=True, text=True)
    seconds = time.monotonic() - start
    red_at = failure_sites(junit, root, known) if junit.is_file() else {}
    junit.unlink(missing_ok=True)
    if done.returncode in (124, 137, -9):  # timeout's TERM (124), or its KILL 10 s later
        return Observation("timeout", (), "", seconds)
    red, first = [], ""
    for line in done.stdout.splitlines():
        for word in ("FAILED ", "ERROR "):
            if line.startswith(word):
                node = _node_id(line[len(word) :], known)
                red.append(node)
                first = first or line[:240]
    # pytest exit codes: 0 all passed, 1 some failed, 2 interrupted (collection errors),
    # 4 usage error (a conftest that does not import).
    if (
        done.returncode in (2, 3, 4)
        or "error during collection" in done.stdout
        or "errors during collection" in done.stdout
    ):
        tail = [ln for ln in (done.stdout + done.stderr).splitlines() if "Error" in ln]
        return Observation(
            "collection-error", tuple(sorted(set(red))), (first or (tail[0] if tail else ""))[:240], seconds
        )
    if done.returncode not in (0, 1):
        raise SystemExit(f"pytest exit {done.returncode} in {root}:\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
    counted = sum(int(n) for n in re.findall(r"(\d+) (?:failed|errors?)\b", done.stdout.splitlines()[-1]))
    if counted != len(red):
        raise SystemExit(f"{root}: pytest counts {counted} failed/errors but the summary lists {len(red)}")
    return Observation(
        "completed",
        tuple(sorted(set(red))),
        first,
        seconds,
        tuple(sorted((node, at) for node, at in red_at.items() if node in red)),
    )


def _junit_key(node_id: str) -> tuple[str, str]:
    """The (classname, name) pytest's junitxml writes for a node id (its mangle_test_address)."""
    path, bracket, params = node_id.partition("[")
    names = path.split("::")
    names[0] = names[0].replace("/", ".")
    if names[0].endswith(".py"):
        names[0] = names[0][: -len(".py")]
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def failure_sites(junit: Path, root: Path, known: set[str]) -> dict[str, str]:
    """Per red test, the deepest frame inside the project of the exception that made it red.

    From --tb=native tracebacks in the JUnit report: the frames after the last "Traceback
    (most recent call last):" (with chained exceptions, the one pytest reported comes last),
    the innermost of them whose file is under the scratch copy. That is usually the test's
    own assert or `with pytest.raises` line, or the project line that raised a crash.
    """
    by_key = {_junit_key(node): node for node in known}
    sites = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        node = by_key.get((case.get("classname", ""), case.get("name", "")))
        bad = [child for child in case if child.tag in ("failure", "error")]
        if node is None or not bad:
            continue
        text = bad[0].text or ""
        text = text[text.rfind("Traceback (most recent call last):") :]
        frames = re.findall(r'File "([^"]+)", line (\d+)', text)
        inside = [(f, n) for f, n in frames if Path(f).is_relative_to(root)]
        if inside:
            file, line = inside[-1]
            sites[node] = f"{Path(file).relative_to(root).as_posix()}:{line}"
    return sites


def _node_id(rest: str, known: set[str]) -> str:
    """The node id at the start of a summary line's text: `<id>` or `<id> - <message>`.

    A parametrization may itself hold ' - ', so the id is the longest prefix that the
    unmutated collection knows; a collector (a file that failed to import) is kept as is.
    """
    if rest in known:
        return rest
    best = None
    cut = rest.find(" - ")
    while cut != -1:  # left to right: the last hit is the longest
        if rest[:cut] in known:
            best = rest[:cut]
        cut = rest.find(" - ", cut + 1)
    return best or rest.split(" - ", 1)[0]


# --- reach: which statements the unmutated tests execute ------------------------------------


def executed_lines(
    python: Path, root: Path, tests: list[str], paths: list[str], files: list[str], cache: Path
) -> dict[str, set[int]]:
    """Per target file, the lines coverage.py saw executed in one plain run of the gate's tests.

    Cached in the work folder: the pristine sdist and the gate's tests never change between
    observations, only the set of target files can grow.
    """
    if cache.is_file():
        known = json.loads(cache.read_text())
        if set(files) <= set(known):
            return {f: set(known[f]) for f in files}
    data = cache.with_suffix(".coverage")
    env = pytest_env(root, paths)
    include = ",".join(str(root / f) for f in files)
    subprocess.run(
        [
            str(python),
            "-m",
            "coverage",
            "run",
            f"--data-file={data}",
            f"--include={include}",
            "-m",
            "pytest",
            *tests,
            *pytest_options(root),
            "-q",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        check=True,
    )
    report = cache.with_suffix(".report.json")
    subprocess.run(
        [str(python), "-m", "coverage", "json", f"--data-file={data}", "-o", str(report)],
        cwd=root,
        env=env,
        capture_output=True,
        check=True,
    )
    measured = json.loads(report.read_text())["files"]
    lines = {f: sorted(measured.get(str(root / f), measured.get(f, {})).get("executed_lines", [])) for f in files}
    cache.write_text(json.dumps(lines))
    return {f: set(v) for f, v in lines.items()}


def changed_original_lines(diff: str) -> list[int]:
    """Lines of the original the diff removes or replaces (a pure insertion: the line after it)."""
    changed, line = [], 0
    for text in diff.splitlines():
        hunk = re.match(r"@@ -(\d+)", text)
        if hunk:
            line = int(hunk.group(1))
        elif text.startswith("-") and not text.startswith("---"):
            changed.append(line)
            line += 1
        elif text.startswith("+") and not text.startswith("+++"):
            if not changed or changed[-1] != line:
                changed.append(line)
        elif text.startswith(" "):
            line += 1
    return changed


def reached(source: str, lines: list[int], executed: set[int]) -> bool:
    """Did any test execute a statement the mutant changes?

    coverage.py reports a statement by its first line, so each changed line is mapped to
    the innermost statement that holds it (a compound statement by its header).
    """
    statements = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.stmt)]
    for line in lines:
        holding = [s for s in statements if s.lineno <= line <= (s.end_lineno or s.lineno)]
        if not holding:
            continue
        innermost = min(holding, key=lambda s: (s.end_lineno or s.lineno) - s.lineno)
        body_start = min((c.lineno for c in ast.iter_child_nodes(innermost) if isinstance(c, ast.stmt)), default=None)
        if body_start is not None and line >= body_start:
            continue  # a line of a nested block's own statements (none held it): blank or comment
        if innermost.lineno in executed:
            return True
    return False


# --- writing ground_truth.toml ------------------------------------------------------------


def _string(text: str, multiline: bool = False) -> str:
    if multiline and "'''" not in text and all(c >= " " or c in "\n\t" for c in text):
        return "'''\n" + text + "'''"  # TOML drops the newline right after '''
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def render(corpus: realworld.Corpus, header: dict, entries: list[dict]) -> str:
    lines = [
        f"# Ground truth for benchmarks/realworld/{corpus.name}/catalog.toml, observed with plain pytest",
        "# in scratch copies of the sdist by benchmarks/realworld/observe.py (never through killmap).",
        "# observed_red, outcome, runs, reached, diff, first_failure and red_at are written by",
        "# observe.py (reached: whether coverage.py saw any test of the unmutated gate execute a",
        "# statement the mutant changes; red_at: per red test, the deepest frame inside the",
        "# project of the exception that made it red);",
        "# expected_verdict and why are a person's judgement and are kept as written.",
        "",
        "[observation]",
    ]
    lines += [f"{key} = {json.dumps(value)}" for key, value in header.items()]
    for entry in entries:
        lines += [
            "",
            "[[mutation]]",
            f"name = {_string(entry['name'])}",
            f"expected_verdict = {_string(entry['expected_verdict'])}",
            f"why = {_string(entry['why'], multiline=True)}",
            f"outcome = {_string(entry['outcome'])}",
            f"runs = {entry['runs']}",
            f"reached = {'true' if entry['reached'] else 'false'}",
        ]
        if entry["observed_red"]:
            lines.append("observed_red = [")
            lines += [f"    {_string(node)}," for node in entry["observed_red"]]
            lines.append("]")
        else:
            lines.append("observed_red = []")
        lines += [
            f"first_failure = {_string(entry['first_failure'])}",
            f"diff = {_string(entry['diff'], multiline=True)}",
        ]
        if entry.get("red_at"):
            # A sub-table of this [[mutation]]: per red test, where it went red.
            lines += ["", "[mutation.red_at]"]
            lines += [f"{_string(node)} = {_string(at)}" for node, at in sorted(entry["red_at"].items())]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", choices=[c.name for c in realworld.CORPORA])
    parser.add_argument("names", nargs="*", help="only these mutations (default: all)")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--work", type=Path, default=realworld.DEFAULT_WORK)
    args = parser.parse_args(argv)

    corpus = next(c for c in realworld.CORPORA if c.name == args.corpus)
    env = realworld.prepare_env(args.work.resolve(), realworld.REPO)
    if Path(sys.prefix).resolve() != env.venv.resolve():
        # killmap's operators (step 1) are importable only inside the venv.
        os.execv(str(env.python), [str(env.python), str(Path(__file__).resolve()), *sys.argv[1:]])

    catalog = tomllib.loads(corpus.catalog.read_text(encoding="utf-8"))
    gate = catalog.get("gate", {})
    tests, paths = list(gate.get("tests", ["tests"])), list(gate.get("paths", ["src", "."]))
    entries = catalog["mutation"]
    unknown = set(args.names) - {e["name"] for e in entries}
    if unknown:
        parser.error(f"no mutation named {', '.join(sorted(unknown))}")

    base = env.work / "observe"
    pristine = realworld.extract(env, corpus, base / "pristine")
    known = set(collect(env.python, pristine, tests, paths))
    module_file = origin(env.python, pristine, paths, corpus.name)
    if not module_file.startswith(str(pristine)):
        raise SystemExit(f"{corpus.name} imports from {module_file}, not from the scratch copy")
    baselines = [run_pytest(env.python, pristine, tests, paths, known, 600) for _ in range(args.runs)]
    if any(b.outcome != "completed" or b.red for b in baselines):
        raise SystemExit(f"the unmutated tests are not green: {baselines}")
    baseline_seconds = max(b.seconds for b in baselines)
    # A mutant still running at five times the unmutated wall time (at least a minute) is
    # recorded as a timeout: the loop mutation's own run, killed by `timeout`.
    limit = max(60.0, 5 * baseline_seconds)
    print(
        f"{corpus.folder}: {len(known)} tests collected, baseline green twice, {baseline_seconds:.1f}s; "
        f"limit {limit:.0f}s",
        flush=True,
    )

    targets = sorted({e["target"].partition("::")[0] for e in entries})
    executed = executed_lines(env.python, pristine, tests, paths, targets, base / f"coverage-{corpus.name}.json")

    header = {
        "sdist": corpus.folder,
        "python": sys.version.split()[0],
        "pytest": subprocess.run(
            [str(env.python), "-c", "import pytest; print(pytest.__version__)"], capture_output=True, text=True
        ).stdout.strip(),
        "command": f"PYTHONPATH={os.pathsep.join(paths)} python -m pytest {' '.join(tests)} "
        "-c pyproject.toml --rootdir=. -p no:randomly -p no:cacheprovider -q -rfE "
        "--tb=native --junitxml=...",
        "collected": len(known),
        "baseline_seconds": round(baseline_seconds, 1),
        "timeout_seconds": int(limit),
    }
    results: dict[str, dict] = {}
    if corpus.ground_truth.is_file():
        results = {
            e["name"]: e for e in tomllib.loads(corpus.ground_truth.read_text(encoding="utf-8")).get("mutation", [])
        }
    order = [e["name"] for e in entries]

    def write() -> None:
        # After every mutation, so that an interrupted session keeps what it observed.
        kept = [results[n] for n in order if n in results]
        corpus.ground_truth.write_text(render(corpus, header, kept), encoding="utf-8")

    for entry in entries:
        name = entry["name"]
        if args.names and name not in args.names:
            continue
        diff = mutant_diff(pristine, entry)
        old = results.get(name, {})
        if old and old["diff"] != diff:
            print(f"  {name}: the operator's mutant differs from the one observed before; observing the new one")
        scratch = scratch_copy(pristine, base / "scratch" / name, diff)
        observed = [run_pytest(env.python, scratch, tests, paths, known, limit) for _ in range(args.runs)]
        shutil.rmtree(scratch)
        first = observed[0]
        agree = all((o.outcome, o.red) == (first.outcome, first.red) for o in observed)
        target_file = entry["target"].partition("::")[0]
        results[name] = {
            "name": name,
            "expected_verdict": old.get("expected_verdict", "?"),
            "why": old.get("why", ""),
            "outcome": first.outcome if agree else "flaky",
            "runs": len(observed),
            "reached": reached(
                (pristine / target_file).read_text(encoding="utf-8"),
                changed_original_lines(diff),
                executed[target_file],
            ),
            "observed_red": list(first.red) if agree else sorted(set().union(*(o.red for o in observed))),
            "first_failure": first.first_failure,
            "diff": diff,
            "red_at": dict(first.red_at) if agree and all(o.red_at == first.red_at for o in observed) else {},
        }
        write()
        print(
            f"  {name}: {first.outcome if agree else 'FLAKY'}, {len(first.red)} red, "
            f"{'reached' if results[name]['reached'] else 'NOT reached'} "
            f"({', '.join(f'{o.seconds:.1f}s' for o in observed)})"
            + (f"; e.g. {first.first_failure[:150]}" if first.first_failure else ""),
            flush=True,
        )
    write()
    print(f"wrote {corpus.ground_truth}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
