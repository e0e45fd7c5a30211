"""Reports appear whole or not at all (issue 32, item 4).

A CI step reads killmap.json next and takes what it finds for the truth, so a writer stopped
midway, by a signal or an error, must leave no truncated file under a final name: the
report it was replacing stays as it was, or there is none.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from killmap.report.cells import write_whole
from killmap.report.document import write_reports

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "reports" / "verdicts.json"

# Writes the fixture's reports while the kernel allows no file past `limit` bytes: killmap.json
# (42 KB) passes it halfway. With SIGXFSZ at its default the kernel kills the writer there;
# Python's own default (ignored) makes the write fail with EFBIG instead.
WRITE_UNDER_A_SIZE_LIMIT = """
import json, resource, signal, sys
from pathlib import Path
from killmap.report.document import write_reports
if sys.argv[4] == "signal":
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[3]), resource.RLIM_INFINITY))
write_reports(json.loads(Path(sys.argv[1]).read_text()), Path(sys.argv[2]))
"""


def final_files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if not p.name.startswith(".")}


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
@pytest.mark.parametrize("stop", ["signal", "error"])
@pytest.mark.parametrize("previous", [True, False])
def test_a_report_writer_stopped_midway_leaves_the_previous_report_or_none_never_a_truncated_one(
    tmp_path, stop, previous
):
    folder = tmp_path / "reports"
    folder.mkdir()
    if previous:
        doc = json.loads(FIXTURE.read_text())
        doc["mutations"] = doc["mutations"][:1]  # small: written whole under the limit below
        write_reports(doc, folder)
    before = final_files(folder)
    done = subprocess.run(
        [sys.executable, "-c", WRITE_UNDER_A_SIZE_LIMIT, str(FIXTURE), str(folder), "16384", stop],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if stop == "signal":
        assert done.returncode == -signal.SIGXFSZ, done.stderr
    else:
        assert done.returncode == 1 and "cannot write the reports" in done.stderr, done.stderr
    assert final_files(folder) == before
    if before:
        json.loads((folder / "killmap.json").read_text())


def test_a_set_of_reports_that_fails_midway_replaces_none_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    first, second = tmp_path / "a.json", tmp_path / "b.md"
    first.write_text("old a\n")
    real_open = open

    def full_disk_at_the_second(path, *args, **kwargs):
        if Path(path).name.startswith(f".{second.name}."):
            raise OSError(28, "No space left on device")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", full_disk_at_the_second)
    with pytest.raises(OSError):
        write_whole({first: "new a\n", second: "new b\n"})
    monkeypatch.undo()
    assert first.read_text() == "old a\n" and not second.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]


def test_the_reports_line_names_the_folder_as_the_user_would_type_it(tmp_path):
    # tinydb, rfc3986: the tutorial shows `reports: reports/killmap.json`; the gate printed
    # the absolute path of the folder beneath where the user stood.
    from gatekit import copy_fixture, gate_env

    project = copy_fixture("basic", tmp_path)

    def run(*args: str) -> str:
        command = [sys.executable, "-m", "killmap", "run", "--no-cache", *args]
        done = subprocess.run(command, cwd=project, env=gate_env(project), capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    beneath = run()
    assert "reports: reports/killmap.json (+ " in beneath, beneath
    elsewhere = run("--report-dir", str(tmp_path / "out"))
    assert f"reports: {tmp_path / 'out' / 'killmap.json'} (+ " in elsewhere, elsewhere


def test_a_report_of_part_of_the_catalogs_says_so(tmp_path):
    # dacite: `run --only NAME` after a full run left a report of one mutation in its place,
    # with nothing saying it held part of the catalogs.
    from gatekit import copy_fixture, run_gate

    project = copy_fixture("basic", tmp_path)
    whole = run_gate(project, "run", "--no-cache")
    assert "selection" not in whole.report
    part = run_gate(project, "run", "--no-cache", "--only", "classify-call-deleted")
    assert part.report["selection"]["mutations"] == 1 and part.report["selection"]["of"] == 2, part.report
    assert part.report["selection"]["only"] == ["classify-call-deleted"]
    assert ": the 1 mutation --only chose, of the catalogs' 2" in part.stdout, part.stdout
