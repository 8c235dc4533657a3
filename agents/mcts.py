"""The search agent: information-set Monte Carlo tree search over the Numba rules kernels.

For every decision it builds a search tree over the actions seen from its own seat. Each
iteration samples a full state consistent with its observation only (``agents.search.determinize``:
deck order, the others' offering cards within what is publicly known of them, unknown altar
cards), walks the tree with UCB1 (availability-corrected, each seat maximising its own win
share), adds one node and finishes the game with uniform random moves, all inside Numba
(``agents.search.ismcts_iterate``). It plays the most visited action. It never sees hidden state: the
observation is its only input.

Budget: ``sims`` iterations per decision (deterministic; the default), or ``seconds`` per
decision (wall-clock; the result then depends on the machine's speed).
"""

from __future__ import annotations

import time

import numpy as np

from bali_env.engine import N_ACTIONS

from . import search
from .base import Agent


class MCTSAgent(Agent):
    """Information-set MCTS with random rollouts (see the module docstring)."""

    name = "mcts"

    def __init__(self, seed: int | None = None, sims: int = 1000, seconds: float = 0.0, c: float = 0.7,
                 max_nodes: int | None = None) -> None:
        if sims <= 0 and seconds <= 0:
            raise ValueError("give a positive budget: sims > 0 or seconds > 0")
        self.sims = int(sims)
        self.seconds = float(seconds)
        self.c = float(c)
        capacity = int(max_nodes or max(self.sims, 50_000 if self.seconds > 0 else 0) + 1)
        self._child = np.full((capacity, N_ACTIONS), -1, dtype=np.int32)
        self._visits = np.zeros(capacity, dtype=np.int64)
        self._avail = np.zeros(capacity, dtype=np.int64)
        self._value = np.zeros(capacity, dtype=np.float64)
        self._mover = np.zeros(capacity, dtype=np.int64)
        self._n_nodes = np.zeros(1, dtype=np.int64)
        super().__init__(seed)

    def seed(self, seed: int | None = None) -> None:
        """Seed the search's SplitMix64 stream (and the base generator)."""
        super().seed(seed)
        self._stream = np.array([np.random.SeedSequence(seed).generate_state(1, np.uint64)[0]], dtype=np.uint64)

    def search(self, observation: np.ndarray) -> np.ndarray:
        """Run the search from ``observation``; return the root's visit count per action."""
        obs = np.ascontiguousarray(observation, dtype=np.float32)
        tree = (self._child, self._visits, self._avail, self._value, self._mover, self._n_nodes)
        search.ismcts_reset(*tree)
        if self.seconds > 0:
            deadline = time.perf_counter() + self.seconds
            while time.perf_counter() < deadline and self._n_nodes[0] < len(self._visits) - 64:
                search.ismcts_iterate(obs, 64, self._stream, self.c, *tree)
        else:
            search.ismcts_iterate(obs, self.sims, self._stream, self.c, *tree)
        counts = np.zeros(N_ACTIONS, dtype=np.int64)
        for a in range(N_ACTIONS):
            ch = self._child[0, a]
            if ch >= 0:
                counts[a] = self._visits[ch]
        return counts

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The most visited legal action (a forced move is played without searching)."""
        legal = np.flatnonzero(action_mask)
        if len(legal) == 1:
            return int(legal[0])
        counts = self.search(observation)
        counts = np.where(np.asarray(action_mask) > 0, counts, -1)
        return int(np.argmax(counts))
