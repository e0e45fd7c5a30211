"""`killmap init` on projects that have never met killmap, and `killmap --version`.

`fresh` is a flat-layout project whose pytest testpaths is `checks`; the basic fixture is a
src layout. init must detect both, aim at the function nothing runs at import that the
tests call directly and that branches most, write a catalog that `check` and `list` load, and never overwrite one.
"""

from __future__ import annotations

import difflib
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from gatekit import copy_fixture, run_gate

import killmap
from killmap.catalog.init_detect import detect
from killmap.catalog.reader import OPERATORS
from killmap.commands.init import render
from killmap.errors import GateError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _fresh(tmp_path: Path) -> Path:
    project = copy_fixture("fresh", tmp_path)
    assert not (project / "mutations").exists()
    return project


def _uncomment_every_example(text: str) -> str:
    out, live = [], False
    for line in text.splitlines():
        if line == "# [[mutation]]":
            live = True
        elif not line.startswith("# "):
            live = False
        out.append(line[2:] if live else line)
    return "\n".join(out) + "\n"


def test_init_detects_a_flat_project_and_its_testpaths_and_check_and_list_load_the_catalog(tmp_path):
    project = _fresh(tmp_path)
    done = run_gate(project, "init")
    assert done.code == 0, done.stderr
    catalog = project / "mutations" / "shipping.toml"
    data = tomllib.loads(catalog.read_text())
    assert data["gate"] == {"tests": ["checks"], "paths": ["."]}
    [live] = data["mutation"]
    # quote: five tests call it, four branches (the most); the first test naming it.
    assert live["target"] == "shipping/rates.py::quote"
    assert live["op"] == "constant-return" and live["kills"] == ["checks/test_rates.py::test_local_parcel"]
    checked = run_gate(project, "check")
    assert checked.code == 0, checked.stderr
    assert "1 mutation, 8 tests collected" in checked.stdout
    listed = run_gate(project, "list")
    assert listed.code == 0 and "quote-returns-none" in listed.stdout
    # and the gate runs it: a starter contract that is too narrow, which the verdict says.
    ran = run_gate(project, "run", "--no-cache")
    assert ran.code == 1, ran.stderr
    assert ran.verdicts() == {"quote-returns-none": "overreach"}


def test_every_commented_example_applies_once_uncommented(tmp_path):
    project = _fresh(tmp_path)
    assert run_gate(project, "init").code == 0
    catalog = project / "mutations" / "shipping.toml"
    text = catalog.read_text()
    ops = [line.split("'")[1] for line in text.splitlines() if line.startswith(("op = ", "# op = "))]
    assert sorted(ops) == sorted(OPERATORS)
    assert "not as written here" not in text
    # revert-patch needs a real fix: say the fix added the island refusal.
    rates = project / "shipping" / "rates.py"
    after = rates.read_text()
    before = after.replace(
        '    if express and zone == "island":\n        raise ValueError("express is not offered to islands")\n', ""
    )
    assert before != after
    patch = "".join(
        difflib.unified_diff(
            before.splitlines(True), after.splitlines(True), "a/shipping/rates.py", "b/shipping/rates.py"
        )
    )
    (project / "mutations" / "quote-fix.patch").write_text(patch)
    catalog.write_text(_uncomment_every_example(text))
    checked = run_gate(project, "check")
    assert checked.code == 0, checked.stderr
    assert "8 mutations" in checked.stdout


def test_a_second_init_refuses_to_overwrite(tmp_path):
    project = _fresh(tmp_path)
    assert run_gate(project, "init").code == 0
    catalog = project / "mutations" / "shipping.toml"
    catalog.write_text(catalog.read_text() + "# my edits\n")
    again = run_gate(project, "init")
    assert again.code == 2
    assert again.stderr.strip() == (
        "killmap: mutations/shipping.toml: already exists; killmap init never "
        "overwrites a catalog (edit it, or remove it and run init again)"
    )
    assert catalog.read_text().endswith("# my edits\n")


def test_a_package_pytest_itself_imports_gets_no_catalog(tmp_path):
    # pluggy: init wrote a catalog aimed at _hooks.py, and every command after refused it.
    from gatekit import pluggy_shaped_project

    project = pluggy_shaped_project(tmp_path / "plugin")
    (project / "mutations" / "pluggy.toml").unlink()
    (project / "src" / "pluggy" / "mod.py").write_text("def f(x):\n    if x:\n        return 1\n    return 2\n")
    done = run_gate(project, "init")
    assert done.code == 2, done.stdout + done.stderr
    assert done.stderr.strip() == (
        "killmap: pluggy cannot be gated by a pytest run: pytest itself imports pluggy "
        "before any test, so every test uses that copy, never a mutant; no catalog written (pick another "
        "package with --package)"
    )
    assert not (project / "mutations" / "pluggy.toml").exists()


def test_a_test_defined_under_a_module_level_if_does_not_run_at_import(tmp_path):
    # xmltodict's tests define a test under `if not IS_JYTHON:` in a class body; the walk took
    # the test's calls of parse and unparse as run at import, and init said every candidate was.
    root = _project(
        tmp_path,
        {
            "conv.py": "def parse(text):\n    if not text:\n        return {}\n    return {'t': text}\n",
            "tests/test_conv.py": "import sys\n\nfrom conv import parse\n\n"
            "IS_JYTHON = sys.platform.startswith('java')\n\n\nclass T:\n    if not IS_JYTHON:\n"
            "        def test_parse(self):\n            assert parse('a') == {'t': 'a'}\n",
        },
    )
    plan = detect(root)
    assert (plan.module, plan.function) == ("conv.py", "parse")
    assert not plan.runs_at_import


