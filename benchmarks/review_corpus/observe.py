"""The truth for red-first, observed with plain pytest: which of a PR's tests fail with its fix
reverted, and how.

    python3 benchmarks/review_corpus/observe.py [--only N ...] [--repo GITDIR]

For each PR of prs.toml: a fresh clone at the PR's head (review_corpus.py's), the routing
suite run with plain pytest (`PYTHONPATH=src python -m pytest tests/test_routing.py`), then
the fix's files (`fix`) reset to the base with `git checkout BASE -- FILES` (a file the fix
added is deleted), the tests kept as at head, and the suite run again. Where prs.toml names
`behaviour` (the fix files that change behaviour, when others only add names), a third run
reverts those alone. Nothing of killmap runs: the clone has no catalog.

Each red test is recorded with its kind, read from pytest's JUnit report: `assertion`
(AssertionError), `did-not-raise` (pytest.raises saw no exception), `project-exception`
(an exception class of werkzeug itself: the routing signals its results by raising),
`import` (the test module did not import), or `other`. Written to redfirst_truth.toml; the
`why` of each observation is a person's, kept from the file as it was.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import review_corpus as rc  # noqa: E402  benchmarks/review_corpus.py

TRUTH = rc.CORPUS / "redfirst_truth.toml"


def run_pytest(
    python: Path, root: Path, junit: Path, tests: list[str], package: str = "werkzeug"
) -> tuple[dict[str, tuple[str, str]], set[str]]:
    """Plain pytest on the tree: each red test id with its kind and exception, and every id
    the JUnit report names. A module that did not import is one id, the module's."""
    env = rc.clean_env(junit.parent)
    env["PYTHONPATH"] = "src"
    command = [str(python), "-m", "pytest", *tests, "-p", "no:cacheprovider", "-q", "--tb=native"]
    subprocess.run([*command, f"--junitxml={junit}"], cwd=root, env=env, capture_output=True, text=True)
    red, ids = {}, set()
    for case in ET.parse(junit).getroot().iter("testcase"):
        test = node_id(root, case.get("classname", ""), case.get("name", ""))
        ids.add(test)
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is None:
            continue
        red[test] = kind_of(problem.get("message", ""), problem.text or "", package)
    return red, ids


def node_id(root: Path, classname: str, name: str) -> str:
    """pytest's node id of a JUnit test case: `tests.test_x.TestY` + `test_z` is
    `tests/test_x.py::TestY::test_z`; a case with no classname (a module that did not
    import) is the module's path."""
    parts = (classname or name).split(".")
    for cut in range(len(parts), 0, -1):
        path = "/".join(parts[:cut]) + ".py"
        if (root / path).is_file():
            return "::".join([path, *parts[cut:], *([name] if classname else [])])
    return f"{classname}::{name}"


def per_test(red: dict[str, tuple[str, str]], head_ids: set[str]) -> dict[str, tuple[str, str]]:
    """The red set with a module that did not import spelled out as each of its tests that
    ran at head: every one of them is red, as killmap counts them."""
    out = {}
    for test, kind in red.items():
        if "::" in test:
            out[test] = kind
        else:
            out.update({t: kind for t in head_ids if t.startswith(test + "::")})
    return out


def kind_of(message: str, text: str, package: str) -> tuple[str, str]:
    """(kind, exception) of one red test, from its JUnit message and native traceback; an
    exception class of `package` is a `project-exception`."""
    if "ImportError" in text and ("while importing test module" in text or "ModuleNotFoundError" in text):
        return ("import", "ImportError")
    last = [line for line in text.strip().splitlines() if line and not line.startswith(" ")]
    exception = (last[-1] if last else message).split(":")[0].strip()
    if message.startswith("Failed: DID NOT RAISE"):
        return ("did-not-raise", "Failed")
    if exception.endswith("AssertionError"):
        return ("assertion", "AssertionError")
    if exception.startswith(package + "."):
        return ("project-exception", exception)
    return ("other", exception)


