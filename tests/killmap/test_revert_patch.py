"""The reviewer's proof, automated: revert the fix, and the test that guards it goes red."""

from __future__ import annotations

from gatekit import copy_fixture, run_gate


def test_reverting_the_fix_turns_its_test_red_by_assertion(tmp_path):
    project = copy_fixture("basic", tmp_path)
    run = run_gate(project, "run", "--no-cache", "--only", "odd-refusal-fix-reverted")
    entry = run.mutation("odd-refusal-fix-reverted")
    assert entry["verdict"] == "held", entry["detail"]
    assert [r["id"] for r in entry["red"]] == ["tests/test_core.py::test_odd_is_refused"]
    assert "-    if not is_even(n):" in entry["diff"]


def test_pinning_a_revert_records_its_byte_pins_and_a_changed_patch_is_refused_not_judged(tmp_path):
    project = copy_fixture("basic", tmp_path)
    assert run_gate(project, "pin", "odd-refusal-fix-reverted").code == 0
    catalog = (project / "mutations" / "basic.toml").read_text()
    for pin in ("patch_pin", "preimage_pin", "postimage_pin"):
        assert catalog.count(f'{pin} = "sha256:') == 1, pin
    patch = project / "mutations" / "odd-refusal-fix.patch"
    patch.write_text(patch.read_text().replace('"odd numbers are refused"', '"odd numbers are refused" '))
    run = run_gate(project, "run", "--no-cache", "--only", "odd-refusal-fix-reverted")
    # A changed byte of the patch is bad input (issue 34): one line naming the pin, no report.
    assert run.code == 2 and run.report is None
    assert run.stderr.strip().splitlines() == [run.stderr.strip()]
    assert "field 'patch_pin': the patch mutations/odd-refusal-fix.patch is not the pinned patch" in run.stderr


def test_a_revert_refuses_when_the_file_is_no_longer_the_patch_postimage(tmp_path):
    project = copy_fixture("basic", tmp_path)
    core = project / "src" / "basicpkg" / "core.py"
    core.write_text(core.read_text().replace('"odd numbers are refused"', '"odd numbers refused"'))
    test_file = project / "tests" / "test_core.py"
    test_file.write_text(test_file.read_text().replace('match="odd numbers"', 'match="odd"'))
    run = run_gate(project, "run", "--no-cache", "--only", "odd-refusal-fix-reverted")
    entry = run.mutation("odd-refusal-fix-reverted")
    assert entry["verdict"] == "not-applied"
    assert "postimage" in entry["detail"]
