"""The whole-tree watch (engine/containment/tree_watch.py), on a small tree: what it finds, restores, moves
out, and names as not restored. The gate's end-to-end cases are in test_tree_escape.py."""

from __future__ import annotations

from pathlib import Path

from killmap.engine.containment.tree_watch import TreeWatch


def small_tree(root: Path) -> Path:
    for rel, text in {
        "src/pkg.py": "x = 1\n",
        "build.log": "the user's log\n",
        ".git/HEAD": "ref: refs/heads/main\n",
        ".git/index": "DIRC the index",
        ".git/refs/heads/main": "0" * 40 + "\n",
        ".venv/lib/site.py": "installed\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def watch_of(root: Path) -> TreeWatch:
    return TreeWatch(root, {"src/pkg.py"}, skip=[], slow=[root / ".venv"])


def test_an_untouched_tree_finds_nothing(tmp_path):
    root = small_tree(tmp_path / "tree")
    watch = watch_of(root)
    assert not watch.check(tmp_path / "kept").written
    assert not watch.check(tmp_path / "kept", final=True).written


def test_git_files_written_over_or_removed_are_restored_byte_for_byte_and_what_was_written_kept(tmp_path):
    root = small_tree(tmp_path / "tree")
    watch = watch_of(root)
    with open(root / ".git/index", "ab") as index:
        index.write(b"junk")
    (root / ".git/refs/heads/main").unlink()
    found = watch.check(tmp_path / "kept")
    assert {rel for rel, _ in found.written} == {".git/index", ".git/refs/heads/main"}
    assert found.unrestored == ()
    assert (root / ".git/index").read_text() == "DIRC the index"
    assert (root / ".git/refs/heads/main").read_text() == "0" * 40 + "\n"
    assert (tmp_path / "kept/.git/index").read_text() == "DIRC the indexjunk"
    assert not watch.check(tmp_path / "kept").written  # said once


def test_a_new_file_and_its_new_folder_are_moved_out_never_deleted(tmp_path):
    root = small_tree(tmp_path / "tree")
    watch = watch_of(root)
    (root / "new/deep").mkdir(parents=True)
    (root / "new/deep/planted.txt").write_text("x")
    found = watch.check(tmp_path / "kept")
    assert "new/deep/planted.txt" in dict(found.written)
    assert not (root / "new").exists()
    assert (tmp_path / "kept/new/new/deep/planted.txt").read_text() == "x"


def test_an_ignored_file_written_over_is_named_as_not_restored_and_left_as_it_is(tmp_path):
    root = small_tree(tmp_path / "tree")
    watch = watch_of(root)
    with open(root / "build.log", "a") as log:
        log.write("more")
    found = watch.check(tmp_path / "kept")
    assert found.unrestored == ("build.log",)
    assert (root / "build.log").read_text() == "the user's log\nmore"  # never truncated: it may be the user's


def test_a_bytecode_file_planted_in_the_tree_is_found(tmp_path):
    root = small_tree(tmp_path / "tree")
    watch = watch_of(root)
    (root / "src/__pycache__").mkdir()
    (root / "src/__pycache__/pkg.cpython-311.pyc").write_bytes(b"poison")
    assert "src/__pycache__/pkg.cpython-311.pyc" in dict(watch.check(tmp_path / "kept").written)


def test_tracked_files_are_left_to_the_tree_guard(tmp_path):
    root = small_tree(tmp_path / "tree")
    watch = watch_of(root)
    (root / "src/pkg.py").write_text("x = 2\n")
    assert not watch.check(tmp_path / "kept").written


def test_the_installation_folder_is_compared_only_at_the_end(tmp_path):
    root = small_tree(tmp_path / "tree")
    watch = watch_of(root)
    (root / ".venv/lib/evil.pth").write_text("import os")
    assert not watch.check(tmp_path / "kept").written
    assert ".venv/lib/evil.pth" in dict(watch.check(tmp_path / "kept", final=True).written)


def git_tree(root: Path, *init: str) -> Path:
    import subprocess

    (root / "src").mkdir(parents=True)
    (root / "src/pkg.py").write_text("x = 1\n")
    for args in (["init", "-q", *init], ["add", "."], ["commit", "-q", "-m", "start"], ["status", "--short"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True)
    return root


def test_an_index_only_refreshed_by_the_users_git_status_is_neither_an_escape_nor_put_back(tmp_path):
    import os
    import subprocess

    root = git_tree(tmp_path / "tree")
    watch = TreeWatch(root, {"src/pkg.py"}, skip=[], slow=[])
    before = (root / ".git/index").read_bytes()
    os.utime(root / "src/pkg.py", ns=(1, 1))  # as the guard's restore of a tracked file does
    subprocess.run(["git", "status", "--short"], cwd=root, check=True, capture_output=True)
    refreshed = (root / ".git/index").read_bytes()
    assert refreshed != before  # git rewrote it, with new stat data
    assert not watch.check(tmp_path / "kept").written
    assert (root / ".git/index").read_bytes() == refreshed


def test_an_index_whose_staging_changed_is_an_escape_and_put_back(tmp_path):
    import subprocess

    root = git_tree(tmp_path / "tree")
    watch = TreeWatch(root, {"src/pkg.py"}, skip=[], slow=[])
    before = (root / ".git/index").read_bytes()
    (root / "src/pkg.py").write_text("x = 2\n")
    subprocess.run(["git", "add", "src/pkg.py"], cwd=root, check=True)
    assert ".git/index" in dict(watch.check(tmp_path / "kept").written)
    assert (root / ".git/index").read_bytes() == before


def test_bytes_appended_to_the_index_are_an_escape_though_git_still_reads_the_same_entries(tmp_path):
    # Git does not check an index's checksum when it reads it, and fewer than eight bytes
    # after the last extension are never parsed: the staged entries read the same. Only the
    # broken seal tells this from git's own refresh (it passed as one in CI, and was kept).
    import subprocess

    root = git_tree(tmp_path / "tree")
    watch = TreeWatch(root, {"src/pkg.py"}, skip=[], slow=[])
    before = (root / ".git/index").read_bytes()
    listed = ["git", "ls-files", "-s"]
    staged = subprocess.run(listed, cwd=root, check=True, capture_output=True).stdout
    with open(root / ".git/index", "ab") as index:
        index.write(b"junk")
    assert subprocess.run(listed, cwd=root, check=True, capture_output=True).stdout == staged
    assert ".git/index" in dict(watch.check(tmp_path / "kept").written)
    assert (root / ".git/index").read_bytes() == before


def _refreshed_by_git_status(root: Path) -> bytes:
    import os
    import subprocess

    os.utime(root / "src/pkg.py", ns=(1, 1))  # as the guard's restore of a tracked file does
    subprocess.run(["git", "status", "--short"], cwd=root, check=True, capture_output=True)
    return (root / ".git/index").read_bytes()


def test_an_index_refreshed_in_a_sha256_repository_is_sealed_by_its_sha256_trailer(tmp_path):
    root = git_tree(tmp_path / "tree", "--object-format=sha256")
    watch = TreeWatch(root, {"src/pkg.py"}, skip=[], slow=[])
    refreshed = _refreshed_by_git_status(root)
    assert not watch.check(tmp_path / "kept").written
    assert (root / ".git/index").read_bytes() == refreshed


def _unsealed(path: Path) -> None:
    """The trailer git leaves all zero under index.skipHash (git 2.40+), written by hand."""
    data = path.read_bytes()
    path.write_bytes(data[:-20] + bytes(20))


def test_an_unsealed_index_refreshed_is_kept_where_the_saved_one_was_unsealed_too(tmp_path):
    root = git_tree(tmp_path / "tree")
    _unsealed(root / ".git/index")
    watch = TreeWatch(root, {"src/pkg.py"}, skip=[], slow=[])
    _refreshed_by_git_status(root)
    _unsealed(root / ".git/index")
    assert not watch.check(tmp_path / "kept").written


def test_an_index_unsealed_where_the_saved_one_was_sealed_is_an_escape(tmp_path):
    root = git_tree(tmp_path / "tree")
    watch = TreeWatch(root, {"src/pkg.py"}, skip=[], slow=[])
    before = (root / ".git/index").read_bytes()
    _refreshed_by_git_status(root)
    _unsealed(root / ".git/index")
    assert ".git/index" in dict(watch.check(tmp_path / "kept").written)
    assert (root / ".git/index").read_bytes() == before
