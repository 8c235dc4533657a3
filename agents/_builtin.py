"""Registers the built-in agents with ``make_agent`` (imported lazily so heavy agents load on use)."""

from __future__ import annotations

from .base import register_agent
from .random_agent import RandomAgent

register_agent("random", RandomAgent)


def _mcts(**kwargs):
    from .mcts import MCTSAgent

    return MCTSAgent(**kwargs)


register_agent("mcts", _mcts)
