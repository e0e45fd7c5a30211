"""Concurrent gates saving one project's verdict cache never trip over each other.

Every save used to write `verdicts.tmp` and rename it: two writers at once shared the
temporary name, and one renamed the other's file away (FileNotFoundError, 1 run in 90
with six concurrent gates). Each save now has a temporary file of its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from killmap.verdict.cache import VerdictCache

WRITER = textwrap.dedent("""\
    import sys
    from pathlib import Path
    from killmap.verdict.cache import VerdictCache

    root, folder, me = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    for i in range(int(sys.argv[4])):
        cache = VerdictCache(root, folder)  # reads what the others saved, as a gate does
        cache.store(f"{me}-{i}", "key", {}, {"verdict": "held", "filler": "x" * 2000})
        cache.save()
""")


def test_several_processes_saving_the_same_cache_at_once_all_succeed(tmp_path):
    root, folder = tmp_path / "project", tmp_path / "cache"
    root.mkdir()
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    writers = [
        subprocess.Popen(
            [sys.executable, str(script), str(root), str(folder), f"w{n}", "40"], stderr=subprocess.PIPE, text=True
        )
        for n in range(6)
    ]
    errors = [(w.wait(timeout=300), w.stderr.read()) for w in writers]
    assert all(code == 0 for code, _ in errors), [err for code, err in errors if code][:1]
    cache = VerdictCache(root, folder)
    saved = json.loads(cache.path.read_text())  # whole, valid JSON: some writer's last save
    assert saved and all(entry["verdict"]["verdict"] == "held" for entry in saved.values())
    assert [p.name for p in cache.path.parent.iterdir()] == ["verdicts.json"]  # no temporary left


def test_a_save_leaves_only_the_cache_file(tmp_path):
    cache = VerdictCache(tmp_path / "project", tmp_path / "cache")
    cache.store("m", "key", {}, {"verdict": "held"})
    cache.save()
    cache.save()
    assert [p.name for p in cache.path.parent.iterdir()] == ["verdicts.json"]
    assert VerdictCache(tmp_path / "project", tmp_path / "cache").lookup("m", "key") == {"verdict": "held"}