def test_a_root_tests_py_is_the_project_s_tests_never_code_to_aim_at(tmp_path):
    # jsonpatch runs its suite as `python tests.py`: init aimed at a helper of tests.py, set
    # [gate] tests = ['.'], which collects nothing, and guessed './test_helper.py::...'.
    root = _project(
        tmp_path,
        {
            "patchlib.py": "def apply(doc, op):\n    if op == 'add':\n        return doc + 1\n    return doc\n",
            "tests.py": "import unittest\n\nfrom patchlib import apply\n\n\ndef helper_dumps(value):\n"
            "    if value:\n        return str(value)\n    return ''\n\n\nclass ApplyTest(unittest.TestCase):\n"
            "    def test_add(self):\n        self.assertEqual(apply(1, 'add'), 2)\n",
            "ext_tests.py": "import unittest\n\n\nclass Template(unittest.TestCase):\n    def _check(self):\n"
            "        pass\n",
        },
    )
    plan = detect(root)
    assert (plan.module, plan.function) == ("patchlib.py", "apply")
    assert plan.tests == ["tests.py"], plan.tests_reason
    assert plan.kills == "tests.py::ApplyTest::test_add"
    assert plan.seen == ["patchlib"]


def test_init_on_a_src_layout(tmp_path):
    project = copy_fixture("basic", tmp_path)
    (project / "mutations" / "basic.toml").unlink()
    done = run_gate(project, "init")
    assert done.code == 0, done.stderr
    data = tomllib.loads((project / "mutations" / "basicpkg.toml").read_text())
    assert data["gate"] == {"tests": ["tests"], "paths": ["src"]}
    # classify, not the first function is_even: the tests call classify, and it branches.
    assert data["mutation"][0]["target"] == "src/basicpkg/core.py::classify"
    assert run_gate(project, "check").code == 0


