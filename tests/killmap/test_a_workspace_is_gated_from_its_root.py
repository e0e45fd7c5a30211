"""A monorepo at first contact: one catalog at the workspace root gates every member.

The `workspace` fixture is a uv workspace of two `src/`-layout members, `packages/pricing`
and `packages/orders`, sharing the namespace package `acme` (no `acme/__init__.py`), each
with its own pyproject.toml and tests; orders imports pricing. The gate imports packages
from its sandbox copy through `[gate] paths`, never from an editable install, so a catalog
at the root must name every member's source folder, and a catalog inside one member can
neither import nor target another: each of those says the way out.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from gatekit import copy_fixture, run_gate

from killmap.catalog.init_detect import detect

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SOURCES = ["packages/orders/src", "packages/pricing/src"]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return copy_fixture("workspace", tmp_path)


def test_init_at_the_root_finds_the_members_and_the_gate_runs_there(workspace):
    done = run_gate(workspace, "init")
    assert done.code == 0, done.stderr
    data = tomllib.loads((workspace / "mutations" / "acme.orders.toml").read_text())
    assert data["gate"] == {"tests": ["packages/orders/tests", "packages/pricing/tests"], "paths": SOURCES}
    assert data["mutation"][0]["target"].startswith("packages/orders/src/acme/orders/cart.py::")
    assert "packages seen: acme.orders (aimed at), acme.pricing; in acme.orders: acme.orders.cart" in done.stdout
    checked = run_gate(workspace, "check")
    assert checked.code == 0, checked.stderr
    assert "10 tests collected" in checked.stdout
    ran = run_gate(workspace, "run", "--no-cache")
    [entry] = ran.report["mutations"]
    assert entry["verdict"] in ("held", "overreach"), entry["detail"]
    assert entry["red"] and all(r["id"].startswith("packages/orders/tests/") for r in entry["red"])


def test_a_mutation_of_one_member_is_killed_by_anothers_tests(workspace):
    (workspace / "mutations").mkdir()
    (workspace / "mutations" / "pricing.toml").write_text(
        textwrap.dedent(f"""\
            [gate]
            tests = ["packages/orders/tests", "packages/pricing/tests"]
            paths = {SOURCES!r}

            [[mutation]]
            name = "bulk-rate-never-applies"
            target = "packages/pricing/src/acme/pricing/discount.py::bulk_rate"
            op = "constant-return"
            value = "0"
            kills = [
                "packages/orders/tests/test_cart.py::test_a_bulk_line_gets_its_rate",
                "packages/pricing/tests/test_discount.py::test_ten_or_more_get_five_percent",
                "packages/pricing/tests/test_discount.py::test_a_hundred_or_more_get_fifteen_percent",
            ]
            """).replace("'", '"')
    )
    assert run_gate(workspace, "check").code == 0
    ran = run_gate(workspace, "run", "--no-cache")
    assert ran.verdicts() == {"bulk-rate-never-applies": "held"}, ran.stdout


@pytest.mark.parametrize(
    "given, package, module",
    [
        ("acme.pricing", "acme.pricing", "packages/pricing/src/acme/pricing/discount.py"),
        ("acme.pricing.discount", "acme.pricing.discount", "packages/pricing/src/acme/pricing/discount.py"),
        ("packages/pricing/src/acme/pricing", "acme.pricing", "packages/pricing/src/acme/pricing/discount.py"),
        ("acme.orders", "acme.orders", "packages/orders/src/acme/orders/cart.py"),
    ],
)
def test_package_takes_a_namespace_packages_dotted_name_at_the_root(workspace, given, package, module):
    plan = detect(workspace, given)
    assert (plan.package, plan.module, plan.paths) == (package, module, SOURCES)


def test_inside_a_member_init_reads_its_src_layout(workspace):
    member = workspace / "packages" / "orders"
    plan = detect(member)
    assert (plan.package, plan.paths, plan.paths_reason) == ("acme.orders", ["src"], "src layout")
    assert plan.tests == ["tests"]
    aimed = detect(member, "src/acme/orders/cart.py")
    assert (aimed.package, aimed.paths) == ("acme.orders.cart", ["src"])
    done = run_gate(member, "init", "--package", "src/acme/orders/cart.py")
    assert done.code == 0, done.stderr
    assert (member / "mutations" / "acme.orders.cart.toml").is_file()
    assert "packages seen: acme.orders; in acme.orders: acme.orders.cart" in done.stdout, done.stdout
    assert f"note: this project is member packages/orders of the workspace at {workspace.resolve()}" in done.stdout
    assert detect(member, "acme.orders.cart").module == "src/acme/orders/cart.py"


@pytest.mark.parametrize("package", ["acme/orders", "orders"], ids=["namespace", "regular"])
def test_the_kills_guess_is_a_test_of_the_aimed_package_not_one_sharing_a_method_name(tmp_path, package):
    root = tmp_path / "orders"
    dotted = package.replace("/", ".")
    for rel, text in {
        "pyproject.toml": '[project]\nname = "acme-orders"\n',
        f"src/{package}/__init__.py": "",
        f"src/{package}/cart.py": "class Cart:\n    def add(self, sku, quantity):\n"
        "        if quantity <= 0:\n            raise ValueError(sku)\n        self.sku = sku\n",
        # sorted first, and it calls a set's add: a name, not the aimed method
        "tests/test_a_sets.py": "def test_set():\n    seen = set()\n    seen.add(1)\n    assert seen\n",
        "tests/test_cart.py": f"from {dotted}.cart import Cart\n\n\ndef test_empty():\n    assert Cart()\n\n\n"
        "def test_add():\n    cart = Cart()\n    cart.add('pen', 1)\n    assert cart.sku == 'pen'\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    plan = detect(root)
    assert plan.function == "Cart.add"
    assert (plan.kills, plan.kills_reason) == ("tests/test_cart.py::test_add", "the first test that names add")


def _catalog(folder: Path, gate: str, target: str) -> None:
    (folder / "mutations").mkdir(exist_ok=True)
    (folder / "mutations" / "one.toml").write_text(
        f"[gate]\n{gate}\n\n[[mutation]]\nname = 'rate-zero'\ntarget = '{target}'\n"
        "op = 'constant-return'\nvalue = '0'\nkills = ['tests/test_cart.py::test_a_bulk_line_gets_its_rate']\n"
    )


def test_a_workspace_package_left_out_of_paths_names_gate_paths(workspace):
    _catalog(
        workspace,
        "tests = ['packages/orders/tests']\npaths = ['packages/orders/src']",
        "packages/orders/src/acme/orders/cart.py::Cart.total",
    )
    checked = run_gate(workspace, "check")
    assert checked.code == 2 and "Traceback" not in checked.stderr
    [line] = checked.stderr.splitlines()
    assert "ModuleNotFoundError: No module named 'acme.pricing'" in line
    assert (
        "(acme.pricing is workspace member packages/pricing's: add 'packages/pricing/src' to [gate] paths;" in line
    ), line


def test_inside_a_member_a_workspace_package_says_to_use_the_workspace_root(workspace):
    member = workspace / "packages" / "orders"
    _catalog(member, "paths = ['src']", "src/acme/orders/cart.py::Cart.total")
    checked = run_gate(member, "check")
    assert checked.code == 2
    [line] = checked.stderr.splitlines()
    assert "No module named 'acme.pricing' (acme.pricing is workspace member packages/pricing's, " in line, line
    assert f"outside this project: put the catalog at the workspace root {workspace.resolve()}," in line


def test_a_catalog_in_one_member_that_targets_another_says_to_move_it_to_the_root(workspace):
    member = workspace / "packages" / "orders"
    _catalog(member, "paths = ['src']", "../pricing/src/acme/pricing/discount.py::bulk_rate")
    checked = run_gate(member, "check")
    assert checked.code == 2 and "Traceback" not in checked.stderr
    # The entry is said, and the rest checked: this member's tests import the other one too.
    line, *rest = checked.stderr.splitlines()
    assert all("No module named 'acme.pricing'" in other for other in rest), rest
    assert line == (
        "killmap check: mutations/one.toml: mutation 'rate-zero': field 'target': target "
        "../pricing/src/acme/pricing/discount.py is in workspace member packages/pricing, outside this project "
        "(packages/orders): a catalog targets its own project's files only; move the catalog to the workspace "
        f"root {workspace.resolve()}, where the target is packages/pricing/src/acme/pricing/discount.py and "
        "[gate] paths name every member's source folder"
    )


def test_a_target_outside_any_workspace_keeps_the_plain_refusal(tmp_path):
    project = copy_fixture("basic", tmp_path)
    (project / "mutations" / "basic.toml").write_text(
        "[[mutation]]\nname = 'x'\ntarget = '../elsewhere.py::f'\nop = 'constant-return'\nvalue = '0'\n"
        "kills = ['tests/test_core.py::test_odd_is_refused']\n"
    )
    checked = run_gate(project, "check")
    assert checked.code == 2
    assert "target must be a path inside the project, relative to its root: ../elsewhere.py" in checked.stderr
