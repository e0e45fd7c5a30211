"""Targets that cannot be run are refused up front, with one line and exit 2.

A git-ignored target is not copied into the sandbox (it is not among the project's
files), so a run of it read "inconclusive ... (exit None)" with an empty log. A target
that is a symlink to a file outside the project was accepted and run against a file the
gate does not own.
"""

from __future__ import annotations

import subprocess

import pytest
from gatekit import run_gate, tree_digest

from killmap.catalog.reader import load_catalog
from killmap.errors import GateError

SOURCE = "def check(x):\n    return x > 0\n"
TESTS = (
    "from pkg.{module} import check\n\n\ndef test_positive():\n    assert check(1)\n\n\n"
    "def test_zero():\n    assert not check(0)\n"
)


def catalog(target: str) -> str:
    return (
        f'[gate]\npaths = ["src"]\n\n[[mutation]]\nname = "check-flipped"\ntarget = "{target}::check"\n'
        'op = "replace"\nold = "x > 0"\nnew = "x >= 0"\nkills = ["tests/test_mod.py::test_zero"]\n'
    )


def one_line_error(run) -> str:
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.code == 2, (run.stdout, run.stderr)
    assert len(lines) == 1 and lines[0].startswith("killmap: ") and "Traceback" not in run.stderr, run.stderr
    return lines[0]


def git(project, *args: str) -> None:
    subprocess.run(["git", *args], cwd=project.root, check=True, capture_output=True)


@pytest.fixture
def git_project(km_project):
    km_project.write("tests/test_mod.py", TESTS.format(module="generated"))
    km_project.write("src/pkg/generated.py", SOURCE)
    km_project.write(".gitignore", "src/pkg/generated.py\n")
    km_project.write("mutations/catalog.toml", catalog("src/pkg/generated.py"))
    git(km_project, "init", "-q")
    git(km_project, "add", "-A")
    return km_project


def test_a_git_ignored_target_is_refused_before_anything_runs(git_project):
    before = tree_digest(git_project.root)
    run = run_gate(git_project.root, "run", "--no-cache")
    line = one_line_error(run)
    assert "mutations/catalog.toml" in line and "'check-flipped'" in line and "'target'" in line
    assert "src/pkg/generated.py" in line and "git-ignored" in line
    assert "baseline" not in run.stdout
    assert tree_digest(git_project.root) == before


def test_check_refuses_a_git_ignored_target_as_run_does(git_project):
    run = run_gate(git_project.root, "check")
    assert run.code == 2, run.stdout + run.stderr
    line = next(line for line in run.stderr.splitlines() if "git-ignored" in line)
    assert "mutations/catalog.toml" in line and "'check-flipped'" in line and "'target'" in line


def test_the_same_target_once_no_longer_ignored_runs_and_holds(git_project):
    # The premise of the test above: the project itself is fine; only the ignore differs.
    git_project.write(".gitignore", "")
    run = run_gate(git_project.root, "run", "--no-cache", "--jobs", "1")
    assert run.code == 0, run.stderr
    assert run.verdicts() == {"check-flipped": "held"}


