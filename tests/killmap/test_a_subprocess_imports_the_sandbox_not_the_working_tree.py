"""A test that starts Python in a subprocess runs the project as that Python imports it. An
editable install points every new interpreter at the user's working tree: the gate takes it
off the run's own sys.path, and puts the sandbox first on PYTHONPATH for what the run
starts, so a subprocess runs the mutant, as under plain pytest it runs the code under test.
python-dotenv's test of `load_dotenv` in a script: the subprocess ran the unmutated tree,
and the gate called its kills test `vacuous` ("does not guard against this defect")."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

from gatekit import gate_env, write_project

TESTS = (
    "import subprocess\nimport sys\n\n\n"
    "def test_a_script_greets(tmp_path):\n"
    "    done = subprocess.run([sys.executable, '-c', 'import pkg; print(pkg.greet())'],\n"
    "                          capture_output=True, text=True, check=True, cwd=tmp_path)\n"
    "    assert done.stdout.strip() == 'hi'\n"
)
CATALOG = (
    '[gate]\ntests = ["tests"]\npaths = ["src"]\n\n'
    '[[mutation]]\nname = "greets-otherwise"\ntarget = "src/pkg/__init__.py::greet"\n'
    'op = "constant-return"\nvalue = "\'bye\'"\n'
    'kills = ["tests/test_script.py::test_a_script_greets"]\n'
)


def _editable_python(tmp_path: Path, tree: Path) -> Path:
    """An interpreter whose site holds a .pth naming the working tree, as an editable install
    writes it, and this one's packages (pytest, killmap)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    killmap_src = Path(__file__).resolve().parents[2] / "src"
    (Path(site) / "__editable__.pkg.pth").write_text(f"{ours}\n{killmap_src}\n{tree}\n")
    return python


def test_a_script_a_test_starts_runs_the_mutant(tmp_path):
    project = write_project(
        tmp_path / "p",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "src/pkg/__init__.py": "def greet():\n    return 'hi'\n",
            "tests/test_script.py": TESTS,
            "mutations/pkg.toml": CATALOG,
        },
    )
    python = _editable_python(tmp_path, project / "src")
    reports = tmp_path / "reports"
    done = subprocess.run(
        [str(python), "-m", "killmap", "run", "--no-cache", "--jobs", "1", "--report-dir", str(reports)],
        cwd=project,
        env=gate_env(project),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (reports / "killmap.json").exists(), done.stdout + done.stderr
    (entry,) = json.loads((reports / "killmap.json").read_text())["mutations"]
    # Red, as under plain pytest; no test ran greet in its own process, so nothing traced
    # shows the red came from the defect: unevidenced, not vacuous.
    assert [r["id"] for r in entry["red"]] == ["tests/test_script.py::test_a_script_greets"], entry
    assert entry["verdict"] == "unevidenced", entry["detail"]
    assert "subprocess" in entry["detail"]
