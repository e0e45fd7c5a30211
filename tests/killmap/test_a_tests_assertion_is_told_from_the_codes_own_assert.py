"""`require = "assertion"` asks that a test's assertion failed. An AssertionError the mutated
file's own `assert` raised is the code under test crashing on its precondition (voluptuous'
Schema.extend: `held` where the test's assertions never ran); a group of assertions is an
assertion (Hypothesis raises an ExceptionGroup for two distinct failures: natsort's read as a
crash, so the cause hung on the search)."""

from __future__ import annotations

import builtins
import importlib
import sys

import pytest

from killmap.engine.inrun.failures import describe_failure

CODE = "def extend(other):\n    assert isinstance(other, dict), 'Both must be dictionaries'\n    return other\n"


def _asserted(tmp_path, monkeypatch, call) -> bool:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "schema_k2.py").write_text(CODE)
    sys.modules.pop("schema_k2", None)
    importlib.invalidate_caches()
    module = importlib.import_module("schema_k2")
    with pytest.raises(BaseException) as excinfo:
        call(module)
    facts = describe_failure(excinfo, None, str((tmp_path / "schema_k2.py").resolve()), str(tmp_path.resolve()))
    return facts["assertion"]


def _test_asserts(module):
    assert module.extend({}) == {"a": 1}


def test_a_tests_own_assert_is_an_assertion(tmp_path, monkeypatch):
    assert _asserted(tmp_path, monkeypatch, _test_asserts) is True


def test_an_assert_of_the_mutated_code_is_a_crash(tmp_path, monkeypatch):
    assert _asserted(tmp_path, monkeypatch, lambda module: module.extend(int)) is False


def test_pytest_fail_is_an_assertion(tmp_path, monkeypatch):
    assert _asserted(tmp_path, monkeypatch, lambda module: pytest.fail("no")) is True


def _group(*errors):
    group = getattr(builtins, "ExceptionGroup", None)
    if group is None:  # Python 3.10: pytest's own dependency, the backport
        from exceptiongroup import ExceptionGroup as group
    caught = []
    for error in errors:
        try:
            raise error
        except Exception as exc:  # each with a traceback of its own, as Hypothesis's are
            caught.append(exc)
    raise group("Hypothesis found 2 distinct failures.", caught)


def test_a_group_of_assertions_is_an_assertion_and_a_group_with_a_crash_is_not(tmp_path, monkeypatch):
    assert _asserted(tmp_path, monkeypatch, lambda m: _group(AssertionError("a"), AssertionError("b"))) is True
    assert _asserted(tmp_path, monkeypatch, lambda m: _group(AssertionError("a"), ValueError("b"))) is False
