"""Where several catalogs leave it unclear whose [gate] a swept file runs under (none of them
targets it, or more than one does), the sweep says which it took and how to take another;
where one catalog targets the file, or --catalog or --tests chose, it says nothing more."""

from __future__ import annotations

import pytest
from sweepkit import fresh_fixture, require_mutmut, sweep

from killmap.catalog.reader import load_catalogs
from killmap.verdict.sweep import resolve_targets, unsaid_gates

OTHER = (
    '[gate]\ntests = ["tests/test_limits.py::test_within"]\npaths = ["src"]\n\n[[mutation]]\nname = "other"\n'
    'target = "src/sweeppkg/limits.py::within"\nop = "constant-return"\nvalue = "True"\n'
    'kills = ["tests/test_limits.py::test_within"]\n'
)


def _catalogs(project, *names):
    return load_catalogs(project, [project / "mutations" / name for name in names])


def test_a_file_no_catalog_targets_is_said_swept_under_the_first(tmp_path):
    project = fresh_fixture(tmp_path)
    (project / "mutations/other.toml").write_text(OTHER.replace("limits.py::within", "__init__.py::x"))
    (project / "src/sweeppkg/__init__.py").write_text("def x():\n    return 1\n")
    catalogs = _catalogs(project, "limits.toml", "other.toml")
    targets = resolve_targets(project, ["src/sweeppkg/limits.py"], catalogs)
    # limits.toml targets it: nothing to say.
    assert unsaid_gates(targets, catalogs) == ()
    (project / "mutations/limits.toml").write_text('[gate]\ntests = ["tests"]\npaths = ["src"]\n')
    (project / "mutations/other.toml").write_text('[gate]\ntests = ["tests/test_limits.py"]\npaths = ["src"]\n')
    catalogs = _catalogs(project, "limits.toml", "other.toml")
    targets = resolve_targets(project, ["src/sweeppkg/limits.py"], catalogs)
    assert unsaid_gates(targets, catalogs) == (
        "src/sweeppkg/limits.py: swept under the [gate] of mutations/limits.toml (none of the 2 catalogs "
        "targets it); --catalog takes another's, --tests other tests",
    )


def test_a_file_two_catalogs_target_is_said_swept_under_the_first(tmp_path):
    project = fresh_fixture(tmp_path)
    (project / "mutations/other.toml").write_text(OTHER)
    catalogs = _catalogs(project, "limits.toml", "other.toml")
    targets = resolve_targets(project, [], catalogs)
    assert unsaid_gates(targets, catalogs) == (
        "src/sweeppkg/limits.py: swept under the [gate] of mutations/limits.toml (mutations/limits.toml and "
        "mutations/other.toml both target it); --catalog takes another's, --tests other tests",
    )
    assert unsaid_gates(targets, catalogs[:1]) == ()


@pytest.mark.parametrize(("chosen", "said"), [((), True), (("--catalog", "mutations/other.toml"), False)])
def test_the_sweep_prints_the_gate_it_took_unless_told(tmp_path, chosen, said):
    require_mutmut()
    project = fresh_fixture(tmp_path)
    (project / "mutations/other.toml").write_text(OTHER)
    done, doc, _ = sweep(project, "src/sweeppkg/limits.py::within", *chosen, "--jobs", "1")
    assert done.code == 0, done.stderr
    assert ("swept under the [gate] of mutations/limits.toml" in done.stdout) is said, done.stdout
    assert doc["sweep"]["mutants"]
