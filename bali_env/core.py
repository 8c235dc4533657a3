"""The former single-file engine's namespace, kept so that ``from bali_env import core as C``
goes on working: every name of ``bali_env.engine`` (ids, the state layout, the kernels, the
observation spec). New code imports from ``bali_env.engine``.

The search kernels (``determinize``, ``ismcts_reset``, ``ismcts_iterate``) moved next to the agent
that uses them, ``agents/search.py``; they are still reachable here by name.
"""

from __future__ import annotations

from typing import Any

from .engine import *  # noqa: F403

_SEARCH = ("determinize", "ismcts_reset", "ismcts_iterate")


def __getattr__(name: str) -> Any:
    """The search kernels, looked up in ``agents.search`` on first use."""
    if name in _SEARCH:
        from agents import search

        return getattr(search, name)
    raise AttributeError(f"module 'bali_env.core' has no attribute {name!r}")
