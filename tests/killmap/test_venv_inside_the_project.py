"""The README's own setup: `python3 -m venv .venv` inside the project, killmap and the test
dependencies installed there.

The gate removes the working tree from `sys.path` (the original must not shadow the mutant),
and it used to remove the venv with it: every dependency not already imported (hypothesis,
six) was "No module named ..." in every test file, on dateutil, attrs and the rest. And a venv
git does not ignore was copied into every sandbox.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

from gatekit import gate_env, write_project


def _project_with_its_own_venv(root: Path, ignored: bool) -> Path:
    project = write_project(
        root / "proj",
        {
            "pyproject.toml": '[project]\nname = "tiny"\nversion = "0"\n',
            "src/tiny/__init__.py": "def double(x):\n    return x * 2\n",
            "tests/test_tiny.py": "import onlyinvenv\nfrom tiny import double\n\n\n"
            "def test_double():\n    assert double(onlyinvenv.TWO) == 4\n",
            "mutations/tiny.toml": '[gate]\ntests = ["tests"]\npaths = ["src"]\n\n[[mutation]]\n'
            'name = "double-is-zero"\ntarget = "src/tiny/__init__.py::double"\n'
            'op = "constant-return"\nvalue = "0"\nkills = ["tests/test_tiny.py::test_double"]\n',
            **({".gitignore": ".venv/\n"} if ignored else {}),
        },
    )
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"], cwd=project, check=True
    )
    venv = project / ".venv"  # made after the commit: untracked, ignored or not
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(
        subprocess.run(
            [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    # The venv sees this suite's killmap, pytest and libcst (as if pip-installed there), and
    # one dependency that lives in the venv alone, imported only when the tests collect.
    (site / "outer.pth").write_text(f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
    (site / "onlyinvenv").mkdir()
    (site / "onlyinvenv" / "__init__.py").write_text("TWO = 2\n")
    return project


def _gate(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(project / ".venv" / "bin" / "python"), "-m", "killmap", *args],
        cwd=project,
        env=gate_env(project),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_dependencies_installed_in_a_venv_inside_the_project_are_importable_in_the_sandbox(tmp_path):
    project = _project_with_its_own_venv(tmp_path, ignored=True)
    checked = _gate(project, "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    ran = _gate(project, "run", "--no-cache")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1/1 contracts held" in ran.stdout


def test_a_venv_git_does_not_ignore_is_not_copied_into_the_sandbox(tmp_path):
    from killmap.catalog.project import project_files

    project = _project_with_its_own_venv(tmp_path, ignored=False)
    files = project_files(project)
    assert "src/tiny/__init__.py" in files and "tests/test_tiny.py" in files
    assert not [f for f in files if f.startswith(".venv/")]
    ran = _gate(project, "run", "--no-cache")
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_only_the_venvs_inside_the_project_are_left_out_and_a_project_that_is_one_keeps_its_files():
    from killmap.catalog.project import without_venvs

    files = [
        "pkg/__init__.py",
        ".venv/pyvenv.cfg",
        ".venv/lib/site.py",
        "tools/env/pyvenv.cfg",
        "tools/env/bin/tool",
        "tools/run.py",
        "docs/not-a-pyvenv.cfg",
    ]
    assert without_venvs(files) == ["pkg/__init__.py", "tools/run.py", "docs/not-a-pyvenv.cfg"]
    # A project whose root is itself a venv (pyvenv.cfg at the top): leaving out "every
    # file under it" would leave out the whole project.
    rooted = ["pyvenv.cfg", "pkg/__init__.py", "lib/python3.11/site-packages/dep.py"]
    assert without_venvs(rooted) == rooted
