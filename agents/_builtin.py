"""Registers the built-in agents with ``make_agent`` (imported lazily so heavy agents load on use)."""

from __future__ import annotations

from .base import register_agent
from .greedy import GreedyAgent
from .random_agent import RandomAgent

register_agent("random", RandomAgent)
register_agent("greedy", GreedyAgent)


def _mcts(**kwargs):
    from .mcts import MCTSAgent

    return MCTSAgent(**kwargs)


register_agent("mcts", _mcts)


def _sb3(path: str, seed=None, **kwargs):
    from .sb3_agent import SB3Agent

    return SB3Agent(path=path, seed=seed, **kwargs)


register_agent("sb3", _sb3)


def _ppo(seed=None, path=None, deterministic=True, **kwargs):
    from .ppo_agent import PPOAgent

    return PPOAgent(seed=seed, path=path, deterministic=bool(deterministic), **kwargs)


register_agent("ppo", _ppo)
