"""A fresh session is given the selected tests by id, and pytest rewrites the asserts of any
module on its command line: zipp's `glob.py`, whose doctest shows an AssertionError's message,
went red under every mutant that ran it in a fresh session (the message gained pytest's
explanation), where plain pytest on the gate's tests passes it. The session's initial paths
are the gate's own (engine/inrun/initial_paths.py)."""

from __future__ import annotations

from gatekit import run_gate, write_project

SOURCE = '''\
def check(x):
    """
    >>> check(1)
    1
    >>> check(-1)
    Traceback (most recent call last):
    ...
    AssertionError: negative
    """
    assert x >= 0, "negative"
    return x
'''

CATALOG = """\
[gate]
tests = ["tests", "pkg"]
paths = ["."]

[[mutation]]
name = "check-adds-zero"
target = "pkg/checks.py::check"
op = "replace"
old = "return x"
new = "return x + 0"
invariant = true
control = "check-adds-one"
kills = []

[[mutation]]
name = "check-adds-one"
target = "pkg/checks.py::check"
op = "replace"
old = "return x"
new = "return x + 1"
kills = ["tests/test_pkg.py::test_check"]
may_kill = ["pkg"]
"""


def test_a_doctest_of_an_assert_message_stays_green_in_a_fresh_session(tmp_path):
    project = write_project(
        tmp_path / "proj",
        {
            "pyproject.toml": (
                '[project]\nname = "pkg"\nversion = "0"\n\n[tool.pytest.ini_options]\naddopts = "--doctest-modules"\n'
            ),
            # A module of its own: pytest never rewrites a package's __init__ by its path.
            "pkg/__init__.py": "",
            "pkg/checks.py": SOURCE,
            "tests/test_pkg.py": "from pkg.checks import check\n\n\ndef test_check():\n    assert check(2) == 2\n",
            "mutations/pkg.toml": CATALOG,
        },
    )
    run = run_gate(project, "run", "--no-cache", "--no-swap", "--jobs", "1")
    invariant = run.mutation("check-adds-zero")
    assert invariant["path"] == "fresh", invariant
    assert invariant["verdict"] == "held", (invariant["detail"], invariant["red"])
    assert run.mutation("check-adds-one")["verdict"] == "held", run.stdout + run.stderr
