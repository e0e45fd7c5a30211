"""killmap: a mutation-testing gate built on named mutations.

A catalog declares deliberate, named defects and the exact tests each must turn red.
The gate applies each one in a sandbox copy, proves the mutant is valid and is the code
that ran, runs pytest, and judges whether exactly the intended tests went red, for the
right reason. See docs/DESIGN.md for the path of a mutation from catalog to verdict.
"""

__version__ = "0.1.0"


def pytest_version() -> str:
    """pytest's version without importing pytest (it costs a fifth of a second to start)."""
    return installed_version("pytest")


def installed_version(name: str) -> str:
    """The version a distribution installed beside its package of the same name declares, read
    from its one dist-info there; importlib.metadata where that is not so (an editable install,
    two dist-infos left side by side). importlib.metadata imports the email package and looks
    through all of sys.path: 17 ms at the end of every report, a hundredth of a small gate."""
    import importlib.util
    import os

    spec = importlib.util.find_spec(name)  # found, not imported
    if spec is not None and spec.origin and spec.submodule_search_locations:
        site = os.path.dirname(os.path.dirname(spec.origin))
        prefix = name.replace("-", "_").lower() + "-"
        try:
            infos = [e for e in os.listdir(site) if e.endswith(".dist-info") and e.lower().startswith(prefix)]
            if len(infos) == 1:
                with open(os.path.join(site, infos[0], "METADATA"), encoding="utf-8") as metadata:
                    for line in metadata:
                        if line.startswith("Version:"):
                            return line.partition(":")[2].strip()
                        if not line.strip():
                            break  # the headers end at the first empty line
        except OSError:
            pass
    from importlib.metadata import version

    return version(name)
