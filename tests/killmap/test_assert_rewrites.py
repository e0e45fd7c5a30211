"""pytest's rewritten test modules are kept by content, and a later session uses them."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from gatekit import one_mutation_project, run_gate, tree_digest

from killmap.engine.workers import assert_rewrites

# A real pytest session in its own process, told where rewrites are kept: it reports which
# files pytest itself rewrote, and what a failing assert said and where.
SESSION = textwrap.dedent("""
    import json, sys
    import pytest
    from _pytest.assertion import rewrite
    rewritten = []
    original = rewrite._rewrite_test
    def counting(fn, config):
        rewritten.append(str(fn))
        return original(fn, config)
    rewrite._rewrite_test = counting
    from killmap.engine.workers import assert_rewrites
    assert_rewrites.install(sys.argv[2], sys.argv[3:])
    failures = []
    class Failures:
        def pytest_runtest_logreport(self, report):
            if report.failed:
                failures.append(str(report.longrepr))
    pytest.main([sys.argv[1], "-q", "-p", "no:cacheprovider"], plugins=[Failures()])
    files = [m.test_compare.__code__.co_filename for m in list(sys.modules.values())
             if hasattr(m, "test_compare")]
    print("RESULT " + json.dumps({"rewritten": rewritten, "failures": failures, "code_files": files}))
""")

TEST = "def test_compare():\n    value = 3\n    assert value == 4\n"


def _session(tests: Path, write: Path, *read: Path) -> dict:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", SESSION, str(tests), str(write), *map(str, read)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tests.parent,
        timeout=120,
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    result = json.loads(line[len("RESULT ") :])
    # Installed plugins' modules are rewritten too: only the project's own count here.
    result["rewritten"] = [p for p in result["rewritten"] if p.startswith(str(tests))]
    return result


def _tests(folder: Path, text: str = TEST) -> Path:
    (folder / "tests").mkdir(parents=True)
    (folder / "tests" / "test_x.py").write_text(text, encoding="utf-8")
    return folder / "tests"


def test_a_second_session_uses_the_first_ones_rewrite_from_another_path(tmp_path):
    first = _session(_tests(tmp_path / "a"), tmp_path / "kept-a")
    assert [Path(p).name for p in first["rewritten"]] == ["test_x.py"]
    assert len(list((tmp_path / "kept-a").glob("*.rewritten"))) >= 1

    second = _session(_tests(tmp_path / "b"), tmp_path / "kept-b", tmp_path / "kept-a")
    assert second["rewritten"] == []
    # Still pytest's rewritten assert (a plain one says nothing of 3 and 4), and its code
    # names the file this session imported, not the one it was first rewritten from.
    [failure] = second["failures"]
    assert "assert 3 == 4" in failure
    assert second["code_files"] == [str(tmp_path / "b" / "tests" / "test_x.py")]


def test_a_changed_test_module_is_rewritten_again(tmp_path):
    _session(_tests(tmp_path / "a"), tmp_path / "kept")
    changed = _session(_tests(tmp_path / "b", TEST.replace("== 4", "== 5")), tmp_path / "kept-b", tmp_path / "kept")
    assert [Path(p).name for p in changed["rewritten"]] == ["test_x.py"]
    assert "assert 3 == 5" in changed["failures"][0]


def test_keeping_new_rewrites_trims_the_oldest_beyond_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(assert_rewrites, "KEPT_ENTRIES", 3)
    kept, scratch = tmp_path / "kept", tmp_path / "scratch"
    kept.mkdir()
    scratch.mkdir()
    for age in range(4):
        old = kept / f"old{age}.rewritten"
        old.write_bytes(b"x")
        os.utime(old, (1000 + age, 1000 + age))
    (scratch / "new.rewritten").write_bytes(b"y")
    assert_rewrites.keep_new(scratch, kept)
    assert sorted(p.name for p in kept.iterdir()) == ["new.rewritten", "old2.rewritten", "old3.rewritten"]
    assert not (scratch / "new.rewritten").exists()


SOURCE = "def one():\n    return 1\n"
TESTS = "from pkg import one\n\n\ndef test_one():\n    assert one() == 1\n"


def test_the_gate_keeps_its_sessions_rewrites_outside_the_project_for_the_next_gate(tmp_path):
    project = one_mutation_project(tmp_path / "proj", SOURCE, TESTS)
    before = tree_digest(project)
    first = run_gate(project, "run", "--no-cache")
    assert first.verdicts() == {"one-mutated": "held"}, first.stderr
    kept = tmp_path / "xdg-cache" / "killmap" / "rewrites"
    entries = sorted((p.name, p.stat().st_mtime_ns) for p in kept.glob("*.rewritten"))
    assert entries  # at least the test module
    second = run_gate(project, "run", "--no-cache")
    assert second.verdicts() == {"one-mutated": "held"}, second.stderr
    assert "assert 0 == 1" in second.mutation("one-mutated")["red"][0]["message"]
    # Nothing rewritten anew: a rewrite kept again would have been written again.
    assert sorted((p.name, p.stat().st_mtime_ns) for p in kept.glob("*.rewritten")) == entries
    assert tree_digest(project) == before  # nothing written into the project


def test_a_rewrite_is_kept_under_everything_that_shapes_it():
    # The entry's name is the only thing that keeps a stale rewrite from being found: each
    # input must change it.
    base = assert_rewrites._entry_name(b"assert x\n", "9.2.0", False)
    assert assert_rewrites._entry_name(b"assert x\n", "9.2.0", False) == base
    assert assert_rewrites._entry_name(b"assert y\n", "9.2.0", False) != base  # the module's bytes
    assert assert_rewrites._entry_name(b"assert x\n", "9.3.0", False) != base  # pytest's version
    assert assert_rewrites._entry_name(b"assert x\n", "9.2.0", True) != base  # enable_assertion_pass_hook
