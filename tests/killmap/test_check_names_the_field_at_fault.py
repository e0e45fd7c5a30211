"""`killmap check` names the catalog field whose text is at fault, and says what it nearly
matched: "field 'op'" for a `new` that used an undefined name, or for an `old` written with
the target's last newline, sent the user to the one field that was right (issue 36, item 2).
"""

from __future__ import annotations

from gatekit import run_gate, write_project

SOURCE = """\
class Encoder:
    def __init__(self, width):
        self.width = width
        self.mode = "strict"


def encode(text):
    return text.upper()
"""

TESTS = """\
from pkg import Encoder, encode


def test_mode():
    assert Encoder(3).mode == "strict"


def test_encode():
    assert encode("a") == "A"
"""


def _project(tmp_path, old: str, new: str):
    entry = (
        '[gate]\ntests = ["tests"]\npaths = ["."]\n\n[[mutation]]\nname = "mode-changed"\n'
        'target = "pkg/__init__.py::Encoder.__init__"\nop = "replace"\n'
        f"old = {old}\nnew = {new}\n"
        'kills = ["tests/test_pkg.py::test_mode"]\n'
    )
    return write_project(
        tmp_path / "project",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
            "pkg/__init__.py": SOURCE,
            "tests/test_pkg.py": TESTS,
            "mutations/pkg.toml": entry,
        },
    )


