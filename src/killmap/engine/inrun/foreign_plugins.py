"""The project's own pytest plugins that would take a run out of the gate's hands, kept loaded
but switched off through their options.

Blocking such a plugin with `-p no:NAME` breaks the projects that configure it: their addopts
still name its options (`-n auto`, `--cov=pkg`, `--randomly-seed=1`), and pytest then refuses
the whole configuration ("unrecognized arguments: -n"). Leaving it on is worse:
- pytest-xdist runs the tests in other processes, out of reach of the gate's recorder, its
  forks and its swap;
- pytest-cov starts a second coverage collector, which fights the baseline's own tracer for
  the interpreter's trace function (coverage asserts on it and the collection dies);
- pytest-randomly reorders the tests, and reseeds `random` before each from a fresh seed every
  run, so two runs of the same mutant can disagree.

So each is left loaded, its options parse as the user wrote them, and its effect is turned off
before it acts (randomly keeps reseeding, from the gate's seed). Every run of the gate
registers this plugin (worker.py), which is what makes the baseline, a mutant and `check` see
the same project.

Hypothesis draws each property test's inputs from a fresh seed every run, and replays the
failing examples it saved in `.hypothesis/`: the same mutant was held, vacuous or flaky by luck,
and by what an earlier run left on disk. Every run gets the gate's seed (`--seed`,
docs/randomized.md) and a Hypothesis home of its own (`private_hypothesis_home`). And the same
settings profile on every machine: Hypothesis loads its "ci" profile (derandomized, no database)
when it finds a CI variable at import, so a CI runner drew other examples than a laptop from the
same seed, and gave another verdict (`import_hypothesis_as_on_any_machine`).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
from typing import Any

import pytest


class PluginNeutraliser:
    def __init__(self, seed: int | None):
        # The gate's seed (catalog.plan.DEFAULT_SEED unless --seed): pytest-randomly reseeds
        # each test from it, Hypothesis draws every property test's examples from it. None is
        # `--seed random`: each run draws its own.
        self.seed = seed

    @pytest.hookimpl(hookwrapper=True)
    def pytest_load_initial_conftests(self, early_config: Any, parser: Any, args: Any):
        # pytest-cov decides here, from the early options, whether to start collecting; a
        # wrapper runs before it whatever the registration order. `no_cov` is the dest of
        # its documented `--no-cov` switch ("disable coverage report completely").
        options = early_config.known_args_namespace
        if hasattr(options, "cov_source"):
            options.no_cov = True
        # Before the first conftest can import Hypothesis, which picks its profile then.
        import_hypothesis_as_on_any_machine()
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_cmdline_main(self, config: pytest.Config):
        # After the options are parsed, before any plugin is configured: xdist turns
        # `numprocesses` into distribution in its own cmdline_main, randomly reads its two
        # switches when it reorders and reseeds.
        option = config.option
        if hasattr(option, "numprocesses"):
            option.numprocesses, option.distload, option.dist, option.tx = 0, False, "no", []
        if hasattr(option, "randomly_reorganize"):
            option.randomly_reorganize = False
            # Its reseeding stays: each test then draws from `random` as it does under the
            # project's pytest, whichever other tests run before it (a mutant runs a subset).
            # But from one seed for every run, or the flake guard's two runs would differ:
            # the gate's, which the report records, over one the project's addopts names.
            if self.seed is not None:
                option.randomly_seed = self.seed
        yield

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Hypothesis's seed, once the tests are imported: what its pytest plugin's
        `--hypothesis-seed` sets (`core.global_force_seed`), set only when a test imported
        Hypothesis. The option itself makes the plugin import Hypothesis at configure, in
        every session of every project that has it installed: 0.15 to 0.8 s a fresh session
        on a busy 2-core machine. Set here, a fork of the collected session inherits it.
        With it Hypothesis neither reads nor saves examples (no database key)."""
        core = sys.modules.get("hypothesis.core")
        if core is not None and self.seed is not None:
            core.global_force_seed = self.seed  # type: ignore[attr-defined]


def private_hypothesis_home(folder: str) -> None:
    """Hypothesis's folder (its example database, its cache of the code's constants) for one
    run: empty, outside the sandbox, never shared with another run or the user's `.hypothesis/`.
    Its documented variable, read when Hypothesis first needs the folder; and its setter when
    the collected session already imported Hypothesis."""
    os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = folder
    configuration = sys.modules.get("hypothesis.configuration")
    if configuration is not None:
        configuration.set_hypothesis_home_dir(folder)


# The variables by which Hypothesis (hypothesis/_settings.py, `_CI_VARS`, 6.1xx) decides it runs
# on CI and loads its "ci" profile at import. Any value counts here: hiding one too many for the
# length of an import changes nothing.
CI_VARIABLES = (
    "CI",
    "__TOX_ENVIRONMENT_VARIABLE_ORIGINAL_CI",
    "TF_BUILD",
    "bamboo.buildKey",
    "BUILDKITE",
    "CIRCLECI",
    "CIRRUS_CI",
    "CODEBUILD_BUILD_ID",
    "GITHUB_ACTIONS",
    "GITLAB_CI",
    "HEROKU_TEST_RUN_ID",
    "TEAMCITY_VERSION",
)


def import_hypothesis_as_on_any_machine() -> None:
    """Have Hypothesis imported with the CI variables hidden, so it keeps its "default" profile
    on a CI runner too: its "ci" profile derandomizes every test (the gate's seed is then
    ignored) and drops the database, so the same mutant was held on a laptop and vacuous on CI.
    Only the automatic choice is undone: the variables are hidden for the length of
    Hypothesis's own import, whoever imports it, and a project that loads a profile itself
    (`settings.load_profile("ci")`) gets it, on every machine. Hooked, not imported here: the
    import costs a session 0.15 to 0.8 s, and most projects never import Hypothesis."""
    if "hypothesis" not in sys.modules and any(name in os.environ for name in CI_VARIABLES):
        sys.meta_path.insert(0, _HypothesisImportWithoutCI())


class _HypothesisImportWithoutCI(importlib.abc.MetaPathFinder):
    """Finds nothing itself: at the first import of `hypothesis` it steps aside, lets the real
    finders find it, and wraps that spec's loader so the package runs with the CI variables
    hidden. The loader stays the real one (Hypothesis reads its data files through it)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "hypothesis":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        loader = spec.loader if spec is not None else None
        if loader is not None and hasattr(loader, "exec_module"):
            run = loader.exec_module

            def exec_module(module: Any) -> None:
                hidden = {name: os.environ.pop(name) for name in CI_VARIABLES if name in os.environ}
                try:
                    run(module)
                finally:
                    os.environ.update(hidden)

            loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec
