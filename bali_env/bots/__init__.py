"""Baseline agents for bali-env: one small interface (``Agent``) and the built-in players.

``make_agent(name, seed=None)`` builds one by name: ``"random"``, ``"greedy"``, ``"mcts"`` (with
optional settings such as ``"mcts:sims=400"``), ``"ppo"`` (the shipped policies), ``"ppo+search"``
(search guided by them), ``"sb3:PATH"`` for a trained policy file, ``"FILE.py:Class"`` or
``"cmd:PROGRAM"`` (``bali_env.bots.registry.make_agent`` says more). One module per job:

| module | job |
|---|---|
| ``base.py`` | ``Agent`` (the interface) and the checks of what an agent is handed |
| ``registry.py`` | ``make_agent`` / ``register_agent``: agents by spec, each module imported on first use |
| ``random_agent.py`` | ``random``: any legal action, uniformly |
| ``greedy/`` | ``greedy``: the hand-written heuristic, one scoring kernel per decision (its docstring maps it) |
| ``mcts.py``, ``mcts_search.py`` | ``mcts``: information-set Monte Carlo tree search; its Numba kernels |
| ``ppo.py``, ``features.py`` | ``ppo``: an exported policy and the agent that plays it; its input features |
| ``network.py`` | a policy's arithmetic in one fixed order: the same bits on every CPU, BLAS and batch |
| ``puct.py``, ``puct_search.py`` | ``ppo+search``: policy-guided search (PUCT, or Gumbel's root); its kernels |
| ``threads.py`` | the threads a decision may use now: BLAS on one, Numba's kernels on the idle cores |
| ``sb3.py`` | ``sb3:PATH``: a stable-baselines3 model file as an agent |
| ``policies/`` | the shipped policies (``bali_2p.npz``; ``bali_4p.npz``, 3 players too): ``training/README.md`` |
| ``protocol/`` | ``cmd:PROGRAM``: a bot in any language speaking JSON lines, its process, clock and faults |

The registry stands above every agent of the room (it names them in strings, imported on first
use). Every seed and random key an agent draws from is the engine's (``bali_env.engine.seeds``).
"""

from __future__ import annotations

from bali_env.bots.base import Agent
from bali_env.bots.registry import make_agent, register_agent
from bali_env.bots.random_agent import RandomAgent

__all__ = ["Agent", "RandomAgent", "make_agent", "register_agent"]
