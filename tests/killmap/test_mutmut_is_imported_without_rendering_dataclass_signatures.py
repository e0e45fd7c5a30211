"""The sweep imports mutmut (and with it libcst.matchers' 174 dataclasses) without the dataclasses
module rendering each class's signature into its docstring, and leaves the dataclasses module as
it found it. In a child interpreter, whose modules are imported afresh."""

from __future__ import annotations

import subprocess
import sys

from sweepkit import require_mutmut

IMPORT_THROUGH_THE_ADAPTER = """
import dataclasses, inspect
from killmap.mutate import mutmut_adapter
found = mutmut_adapter.mutations("a.py", "def f(x):\\n    return x + 1\\n")
import libcst.matchers
print(len(found.mutations) > 0)
print(libcst.matchers.Name.__doc__)
print(dataclasses.inspect is inspect)

@dataclasses.dataclass
class Later:
    size: int
print(Later.__doc__)
"""


def test_mutmuts_import_leaves_dataclass_docstrings_bare_and_dataclasses_as_it_was():
    require_mutmut()
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_THROUGH_THE_ADAPTER], capture_output=True, text=True, timeout=120, check=True
    )
    enumerated, matcher_doc, restored, later_doc = done.stdout.splitlines()
    assert enumerated == "True"
    assert matcher_doc == "Name"  # not "Name(value: Union[str, ...] = DoNotCare(), ...)"
    assert restored == "True"
    assert later_doc == "Later(size: int)"  # a dataclass made afterwards is documented as usual


def test_a_dataclasses_module_that_does_not_go_through_inspect_is_left_alone(monkeypatch):
    """Not read as mutmut's API having moved: a dataclasses module (a later Python's) with no
    `inspect` of its own, as the adapter sees it."""
    require_mutmut()
    import dataclasses
    import types

    from killmap.mutate import mutmut_adapter

    without = types.SimpleNamespace(fields=dataclasses.fields)
    monkeypatch.setattr(mutmut_adapter, "dataclasses", without)
    found = mutmut_adapter.mutations("a.py", "def f(x):\n    return x + 1\n")
    assert found.mutations
    assert not hasattr(without, "inspect")
