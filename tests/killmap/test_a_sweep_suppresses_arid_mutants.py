"""Arid mutants (logging calls, warning and assert messages, `stacklevel`, docstrings, type
annotations, `__repr__`, a literal only ever read for its truth, and, when switched on, a
raised exception's wording) are never built, and counted by rule; each rule is switched by
`arid_RULE = true|false` in the catalog's `[sweep]`."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from sweepkit import fresh_fixture, require_mutmut, sweep
from test_a_sweep_of_a_change_mutates_its_lines import MODULE, swept  # noqa: F401 - the shared sweep

from killmap.catalog.contract import ARID_RULES, SweepSettings
from killmap.catalog.reader import GateSettings, load_catalog
from killmap.errors import GateError


@pytest.fixture(autouse=True)
def _mutmut():
    require_mutmut()


def _enumerated(tmp_path: Path, source: str, arid=frozenset(ARID_RULES)):
    from killmap.report.sweep_report import one_line
    from killmap.verdict.sweep import SweepTarget, enumerate_mutants

    (tmp_path / "m.py").write_text(textwrap.dedent(source))
    target = SweepTarget("m.py", None, GateSettings(paths=(".",)), SweepSettings(arid))
    found = enumerate_mutants(tmp_path, [target], ("mutmut", "killmap"))
    return found, [one_line(m.mutant.diff) for m in found.mutants]


def test_the_change_s_logging_messages_stacklevel_and_repr_are_suppressed_and_counted(swept):  # noqa: F811
    done, doc, lines = swept
    arid = doc["sweep"]["generated"]["arid"]
    assert set(arid) == {"logging", "messages", "stacklevel", "repr"} and all(arid.values()), arid
    quiet = {n for n, line in enumerate(lines, 1) if "log.debug(" in line or 'return "Box("' in line}
    assert not [m for m in doc["sweep"]["mutants"] if m["line"] in quiet]
    warn = next(n for n, line in enumerate(lines, 1) if "warnings.warn(" in line)
    kept = [m["change"] for m in doc["sweep"]["mutants"] if m["line"] == warn]
    assert kept and not any("XX" in c or "stacklevel=3" in c or c.endswith('box", )') for c in kept), kept
    assert f"{sum(arid.values())} arid mutants suppressed: " in done.stdout
    said = " ".join(done.stdout.split())  # the console wraps long lines
    keys = ", ".join(f"arid_{rule} = false" for rule in sorted(arid))
    assert f"([sweep] {keys} keep them)" in said, said  # the very keys to write, not a placeholder


def test_a_literal_only_read_for_its_truth_is_arid_and_one_read_for_its_value_is_not(tmp_path):
    found, made = _enumerated(
        tmp_path,
        """\
        def describe(box, verbose, loud=1):
            shout = 1
            if verbose and shout or not loud:
                return box + "!"
            return box

        def returned(box):
            shout = 1
            if shout:
                return shout
            return box
        """,
    )
    assert found.arid["truth"] == 2  # `shout = 1` as `= 2`, `loud=1` as `=2`; `= 0` changes its truth
    assert "shout = 1  ->  shout = 2" in made  # in `returned`, its value is returned
    assert "shout = 1  ->  shout = None" in made  # of another truth: built, in `describe` too


def test_a_docstring_and_an_annotation_are_arid_and_a_rule_switched_off_keeps_them(tmp_path):
    source = """\
        import logging

        logger = logging.getLogger(__name__)

        def f(x: "Width") -> int:
            'One line, in single quotes: mutmut would change it.'
            logger.info("f of %s", x)
            return x + 1
        """
    found, made = _enumerated(tmp_path, source)
    assert found.arid["docstrings"] and found.arid["logging"]
    assert made and all("logger" not in c and "One line" not in c for c in made)
    kept, made = _enumerated(tmp_path, source, frozenset(ARID_RULES) - {"logging", "docstrings"})
    assert not kept.arid["logging"] and not kept.arid["docstrings"]
    assert any("logger.info" in c for c in made) and any("One line" in c for c in made)


def test_the_sweep_table_switches_each_rule_and_refuses_what_it_does_not_know(tmp_path):
    catalog = tmp_path / "mutations" / "c.toml"
    catalog.parent.mkdir()
    catalog.write_text('[sweep]\narid_logging = false\nequivalent = ["m.f.0123abcd"]\n')
    read = load_catalog(tmp_path, catalog)
    assert read.sweep.arid == frozenset(ARID_RULES) - {"logging", "exceptions"}  # exceptions: off unless asked
    assert read.sweep.marked == (("m.f.0123abcd", "equivalent"),)
    catalog.write_text("[sweep]\narid_exceptions = true\n")
    assert load_catalog(tmp_path, catalog).sweep.arid == frozenset(ARID_RULES)
    for bad, field in (("arid_logging = 1", "arid_logging"), ("arid_loging = false", "arid_loging")):
        catalog.write_text(f"[sweep]\n{bad}\n")
        with pytest.raises(GateError) as error:
            load_catalog(tmp_path, catalog)
        assert error.value.field == field and error.value.file == "mutations/c.toml"


def test_a_bad_sweep_table_is_one_line_and_exit_2(tmp_path):
    project = fresh_fixture(tmp_path, "sweepdiff")
    (project / "mutations" / "shapes.toml").write_text('[gate]\ntests = ["tests"]\n\n[sweep]\narid_repr = "no"\n')
    done, doc, _ = sweep(project, MODULE)
    assert done.code == 2 and doc is None
    assert done.stderr.strip().count("\n") == 0 and "arid_repr" in done.stderr and "shapes.toml" in done.stderr


def test_a_raised_exceptions_literal_message_is_arid_and_what_it_raises_is_not(tmp_path):
    found, changes = _enumerated(
        tmp_path,
        """
        def parse(text, strict):
            if strict and not text:
                raise ValueError(f"cannot parse {text!r}")
            if text == "?":
                raise ValueError("unknown")
            if text == "":
                raise ValueError("empty")
            raise KeyError(text)
        """,
    )
    assert found.arid["exceptions"] >= 1, found.arid
    wording = [c for c in changes if "cannot parse" in c or '"unknown"' in c or '"empty"' in c]
    # Its wording alone is never built; two refusals made one (merge-strings) still are.
    assert wording and all('"unknown"' in c and '"empty"' in c for c in wording), wording
    assert [c for c in changes if "KeyError(None)" in c], changes  # a name passed on is no message
    assert [c for c in changes if "if strict or not text" in c], changes  # the condition still is


def test_an_exception_classs_super_init_is_arid_and_another_classs_is_not(tmp_path):
    found, changes = _enumerated(
        tmp_path,
        """
        class DuplicateError(ValueError):
            def __init__(self, existing):
                super().__init__()
                self.existing = existing


        class Box:
            def __init__(self, width):
                super().__init__()
                self.width = width
        """,
    )
    deleted = [c for c in changes if c.startswith("super().__init__()  ->")]
    assert len(deleted) == 1, changes  # Box's, not the exception's: its args are its message
    assert found.arid["exceptions"] >= 1, found.arid
    # Off by default: a project whose callers tell refusals apart by their messages tests them.
    default, _ = _enumerated(
        tmp_path, "class E(ValueError):\n    def __init__(self):\n        super().__init__()\n", SweepSettings().arid
    )
    assert "exceptions" not in default.arid and len(default.mutants) == 1
    assert [c for c in changes if "self.existing = None" in c], changes  # what it carries still is swept


def test_the_type_typing_cast_is_given_is_arid_and_another_cast_s_argument_is_not(tmp_path):
    # uritemplate: 12 of 39 survivors were `t.cast(X, value)` made `t.cast(None, value)`,
    # which returns value unchanged; memoryview's `cast("B")` uses its argument.
    source = """\
        import typing as t

        def f(value, view):
            text = t.cast("str", value)
            return text + "!", view.cast("B")
        """
    found, made = _enumerated(tmp_path, source)
    assert found.arid["annotations"]
    assert not [c for c in made if 't.cast("XXstrXX", value)' in c or "t.cast(None, value)" in c], made
    # Kept: the value changed, and the type removed (`t.cast(value)` raises TypeError).
    assert 'text = t.cast("str", value)  ->  text = t.cast(value)' in made, made
    assert 'text = t.cast("str", value)  ->  text = t.cast("str", None)' in made, made
    assert any("view.cast(None)" in c for c in made), made
    kept, made = _enumerated(tmp_path, source, frozenset(ARID_RULES) - {"annotations"})
    assert any("t.cast(None, value)" in c for c in made), made
