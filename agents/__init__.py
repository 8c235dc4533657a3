"""Baseline agents for bali-env: one small interface (``Agent``) and the built-in players.

``make_agent(name, seed=None)`` builds one by name: ``"random"``, ``"greedy"``, ``"mcts"`` (with
optional settings such as ``"mcts:sims=400"``), ``"ppo"`` (the shipped policies), ``"ppo+search"``
(search guided by them), ``"sb3:PATH"`` for a trained policy file, ``"FILE.py:Class"`` or
``"cmd:PROGRAM"`` (``agents.base.make_agent`` says more).
"""

from __future__ import annotations

from .base import Agent, make_agent, register_agent
from .random_agent import RandomAgent

__all__ = ["Agent", "RandomAgent", "make_agent", "register_agent"]
