"""`check` collects under each mutant whose change the unmutated collection runs (and imports
the mutated module where the collection does not), so a mutant that breaks an import at run
time is `broken` at check time, in the words `run` gives. Seen on three real projects: only
`run` found it. And `broken` names the module that no longer imports and how many test files
failed to load, naming two: the first test file alone was an unrelated one on a graph library,
where seven failed."""

from __future__ import annotations

from gatekit import run_gate, write_project

CATALOG = """[gate]
tests = ["tests"]
paths = ["."]

[[mutation]]
name = "clamp-renamed"
target = "pkg/core.py::clamp"
op = "replace"
old = "def clamp(x):"
new = "def clamped(x):"
kills = ["tests/test_api3.py::test_api_3"]

[[mutation]]
name = "clamp-maximum"
target = "pkg/core.py::clamp"
op = "replace"
old = "min("
new = "max("
kills = ["tests/test_api1.py::test_api_1", "tests/test_api2.py::test_api_2"]

[[mutation]]
name = "lazy-value-unparsable"
target = "pkg/lazy.py"
op = "replace"
old = "VALUE = 1"
new = "VALUE = int('x')"
kills = ["tests/test_lazy.py::test_lazy"]
"""


def _project(root):
    files = {
        "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
        "pkg/__init__.py": "",
        "pkg/core.py": "LIMIT = 3\n\n\ndef clamp(x):\n    return min(x, LIMIT)\n",
        "pkg/api.py": "from pkg.core import clamp\n\n\ndef api(x):\n    return clamp(x) + 1\n",
        "pkg/lazy.py": "VALUE = 1\n",
        "tests/test_alone.py": "def test_alone():\n    assert 1 + 1 == 2\n",
        # Imported only when the test runs: no collection loads it.
        "tests/test_lazy.py": "def test_lazy():\n    from pkg import lazy\n\n    assert lazy.VALUE == 1\n",
        "mutations/pkg.toml": CATALOG,
    }
    for i in (1, 2, 3):
        test = f"def test_api_{i}():\n    assert api({i}) == {i + 1}\n"
        files[f"tests/test_api{i}.py"] = "from pkg.api import api\n\n\n" + test
    return write_project(root, files)


BROKEN_AT_IMPORT = (
    "pkg.api (pkg/api.py) does not import under the mutant: ImportError: cannot import name 'clamp' from "
    "'pkg.core' (pkg/core.py); 3 test files failed to load: tests/test_api1.py, tests/test_api2.py and 1 more"
)


def test_broken_names_the_module_that_no_longer_imports_and_the_test_files_that_failed(tmp_path):
    done = run_gate(_project(tmp_path / "proj"), "run", "--no-cache")
    entry = done.mutation("clamp-renamed")
    assert entry["verdict"] == "broken", entry["detail"]
    assert entry["detail"] == BROKEN_AT_IMPORT


def test_check_says_broken_in_the_words_run_gives_for_each_mutant_that_breaks_an_import(tmp_path):
    project = _project(tmp_path / "proj")
    ran = run_gate(project, "run", "--no-cache")
    assert ran.verdicts() == {"clamp-renamed": "broken", "clamp-maximum": "held", "lazy-value-unparsable": "broken"}, (
        ran.stdout
    )
    checked = run_gate(project, "check")
    assert checked.code == 2, checked.stdout + checked.stderr
    problems = [line for line in checked.stderr.splitlines() if line.startswith("killmap check: ")]
    assert len(problems) == 2, checked.stderr  # the mutant that loads is no problem
    for name, line in zip(("clamp-renamed", "lazy-value-unparsable"), problems, strict=True):
        assert f"mutation {name!r}" in line
        assert line.endswith(f"broken: {ran.mutation(name)['detail']}"), (line, ran.mutation(name)["detail"])
    assert "the mutated module pkg.lazy does not import: ValueError" in problems[1]


def test_check_collects_again_only_under_mutants_whose_change_the_collection_runs(tmp_path, monkeypatch):
    # clamp-maximum changes a body no collection runs: it loads as the original does, and
    # costs no second collection. The def line runs at import; pkg.lazy is never imported
    # while collecting, so only its import after the collection can tell.
    import killmap.verdict.judge as judge
    from killmap.commands.check import check

    project = _project(tmp_path / "proj")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    asked: list[str] = []
    real = judge.load_failure

    def counting(run, paths):
        asked.append(run.proof["module"] if run.proof else "")
        return real(run, paths)

    monkeypatch.setattr(judge, "load_failure", counting)
    result = check(project)
    assert sorted(asked) == ["pkg.core", "pkg.lazy"]
    assert [p.mutation for p in result.problems] == ["clamp-renamed", "lazy-value-unparsable"]
