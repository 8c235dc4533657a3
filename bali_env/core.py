"""The former single-file engine's namespace, kept so that ``from bali_env import core as C``
goes on working: every name of ``bali_env.engine`` (ids, the state layout, the kernels, the
observation spec, ``determinize``). New code imports from ``bali_env.engine``.

The tree-search kernels (``ismcts_reset``, ``ismcts_iterate``) are no longer reachable here: they
belong to the search agent, ``agents.search`` (the engine does not import the agents).
"""

from __future__ import annotations

from .engine import *  # noqa: F403
