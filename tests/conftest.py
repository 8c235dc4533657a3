"""Test-suite options: ``python -m pytest`` runs the fast tests (about two minutes on 2 cores with a
warm Numba cache); ``python -m pytest --slow`` runs everything (CI and the README's test command, with
``-n auto``: pytest-xdist's workers, each taking whole modules, the Ray ones together).

With ``BALI_NO_SKIPS=1`` (``.ci/run`` sets it) a test that skips for any reason but ``slow``
(a missing extra, a missing browser) fails instead: CI runs every test or says why not."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

NO_SKIPS = os.environ.get("BALI_NO_SKIPS") == "1"
#: the test modules that start Ray, run one after another under pytest-xdist (``module_scope``)
RAY_MODULES = frozenset({"test_ray", "test_ray_cluster", "test_rllib", "test_alphazero"})


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--slow``."""
    parser.addoption("--slow", action="store_true", default=False,
                     help="also run the tests marked slow (long games, training, benchmarks, cold compiles)")


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``slow`` marker; where the suite was started with SIGINT ignored (a background
    job of a non-interactive shell), catch it again, so that the programs the tests start (which
    then get SIGINT's default) can be interrupted as a user interrupts them."""
    config.addinivalue_line("markers", "slow: a long test, run only with --slow")
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def module_scope(nodeid: str) -> str:
    """The unit of work a pytest-xdist worker takes whole: the test's module (its module fixtures
    are built once), and one unit for the modules that start Ray (``ray.init()`` joins a Ray that
    another test started, and ``ray stop`` ends them all)."""
    module = nodeid.split("::", 1)[0]
    return "ray" if Path(module).stem in RAY_MODULES else module


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """With ``-n N`` (pytest-xdist), the workers take whole modules (``module_scope``)."""
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        """xdist's scope scheduling with ``module_scope`` as the scope."""

        def _split_scope(self, nodeid: str) -> str:
            return module_scope(nodeid)

    return ModuleScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the slow tests unless ``--slow`` is given."""
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --slow (CI and the README's test command do)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    """Under ``BALI_NO_SKIPS=1``, a skip (other than a slow test's) is reported as a failure."""
    outcome = yield
    report = outcome.get_result()
    if NO_SKIPS and report.skipped and "slow" not in item.keywords:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under BALI_NO_SKIPS=1 (CI runs every test): {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> object:
    """Under ``BALI_NO_SKIPS=1``, a module skipped as it is collected (``importorskip`` at its
    top) is reported as an error too."""
    outcome = yield
    report = outcome.get_result()
    if NO_SKIPS and report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"skipped under BALI_NO_SKIPS=1 (CI runs every test): {reason}"