def observe(pr: rc.PR, repo: Path, python: Path, work: Path, tests: list[str]) -> list[dict]:
    root = rc.materialise(repo, pr, work / "observe" / f"pr{pr.number}", catalog=None)
    head, head_ids = run_pytest(python, root, work / "observe" / f"pr{pr.number}-head.xml", tests)
    reverts = [pr.fix] + ([pr.behaviour] if pr.behaviour != pr.fix else [])
    observations = []
    for revert in reverts:
        rc.git(root, "checkout", "-q", pr.head, "--", ".")
        for path in revert:
            present = subprocess.run(["git", "cat-file", "-e", f"{pr.base}:{path}"], cwd=root).returncode == 0
            if present:
                rc.git(root, "checkout", "-q", pr.base, "--", path)
            else:
                (root / path).unlink()
        name = "fix" if revert == pr.fix else "behaviour"
        red = per_test(run_pytest(python, root, work / "observe" / f"pr{pr.number}-{name}.xml", tests)[0], head_ids)
        observations.append({"pr": pr.number, "revert": sorted(revert), "head_red": sorted(head), "red": red})
        print(f"PR #{pr.number}, {len(revert)} file(s) reverted: {len(red)} red (at head: {len(head)})", flush=True)
    return observations


def toml_text(observations: list[dict], whys: dict) -> str:
    out = ["# Written by observe.py: plain pytest, the fix's files reverted. `why` is a person's.\n"]
    for o in observations:
        key = (o["pr"], tuple(o["revert"]))
        out.append("[[observation]]")
        out.append(f"pr = {o['pr']}")
        out.append("revert = [" + ", ".join(f'"{p}"' for p in o["revert"]) + "]")
        out.append("head_red = [" + ", ".join(f'"{t}"' for t in o["head_red"]) + "]")
        out.append("reverted_red = [" + ", ".join(f'"{t}"' for t in sorted(o["red"])) + "]")
        kinds: dict[str, int] = {}
        for kind, _ in o["red"].values():
            kinds[kind] = kinds.get(kind, 0) + 1
        out.append("kinds = {" + ", ".join(f'"{k}" = {n}' for k, n in sorted(kinds.items())) + "}")
        out.append(f"why = {rc.json.dumps(whys.get(key, ''), ensure_ascii=False)}")
        for test, (kind, exception) in sorted(o["red"].items()):
            if len(o["red"]) > 20 and kind == "import":
                continue  # a whole module that did not import: the count above says it
            out += ["", "[[observation.red]]", f'test = "{test}"', f'kind = "{kind}"', f'exception = "{exception}"']
        out.append("")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", type=int, action="append", default=[], metavar="N")
    parser.add_argument("--repo", type=Path, default=rc.DEFAULT_REPO)
    parser.add_argument("--work", type=Path, default=rc.DEFAULT_WORK)
    args = parser.parse_args()
    project, prs = rc.load_prs()
    python = rc.prepare_venv(args.work.resolve(), rc.REPO)
    old = rc.load_truth(TRUTH)
    whys = {key: o.get("why", "") for key, o in old.items()}
    observations = [
        {"pr": o["pr"], "revert": o["revert"], "head_red": o["head_red"], "red": _reds(o)}
        for key, o in old.items()
        if args.only and key[0] not in args.only
    ]
    for pr in prs:
        if not args.only or pr.number in args.only:
            observations += observe(pr, args.repo, python, args.work.resolve(), list(project["tests"]))
    observations.sort(key=lambda o: (o["pr"], -len(o["revert"])))
    TRUTH.write_text(toml_text(observations, whys), encoding="utf-8")
    print(f"wrote {TRUTH}")
    return 0


def _reds(observation: dict) -> dict[str, tuple[str, str]]:
    listed = {r["test"]: (r["kind"], r["exception"]) for r in observation.get("red", [])}
    return {t: listed.get(t, ("import", "ImportError")) for t in observation["reverted_red"]}


if __name__ == "__main__":
    sys.exit(main())
