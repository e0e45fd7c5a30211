"""killmap: a mutation-testing gate built on named mutations.

A catalog declares deliberate, named defects and the exact tests each must turn red.
The gate applies each one in a sandbox copy, proves the mutant is valid and is the code
that ran, runs pytest, and judges whether exactly the intended tests went red, for the
right reason. See docs/DESIGN.md for the path of a mutation from catalog to verdict.
"""

__version__ = "0.1.0"


def pytest_version() -> str:
    """pytest's version without importing pytest (it costs a fifth of a second to start)."""
    from importlib.metadata import version

    return version("pytest")
