"""Test-suite options: ``python -m pytest`` runs the fast tests (under 90 s on 2 cores with a warm
Numba cache); ``python -m pytest --slow`` runs everything (CI and the README's test command)."""

from __future__ import annotations

import pytest


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
