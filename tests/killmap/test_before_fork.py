"""What a worker does once before it forks (before_fork.py), in a fresh interpreter of its own."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_a_warmed_worker_has_frozen_its_heap_and_a_later_module_s_functions_are_still_found(tmp_path):
    module = tmp_path / "later.py"
    module.write_text("def later():\n    return 1\n")
    script = textwrap.dedent(f"""
        import gc, sys
        from killmap.engine.reach.real_paths import real_paths_seen
        from killmap.engine.swap.code_swap import LiveFunctions
        from killmap.engine.workers.before_fork import preload_for_forks
        preload_for_forks()
        assert "pdb" in sys.modules, "pdb is left for every session to import"
        assert real_paths_seen, "the module paths are left for every fork to resolve"
        assert gc.get_freeze_count() > 0, "the worker's heap is not frozen"
        import inspect
        assert inspect._filesbymodname.get("pytest"), "inspect has every module's file to find again"
        # What the scan sees: a function of the worker is not listed, one made after is.
        sys.path.insert(0, {str(tmp_path)!r})
        import later
        functions = LiveFunctions()
        assert [f.__name__ for f in functions.by_file[later.__file__]] == ["later"]
        assert preload_for_forks.__code__.co_filename not in functions.by_file
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