@pytest.fixture
def linked_project(km_project, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere") / "real.py"
    outside.write_text(SOURCE)
    (km_project.root / "src" / "pkg" / "mod.py").symlink_to(outside)
    km_project.write("tests/test_mod.py", TESTS.format(module="mod"))
    km_project.write("mutations/catalog.toml", catalog("src/pkg/mod.py"))
    return km_project, outside


def test_a_target_that_is_a_symlink_outside_the_project_is_a_catalog_error(linked_project):
    project, outside = linked_project
    with pytest.raises(GateError) as caught:
        load_catalog(project.root, project.root / "mutations" / "catalog.toml")
    assert (caught.value.mutation, caught.value.field) == ("check-flipped", "target")
    assert "symlink" in str(caught.value) and str(outside.resolve()) in str(caught.value)


def test_a_target_in_a_symlinked_folder_outside_the_project_is_a_catalog_error(km_project, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere-pkg")
    (outside / "__init__.py").write_text("")
    (outside / "mod.py").write_text(SOURCE)
    (km_project.root / "src" / "ext").symlink_to(outside, target_is_directory=True)
    km_project.write("mutations/catalog.toml", catalog("src/ext/mod.py"))
    with pytest.raises(GateError) as caught:
        load_catalog(km_project.root, km_project.root / "mutations" / "catalog.toml")
    assert caught.value.field == "target" and "outside the project" in str(caught.value)


def test_the_command_refuses_a_symlinked_target_and_leaves_the_real_file_alone(linked_project):
    project, outside = linked_project
    run = run_gate(project.root, "run", "--no-cache")
    line = one_line_error(run)
    assert "'target'" in line and "symlink" in line
    assert outside.read_text() == SOURCE


def test_a_symlink_to_a_file_inside_the_project_is_still_a_target(km_project):
    km_project.write("src/pkg/real.py", SOURCE)
    (km_project.root / "src" / "pkg" / "mod.py").symlink_to(km_project.root / "src" / "pkg" / "real.py")
    km_project.write("mutations/catalog.toml", catalog("src/pkg/mod.py"))
    mutation = load_catalog(km_project.root, km_project.root / "mutations" / "catalog.toml").mutations[0]
    assert mutation.target.path == "src/pkg/mod.py"


def test_files_git_ignores_inside_a_package_are_copied_to_run_but_are_not_targets(km_project):
    # humanize: hatch-vcs writes src/humanize/_version.py and gettext's .mo catalogs sit in
    # the package, both git-ignored. Without them every test file failed to import (and the
    # i18n tests skipped, so their mutants read vacuous).
    km_project.write("src/pkg/__init__.py", "from pkg._version import VERSION\n")
    km_project.write("src/pkg/_version.py", "VERSION = '1.0'\n")
    km_project.write("src/pkg/locale/de/messages.mo", "übersetzt\n")
    km_project.write("src/pkg/mod.py", SOURCE)
    km_project.write(
        "tests/test_mod.py",
        TESTS.format(module="mod")
        + (
            "\n\ndef test_catalog_is_there():\n    import pathlib, pkg\n"
            "    assert (pathlib.Path(pkg.__file__).parent / 'locale/de/messages.mo').is_file()\n"
        ),
    )
    km_project.write(".gitignore", "src/pkg/_version.py\n*.mo\n")
    km_project.write("mutations/catalog.toml", catalog("src/pkg/mod.py"))
    git(km_project, "init", "-q")
    git(km_project, "add", "-A")
    run = run_gate(km_project.root, "run", "--no-cache", "--jobs", "1")
    assert run.code == 0, run.stdout + run.stderr
    assert run.verdicts() == {"check-flipped": "held"}
    km_project.write(
        "mutations/catalog.toml",
        catalog("src/pkg/_version.py")
        .replace("::check", "::VERSION")
        .replace('old = "x > 0"\nnew = "x >= 0"', "old = \"'1.0'\"\nnew = \"'2.0'\""),
    )
    assert "git-ignored" in one_line_error(run_gate(km_project.root, "run", "--no-cache"))


def test_what_a_package_ignores_is_copied_up_to_a_limit_and_never_bytecode_or_a_link(km_project, tmp_path):
    from killmap.catalog.project import ignored_package_files, project_files

    km_project.write("src/pkg/mod.py", SOURCE)
    km_project.write("src/pkg/_version.py", "VERSION = '1.0'\n")
    for index in range(1005):  # a build tree left in the package: its first 1000 files only
        km_project.write(f"src/pkg/generated/f{index:04d}.txt", "x\n")
    km_project.write("src/pkg/__pycache__/mod.cpython-311.pyc", "stale\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.py"
    outside.write_text("SECRET = 1\n")
    (km_project.root / "src" / "pkg" / "linked.py").symlink_to(outside)
    km_project.write(".gitignore", "src/pkg/_version.py\nsrc/pkg/generated/\n__pycache__/\nsrc/pkg/linked.py\n")
    git(km_project, "init", "-q")
    git(km_project, "add", "-A")
    files = project_files(km_project.root)
    found = ignored_package_files(km_project.root, files)
    assert "src/pkg/_version.py" in found
    assert len([f for f in found if f.startswith("src/pkg/generated/")]) == 1000
    assert not any("__pycache__" in f or f.endswith(".pyc") for f in found)
    assert "src/pkg/linked.py" not in found
