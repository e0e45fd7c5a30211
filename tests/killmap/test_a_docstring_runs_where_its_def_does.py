"""A function's docstring is evaluated when its `def` runs (at import, for a module's
function): it becomes `__doc__`, which doctest collects. A mutant that changes it is no
change to the running function's code, so it is never swapped into the collected session,
and it selects every test: toolz's `flip`, whose doctest a `replace` changed with its body,
was `held` swapped in (the doctest collected from the original) where a fresh import, and
plain pytest, left the doctest green."""

from __future__ import annotations

from gatekit import run_gate, write_project

from killmap.verdict.reach import region_of

SOURCE = '''def flip(f, a, b):
    """Call f with its arguments flipped.

    >>> flip(pow, 2, 3)
    9
    """
    return f(b, a)


def outer():
    def inner():
        """inner's docstring runs when outer does."""
        return 1

    return inner
'''


def test_a_functions_docstring_lines_run_at_import_and_its_body_does_not():
    for line in range(2, 7):
        assert region_of(SOURCE, (line,)).import_time is True, line
    assert region_of(SOURCE, (7,)).import_time is False


def test_a_nested_functions_docstring_runs_when_its_enclosing_function_does():
    assert region_of(SOURCE, (12,)).import_time is False


def test_a_docstring_only_edit_turns_the_doctest_red_as_plain_pytest_does(tmp_path):
    project = write_project(
        tmp_path / "proj",
        {
            "pyproject.toml": '[project]\nname = "flipper"\nversion = "0"\n',
            "flipper.py": SOURCE,
            "tests/test_flip.py": "from flipper import flip\n\n\ndef test_flip():\n    assert flip(pow, 2, 3) == 9\n",
            "mutations/flipper.toml": (
                '[gate]\ntests = ["tests", "flipper.py"]\npaths = ["."]\npytest_args = ["--doctest-modules"]\n\n'
                '[[mutation]]\nname = "doctest-expects-eight"\ntarget = "flipper.py::flip"\nop = "replace"\n'
                'old = "    9\\n"\nnew = "    8\\n"\nkills = ["flipper.py::flipper.flip"]\n'
            ),
        },
    )
    run = run_gate(project, "run", "--no-cache")
    entry = run.mutation("doctest-expects-eight")
    assert entry["verdict"] == "held", entry["detail"]
    assert [r["id"] for r in entry["red"]] == ["flipper.py::flipper.flip"]
