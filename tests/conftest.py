"""Test-suite options: ``python -m pytest`` runs the fast tests (under 90 s on 2 cores with a warm
Numba cache); ``python -m pytest --slow`` runs everything (CI and the README's test command).

With ``BALI_NO_SKIPS=1`` (``.ci/run`` sets it) a test that skips for any reason but ``slow``
(a missing extra, a missing browser) fails instead: CI runs every test or says why not."""

from __future__ import annotations

import os

import pytest

NO_SKIPS = os.environ.get("BALI_NO_SKIPS") == "1"


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--slow``."""
    parser.addoption("--slow", action="store_true", default=False,
                     help="also run the tests marked slow (long games, training, benchmarks, cold compiles)")


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``slow`` marker."""
    config.addinivalue_line("markers", "slow: a long test, run only with --slow")


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
