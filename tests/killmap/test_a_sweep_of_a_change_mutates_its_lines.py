"""`killmap sweep --changed BASE` mutates the changed lines of every definition the change
touched (a property's setter as well as its getter, a nested function, a method, a
module-level statement), marks each mutant `on_change` when its lines are the change's, and
names what the change holds that no mutant can meet ("changed, not swept"). A git
repository is made in the test, its base the fixture before the change."""

from __future__ import annotations

import os
import subprocess

import pytest
from sweepkit import fresh_fixture, require_mutmut, sweep

MODULE = "src/diffpkg/shapes.py"
# What the fixture was before the change under review: its lines one by one.
BEFORE = {
    "import warnings\n": "",
    "SCALE = 3": "SCALE = 2",
    'UNIT = "cm"': 'UNIT = "mm"',
    '        if value < 0:\n            raise ValueError("negative width")\n': "",
    'return "Box(" + str(self._width) + ")"': 'return "Box(%s)" % self._width',
    "return x * SCALE": "return x * 2",
    '    log.debug("area of %s", box)\n': "",
    '    if height > 100:\n        warnings.warn("a tall box", stacklevel=2)\n': "",
}


@pytest.fixture(autouse=True)
def _mutmut():
    require_mutmut()


def _git(project, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(
        ["git", "-c", "user.name=killmap tests", "-c", "user.email=tests@killmap.invalid", *args],
        cwd=project, check=True, capture_output=True, env=env,
    )  # fmt: skip


def changed_project(tmp_path):
    """The fixture as a repository: `main` before the change, `feature` after it."""
    project = fresh_fixture(tmp_path, "sweepdiff")
    source = project / MODULE
    after = source.read_text()
    before = after
    for now, then in BEFORE.items():
        assert now in before, now
        before = before.replace(now, then)
    source.write_text(before)
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", ".")
    _git(project, "commit", "-q", "-m", "base")
    _git(project, "checkout", "-q", "-b", "feature")
    source.write_text(after)
    _git(project, "commit", "-q", "-am", "the change")
    return project, after


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    require_mutmut()
    tmp = tmp_path_factory.mktemp("sweep-of-a-change")
    project, after = changed_project(tmp)
    done, doc, _ = sweep(project, MODULE, "--changed", "main", "--jobs", "2", report_dir=tmp / "reports")
    assert done.code == 0, done.stderr
    return done, doc, after.splitlines()


def line_of(lines, text):
    return next(n for n, line in enumerate(lines, 1) if text in line)


def test_a_setter_the_change_touched_is_swept_though_its_getter_was_not(swept):
    _, doc, lines = swept
    check = line_of(lines, "if value < 0:")
    setter = [m for m in doc["sweep"]["mutants"] if m["function"] == "Box.width"]
    assert setter and all(m["line"] >= check - 2 for m in setter), setter
    assert any(m["line"] == check and m["on_change"] for m in setter)
    # mutmut skips decorated functions; a sweep of a change gives them its operators too
    assert {m["op"] for m in setter if m["line"] == check} >= {"killmap:negate", "mutmut:swap_op"}
    assert doc["sweep"]["generated"]["decorated"] == []  # so none is said to have no mutmut mutant


def test_a_nested_function_and_a_method_are_swept_on_their_changed_lines(swept):
    _, doc, lines = swept
    mutants = doc["sweep"]["mutants"]
    nested = line_of(lines, "return x * SCALE")
    assert any(m["function"] == "area" and m["line"] == nested and m["on_change"] for m in mutants)
    # Box.__repr__ was touched too: its every mutant is arid (test_a_sweep_suppresses_arid_mutants.py)
    assert {m["function"] for m in mutants} == {"Box.width", "area", "<module>", "Box"}


def test_mutants_outside_the_changed_lines_are_kept_and_marked_off_the_change(swept):
    _, doc, lines = swept
    outside = [m for m in doc["sweep"]["mutants"] if not m["on_change"]]
    final = line_of(lines, "return scaled(box.width) * height")
    assert outside and {m["function"] for m in outside} == {"area", "Box.width"}
    assert any(m["line"] == final for m in outside)
    assert all(final not in m["lines"] for m in doc["sweep"]["mutants"] if m["on_change"])


def test_a_changed_module_level_statement_is_swept_each_mutant_run_at_import(swept):
    _, doc, lines = swept
    scale = line_of(lines, "SCALE = 3")
    module = [m for m in doc["sweep"]["mutants"] if m["function"] == "<module>"]
    assert {(m["line"], m["on_change"]) for m in module} == {(scale, True)}
    assert sorted(m["change"] for m in module) == ["SCALE = 3  ->  SCALE = 4", "SCALE = 3  ->  SCALE = None"]
    assert all(m["status"] == "killed" for m in module), module


def test_a_changed_class_attribute_is_swept_as_its_class_s(swept):
    _, doc, lines = swept
    unit = line_of(lines, 'UNIT = "cm"')
    mutants = [m for m in doc["sweep"]["mutants"] if m["line"] == unit]
    assert mutants and {(m["function"], m["on_change"]) for m in mutants} == {("Box", True)}
    assert any(m["status"] == "survived" and m["reported"] for m in mutants)  # no test reads it


def test_a_changed_import_is_named_changed_not_swept(swept):
    done, doc, lines = swept
    imported = line_of(lines, "import warnings")
    assert doc["sweep"]["change"]["not_swept"] == [
        {"file": MODULE, "lines": [imported, imported], "why": "an import", "statement": "import warnings"}
    ]
    assert f"changed, not swept {MODULE}:{imported} (an import)" in done.stdout


def test_a_killed_module_level_mutant_is_promoted_as_a_replace_of_its_file(tmp_path):
    from gatekit import run_gate

    project, _ = changed_project(tmp_path)
    report_dir = tmp_path / "reports"
    done, doc, _ = sweep(project, MODULE, "--changed", "main", report_dir=report_dir)
    killed = next(m for m in doc["sweep"]["mutants"] if m["change"] == "SCALE = 3  ->  SCALE = 4")
    promoted = run_gate(
        project, "sweep", "--promote", killed["id"], "--name", "scale-changed", "--report-dir", str(report_dir)
    )
    assert promoted.code == 0, promoted.stderr
    added = (project / "mutations" / "shapes.toml").read_text()
    assert f'target = "{MODULE}"' in added and 'old = "SCALE = 3' in added and 'new = "SCALE = 4' in added
    assert "tests/test_shapes.py::test_area" in added


def test_the_change_verdict_a_review_reads_from_the_sweep_result(tmp_path):
    from killmap.verdict.changed import ChangeSince
    from killmap.verdict.lab import LabOptions
    from killmap.verdict.sweep import Portion, resolve_targets, run_sweep
    from killmap.verdict.triage import change_verdict

    project, after = changed_project(tmp_path)
    lines = after.splitlines()
    targets = resolve_targets(project, [MODULE], [])
    options = LabOptions(jobs=2, use_cache=False)
    result = run_sweep(
        project, targets, ("mutmut", "killmap"), options, [], portion=Portion(change=ChangeSince(project, "main"))
    )
    verdict = change_verdict(result.entries)
    found = sorted((e.mutant.line, e.mutant.op, e.gap.text) for e in verdict.findings)
    assert found == [
        (line_of(lines, 'UNIT = "cm"'), "mutmut:assignment", '"cm"'),
        (line_of(lines, "if value < 0:"), "mutmut:swap_op", "value < 0"),
        (line_of(lines, 'raise ValueError("negative width")'), "mutmut:arg_removal", '"negative width"'),
        (line_of(lines, "if height > 100:"), "mutmut:swap_op", "height > 100"),
    ]
    survivors = [e for e in verdict.on_change if e.status == "survived"]
    assert not verdict.all_killed and verdict.killed == len(verdict.on_change) - len(survivors)
    assert dict(verdict.outside) == {"killed": 3} and result.base == "main"
    assert [(n.why, n.statement) for n in result.enumeration.not_swept] == [("an import", "import warnings")]


def test_a_definition_whose_last_statement_was_removed_is_touched(tmp_path):
    from killmap.verdict.changed import ChangeSince

    source = tmp_path / "m.py"
    source.write_text("def f(x):\n    check(x)\n    return x\n\n\ndef g():\n    return 1\n")
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "base")
    source.write_text("def f(x):\n    check(x)\n\n\ndef g():\n    return 1\n")
    change = ChangeSince(tmp_path, "main").file("m.py")
    assert change is not None and change.added == frozenset() and change.removed_after == {2}
    assert change.touches(1, 2) and not change.touches(5, 6)


def test_a_changed_decorator_is_named_by_its_own_text_not_the_definitions():
    from killmap.verdict.changed import FileChange, not_swept

    code = "class Map:\n    @property\n    def slashes(self):\n        return 1\n"
    change = FileChange("map.py", frozenset({2, 3, 4}), frozenset())
    (named,) = not_swept(change, code, [(3, 4)], None)  # the getter is swept, its decorator not
    assert (named.first, named.why, named.statement) == (2, "a decorator", "@property")
