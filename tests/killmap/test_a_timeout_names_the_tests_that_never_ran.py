"""A hang in one test ends the whole selection: the timeout says which selected tests never
ran, the kills tests among them first, since a kills test after the hang proved nothing
(issue 36, item 7: the verdict said `timeout` and never that the kills test had not run)."""

from __future__ import annotations

from gatekit import one_mutation_project, run_gate


def test_a_timeout_lists_the_selected_tests_that_never_ran_and_the_kills_tests_among_them(tmp_path):
    project = one_mutation_project(
        tmp_path / "proj",
        "def one():\n    return 1\n",
        "".join(f"from pkg import one\n\n\ndef test_{n}():\n    assert one() == 1\n\n\n" for n in ("a", "b", "c")),
        kills=("tests/test_pkg.py::test_c",),
    )
    catalog = project / "mutations" / "pkg.toml"
    text = catalog.read_text().replace('op = "constant-return"\nvalue = "0"\n', "")
    text = text.replace(
        'target = "pkg/__init__.py::one"\n',
        'target = "pkg/__init__.py::one"\nop = "replace"\n'
        'old = "return 1"\nnew = "while True:\\n        pass"\ntimeout = 3\n',
    )
    catalog.write_text(text)
    run = run_gate(project, "run", "--no-cache", "--jobs", "1")
    entry = run.mutation("one-mutated")
    assert entry["verdict"] == "timeout", run.stdout + run.stderr
    assert "in tests/test_pkg.py::test_a" in entry["detail"]
    assert (
        "2 selected tests never ran: tests/test_pkg.py::test_c, tests/test_pkg.py::test_b (1 of them in kills)"
        in entry["detail"]
    )
