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

Without pytest-randomly, `random` is seeded once per interpreter from the OS: a test (or the
code under test: cachetools' RRCache evicts by `random.choice`) drew other values in every
gate, and a mutant was held in one gate and vacuous in the next, and cached so. The gate then
reseeds `random` before each test's setup, call and teardown from its seed and the test's id,
as pytest-randomly would (`--seed random` leaves it alone).

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
import random
import sys
import zlib
from typing import Any

import pytest


class ForeignPluginsOff:
    def __init__(self, seed: int | None):
        # The gate's seed (catalog.plan.DEFAULT_SEED unless --seed): pytest-randomly reseeds
        # each test from it, Hypothesis draws every property test's examples from it. None is
        # `--seed random`: each run draws its own.
        self.seed = seed
        self.taken_out: tuple[str, ...] = ()  # the modules of the plugins taken out of this session

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self._reseed(session.config, 0)  # what the project draws while it is collected

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self._reseed(item.config, (id_offset(item.nodeid) - 1) % 2**32)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> None:
        self._reseed(item.config, id_offset(item.nodeid))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> None:
        self._reseed(item.config, (id_offset(item.nodeid) + 1) % 2**32)

    def _reseed(self, config: pytest.Config, offset: int) -> None:
        """`random` from the gate's seed, where pytest-randomly does not reseed it (it then
        does, from the same seed: pytest_cmdline_main)."""
        if self.seed is not None and not config.pluginmanager.hasplugin("randomly"):
            random.seed(self.seed + offset)

    def pytest_addoption(self, parser: pytest.Parser) -> None:
        # Each run is given `-o cache_dir=` (runner.cache_dir): declared here as the cache
        # provider declares it, so that a project blocking the provider (`-p no:cacheprovider`)
        # under --strict-config is not refused an ini option it never set.
        parser.addini("cache_dir", default=".pytest_cache", help="Cache directory path")

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
        self.taken_out = take_out_plugins(config)
        switch_off_cache_options(option)
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

    def pytest_configure(self, config: pytest.Config) -> None:
        # The markers the plugins taken out declare, declared still: a test marked `flaky`
        # collects under --strict-markers as it does with the plugin.
        for marker in sorted({TAKEN_OUT[module] for module in self.taken_out}):
            config.addinivalue_line("markers", f"{marker}: of a plugin killmap's runs switch off")

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


# Plugins whose whole work would decide what a run's tests say, by the module that registers
# them, and the marker each declares:
# - the rerun plugins, which run a failed test again until it passes: pytest-rerunfailures
#   (`--reruns`, `@pytest.mark.flaky(reruns=...)`), flaky (`@flaky`, `--force-flaky`),
#   pytest-retry (`--retries`, `@pytest.mark.flaky(retries=...)`). A red that a re-run turns
#   green is a flake to them and a verdict to the gate, whose own re-run (the flake guard) tells
#   the two apart; their re-runs also multiply a red mutant's time (`--reruns 3 --reruns-delay
#   2` turned four true verdicts into timeouts);
# - pytest-random-order (`--random-order`), which shuffles the tests: the file's order it is.
TAKEN_OUT = {
    "pytest_rerunfailures": "flaky",
    "flaky.flaky_pytest_plugin": "flaky",
    "pytest_retry.retry_plugin": "flaky",
    "random_order.plugin": "random_order",
}


def take_out_plugins(config: pytest.Config) -> tuple[str, ...]:
    """Take those plugins out of the session once its options are parsed: they stay loaded
    until then, so the options a project's addopts gives them parse, and none of their hooks
    (configure included) ever runs. The modules of those taken out."""
    manager = config.pluginmanager
    found = []
    for _, plugin in manager.list_name_plugin():
        module = getattr(plugin, "__name__", None) or type(plugin).__module__
        if module in TAKEN_OUT and plugin is not None:
            manager.unregister(plugin)
            found.append(module)
    return tuple(found)


# pytest's cache provider's and stepwise's options (`dest`: off), which pick the tests a run
# runs, and their order, from what earlier runs left: --lf, --ff, --nf, --sw, --sw-skip,
# --sw-reset; --cache-show, which runs no test. The cache itself stays, in a folder of the
# run's own (runner.py, `cache_dir`): tests that use the `cache` fixture get one, --cache-clear
# clears nothing of the user's, and a project's addopts naming these options still parses.
_CACHE_OPTIONS_OFF = {
    "lf": False,
    "failedfirst": False,
    "newfirst": False,
    "cacheshow": False,
    "stepwise": False,
    "stepwise_skip": False,
    "stepwise_reset": False,
    "last_failed_no_failures": "all",
}


def switch_off_cache_options(option: Any) -> None:
    for dest, off in _CACHE_OPTIONS_OFF.items():
        if hasattr(option, dest):
            setattr(option, dest, off)


def id_offset(nodeid: str) -> int:
    """What a test's id adds to the seed `random` is reseeded from at its call (pytest-randomly's
    own: the CRC-32 of the id)."""
    return zlib.crc32(nodeid.encode(errors="surrogatepass"))


def reseeding_seed(config: pytest.Config) -> int | None:
    """The seed `random` was reseeded from before each test (its call: that plus id_offset):
    pytest-randomly's where it reseeds, else the gate's own; None where nothing reseeds it
    (`--seed random`, or a project that switched randomly's reseeding off)."""
    if config.pluginmanager.hasplugin("randomly"):
        seed = config.getoption("randomly_seed", None) if config.getoption("randomly_reset_seed", False) else None
        return seed if isinstance(seed, int) else None
    own = next((p for p in config.pluginmanager.get_plugins() if isinstance(p, ForeignPluginsOff)), None)
    return own.seed if own is not None else None


def reseed(config: pytest.Config, seed: int) -> None:
    """A fork of the collected session drawing from `seed` instead of the session's: what
    `ForeignPluginsOff` set for the session, set again. pytest-randomly reads its seed at each
    test, Hypothesis at each test's first draw; what ran at import drew from the session's."""
    if hasattr(config.option, "randomly_seed"):
        config.option.randomly_seed = seed
    for plugin in config.pluginmanager.get_plugins():
        if isinstance(plugin, ForeignPluginsOff):
            plugin.seed = seed
    core = sys.modules.get("hypothesis.core")
    if core is not None:
        core.global_force_seed = seed  # type: ignore[attr-defined]


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
