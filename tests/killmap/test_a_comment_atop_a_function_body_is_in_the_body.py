"""A fix often puts a comment atop the body it changes ("the draft's own load config must reach
get_model"), and its reverted patch deletes the comment with the code. Those lines lie between
the function's signature and its first statement: they belong to the body, run nothing at
import, and leave the mutant swappable into the collected session. A line of the signature
itself (a closing `):`, a line of a string default, even one that reads as a comment) still
runs at import."""

from __future__ import annotations

from gatekit import run_gate, write_project

from killmap.verdict.reach import region_of

SOURCE = '''def scale(
    x,
    note="""
# a default's line, not a comment
""",
):
    # why the factor is 2

    return x * 2


class Box:
    # a class body runs at import
    size = 2
'''


def test_a_comment_or_blank_line_atop_a_function_body_is_the_bodys_first_statement():
    for line in (7, 8):
        assert region_of(SOURCE, (line,)).import_time is False, line
        assert region_of(SOURCE, (line,)).lines == {9}, line


def test_every_line_of_the_signature_still_runs_at_import():
    for line in range(1, 7):  # the def, its arguments, the string default's lines, the `):`
        assert region_of(SOURCE, (line,)).import_time is True, line


def test_a_comment_atop_a_class_body_runs_at_import_as_the_class_body_does():
    assert region_of(SOURCE, (13,)).import_time is True


PATCH = """--- a/pkg/__init__.py
+++ b/pkg/__init__.py
@@ -1,2 +1,4 @@
 def double(x):
-    return x
+    # the fix: twice, not once
+    # (seed-000)
+    return x * 2
"""


def test_a_reverted_fix_that_deletes_its_comment_is_swapped_not_run_afresh(tmp_path):
    project = write_project(
        tmp_path / "p",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": "def double(x):\n    # the fix: twice, not once\n    # (seed-000)\n    return x * 2\n",
            "tests/test_pkg.py": "from pkg import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
            "mutations/patches/fix.patch": PATCH,
            "mutations/pkg.toml": (
                '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "fix-reverted"\n'
                'target = "pkg/__init__.py"\nop = "revert-patch"\npatch = "patches/fix.patch"\n'
                'kills = ["tests/test_pkg.py::test_double"]\n'
            ),
        },
    )
    done = run_gate(project, "run", "--no-cache")
    assert done.code == 0, done.stdout + done.stderr
    entry = done.mutation("fix-reverted")
    assert entry["verdict"] == "held"
    assert entry["path"] == "swap", entry


LAST_CALL = "def check(label):\n    label.strip()\n    check_bidi(label)\n\n\ndef alabel(label):\n    return label\n"


def test_a_blank_line_a_deletion_took_along_after_a_functions_last_statement_is_not_module_level():
    # idna: deleting check_label's last call took the blank line after it along; that line lies
    # between two functions, read as module level, and every test "reached" the mutant.
    region = region_of(LAST_CALL, (3, 4))
    assert region.import_time is False and region.lines == {3}
    # A change to blank lines alone is placed where it is, as before.
    assert region_of(LAST_CALL, (4,)).import_time is True
