"""A red test's `raised_at` is the mutant's file and line, as plain pytest on the mutant says
it. Below lines the mutation removed or added, that line is not the user's: toposort's
deleted `data.update(...)` and the comments above it put a raise at 76 that stands at 83 in
the tree. The line in the tree is said beside it (`tree_line`)."""

from __future__ import annotations

from gatekit import run_gate, write_project

from killmap.mutate.mutant import Mutant

SOURCE = """\
def order(data):
    # Leaves get an empty set of their own.
    # (A comment the deletion takes with it.)
    data.update(fallback=1)
    if "fallback" not in data:
        raise ValueError("no fallback")
    return sorted(data)
"""


def _mutant(original: str, mutated: str) -> Mutant:
    return Mutant(mutation=None, file="m.py", original=original, mutated=mutated, sites=1)  # type: ignore[arg-type]


def test_a_line_below_removed_lines_stands_that_many_lines_lower_in_the_tree():
    mutated = SOURCE.replace(
        "    # Leaves get an empty set of their own.\n    # (A comment the deletion takes with it.)\n"
        "    data.update(fallback=1)\n",
        "",
    )
    mutant = _mutant(SOURCE, mutated)
    assert mutant.tree_line(3) == 6  # the raise: line 3 of the mutant, 6 of the original
    assert mutant.tree_line(1) is None  # above the change: where it stood


def test_a_line_in_what_the_mutation_changed_or_where_nothing_moved_has_no_other_number():
    added = SOURCE.replace("    data.update(fallback=1)\n", "    data.update(fallback=1)\n    data.clear()\n")
    mutant = _mutant(SOURCE, added)
    assert mutant.tree_line(5) is None  # the added line itself
    assert mutant.tree_line(7) == 6  # the raise, one line lower in the mutant
    same_length = _mutant(SOURCE, SOURCE.replace("not in data", "in data"))
    assert all(same_length.tree_line(line) is None for line in range(1, 8))


def test_the_report_and_the_console_say_the_trees_line_of_a_red_below_a_deleted_statement(tmp_path):
    tests = "from pkg import order\n\n\ndef test_one():\n    assert order({'b': 1}) == ['b', 'fallback']\n"
    project = write_project(
        tmp_path / "proj",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": SOURCE,
            "tests/test_pkg.py": tests,
            "mutations/pkg.toml": (
                '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "update-deleted"\n'
                'target = "pkg/__init__.py::order"\nop = "delete-call"\ncall = "update"\n'
                'kills = ["tests/test_pkg.py::test_one"]\n'
            ),
        },
    )
    run = run_gate(project, "run", "--no-cache")
    [entry] = run.report["mutations"]
    [red] = entry["red"]
    assert entry["verdict"] == "held", entry
    assert red["raised_at"] == "pkg/__init__.py:3", (red, entry["diff"])  # as pytest on the mutant says
    assert red["tree_line"] == 6, red
    page = (run.report_dir / "killmap.html").read_text()
    assert "at pkg/__init__.py:3 (line 6 in your tree)" in page
    tried = run_gate(project, "try", "pkg/__init__.py::order", "--op", "delete-call", "--call", "update")
    assert "at pkg/__init__.py:3 (line 6 in your tree)" in tried.stdout, tried.stdout