def _project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in {"pyproject.toml": '[project]\nname = "demo"\nversion = "0"\n', **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


@pytest.mark.parametrize(
    "config, expected",
    [
        ({"pytest.ini": "[pytest]\ntestpaths = unit integration\n"}, ["unit", "integration"]),
        ({"setup.cfg": "[tool:pytest]\ntestpaths = unit\n"}, ["unit"]),
        ({"tox.ini": "[pytest]\ntestpaths = integration\n"}, ["integration"]),
        # pytest reads only the first config file it finds: pytest.ini without testpaths wins
        ({"pytest.ini": "[pytest]\n", "setup.cfg": "[tool:pytest]\ntestpaths = unit\n"}, ["tests"]),
        ({}, ["tests"]),
    ],
    ids=["pytest.ini", "setup.cfg", "tox.ini", "first-file-wins", "no-config"],
)
def test_test_paths_come_from_pytests_configuration(tmp_path, config, expected):
    root = _project(
        tmp_path,
        {
            "demo.py": "def run():\n    return 1\n",
            "unit/test_a.py": "",
            "integration/test_b.py": "",
            "tests/test_c.py": "",
            **config,
        },
    )
    plan = detect(root)
    assert plan.tests == expected
    assert plan.paths == ["."] and plan.module == "demo.py" and plan.function == "run"


def test_the_package_named_by_the_project_wins_over_a_larger_one(tmp_path):
    root = _project(
        tmp_path,
        {
            "src/demo/__init__.py": "",
            "src/demo/core.py": "def _private():\n    pass\n\n\ndef api():\n    return 2\n",
            "src/demo/a_small.py": "def tiny():\n    return 0\n",
            "src/vendored/__init__.py": "",
            "src/vendored/big.py": "def big():\n    return 1\n" * 50,
        },
    )
    plan = detect(root)
    assert (plan.package, plan.paths, plan.module, plan.function) == ("demo", ["src"], "src/demo/core.py", "api")


def test_an_example_that_would_leave_dead_code_is_said_so_and_another_operator_goes_live(tmp_path):
    # Returning a constant leaves `json` unused (dead code, a warning in a run). And "closed"
    # is inside another literal, so merge-strings must keep and drop the unambiguous ones.
    root = _project(
        tmp_path,
        {
            "demo.py": """\
        import json


        def dump(x):
            if x == "closed":
                return "closed for the day"
            return json.dumps(x) or "open"
        """,
            "tests/test_demo.py": "from demo import dump\n\n\ndef test_dump():\n    assert dump(1) == '1'\n",
        },
    )
    plan = detect(root)
    assert plan.kills == "tests/test_demo.py::test_dump"
    text = render(root, plan)
    data = tomllib.loads(text)
    assert data["mutation"][0]["op"] == "negate"
    assert (
        "#   applies, with a warning in a run: the mutant would leave dead code (line 1: 'json' imported but "
        "unused)." in text
    )
    assert "# drop = 'closed for the day'\n# keep = 'open'\n" in text
    # constant-return, delete-call (the only call is in the return) and stub-call leave json unused
    assert text.count("the mutant would leave dead code") == 3
    # It applies (dead code is a warning in a run, README), so it is not told to aim elsewhere.
    assert "unused).\n#   The fields only show the shape" not in text
    assert "the literal containing <drop> becomes the literal containing <keep>\n# [[mutation]]" in text


def _example_mutants(root: Path, text: str) -> dict[str, tuple[str, str]]:
    """Each example of init's catalog, uncommented, built with the gate's own operators:
    name -> (the original target file, the mutant)."""
    from killmap.catalog.reader import load_catalog
    from killmap.mutate.mutants import build_mutant

    path = root / "mutations" / "examples.toml"
    path.parent.mkdir(exist_ok=True)
    # The patch example needs a fix saved first; the test above gives it one.
    path.write_text(_uncomment_every_example(text.split("# revert-patch:")[0]))
    built = {}
    for mutation in load_catalog(root, path).mutations:
        mutant = build_mutant(root, mutation)
        assert mutant.applied, (mutation.name, mutant.reason)
        built[mutation.name] = (mutant.original, mutant.mutated or "")
    return built


def test_each_commented_example_is_a_defect_a_reader_can_name(tmp_path):
    # A `replace` of the first constant once rewrote `0` in a docstring and inside `100` (7
    # sites); a stub-call made `raise None`. Each example must now change one thing, in code.
    root = _project(
        tmp_path,
        {
            "fees.py": """\
        def fee(amount, currency):
            \"\"\"0 for amounts up to 100; else 2 percent, at least 1.\"\"\"
            if amount <= 100:
                return 0
            if not currency:
                raise ValueError("a fee needs a currency")
            rate = round(amount * 0.02, 2)
            return max(rate, 1) if currency == "EUR" or currency == "USD" else rate + 1
        """,
            "tests/test_fees.py": "from fees import fee\n\n\ndef test_fee():\n    assert fee(200, 'EUR') == 4\n",
        },
    )
    text = render(root, detect(root))
    assert "not as written here" not in text
    built = _example_mutants(root, text)
    changed = {}
    for name, (original, mutant) in built.items():
        before, after = original.splitlines(), mutant.splitlines()
        changed[name] = [(b.strip(), a.strip()) for b, a in zip(before, after, strict=False) if b != a]
        assert '"""0 for amounts up to 100' in mutant, f"{name} touched the docstring"
    assert changed["fee-boundary-moved"] == [("if amount <= 100:", "if amount < 100:")]
    assert changed["fee-call-skipped"] == [("rate = round(amount * 0.02, 2)", "rate = (amount * 0.02)")]
    assert changed["fee-call-deleted"][0][0] == 'raise ValueError("a fee needs a currency")'


def test_the_kills_guess_reads_a_unittest_suite_whose_classes_are_not_named_test(tmp_path):
    # pytest collects any TestCase subclass whatever its name; more-itertools' suite is all
    # `ChunkedTests(TestCase)`, and a guess that read only `Test*` classes fell back to
    # whatever test came first. The first class here never calls the function.
    root = _project(
        tmp_path,
        {
            "demo.py": "def chunked(xs):\n    return [xs]\n",
            "tests/test_demo.py": """\
        import unittest
        from unittest import TestCase
        import demo


        class TestOther(TestCase):
            def test_other(self):
                assert True


        class Base(unittest.TestCase):
            pass


        class ChunkedTests(Base):
            def test_even(self):
                self.assertEqual(demo.chunked([1]), [[1]])
        """,
        },
    )
    plan = detect(root)
    assert plan.kills == "tests/test_demo.py::ChunkedTests::test_even"


def test_the_kills_guess_passes_over_a_str_method_of_the_function_s_name_for_a_test_that_calls_it(tmp_path):
    # toolz: `join` was guessed to be killed by test_curried's `"\\n".join(...)`, a test that
    # never calls toolz's join, where test_itertoolz calls it by name; the first run then read
    # `vacuous`. A module-level function is named by its bare name or through a module of
    # its package, and a method-like attribute of anything else only where nothing names it so.
    files = {
        "src/demo/__init__.py": "",
        "src/demo/core.py": """\
        def join(left, right):
            if not left:
                return list(right)
            return [(a, b) for a in left for b in right]
        """,
        "tests/test_a_listing.py": """\
        import demo


        def test_listing():
            assert "\\n".join(["a", "b"]) == "a\\nb"
        """,
        "tests/test_core.py": """\
        from demo.core import join


        def test_join():
            assert join([1], [2]) == [(1, 2)]
        """,
    }
    plan = detect(_project(tmp_path / "bare", files))
    assert (plan.function, plan.kills) == ("join", "tests/test_core.py::test_join")
    through = {
        **files,
        "tests/test_core.py": "import demo.core as dc\n\n\ndef test_join():\n    assert dc.join([1], [2])\n",
    }
    assert detect(_project(tmp_path / "through", through)).kills == "tests/test_core.py::test_join"
    alone = {**files, "tests/test_core.py": "def test_nothing():\n    assert True\n"}
    plan = detect(_project(tmp_path / "alone", alone))
    assert plan.kills == "tests/test_a_listing.py::test_listing"  # a loose name beats none
    assert "as an attribute of something else" in plan.kills_reason


def test_a_function_the_package_runs_at_import_is_passed_over_for_one_the_tests_run(tmp_path):
    # semver's `@deprecated`, attrs' `attrib` called in class bodies: their mutants break the
    # package's own import (or the tests' collection), so the first run would say "broken"
    # and nothing about the tests.
    root = _project(
        tmp_path,
        {
            "src/demo/__init__.py": "",
            "src/demo/core.py": """\
            def deprecated(function):
                return function


            def field(default=None):
                return default


            @deprecated
            def _old_api():
                return 1


            class Record:
                size = field(3)


            def measure(thing):
                return len(thing)


            def bump(version):
                return version + 1
            """,
            # attrs' tests call `fields(C)` at module level: run while the tests are collected.
            "tests/test_core.py": "from demo.core import bump, measure\n\nSIZE = measure('abc')\n\n\n"
            "def test_bump():\n    assert bump(SIZE) == 4\n",
        },
    )
    plan = detect(root)
    assert (plan.module, plan.function) == ("src/demo/core.py", "bump")


@pytest.mark.parametrize("guard", ['__name__ == "__main__"', "'__main__' == __name__"])
def test_what_a_module_runs_as_a_script_is_not_run_at_import(tmp_path, guard):
    # tabulate ends with `if __name__ == "__main__": _main()`, and _main calls tabulate():
    # init read every function it calls as run at import and aimed at a branchless helper.
    root = _project(
        tmp_path,
        {
            "demo.py": f"""\
            def table(rows):
                if not rows:
                    return ""
                if len(rows) > 3:
                    return "many"
                return "few"


            def separator(char):
                return char * 3


            def _main():
                print(table([1]))


            if {guard}:
                _main()
            """,
            "tests/test_demo.py": "from demo import table\n\n\ndef test_table():\n    assert table([1]) == 'few'\n",
        },
    )
    plan = detect(root)
    assert (plan.module, plan.function) == ("demo.py", "table")
    assert not plan.runs_at_import


def test_a_package_that_only_runs_its_functions_at_import_still_gets_a_target(tmp_path):
    root = _project(
        tmp_path,
        {
            "src/demo/__init__.py": "",
            "src/demo/core.py": (
                "def register(function):\n    return function\n\n\n@register\ndef _hidden():\n    pass\n"
            ),
        },
    )
    assert detect(root).function == "register"


def test_a_package_with_nothing_to_aim_at_gives_way_to_the_next(tmp_path):
    # attrs: the project is named after `attrs`, a shim that only re-exports `attr`.
    root = _project(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "attrs"\nversion = "0"\n',
            "src/attrs/__init__.py": "from attr import define, field\n\n__all__ = ['define', 'field']\n",
            "src/attr/__init__.py": "",
            "src/attr/_make.py": "def define(cls):\n    return cls\n",
        },
    )
    plan = detect(root)
    assert (plan.package, plan.module, plan.function) == ("attr", "src/attr/_make.py", "define")
    with pytest.raises(GateError) as caught:
        detect(root, "attrs")
    assert "no public function or method in package 'attrs'" in str(caught.value)
    assert "(the others: attr)" in str(caught.value) and caught.value.field == "--package"


