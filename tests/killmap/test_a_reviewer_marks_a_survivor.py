"""A reviewer marks a survivor equivalent or not useful, by a comment on its line or by its
id in the catalog's `[sweep]`, and it is not reported again; an id that names no mutant of a
definition the sweep enumerated is one line and exit 2. mutmut's `# pragma: no mutate` makes
no mutant at all. When every mutant on the changed lines is killed, the sweep says so."""

from __future__ import annotations

import pytest
from sweepkit import require_mutmut, sweep
from test_a_sweep_of_a_change_mutates_its_lines import MODULE, changed_project

CHECK = "    if height > 100:\n"


@pytest.fixture(autouse=True)
def _mutmut():
    require_mutmut()


def _on_the_check(doc, lines):
    line = next(n for n, text in enumerate(lines, 1) if "if height > 100:" in text)
    return [m for m in doc["sweep"]["mutants"] if m["line"] == line]


def test_a_pragma_on_the_line_marks_its_survivors_and_they_are_not_reported(tmp_path):
    project, after = changed_project(tmp_path)
    marked = after.replace(CHECK, "    if height > 100:  # killmap: equivalent\n")
    (project / MODULE).write_text(marked)
    done, doc, _ = sweep(project, MODULE, "--changed", "main", report_dir=tmp_path / "r")
    assert done.code == 0, done.stderr
    survivors = [m for m in _on_the_check(doc, marked.splitlines()) if m["status"] == "survived"]
    assert survivors and all(m["mark"] == "equivalent" and not m["reported"] for m in survivors)
    assert f"{len(survivors)} marked equivalent" in done.stdout and "height >= 100" not in done.stdout
    page = (tmp_path / "r" / "killmap-sweep.html").read_text()
    marked = [m for m in _on_the_check(doc, marked.splitlines()) if m["mark"]]  # killed ones too
    assert page.count("<i>marked equivalent</i>") == len(marked) and "<i>on the change</i>" in page


def test_a_catalog_entry_marks_a_survivor_by_id_and_an_unknown_id_is_refused(tmp_path):
    project, after = changed_project(tmp_path)
    done, doc, _ = sweep(project, MODULE, "--changed", "main", report_dir=tmp_path / "first")
    shown = [m for m in _on_the_check(doc, after.splitlines()) if m["reported"]]
    assert len(shown) == 1 and shown[0]["status"] == "survived", shown
    catalog = project / "mutations" / "shapes.toml"
    gate = catalog.read_text()
    catalog.write_text(gate + f'\n[sweep]\nnot_useful = ["{shown[0]["id"]}"]\n')
    done, doc, _ = sweep(project, MODULE, "--changed", "main", report_dir=tmp_path / "second")
    again = {m["id"]: m for m in _on_the_check(doc, after.splitlines())}
    assert again[shown[0]["id"]]["mark"] == "not-useful" and not again[shown[0]["id"]]["reported"]
    # the other survivor of the same gap is reported in its place: a mark is for one mutant
    assert [m["op"] for m in again.values() if m["reported"]] == ["mutmut:number"]
    stale = shown[0]["id"].rsplit(".", 1)[0] + ".00000000"
    catalog.write_text(gate + f'\n[sweep]\nequivalent = ["{stale}"]\n')
    done, doc, _ = sweep(project, MODULE, "--changed", "main", report_dir=tmp_path / "third")
    assert done.code == 2 and done.stderr.strip().count("\n") == 0, done.stderr
    assert "mutations/shapes.toml" in done.stderr and "equivalent" in done.stderr and stale in done.stderr


def test_the_sweep_says_when_every_mutant_on_the_changed_lines_was_killed(tmp_path):
    project, after = changed_project(tmp_path)
    tests = project / "tests" / "test_shapes.py"
    tests.write_text(
        tests.read_text().replace(
            "with pytest.raises(ValueError):", 'with pytest.raises(ValueError, match="^negative width$"):'
        )
        + "\n\ndef test_a_box_is_measured_in_centimetres():\n"
        + '    assert Box.UNIT == "cm"\n'
        + "\n\ndef test_a_width_of_zero_is_kept():\n"
        + "    box = Box(1)\n"
        + "    box.width = 0\n"
        + "    assert box.width == 0\n"
        + "\n\ndef test_the_boundary_of_a_tall_box():\n"
        + "    import warnings\n\n"
        + "    with warnings.catch_warnings():\n"
        + '        warnings.simplefilter("error")\n'
        + "        area(Box(1), 100)\n"
        + "    with pytest.warns(UserWarning):\n"
        + "        area(Box(1), 101)\n"
    )
    done, doc, _ = sweep(project, MODULE, "--changed", "main", report_dir=tmp_path / "r")
    on = [m for m in doc["sweep"]["mutants"] if m["on_change"]]
    assert on and all(m["status"] == "killed" for m in on), [(m["change"], m["status"]) for m in on]
    assert f"all {len(on)} mutants on the changed lines were killed" in done.stdout
    assert "outside the diff, in the definitions it touched: 3 mutants (3 killed)" in done.stdout