def _one_problem(run) -> str:
    assert run.code == 2, (run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


def test_an_undefined_name_in_new_blames_new_and_shows_the_mutants_line(tmp_path):
    project = _project(tmp_path, "'self.mode = \"strict\"'", "'self.mode = strict_mode'")
    line = _one_problem(run_gate(project, "check"))
    assert "'mode-changed'" in line and "field 'new'" in line, line
    assert "undefined name 'strict_mode'" in line
    assert "line 4 `self.mode = strict_mode`" in line, line


def test_an_old_with_the_targets_last_newline_blames_old_and_says_so(tmp_path):
    project = _project(tmp_path, '"self.mode = \\"strict\\"\\n"', '"self.mode = \\"lax\\"\\n"')
    line = _one_problem(run_gate(project, "check"))
    assert "field 'old'" in line and "matched 0 sites" in line, line
    assert "nearly at line 4: 'old' ends with a trailing newline the target does not have there" in line


def test_an_old_with_other_indentation_blames_old_and_says_so(tmp_path):
    # Two lines copied out of the method, the second without the method's indentation.
    project = _project(tmp_path, '"self.width = width\\nself.mode = \\"strict\\""', '"self.width = 0"')
    line = _one_problem(run_gate(project, "check"))
    assert "field 'old'" in line and "nearly at line 3: the indentation or spacing differs" in line, line
    assert "the target has '        self.width = width\\n        self.mode = \"strict\"'" in line, line


def test_an_old_with_other_quotes_blames_old_and_says_so(tmp_path):
    project = _project(tmp_path, "\"self.mode = 'strict'\"", "\"self.mode = 'lax'\"")
    line = _one_problem(run_gate(project, "check"))
    assert "field 'old'" in line and "nearly at line 4: the quotes differ" in line, line


def test_an_old_far_from_everything_shows_the_nearest_text(tmp_path):
    project = _project(tmp_path, "'self.mood = \"strict\"'", "'self.mood = \"lax\"'")
    line = _one_problem(run_gate(project, "check"))
    assert "field 'old'" in line and "nearly at line 4: the nearest text is 'self.mode = \"strict\"'" in line, line


def test_a_run_gives_the_same_near_miss_as_check(tmp_path):
    project = _project(tmp_path, '"self.mode = \\"strict\\"\\n"', '"self.mode = \\"lax\\"\\n"')
    run = run_gate(project, "run")
    [verdict] = run.report["mutations"]
    assert verdict["verdict"] == "not-applied", verdict
    assert "'old' ends with a trailing newline the target does not have there" in verdict["detail"]


def test_a_new_that_does_not_parse_blames_new_and_shows_the_mutants_line(tmp_path):
    project = _project(tmp_path, "'self.mode = \"strict\"'", "'self.mode = \"strict\" +'")
    line = _one_problem(run_gate(project, "check"))
    assert "field 'new'" in line and "does not parse" in line, line
    assert '`self.mode = "strict" +`' in line, line


def _edited(project, *replacements: tuple[str, str]):
    """The project with its catalog's text edited, each (old, new) in turn."""
    catalog = project / "mutations" / "pkg.toml"
    text = catalog.read_text()
    for old, new in replacements:
        text = text.replace(old, new)
    catalog.write_text(text)
    return project


def test_a_stubbed_value_with_an_undefined_name_blames_value(tmp_path):
    project = _edited(
        _project(tmp_path, "'x'", "'y'"),
        ('target = "pkg/__init__.py::Encoder.__init__"', 'target = "pkg/__init__.py::encode"'),
        ("op = \"replace\"\nold = 'x'\nnew = 'y'", 'op = "stub-call"\ncall = "text.upper"\nvalue = "shouted"'),
    )
    line = _one_problem(run_gate(project, "check"))
    assert "field 'value'" in line and "line 8 `return shouted`: undefined name 'shouted'" in line, line


def test_a_gate_tests_entry_that_is_not_there_is_one_line_naming_the_catalog_and_field(tmp_path):
    for key, entry in (("tests", '"tests/nope"'), ("tests", '"tests/test_gone.py::test_mode"')):
        project = _project(tmp_path / key / str(len(entry)), '"strict"', '"lax"')
        catalog = project / "mutations" / "pkg.toml"
        catalog.write_text(catalog.read_text().replace(f"{key} = [", f"{key} = [{entry}, ", 1))
        for command in ("check", "run"):
            line = _one_problem(run_gate(project, command))
            assert line.split(": ", 1)[1] == (
                f"mutations/pkg.toml: field {key!r}: {entry.replace(chr(34), chr(39))} "
                "is not a file or folder of the project"
            ), line


def test_a_default_gate_tests_that_is_not_there_says_it_is_the_default(tmp_path):
    # natsort, a catalog of [[mutation]] only: "'tests' is not a file or folder" named a field
    # the user never wrote.
    project = _project(tmp_path / "p", '"strict"', '"lax"')
    catalog = project / "mutations" / "pkg.toml"
    text = catalog.read_text()
    catalog.write_text(text[text.index("[[mutation]]") :])
    (project / "tests").rename(project / "checks")
    line = _one_problem(run_gate(project, "check"))
    assert line.endswith(
        "field 'tests': 'tests' is not a file or folder of the project ([gate] tests' default: "
        "set [gate] tests to where the tests are)"
    ), line


def test_every_field_at_fault_in_one_entry_is_named_once(tmp_path):
    # A target, a kills and a timeout wrong in one entry took three runs of check to find.
    project = _edited(
        _project(tmp_path, '"self.mode = \\"strict\\""', '"self.mode = \\"lax\\""'),
        ("pkg/__init__.py::Encoder", "pkg/missing.py::Encoder"),
        ('kills = ["tests/test_pkg.py::test_mode"]', 'kills = "tests/test_pkg.py::test_mode"\ntimeout = -3'),
    )
    checked = run_gate(project, "check")
    assert checked.code == 2, (checked.stdout, checked.stderr)
    lines = [line for line in checked.stderr.splitlines() if "mode-changed" in line]
    assert [line.split("field ", 1)[1].split(":", 1)[0] for line in lines] == ["'target'", "'kills'", "'timeout'"], (
        lines
    )
    assert "killmap check says each" not in checked.stderr  # check says them, one a line
    ran = run_gate(project, "run", "--no-cache")
    assert ran.code == 2 and "Traceback" not in ran.stderr
    [line] = [line for line in ran.stderr.splitlines() if line.strip()]
    assert "field 'target'" in line and "(and fields 'kills', 'timeout': killmap check says each)" in line, line
