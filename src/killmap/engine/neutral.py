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
before it acts (randomly keeps reseeding, from the project's seed or RANDOMLY_SEED). Every
run of the gate registers this plugin (worker.py), which is what makes the baseline, a
mutant and `check` see the same project.
"""

from __future__ import annotations

from typing import Any

import pytest

# pytest-randomly's seed when the project names none (its default is a fresh one per run).
RANDOMLY_SEED = 20261201


class PluginNeutraliser:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_load_initial_conftests(self, early_config: Any, parser: Any, args: Any):
        # pytest-cov decides here, from the early options, whether to start collecting; a
        # wrapper runs before it whatever the registration order. `no_cov` is the dest of
        # its documented `--no-cov` switch ("disable coverage report completely").
        options = early_config.known_args_namespace
        if hasattr(options, "cov_source"):
            options.no_cov = True
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
            # But from one seed for every run, or the flake guard's two runs would differ.
            if not isinstance(option.randomly_seed, int):
                option.randomly_seed = RANDOMLY_SEED
        yield
