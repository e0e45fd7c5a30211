"""The sweep's parts, one at a time: the judge's uncontracted branch, the mutmut adapter's
refusals, the linear splice, killmap's operators, the promotion's entries."""

from __future__ import annotations

import dataclasses
import sys
import textwrap
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import pytest
from sweepkit import require_mutmut

from killmap import cli
from killmap.catalog.reader import GateSettings, Mutation, Target
from killmap.engine.outcome import RunOutcome, TestResult
from killmap.verdict import judge
from killmap.verdict.judge import Evidence, judge_run

T1, T2 = "tests/test_a.py::test_one", "tests/test_a.py::test_two"


def _uncontracted() -> Mutation:
    return Mutation(
        name="m", target=Target("src/a.py", "f"), op="mutmut:number", params=(), kills=(), uncontracted=True
    )


def _run(red: tuple[str, ...], collected=(T1, T2)) -> RunOutcome:
    tests = {
        t: TestResult(
            id=t,
            outcome="failed" if t in red else "passed",
            phase="call",
            exc_type="AssertionError" if t in red else None,
            assertion=t in red,
        )
        for t in collected
    }
    return RunOutcome(
        status="done",
        wall=0.1,
        collected=collected,
        tests=tests,
        finished=True,
        exit_code=1 if red else 0,
        proof={"module": "a", "file_matches": True, "text_matches": True},
    )


def _evidence(run, reached=(T1, T2), executed=True) -> Evidence:
    return Evidence(
        run=run,
        confirm=None,
        reached_by=reached,
        region_executed=executed,
        import_time=False,
        timeout=10.0,
        selected_baseline_seconds=0.1,
    )


# --- the judge: no contract ---------------------------------------------------------------------


def test_an_uncontracted_mutant_that_turns_tests_red_reports_the_red_set_as_overreach():
    verdict = judge_run(_uncontracted(), _evidence(_run((T1,))), {})
    assert verdict.verdict == judge.OVERREACH and verdict.unexpected == (T1,)
    assert "no contract" in verdict.detail


def test_an_uncontracted_mutant_reached_with_nothing_red_is_vacuous_the_survivor():
    verdict = judge_run(_uncontracted(), _evidence(_run(())), {})
    assert verdict.verdict == judge.VACUOUS and verdict.red == ()


def test_a_survivor_s_detail_says_how_many_tests_ran_the_change_or_that_it_ran_at_import():
    reached = judge_run(_uncontracted(), _evidence(_run(())), {})
    assert reached.detail == "nothing went red, though 2 tests executed the mutated code"
    # A default value changed: it runs at import, before every test, whichever calls the
    # function ("though every test(s) executed the mutated code" read as every test calling it).
    at_import = dataclasses.replace(_evidence(_run(()), reached=(), executed=False), import_time=True)
    verdict = judge_run(_uncontracted(), at_import, {})
    assert verdict.verdict == judge.VACUOUS
    assert verdict.detail == (
        "nothing went red, though the mutated code runs at import "
        "(module or class level, a def line, a default value), before every test"
    )


def test_an_uncontracted_mutant_nobody_executed_is_unevidenced():
    verdict = judge_run(_uncontracted(), _evidence(_run(()), reached=(), executed=False), {})
    assert verdict.verdict == judge.UNEVIDENCED


def test_reds_that_never_ran_the_mutant_are_not_a_kill():
    verdict = judge_run(_uncontracted(), _evidence(_run((T2,)), reached=(T1,)), {})
    assert verdict.verdict == judge.UNEVIDENCED and T2 in verdict.detail


def test_without_the_flag_an_empty_contract_still_reads_as_a_contract():
    contracted = dataclasses.replace(_uncontracted(), uncontracted=False)
    assert judge_run(contracted, _evidence(_run(())), {}).verdict == judge.HELD
    assert "uncontracted" not in contracted.fingerprint()
    assert _uncontracted().fingerprint()["uncontracted"] is True


def test_the_sweep_maps_verdicts_to_its_statuses():
    from killmap.verdict.judge import RedTest, Verdict
    from killmap.verdict.sweep import status_of

    red = RedTest(id=T1, cause="assertion", phase="call", exception=None, message="", raised_at=None, reached=False)
    cases = {
        judge.OVERREACH: "killed",
        judge.VACUOUS: "survived",
        judge.BROKEN_VERDICT: "broken",
        judge.TIMEOUT: "timeout",
        judge.FLAKY: "flaky",
        judge.ESCAPED: "escaped",
        judge.INCONCLUSIVE: "inconclusive",
        judge.UNEVIDENCED: "unreached",
    }
    for verdict, status in cases.items():
        assert status_of(Verdict(name="m", verdict=verdict, detail="")) == status
    assert status_of(Verdict(name="m", verdict=judge.UNEVIDENCED, detail="", red=(red,))) == "inconclusive"


# --- the mutmut adapter ----------------------------------------------------------------------------


def _project(tmp_path: Path, source: str) -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n')
    (tmp_path / "src/p").mkdir(parents=True)
    (tmp_path / "src/p/__init__.py").write_text("")
    (tmp_path / "src/p/m.py").write_text(textwrap.dedent(source))
    (tmp_path / "tests").mkdir()
    return tmp_path


def _sweep_cli(tmp_path, monkeypatch, capsys, *args) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    code = cli.main(["sweep", "src/p/m.py", "--report-dir", str(tmp_path / "r"), *args])
    return code, capsys.readouterr().err


def test_an_unsupported_mutmut_version_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    from killmap.mutate import mutmut_adapter

    _project(tmp_path, "def f(x):\n    return x + 1\n")
    monkeypatch.setattr(mutmut_adapter.metadata, "version", lambda name: "3.9.0")
    code, err = _sweep_cli(tmp_path, monkeypatch, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "supports mutmut 3.8.x, found mutmut 3.9.0" in err


def test_a_missing_mutmut_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    from killmap.mutate import mutmut_adapter

    def missing(name):
        raise mutmut_adapter.metadata.PackageNotFoundError(name)

    _project(tmp_path, "def f(x):\n    return x + 1\n")
    monkeypatch.setattr(mutmut_adapter.metadata, "version", missing)
    code, err = _sweep_cli(tmp_path, monkeypatch, capsys, "--ops", "killmap")
    assert code == 2 and "killmap[sweep]" in err and len(err.strip().splitlines()) == 1
    # Asked for killmap's operators only, the user is told why mutmut is still needed.
    assert "even with --ops killmap" in err and "field 'mutmut'" not in err


def test_a_moved_mutmut_api_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    require_mutmut()
    from mutmut.mutation import file_mutation

    _project(tmp_path, "def f(x):\n    return x + 1\n")
    monkeypatch.setattr(file_mutation, "create_mutations", lambda filename, code: ([], set()))
    code, err = _sweep_cli(tmp_path, monkeypatch, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "mutation API moved" in err and "create_mutations no longer returns" in err
    monkeypatch.setattr(file_mutation, "create_mutations", lambda filename: None)  # the signature moved
    code, err = _sweep_cli(tmp_path, monkeypatch, capsys)
    assert code == 2 and "create_mutations(filename, code) failed" in err


def test_moved_mutmut_records_are_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    # What create_mutations returns, and what the pragma lines come in (read only for
    # killmap's own operators), each checked where it is read.
    require_mutmut()
    import libcst as cst
    from mutmut.mutation import file_mutation, pragma_handling

    _project(tmp_path, "def f(x):\n    return x + 1\n")
    real = file_mutation.create_mutations
    monkeypatch.setattr(file_mutation, "create_mutations", lambda f, c: (cst.parse_module(c), [object()], set(), set()))
    code, err = _sweep_cli(tmp_path, monkeypatch, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "mutation API moved" in err and "its Mutation fields changed" in err
    monkeypatch.setattr(file_mutation, "create_mutations", real)
    (tmp_path / "src/p/m.py").write_text("def f(x):\n    if x > 1:\n        return x\n    return x + 1\n")
    monkeypatch.setattr(pragma_handling, "get_ignored_lines", lambda *args: object())
    code, err = _sweep_cli(tmp_path, monkeypatch, capsys, "--ops", "killmap")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "mutation API moved" in err and "its IgnoredCode fields changed" in err


def test_mutmut_config_is_set_in_process_and_put_back_and_no_file_is_written(tmp_path, monkeypatch):
    require_mutmut()
    from mutmut import configuration

    from killmap.mutate import mutmut_adapter

    monkeypatch.chdir(tmp_path)  # no pyproject, no setup.cfg: mutmut's own loader would raise
    before = configuration._config
    found = mutmut_adapter.mutations("m.py", "def f(x):\n    return x + 1\n")
    assert [m.mutmut_name for m in found.mutations] == ["x_f__mutmut_1", "x_f__mutmut_2"]
    assert configuration._config is before and list(tmp_path.iterdir()) == []


def test_only_what_mutmut_run_runs_is_kept():
    require_mutmut()
    from killmap.mutate import mutmut_adapter

    source = "LIMIT = 3\n\nclass C:\n    size = 4\n\n    def m(self):\n        return 5\n"
    found = mutmut_adapter.mutations("m.py", source)
    assert [m.mutmut_name for m in found.mutations] == ["xǁCǁm__mutmut_1"]


def test_kept_only_while_ci_must_not_skip(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    monkeypatch.setenv("KILLMAP_REQUIRE_SWEEP", "1")
    with pytest.raises(pytest.fail.Exception):
        require_mutmut()
    monkeypatch.delenv("KILLMAP_REQUIRE_SWEEP")
    with pytest.raises(pytest.skip.Exception):
        require_mutmut()
    root = Path(__file__).resolve().parents[2]
    ci = (root / ".ci/run").read_text()
    assert "KILLMAP_REQUIRE_SWEEP=1" in ci and "'.[test]'" in ci
    # ...and the test extra CI installs is the one that brings mutmut
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(requirement.startswith("mutmut") for requirement in extras["test"])


# --- the splice: exact, and linear in the file --------------------------------------------------

TRICKY = '''\
"""Module docstring."""
import os


# A comment above a decorated function.
@staticmethod
def top(a, b=2):  # trailing comment
    if a > b and not os.sep:
        return [a,
                b + 1]
    return {"k": a * 3}


class Outer:
    """Class docstring."""
    LIMIT = 10

    # a comment above a method
    def method(self, x):
        text = """a multi-line
string at column 0"""
        return self.LIMIT - x if x else len(text)

    @classmethod
    def build(cls, *args):
        for item in args:
            if item is None:
                continue
            yield item ** 2
        # a comment ending the block


def tail(x): return (x % 7) or -(x) or (not x)
'''


def test_every_spliced_mutant_is_the_whole_module_transform_byte_for_byte():
    require_mutmut()
    from mutmut.mutation.file_mutation import deep_replace

    from killmap.mutate import mutmut_adapter
    from killmap.mutate.mutants import changed_lines
    from killmap.mutate.splice import SplicedFile

    found = mutmut_adapter.mutations("m.py", TRICKY)
    spliced = SplicedFile(found.module, TRICKY)
    by_node = {id(d.node): d for d in spliced.definitions}
    assert {d.qualname for d in spliced.definitions} == {"top", "Outer.method", "Outer.build", "tail"}
    assert len(found.mutations) > 15 and not spliced.unlocated
    for m in found.mutations:
        made = spliced.mutant(by_node[id(m.function)], m.original, m.mutated)
        whole = deep_replace(found.module, m.original, m.mutated).code
        assert made is not None and made[0] == whole, m.mutmut_name
        assert (made[2], made[3]) == changed_lines(TRICKY, whole), m.mutmut_name


def test_a_statement_deleted_at_the_end_of_a_definition_marks_the_lines_the_whole_file_would(tmp_path):
    from killmap.mutate.mutants import changed_lines

    found, _ = _killmap_mutants(
        tmp_path,
        """\
        def f(x):
            if x:
                return 1
            check(x)


        def g():
            return 2
        """,
    )
    deleted = next(m for m in found.mutants if m.op == "killmap:delete-call")
    mutant = deleted.mutant
    assert (mutant.changed_lines, mutant.mutant_changed_lines) == changed_lines(mutant.original, mutant.mutated)
    assert mutant.mutant_changed_lines == (4,)  # the blank line after f, not f's `return 1`


def test_a_mutant_costs_its_definition_not_the_file(monkeypatch):
    """The number of nodes transformed per mutant does not grow with the file: 4 times the
    functions, the same work per mutant (a whole-module transform would be 4 times more)."""
    require_mutmut()
    from killmap.mutate import mutmut_adapter, splice

    visits = []
    original = splice.Replace.on_visit

    def counting(self, node):
        visits.append(1)
        return original(self, node)

    monkeypatch.setattr(splice.Replace, "on_visit", counting)

    def per_mutant(functions: int) -> float:
        # A call over several lines: its mutants are rendered with their definition.
        source = "".join(
            f"def f{i}(items, n):\n    return foo(items,\n               [n, n + {i}],\n               key=n)\n\n"
            for i in range(functions)
        )
        found = mutmut_adapter.mutations("m.py", source)
        spliced = splice.SplicedFile(found.module, source)
        by_node = {id(d.node): d for d in spliced.definitions}
        visits.clear()
        for m in found.mutations:
            assert spliced.mutant(by_node[id(m.function)], m.original, m.mutated) is not None
        return len(visits) / len(found.mutations)

    small, large = per_mutant(20), per_mutant(80)
    assert small > 0 and large == pytest.approx(small, rel=0.05)


def test_a_definition_that_cannot_be_located_is_reported_not_guessed():
    require_mutmut()
    from killmap.mutate import mutmut_adapter
    from killmap.mutate.splice import SplicedFile

    found = mutmut_adapter.mutations("m.py", "def f(x):\n    return x + 1\n")
    spliced = SplicedFile(found.module, "def f(x):\n    return x + 2\n")  # a text that is not the parse
    assert spliced.definitions == [] and spliced.unlocated


# --- killmap's statement-level operators -------------------------------------------------------


def _killmap_mutants(tmp_path: Path, source: str, extra: dict[str, str] | None = None):
    from killmap.verdict.sweep import SweepTarget, enumerate_mutants

    root = _project(tmp_path, source)
    for rel, text in (extra or {}).items():
        (root / rel).write_text(textwrap.dedent(text))
    found = enumerate_mutants(root, [SweepTarget("src/p/m.py", None, GateSettings(paths=("src",)))], ("killmap",))
    return found, {(m.op.split(":")[1], _changed(m)) for m in found.mutants}


def _changed(m) -> str:
    from killmap.report.sweep_report import one_line

    return one_line(m.mutant.diff)


def test_each_call_statement_is_deleted_and_an_emptied_block_gets_pass(tmp_path):
    found, made = _killmap_mutants(
        tmp_path,
        """\
        def f(items, x):
            check(x)
            value = compute(x)
            if x:
                items.append(value)
            return value
        """,
    )
    assert ("delete-call", "check(x)  ->  (deleted)") in made
    assert ("delete-call", "items.append(value)  ->  pass") in made
    assert not any(op == "delete-call" and "compute" in change for op, change in made)  # a binding stays
    hints = {m.hint for m in found.mutants if m.op == "killmap:delete-call"}
    assert hints == {("delete-call", (("call", "check"),)), ("delete-call", (("call", "items.append"),))}


def test_a_function_returning_a_bool_is_made_constant_both_ways(tmp_path):
    found, made = _killmap_mutants(
        tmp_path,
        '''\
        def ready(x):
            """Docstring kept."""
            return x > 0 and isinstance(x, int)

        def annotated(x) -> bool:
            return helper(x)

        def count(x):
            return x + 1
        ''',
    )
    constant = sorted(
        (m.function, _changed(m).split("->")[1].strip()) for m in found.mutants if m.op == "killmap:constant-return"
    )
    assert constant == [
        ("annotated", "return False"),
        ("annotated", "return True"),
        ("ready", "return False"),
        ("ready", "return True"),
    ]
    assert all(
        '"""Docstring kept."""\n    return ' in m.mutant.mutated
        for m in found.mutants
        if m.function == "ready" and m.op == "killmap:constant-return"
    )


def test_each_if_condition_is_negated_and_a_not_is_removed(tmp_path):
    _, made = _killmap_mutants(
        tmp_path,
        """\
        def f(a, b):
            if a < b:
                return 1
            elif not b:
                return 2
            while a:
                a -= 1
            return 3
        """,
    )
    negated = {change for op, change in made if op == "negate"}
    assert negated == {"if a < b:  ->  if not (a < b):", "elif not b:  ->  elif b:"}  # not the `while`


def test_each_operand_of_a_boolean_operation_is_dropped(tmp_path):
    _, made = _killmap_mutants(
        tmp_path,
        """\
        def f(a, b, c):
            x = a and b or c
            return x
        """,
    )
    assert {change for op, change in made if op == "drop-operand"} == {
        "x = a and b or c  ->  x = c",
        "x = a and b or c  ->  x = a and b",
        "x = a and b or c  ->  x = b or c",
        "x = a and b or c  ->  x = a or c",
    }


def test_two_raised_literals_of_one_function_are_merged_even_through_a_noreturn_helper(tmp_path):
    _, made = _killmap_mutants(
        tmp_path,
        """\
        from p.errors import refuse

        def f(x):
            if x is None:
                raise ValueError("missing value")
            if x < 0:
                refuse("negative", sep=", ".join(["a", "b"]))
            if x > 9:
                raise ValueError(f"too big: {x}")
            raise ValueError("unknown value")
        """,
        {
            "src/p/errors.py": """\
        from typing import NoReturn

        def refuse(arm, **fields) -> NoReturn:
            raise ValueError(arm)
        """
        },
    )
    merged = {change for op, change in made if op == "merge-strings"}
    assert merged == {
        'refuse("negative", sep=", ".join(["a", "b"]))  ->  refuse("missing value", sep=", ".join(["a", "b"]))',
        'raise ValueError("unknown value")  ->  raise ValueError("missing value")',
        'raise ValueError("unknown value")  ->  raise ValueError("negative")',
    }


def test_a_pragma_keeps_killmap_operators_off_its_line(tmp_path):
    require_mutmut()
    found, made = _killmap_mutants(
        tmp_path,
        """\
        def f(a, b):
            if a and b:  # pragma: no mutate
                log(a)
            return a
        """,
    )
    assert made == {("delete-call", "log(a)  ->  pass")}
    assert found.pragma == 3  # the negation and the two dropped operands


# --- the sweep's policies -------------------------------------------------------------------------


def test_the_same_mutant_from_two_operators_is_made_once(tmp_path):
    require_mutmut()
    from killmap.verdict.sweep import SweepTarget, enumerate_mutants

    root = _project(tmp_path, "def f(x):\n    if not x:\n        return 1\n    return 2\n")
    found = enumerate_mutants(
        root, [SweepTarget("src/p/m.py", None, GateSettings(paths=("src",)))], ("mutmut", "killmap")
    )
    removed = [m for m in found.mutants if "if x:" in m.mutant.mutated]
    # mutmut removes the `not`; killmap's negation of `not x` is the same text: one mutant.
    assert [m.op for m in removed] == ["mutmut:remove_unary_ops"] and found.duplicates == 1
    assert len({m.id for m in found.mutants}) == len(found.mutants)


def test_a_node_whose_text_is_not_at_its_span_is_rendered_with_its_definition():
    """The node-level splice trusts a span only when the node renders to exactly the text
    there; shifted spans (libcst and the text disagreeing) fall back to the definition."""
    require_mutmut()
    from libcst.metadata import CodePosition, CodeRange
    from mutmut.mutation.file_mutation import deep_replace

    from killmap.mutate import mutmut_adapter
    from killmap.mutate.splice import SplicedFile

    found = mutmut_adapter.mutations("m.py", TRICKY)
    spliced = SplicedFile(found.module, TRICKY)
    spliced._spans = {
        node: CodeRange(CodePosition(r.start.line, r.start.column + 1), CodePosition(r.end.line, r.end.column + 1))
        for node, r in spliced._spans.items()
    }
    by_node = {id(d.node): d for d in spliced.definitions}
    for m in found.mutations:
        made = spliced.mutant(by_node[id(m.function)], m.original, m.mutated)
        assert made[0] == deep_replace(found.module, m.original, m.mutated).code, m.mutmut_name


def test_a_module_at_the_project_root_that_imports_from_its_own_package_is_swept(tmp_path):
    # `from . import refuse` in a file at the root: the package is the root folder itself, and
    # finding what `refuse` does used to raise on the name-less path '.'.
    from killmap.catalog.reader import GateSettings
    from killmap.verdict.sweep import _never_returning

    package = "from typing import NoReturn\n\n\ndef refuse(why) -> NoReturn:\n    raise ValueError(why)\n"
    (tmp_path / "__init__.py").write_text(package)
    code = "from . import refuse\n\n\ndef check(x):\n    if x:\n        refuse('no')\n"
    assert _never_returning(tmp_path, "checks.py", code, GateSettings()) == frozenset({"refuse"})


def test_a_sweep_with_no_tests_folder_says_where_the_tests_are_named(tmp_path, monkeypatch, capsys):
    require_mutmut()
    project = _project(tmp_path, "def f(x):\n    return x + 1\n")
    (project / "tests").rmdir()
    code, err = _sweep_cli(tmp_path, monkeypatch, capsys)
    assert code == 2 and err == (
        "killmap: field 'tests': 'tests' is not a file or folder of the project "
        "(the tests to run: a catalog's [gate] tests, or --tests)\n"
    )
