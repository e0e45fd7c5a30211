"""A test that reaches the mutated code only through an import made by name, inside a library,
must still be run and seen: leaving it out on a static guess turns an overreach into `held`.

Issue 37: on a Django project two tests that reached a template tag only through `{% load %}`
were never run, and the gate said `held` where plain pytest showed them red. The same shape in
twenty lines, three ways a library imports by name: a name in an environment variable, a pytest
plugin named with `-p`, and an entry point. In each, the test file imports only the library,
never the mutated module, and the mutant turns it red.
"""

from __future__ import annotations

import os

import pytest
from gatekit import copy_fixture, run_gate, write_project

PRICING = "def price(amount):\n    return amount * 2\n"

DIRECT_TEST = "from shop.pricing import price\n\n\ndef test_direct():\n    assert price(2) == 4\n"

CATALOG = """\
[gate]
tests = ["tests"]
paths = ["src"]

[[mutation]]
name = "price-constant"
target = "src/shop/pricing.py::price"
op = "constant-return"
value = "0"
kills = ["tests/test_direct.py::test_direct"]
"""

# The library lives outside the gate's paths, as an installed one would: the static filter
# sees the test import it and cannot see what it imports.
CONFTEST_PUTS_VENDOR_ON_PATH = (
    "import os, sys\n\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'vendor'))\n"
)

PROJECT = '[project]\nname = "shop"\nversion = "0"\n'

# The test imports only the library; the library finds the mutated module by name.
LIBRARY_TEST = "import shoplib\n\n\ndef test_by_name():\n    assert shoplib.pricing().price(3) == 6\n"

SHAPES = {
    "a name in an environment variable": {
        "tests/conftest.py": CONFTEST_PUTS_VENDOR_ON_PATH + "os.environ['SHOP_PRICING'] = 'shop.pricing'\n",
        "vendor/shoplib/__init__.py": (
            "import importlib, os\n\n\ndef pricing():\n    return importlib.import_module(os.environ['SHOP_PRICING'])\n"
        ),
        "tests/test_by_name.py": LIBRARY_TEST,
    },
    "a pytest plugin named with -p": {
        "tests/conftest.py": CONFTEST_PUTS_VENDOR_ON_PATH,
        "pyproject.toml": PROJECT + '\n[tool.pytest.ini_options]\naddopts = "-p shopplugin"\n',
        # at the top of the project, outside the gate's paths: -p imports it before any conftest
        "shopplugin.py": (
            "import importlib\n\nimport pytest\n\n\n@pytest.fixture\ndef pricing():\n"
            "    return importlib.import_module('shop' + '.pricing')\n"
        ),
        "tests/test_by_name.py": "def test_by_name(pricing):\n    assert pricing.price(3) == 6\n",
    },
    "an entry point": {
        "tests/conftest.py": CONFTEST_PUTS_VENDOR_ON_PATH,
        "vendor/shop_plugins-0.dist-info/METADATA": "Metadata-Version: 2.1\nName: shop-plugins\nVersion: 0\n",
        "vendor/shop_plugins-0.dist-info/entry_points.txt": "[shop.pricing]\nstandard = shop.pricing\n",
        "vendor/shoplib/__init__.py": (
            "from importlib.metadata import entry_points\n\n\ndef pricing():\n"
            "    (point,) = entry_points(group='shop.pricing')\n    return point.load()\n"
        ),
        "tests/test_by_name.py": LIBRARY_TEST,
    },
}


def by_name_project(root, shape: str):
    files = {
        "pyproject.toml": PROJECT,
        "src/shop/__init__.py": "",
        "src/shop/pricing.py": PRICING,
        "tests/test_direct.py": DIRECT_TEST,
        "mutations/shop.toml": CATALOG,
    }
    files.update(SHAPES[shape])
    (root / "vendor").mkdir(parents=True, exist_ok=True)
    return write_project(root, files)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_test_reaching_the_mutant_only_by_a_name_a_library_imports_is_run_and_seen_red(tmp_path, shape):
    project = by_name_project(tmp_path / "shop", shape)
    run = run_gate(project, "run", "--no-cache")
    entry = run.mutation("price-constant")
    assert entry["verdict"] == "overreach", (run.stdout, run.stderr)
    assert "tests/test_by_name.py::test_by_name" in {red["id"] for red in entry["red"]}
    assert run.code == 1


def test_a_django_view_reached_only_through_the_url_conf_is_run_and_seen_red(tmp_path):
    # CI installs the test extra and sets KILLMAP_REQUIRE_SWEEP: there, a missing Django fails.
    if not os.environ.get("KILLMAP_REQUIRE_SWEEP"):
        pytest.importorskip("pytest_django")
    project = copy_fixture("djangourl", tmp_path)
    run = run_gate(project, "run", "--no-cache")
    entry = run.mutation("doubled-tripled")
    assert entry["verdict"] == "overreach", (run.stdout, run.stderr)
    assert {red["id"] for red in entry["red"]} == {
        "tests/test_doubled.py::test_doubled",
        "tests/test_pages.py::test_price_page",
    }