def test_a_project_without_code_is_an_error(tmp_path):
    with pytest.raises(GateError, match="no Python package or module"):
        detect(_project(tmp_path, {"tests/test_a.py": ""}))


def test_version():
    done = subprocess.run([sys.executable, "-m", "killmap", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == f"killmap {killmap.__version__}"


def test_init_aims_at_a_branching_function_the_tests_call_over_a_trivial_first_helper(tmp_path):
    # bottle's shape: one module, a bytes helper first that every test reaches incidentally,
    # the router's `match`, which the tests call directly and which branches, further down.
    project = _project(
        tmp_path / "demo",
        {
            "demo.py": """\
            def tob(s, enc="utf8"):
                return s.encode(enc)


            def html_escape(text):
                return text.replace("&", "&amp;").replace("<", "&lt;")


            class Router:
                def __init__(self):
                    self.routes = {}

                def add(self, rule, target):
                    self.routes[rule] = target

                def match(self, path):
                    if path in self.routes:
                        return self.routes[path]
                    for rule, target in self.routes.items():
                        if rule.endswith("*") and path.startswith(rule[:-1]):
                            return target
                    raise LookupError(path)
            """,
            "tests/test_bytes.py": """\
            from demo import tob


            def test_tob():
                assert tob("a") == b"a"
            """,
            "tests/test_router.py": """\
            import pytest

            from demo import Router, tob


            def test_exact():
                router = Router()
                router.add("/a", 1)
                assert router.match("/a") == 1 and tob("x")


            def test_wildcard():
                router = Router()
                router.add("/static/*", 2)
                assert router.match("/static/x.css") == 2


            def test_missing():
                with pytest.raises(LookupError):
                    Router().match("/nowhere")
            """,
        },
    )
    plan = detect(project)
    assert (plan.module, plan.function) == ("demo.py", "Router.match")
    assert plan.kills == "tests/test_router.py::test_exact"
    done = run_gate(project, "init")
    assert done.code == 0, done.stderr
    assert "aimed at demo.py::Router.match" in done.stdout
    considered = done.stdout.split("considered:")[1]
    assert considered.index("Router.match") < considered.index("tob") < considered.index("Router.add"), done.stdout
    assert "called directly by 3 tests, 4 branches" in done.stdout, done.stdout
    assert "chose Router.match" in done.stdout, done.stdout


def _two_packages(root: Path) -> Path:
    # A framework's shape: the project's own package is the larger, its router a subpackage
    # init would not pick by itself, and a second, vendored package beside it.
    return _project(
        root,
        {
            "pyproject.toml": '[project]\nname = "app"\nversion = "0"\n',
            "src/app/__init__.py": "",
            "src/app/ws.py": "def close_code(code):\n    if code > 1000:\n        return code\n    return 1000\n"
            + "# The websocket helper: larger than the router, so init aims here by itself.\n" * 3,
            "src/app/routing/__init__.py": "",
            "src/app/routing/matcher.py": "def match(path):\n    if path == '/':\n        return 'home'\n"
            "    return None\n",
            "src/other/__init__.py": "",
            "src/other/util.py": "def helper(x):\n    return x\n",
            "tests/test_app.py": "from app.ws import close_code\n\n\ndef test_close():\n    assert close_code(1)\n",
        },
    )


def test_init_lists_the_packages_it_saw_and_says_how_to_aim_it_with_package(tmp_path):
    project = _two_packages(tmp_path / "demo")
    # A module with nothing public to aim at (humanize's `_version`) is not offered.
    (project / "src" / "app" / "_version.py").write_text('__version__ = "0"\n')
    done = run_gate(project, "init")
    assert done.code == 0, done.stderr
    assert "aimed at src/app/ws.py::close_code" in done.stdout, done.stdout
    assert "packages seen: app (aimed at), other; in app: app.routing, app.ws" in done.stdout, done.stdout
    assert "aim elsewhere: killmap init --package app.routing" in done.stdout, done.stdout


@pytest.mark.parametrize(
    "given, package, module",
    [
        ("app.routing", "app.routing", "src/app/routing/matcher.py"),
        ("src/app/routing", "app.routing", "src/app/routing/matcher.py"),
        ("src/app/routing/", "app.routing", "src/app/routing/matcher.py"),
        ("app/routing", "app.routing", "src/app/routing/matcher.py"),
        ("src/app/routing/matcher.py", "app.routing.matcher", "src/app/routing/matcher.py"),
        ("app.routing.matcher", "app.routing.matcher", "src/app/routing/matcher.py"),
        ("other", "other", "src/other/util.py"),
    ],
)
def test_package_takes_a_dotted_name_a_folder_or_a_file(tmp_path, given, package, module):
    plan = detect(_two_packages(tmp_path), given)
    assert (plan.package, plan.module) == (package, module)


def test_init_package_given_as_a_folder_writes_the_catalog_for_that_package(tmp_path):
    project = _two_packages(tmp_path / "demo")
    done = run_gate(project, "init", "--package", "src/app/routing")
    assert done.code == 0, done.stderr
    assert "aimed at src/app/routing/matcher.py::match" in done.stdout, done.stdout
    assert (project / "mutations" / "app.routing.toml").is_file()
    assert run_gate(project, "check").code == 0


@pytest.mark.parametrize("given", ["app.nowhere", "src/app/nowhere", "tests/test_app.py", "tests", "../outside"])
@pytest.mark.parametrize("layout", ["src", "flat"])
def test_package_that_names_nothing_in_the_source_is_one_line_naming_the_flag(tmp_path, given, layout):
    root = _two_packages(tmp_path / "demo")
    if layout == "flat":
        for name in ("app", "other"):
            (root / "src" / name).rename(root / name)
        given = given.replace("src/", "")
    with pytest.raises(GateError, match="seen: app, other|not a package folder") as caught:
        detect(root, given)
    assert caught.value.field == "--package"


_ROUTER = """\
def route(path):
    if path.startswith("/"):
        return path.strip("/").split("/")
    return None


def render(name, value):
    if value is None:
        return name
    return f"{name}={value}"
"""


@pytest.mark.parametrize(
    "helper, importer",
    [
        # the helper calls the target itself at module level
        ("from demo.core import route\n\nROUTES = route('/a/b')\n", "from helpers import ROUTES"),
        # through a function of its own, called at module level, imported as tests.helpers
        (
            "from demo.core import route\n\n\ndef build_app():\n    return route('/a')\n\n\nAPP = build_app()\n",
            "from tests.helpers import APP",
        ),
        # a class whose constructor calls it, built at module level, imported relatively
        (
            "from demo.core import route\n\n\nclass App:\n    def __init__(self):\n        self.routes = route('/')\n"
            "\n\nAPP = App()\n",
            "from .helpers import APP",
        ),
    ],
    ids=["direct", "through-a-function", "through-a-constructor"],
)
def test_a_target_a_helper_module_of_the_tests_runs_at_import_is_passed_over(tmp_path, helper, importer):
    # A test module that builds the application at module level runs the router while pytest
    # collects: a mutant of it would select every test ("runs while tests are collected").
    tests = (
        "import pytest\n\nfrom demo.core import render, route\n"
        + importer
        + "\n\n\ndef test_route():\n    assert route('/a') == ['a']\n\n\ndef test_route_none():\n"
        "    assert route('a') is None\n\n\ndef test_render():\n    assert render('a', None) == 'a'\n"
    )
    root = _project(
        tmp_path,
        {
            "src/demo/__init__.py": "",
            "src/demo/core.py": _ROUTER,
            "tests/__init__.py": "",
            "tests/helpers.py": helper,
            "tests/test_core.py": tests,
        },
    )
    plan = detect(root)
    assert [c.function for c in plan.considered][:1] == ["render"], plan.considered
    assert not plan.runs_at_import


def test_init_says_so_when_every_candidate_runs_while_the_tests_are_collected(tmp_path):
    project = _project(
        tmp_path / "demo",
        {
            "src/demo/__init__.py": "",
            "src/demo/core.py": _ROUTER,
            "tests/helpers.py": "from demo.core import render, route\n\nAPP = [route('/'), render('a', 1)]\n",
            "tests/test_core.py": "from helpers import APP\nfrom demo.core import route\n\n\n"
            "def test_route():\n    assert route('/a') == ['a'] and APP\n",
        },
    )
    done = run_gate(project, "init")
    assert done.code == 0, done.stderr
    assert "aimed at src/demo/core.py::route" in done.stdout, done.stdout
    assert "note: route, like every public function here, runs while" in done.stdout, done.stdout


PAIRWISE = """\
from itertools import tee


def pairwise(iterable):
    a, b = tee(iterable)
    for _ in b:
        break
    return zip(a, b)


def label(n):
    if n > 0:
        return "positive"
    return "other"
"""


def test_a_module_pytest_collects_by_python_files_is_tests_not_code(tmp_path):
    # jsonpointer: one module, its tests in tests.py (python_files = tests.py), no tests/ folder.
    root = _project(
        tmp_path,
        {
            "setup.cfg": "[tool:pytest]\npython_files = tests.py\n",
            "pw.py": PAIRWISE.replace("from itertools import tee\n", "from itertools import tee  # noqa\n"),
            "tests.py": "from pw import label\n\n\ndef test_label():\n    assert label(1) == 'positive'\n",
        },
    )
    plan = detect(root)
    assert (plan.package, plan.seen) == ("pw", ["pw"])
    # Its tests are read as the tests: they call label, and the guess names one of them.
    assert plan.function == "label" and plan.kills == "tests.py::test_label"


def test_a_target_no_operator_applies_to_cleanly_is_passed_over_for_the_next(tmp_path):
    # jsonpointer's pairwise: its only call feeds an unpacking (deleting it breaks the mutant),
    # it has no condition to negate, and a constant return leaves its import unused.
    tests = "from pw import label, pairwise\n\n\ndef test_pairs():\n    assert list(pairwise([1, 2]))\n\n\n"
    tests += "def test_more_pairs():\n    assert list(pairwise([1, 2, 3]))\n\n\n"
    tests += "def test_label():\n    assert label(1) == 'positive'\n"
    root = _project(tmp_path, {"pw.py": PAIRWISE, "tests/test_pw.py": tests})
    assert detect(root).function == "pairwise"  # the best scored: two direct callers
    assert render(root, detect(root)) is None
    done = run_gate(root, "init")
    assert done.code == 0, done.stderr
    assert "  aimed at pw.py::label;" in done.stdout
    assert "  passed over (no operator applies cleanly): pw.py::pairwise" in done.stdout
    assert run_gate(root, "check").code == 0
    # With nothing left to aim at, the refusal names the first target passed over.
    (root / "pw.py").write_text(PAIRWISE.split("\n\n\ndef label")[0] + "\n")
    (root / "tests/test_pw.py").write_text(tests.split("\n\n\ndef test_label")[0] + "\n")
    (root / "mutations/pw.toml").unlink()
    refused = run_gate(root, "init")
    assert refused.code == 2 and refused.stderr.strip() == (
        "killmap: no operator applies cleanly to pw.py::pairwise; pick another package "
        "with --package, or write the catalog by hand (README: The catalog)"
    )


def test_a_method_s_callers_are_counted_where_the_tests_name_its_class(tmp_path):
    # croniter: the tests call `croniter(...).expand(...)`; HashExpander.expand, a method of the
    # same name that no test names, was read as called by every one of them.
    source = (
        "class HashExpander:\n    def expand(self, text):\n        if text:\n            return [text]\n"
        "        for _ in text:\n            pass\n        return []\n\n\n"
        "class Cron:\n    def expand(self, text):\n        if text:\n            return text.split()\n"
        "        return []\n"
    )
    tests = "from pkg import Cron\n\n\ndef test_split():\n    assert Cron().expand('a b') == ['a', 'b']\n"
    root = _project(tmp_path, {"pkg/__init__.py": source, "tests/test_pkg.py": tests})
    plan = detect(root)
    assert plan.function == "Cron.expand"
    assert [(c.function, c.callers) for c in plan.considered] == [("Cron.expand", 1), ("HashExpander.expand", 0)]


@pytest.mark.parametrize("layout", ["", "src/", "lib/"])
def test_a_function_whose_name_another_module_shares_is_counted_where_the_tests_import_it(tmp_path, layout):
    # python-slugify: `_legacy.slugify` (21 branches) read as called by the 101 tests that call
    # the public `slugify`, re-exported from `slugify.slugify` by the package's star import.
    # The package's dotted name is read below the nearest folder that is no package, whatever
    # its name (a `lib/` layout counted no caller at all when only `src/` was known).
    legacy = "def convert(text):\n" + "".join(f"    if text == {n}:\n        return {n}\n" for n in range(6))
    files = {
        f"{layout}pkg/__init__.py": "from .modern import *\n",
        f"{layout}pkg/modern.py": "def convert(text):\n    if not text:\n        return ''\n    return text.lower()\n",
        f"{layout}pkg/_legacy.py": legacy + "    return text\n",
        "tests/test_pkg.py": "from pkg import convert\n\n\ndef test_lower():\n    assert convert('A') == 'a'\n",
    }
    plan = detect(_project(tmp_path, files), package=f"{layout}pkg" if layout else None)
    assert (plan.module, plan.function) == (f"{layout}pkg/modern.py", "convert")
    counted = {(c.module, c.function): c.callers for c in plan.considered}
    assert counted[(f"{layout}pkg/modern.py", "convert")] == 1 and counted[(f"{layout}pkg/_legacy.py", "convert")] == 0


def test_a_shared_name_called_on_its_imported_module_is_counted_there(tmp_path):
    # dpath: `dpath.new(...)` after `import dpath` counted no caller of the package's `new`,
    # whose name `dpath.segments.new` shares: only `from dpath import new` was read.
    branchy = "def new(path):\n" + "".join(f"    if path == {n}:\n        return {n}\n" for n in range(3))
    files = {
        "pkg/__init__.py": branchy + "    return path\n",
        "pkg/segments.py": "def new(path):\n    if not path:\n        return 0\n    return 1\n",
        "tests/test_pkg.py": "import pkg as p\n\n\ndef test_new():\n    assert p.new(1) == 1\n",
    }
    plan = detect(_project(tmp_path, files))
    counted = {(c.module, c.function): c.callers for c in plan.considered}
    assert counted[("pkg/__init__.py", "new")] == 1 and counted[("pkg/segments.py", "new")] == 0
    assert (plan.module, plan.function) == ("pkg/__init__.py", "new")


def test_a_merge_strings_example_keeps_a_text_one_literal_holds_not_one_python_joined(tmp_path):
    # semver's compare: Python joins an implicitly joined f-string's pieces into one constant
    # ("Expected a Version instance, but got ") that no literal of the file holds, and the
    # example matched nothing.
    root = _project(
        tmp_path,
        {
            "demo.py": """\
        def check(other):
            if other is None:
                raise TypeError("expected a Version instance, got None today")
            raise TypeError(f"Expected a Version " f"instance, but got {type(other)!r} as other")
        """,
            "tests/test_demo.py": "from demo import check\n\n\ndef test_check():\n    check(1)\n",
        },
    )
    text = render(root, detect(root))
    example = text[text.index("# merge-strings:") : text.index("# revert-patch:")]
    assert "not as written here" not in example, example
    assert "# keep = ' as other'" in example


def test_a_merge_strings_example_keeps_a_whole_literal_over_an_f_string_piece(tmp_path):
    # itsdangerous' unsign: " < 0 seconds" (a piece of f"age {age} < 0 seconds") kept at the
    # site of "timestamp missing", which has no `age`, gave a broken example; the message
    # written twice ("Malformed timestamp") is one the operator keeps (either copy).
    root = _project(
        tmp_path,
        {
            "demo.py": """\
        def unsign(value, age):
            if not value:
                raise ValueError("timestamp missing")
            if value == "x":
                raise ValueError("Malformed timestamp")
            if value == "y":
                raise ValueError("Malformed timestamp")
            if age < 0:
                raise ValueError(f"Signature age {age} < 0 seconds")
            return value
        """,
            "tests/test_demo.py": "from demo import unsign\n\n\ndef test_unsign():\n    unsign('a', 1)\n",
        },
    )
    text = render(root, detect(root))
    example = text[text.index("# merge-strings:") : text.index("# revert-patch:")]
    assert "not as written here" not in example, example
    assert "# drop = 'timestamp missing'" in example and "# keep = 'Malformed timestamp'" in example, example


def test_the_guessed_kills_test_comes_from_the_test_module_named_after_the_target_module(tmp_path):
    # humanize: naturaldelta in humanize/time.py is named first, alphabetically, by
    # tests/test_i18n.py (locale tests that skip without translations), then by test_time.py.
    branches = "".join(f"    if x == {n}:\n        return {n}\n" for n in range(4))
    imported = "from hz.time import naturaldelta\n\n\n"
    root = _project(
        tmp_path,
        {
            "src/hz/__init__.py": "",
            "src/hz/time.py": f"def naturaldelta(x):\n{branches}    return x\n",
            "tests/test_i18n.py": f"{imported}def test_naturaldelta():\n    naturaldelta(1)\n",
            "tests/test_time.py": f"{imported}def test_naturaldelta():\n    naturaldelta(2)\n",
        },
    )
    plan = detect(root)
    assert (plan.module, plan.function) == ("src/hz/time.py", "naturaldelta")
    assert plan.kills == "tests/test_time.py::test_naturaldelta", plan.kills_reason


def test_init_notes_the_reports_folder_until_git_ignores_it(tmp_path):
    # `killmap run` writes reports/ into the project: untracked files after every gate.
    import subprocess

    from killmap.commands.init import _reports_ignored

    assert _reports_ignored(tmp_path)  # no repository: git cannot say, nothing to note
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    assert not _reports_ignored(tmp_path)
    (tmp_path / ".gitignore").write_text("reports/\n")
    assert _reports_ignored(tmp_path)


def test_init_offers_to_aim_only_where_it_would_aim_and_never_at_itself(tmp_path):
    # toolz: `--package toolz.compatibility` (it only re-exports) was offered, then refused;
    # parse, one module: `--package parse` was offered as elsewhere. versioneer.py is a build
    # tool beside the package, no package of the project's.
    from killmap.commands.init import _where_else

    root = _project(
        tmp_path,
        {
            "versioneer.py": "def get_version():\n    return '1'\n",
            "tz/__init__.py": "",
            "tz/core.py": "def join(a, b):\n    if a:\n        return a + b\n    return b\n",
            "tz/compatibility.py": "from functools import reduce\nfilter = filter\n",
            "tz/extra.py": "def pairs(items):\n    return list(zip(items, items[1:]))\n",
            "tests/test_core.py": "from tz.core import join\n\n\ndef test_join():\n    assert join(1, 2) == 3\n",
        },
    )
    plan = detect(root)
    assert (plan.package, plan.seen) == ("tz", ["tz"])
    assert plan.inside == ["tz.core", "tz.extra"]
    assert "--package tz.extra" in _where_else(plan)[-1]
    alone = _project(tmp_path / "alone", {"one.py": "def f(x):\n    return x\n", "tests/test_one.py": ""})
    assert not any("aim elsewhere" in line for line in _where_else(detect(alone)))


def test_a_generators_starter_yields_nothing_rather_than_returning_none(tmp_path):
    # jmespath's tokenize: `return None` made it no generator at all, and the guessed test
    # went red only by TypeError from list(None), with 68 others.
    from gatekit import write_project

    project = write_project(
        tmp_path / "p",
        {
            "pyproject.toml": '[project]\nname = "words"\nversion = "0"\n',
            "words/__init__.py": (
                "def split(text):\n    for word in text.split():\n        if word:\n            yield word\n"
            ),
            "tests/test_words.py": (
                "from words import split\n\n\ndef test_split():\n    assert list(split('a b')) == ['a', 'b']\n"
            ),
        },
    )
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    done = run_gate(project, "init")
    assert done.code == 0, done.stderr
    [live] = tomllib.loads((project / "mutations" / "words.toml").read_text())["mutation"]
    assert (live["name"], live["op"], live["value"]) == ("split-yields-nothing", "constant-return", "iter(())")
    ran = run_gate(project, "run", "--no-cache")
    assert ran.verdicts() == {"split-yields-nothing": "held"}, ran.stdout


def test_the_negate_example_inverts_a_test_the_function_reads_only_once(tmp_path):
    # `if strict:` beside `check(text, strict=strict)`: negating "strict" inverted the keyword
    # argument too (count = 2), two defects under the name of one.
    root = _project(
        tmp_path,
        {
            "parse.py": (
                "def check(text, strict):\n    return text\n\n\n"
                "def words(text, strict=False):\n    if strict:\n        check(text, strict=strict)\n"
                "    if text.startswith('#') or not text:\n        return []\n    return text.split()\n"
            ),
            "tests/test_parse.py": (
                "from parse import words\n\n\ndef test_words():\n    assert words('a b') == ['a', 'b']\n"
            ),
        },
    )
    plan = detect(root)
    assert plan.function == "words"
    from killmap.catalog.reader import load_catalog
    from killmap.mutate.mutants import build_mutant

    path = root / "mutations" / "examples.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(_uncomment_every_example(render(root, plan).split("# revert-patch:")[0]))
    [negated] = [m for m in load_catalog(root, path).mutations if m.name == "words-condition-negated"]
    built = build_mutant(root, negated)
    original, mutant = built.original, built.mutated or ""
    changed = [
        (b.strip(), a.strip()) for b, a in zip(original.splitlines(), mutant.splitlines(), strict=False) if b != a
    ]
    assert changed == [("if text.startswith('#') or not text:", "if not (text.startswith('#') or not text):")], changed


def test_a_message_is_changed_before_a_name_and_a_name_is_called_a_text(tmp_path):
    # rfc3986: "validate-message-changed" turned getattr's "scheme" into "mutated scheme",
    # which only crashed every test by AttributeError, while the function held a message.
    source = (
        "def check(uri, component):\n    if not getattr(uri, 'scheme'):\n"
        "        raise ValueError('a URI needs a scheme to be checked')\n    return component\n"
    )
    tests = "from val import check\n\n\ndef test_check():\n    assert check(type('U', (), {'scheme': 'h'}), 1) == 1\n"
    root = _project(tmp_path, {"val.py": source, "tests/test_val.py": tests})
    text = render(root, detect(root))
    assert "check-message-changed" in text and "'a URI needs a scheme to be checked'" in text, text
    assert "mutated scheme'" not in text
    # Where the function holds names alone, the example says text, not message.
    names_only = "def pick(uri):\n    return getattr(uri, 'scheme') or getattr(uri, 'host')\n"
    (root / "val.py").write_text(names_only)
    (root / "tests/test_val.py").write_text("from val import pick\n\n\ndef test_pick():\n    assert pick(1) is None\n")
    text = render(root, detect(root))
    assert (
        "pick-text-changed" in text
        and "pick-texts-merged" in text
        and "message" not in text.split("[[mutation]]", 1)[1]
    )


def test_a_version_parser_is_aimed_at_last_and_a_build_hook_is_no_package(tmp_path):
    # bracex: __meta__.py's parse_version, which its tests call, outscored the expander the
    # package is for; hatch_build.py, the build hook beside it, was listed as a package.
    meta = (
        "def parse_version(text):\n    if not text:\n        return None\n    if '.' in text:\n"
        "        return tuple(text.split('.'))\n    if text.isdigit():\n        return (text,)\n    return text\n"
    )
    core = "def expand(text):\n    if '{' in text:\n        return text.strip('{}').split(',')\n    return [text]\n"
    tests = (
        "from brc import expand\nfrom brc.__meta__ import parse_version\n\n\n"
        "def test_version():\n    assert parse_version('1.2') == ('1', '2')\n\n\n"
        "def test_version_digit():\n    assert parse_version('1') == ('1',)\n\n\n"
        "def test_expand():\n    assert expand('{a,b}') == ['a', 'b']\n"
    )
    root = _project(
        tmp_path,
        {
            "brc/__init__.py": "from brc.core import expand\n",
            "brc/__meta__.py": meta,
            "brc/core.py": core,
            "hatch_build.py": "def hook(build):\n    if build:\n        return 1\n    return 0\n",
            "tests/test_brc.py": tests,
        },
    )
    plan = detect(root)
    assert (plan.package, plan.function) == ("brc", "expand"), (plan.package, plan.function, plan.considered)
    assert "hatch_build" not in plan.seen, plan.seen


def test_the_files_doctest_glob_runs_are_in_the_gates_tests(tmp_path):
    # intervaltree: `--doctest-glob=README.md` in addopts ran the README's examples under plain
    # pytest; the tests init wrote left them out, and a README red was never judged.
    root = _project(
        tmp_path,
        {
            "pyproject.toml": (
                '[project]\nname = "demo"\nversion = "0"\n\n[tool.pytest.ini_options]\n'
                "addopts = ['--doctest-glob=README.md']\n"
            ),
            "README.md": "```\n>>> 1 + 1\n2\n```\n",
            "demo.py": "def double(x):\n    if x:\n        return x * 2\n    return 0\n",
            "tests/test_demo.py": "from demo import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
        },
    )
    plan = detect(root)
    assert plan.tests == ["tests", "README.md"], (plan.tests, plan.tests_reason)
    assert "README.md, whose examples --doctest-glob in pyproject.toml" in plan.tests_reason
