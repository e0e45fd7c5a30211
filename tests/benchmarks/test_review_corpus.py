"""The review corpus marks each sweep survivor on the lines a pull request changed or not,
from the PR's real git history, and clones each PR at its head without writing the
repository it clones from."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from benchkit import bench_module

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@localhost", "-c", "init.defaultBranch=main"]


def _rc():
    return bench_module("review_corpus")


def _commit(root: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", message], cwd=root, check=True)
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _project(tmp_path: Path) -> tuple[Path, str, str]:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run([*GIT, "init", "-q"], cwd=root, check=True)
    base = _commit(root, {"src/m.py": "a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n", "README": "x\n"}, "base")
    # line 2 rewritten, two lines added after d, e deleted; README changed too
    head = _commit(root, {"src/m.py": "a = 1\nb = 20\nc = 3\nd = 4\nf = 6\ng = 7\n", "README": "y\n"}, "head")
    return root, base, head


def test_the_changed_lines_are_the_heads_added_and_rewritten_lines_and_a_deletion_marks_none(tmp_path):
    root, base, head = _project(tmp_path)

    lines = _rc().changed_lines(root, base, head)

    assert lines == {"src/m.py": {2, 5, 6}, "README": {1}}


def test_a_mutant_is_on_the_change_when_one_of_its_lines_is(tmp_path):
    rc = _rc()
    lines = {"src/m.py": {2, 5, 6}}

    assert rc.on_change({"file": "src/m.py", "line": 4, "lines": [4, 5]}, lines)
    assert not rc.on_change({"file": "src/m.py", "line": 3, "lines": [3]}, lines)
    assert not rc.on_change({"file": "src/other.py", "line": 2, "lines": [2]}, lines)


def test_the_emulated_review_drops_arid_and_off_change_survivors_and_shows_one_per_line_catalog_operators_first():
    rc = _rc()
    survivors = [
        {"id": "a", "file": "f.py", "line": 3, "op": "mutmut:string", "on_change": True, "label": "actionable"},
        {"id": "b", "file": "f.py", "line": 3, "op": "killmap:negate", "on_change": True, "label": "actionable"},
        {"id": "c", "file": "f.py", "line": 3, "op": "killmap:delete-call", "on_change": True, "label": "equivalent"},
        {"id": "d", "file": "f.py", "line": 7, "op": "mutmut:string", "on_change": True, "label": "arid"},
        {"id": "e", "file": "f.py", "line": 9, "op": "killmap:negate", "on_change": False},
    ]

    assert [s["id"] for s in rc.emulated_review(survivors)] == ["c"]


def test_a_label_outside_the_three_is_refused(tmp_path):
    labels = tmp_path / "labels.toml"
    labels.write_text('[[label]]\npr = 1\nfile = "f.py"\nline = 1\nop = "x"\nchange = "a -> b"\nlabel = "maybe"\n')

    with pytest.raises(SystemExit, match="'maybe' is not one of"):
        _rc().load_labels(labels)


def _pull_request_repo(tmp_path: Path) -> tuple[Path, str, str]:
    """A bare repository holding a PR's head only under refs/pull/7/head, as GitHub's does."""
    root, base, head = _project(tmp_path)
    subprocess.run(["git", "update-ref", "refs/pull/7/head", head], cwd=root, check=True)
    subprocess.run(["git", "reset", "-q", "--hard", base], cwd=root, check=True)
    subprocess.run(["git", "update-ref", "-d", "refs/heads/main"], cwd=root, check=False)
    subprocess.run([*GIT, "branch", "-f", "main", base], cwd=root, check=True)
    bare = tmp_path / "repo.git"
    subprocess.run(["git", "clone", "-q", "--mirror", str(root), str(bare)], check=True)
    return bare, base, head


def _pr(rc, base: str, head: str):
    return rc.PR(number=7, title="t", note="", base=base, head=head, fix=("src/m.py",), tests=(), behaviour=())


def test_a_pr_is_cloned_at_its_head_with_the_catalog_untracked_and_the_repository_unwritten(tmp_path):
    rc = _rc()
    bare, base, head = _pull_request_repo(tmp_path)
    catalog = tmp_path / "cat.toml"
    catalog.write_text("[gate]\n")
    before = sorted(p.relative_to(bare) for p in bare.rglob("*"))

    root = rc.materialise(bare, _pr(rc, base, head), tmp_path / "clone", catalog=catalog)

    assert rc.git(root, "rev-parse", "HEAD").strip() == head
    assert (root / "src" / "m.py").read_text().startswith("a = 1\nb = 20\n")
    assert rc.git(root, "status", "--porcelain").splitlines() == ["?? mutations/"]
    assert sorted(p.relative_to(bare) for p in bare.rglob("*")) == before


def test_a_pr_whose_recorded_head_is_not_the_repositorys_is_refused(tmp_path):
    rc = _rc()
    bare, base, _ = _pull_request_repo(tmp_path)

    with pytest.raises(SystemExit, match="refs/pull/7/head is"):
        rc.materialise(bare, _pr(rc, base, base), tmp_path / "clone", catalog=None)


def test_the_statements_are_simple_statements_whole_and_branch_headers_not_defs_docstrings_or_comments():
    source = (
        "import os\n"  # 1
        "def f(x):\n"  # 2
        '    """Doc."""\n'  # 3
        "    # why\n"  # 4
        "    if (x and\n"  # 5
        "            os.sep):\n"  # 6
        "        # the sep\n"  # 7
        "        return f(\n"  # 8
        "            1)\n"  # 9
        "\n"  # 10
        "    return 2\n"  # 11
    )

    assert sorted(map(sorted, _rc().code_spans(source))) == [[1], [5, 6], [8, 9], [11]]


def test_a_changed_statement_no_mutant_changes_is_named_unswept_on_its_changed_lines(tmp_path):
    root = tmp_path
    (root / "src").mkdir()
    (root / "src" / "m.py").write_text("import os\n\n\ndef f():\n    a = g(\n        1)\n    return a\n")
    lines = {"src/m.py": {1, 4, 5, 6, 7}, "README": {1}}
    mutants = [{"file": "src/m.py", "line": 6, "lines": [6]}]

    assert _rc().unswept(root, lines, mutants) == {"src/m.py": [1, 7]}


def _observe():
    return bench_module("review_corpus/observe")


def test_plain_pytest_reds_are_told_apart_by_kind_and_a_module_that_does_not_import_is_each_of_its_tests(tmp_path):
    observe = _observe()
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("class PkgError(Exception):\n    pass\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text(
        "import pytest\nfrom pkg import PkgError\n\n"
        "def test_assertion():\n    assert 1 == 2\n\n"
        "def test_no_raise():\n    with pytest.raises(ValueError):\n        pass\n\n"
        "def test_project():\n    raise PkgError('routed elsewhere')\n\n"
        "def test_other():\n    {}['k']\n\n"
        "def test_green():\n    pass\n"
    )
    (tmp_path / "tests" / "test_b.py").write_text("def test_one():\n    pass\n\ndef test_two():\n    pass\n")
    tests = ["tests/test_a.py", "tests/test_b.py"]
    python = Path(sys.executable)

    red, head_ids = observe.run_pytest(python, tmp_path, tmp_path / "head.xml", tests, package="pkg")
    (tmp_path / "tests" / "test_b.py").write_text("from pkg import Missing\n\n" + "def test_one():\n    pass\n")
    broken, _ = observe.run_pytest(python, tmp_path, tmp_path / "broken.xml", tests, package="pkg")

    assert red == {
        "tests/test_a.py::test_assertion": ("assertion", "AssertionError"),
        "tests/test_a.py::test_no_raise": ("did-not-raise", "Failed"),
        "tests/test_a.py::test_project": ("project-exception", "pkg.PkgError"),
        "tests/test_a.py::test_other": ("other", "KeyError"),
    }
    assert "tests/test_b.py::test_two" in head_ids
    assert observe.per_test({k: v for k, v in broken.items() if "test_b" in k}, head_ids) == {
        "tests/test_b.py::test_one": ("import", "ImportError"),
        "tests/test_b.py::test_two": ("import", "ImportError"),
    }


def test_the_review_report_is_read_for_every_mutant_list_that_marks_reported():
    rc = _rc()
    document = {
        "review": {"survivors": [{"id": "a", "reported": True}, {"id": "b", "reported": False}]},
        "red_first": {"tests": [{"id": "t"}]},
        "outside": [{"id": "c", "reported": False}],
    }

    assert [m["id"] for m in rc._mutant_lists(document)] == ["a", "b", "c"]


def test_a_review_is_judged_by_the_sweeps_labels_and_an_actionable_line_it_does_not_report_is_lost():
    on = {"file": "f.py", "on_change": True}
    survivors = [
        {**on, "line": 3, "op": "killmap:negate", "change": "a -> b", "label": "actionable"},
        {**on, "line": 5, "op": "mutmut:string", "change": "c -> d", "label": "actionable"},
        {**on, "line": 7, "op": "mutmut:string", "change": "e -> f", "label": "arid"},
    ]
    reported = [
        {"file": "f.py", "line": 3, "op": "killmap:negate", "change": "a -> b", "reported": True},
        {"file": "f.py", "line": 9, "op": "killmap:negate", "change": "x -> y", "reported": True},
    ]

    judged = _rc().judge_review(reported, survivors)

    assert judged["actionable"] == 1
    assert [m["line"] for m in judged["unlabelled"]] == [9]
    assert judged["lost"] == [("f.py", 5)]
