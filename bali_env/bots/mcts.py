"""The search agent: information-set Monte Carlo tree search over the Numba rules kernels.

For every decision it builds a search tree over the actions seen from its own seat. Each
iteration samples a full state consistent with its observation only (the engine's
``determinize``: deck order, the others' offering cards within what is publicly known of them,
unknown altar cards), walks the tree with UCB1 (availability-corrected, each seat maximising its
own win share), adds one node and finishes the game with uniform random moves, all inside Numba
(``bali_env.bots.mcts_search.ismcts_iterate``). It plays the most visited action. It never sees hidden state:
the observation is its only input.

Budget: ``sims`` iterations per decision (deterministic; the default), or ``seconds`` per
decision (wall-clock; the result then depends on the machine's speed). A batch of decisions
(``act_batch``, ``act_batch_keyed``: tournaments, training opponents) is searched in parallel over
the cores, one tree per thread (``bali_env.bots.mcts_search.ismcts_choose_batch``), with exactly the choices
of one search per row.
"""

from __future__ import annotations

import time

import numba
import numpy as np

from bali_env.engine import N_ACTIONS, seeds
from bali_env.engine.validate import check_int, check_number

from bali_env.bots import mcts_search as search
from bali_env.bots.base import Agent, check_keys, check_observations
from bali_env.bots.threads import on_decision_threads


def check_position(obs: np.ndarray, mask: np.ndarray | None = None) -> None:
    """ValueError unless a full game state gives exactly this observation: it must be one that the
    engine's ``determinize`` can read (``bali_env.engine.check_observation``: counts in range and
    adding up), and one sample must be a consistent state (``bali_env.engine.contract.check_states``)
    that observed from seat 0 gives back ``obs`` and, when given, the legal actions ``mask``.
    Nothing else reaches the search."""
    from bali_env import engine as E
    from bali_env.engine.contract import check_states

    obs = E.check_observation(obs)
    s = np.zeros(E.STATE_SIZE, dtype=E.STATE_DTYPE)
    E.determinize(obs, np.array([7], dtype=np.uint64), s)
    try:
        check_states(s[None])
    except ValueError as exc:
        raise ValueError(f"observation: no consistent game state gives it ({exc})") from None
    again = np.zeros(E.OBS_DIM, dtype=np.float32)
    legal = np.zeros(E.N_ACTIONS, dtype=np.int8)
    E.observe(s, 0, again, legal)
    if not np.array_equal(again, obs) or (mask is not None and not np.array_equal(legal, mask)):
        raise ValueError("observation: no consistent game state gives it (or these legal actions)")


class MCTSAgent(Agent):
    """Information-set MCTS with random rollouts (see the module docstring)."""

    name = "mcts"

    def __init__(self, seed: int | None = None, sims: int = 1000, seconds: float = 0.0, c: float = 0.7,
                 max_nodes: int | None = None) -> None:
        self.sims = check_int("mcts setting sims", sims, 0)
        self.seconds = check_number("mcts setting seconds", seconds, 0)
        self.c = check_number("mcts setting c", c, 0)
        if self.sims <= 0 and self.seconds <= 0:
            raise ValueError("give a positive budget: sims > 0 or seconds > 0")
        capacity = int(max_nodes or max(self.sims, 50_000 if self.seconds > 0 else 0) + 1)
        self._tree = search.MctsTree.allocate(capacity)
        self._batch_trees = self._tree.stacked(0)  # ``_trees``: one per thread, made on use
        super().__init__(seed)

    def seed(self, seed: int | None = None) -> None:
        """Seed the search's SplitMix64 stream (and the base generator)."""
        super().seed(seed)
        self._stream = np.array([seeds.stream_state(seed)], dtype=np.uint64)

    def search(self, observation: np.ndarray, action_mask: np.ndarray | None = None) -> np.ndarray:
        """Run the search from ``observation`` (checked first: ``check_position``); return the
        root's visit count per action."""
        obs, masks = check_observations(observation, np.ones(N_ACTIONS, np.int8) if action_mask is None
                                        else action_mask)
        obs = np.ascontiguousarray(obs[0])
        check_position(obs, None if action_mask is None else masks[0])
        tree = self._tree
        search.ismcts_reset(tree)
        try:
            if self.seconds > 0:
                deadline = time.perf_counter() + self.seconds
                while time.perf_counter() < deadline and tree.n_nodes[0] < len(tree.visits) - 64:
                    search.ismcts_iterate(obs, 64, self._stream, self.c, tree)
            else:
                search.ismcts_iterate(obs, self.sims, self._stream, self.c, tree)
        except ZeroDivisionError:  # a sampled game reached a decision without a legal action
            raise ValueError("observation: no consistent game continues from it (a count is off)") from None
        counts = np.zeros(N_ACTIONS, dtype=np.int64)
        for a in range(N_ACTIONS):
            ch = tree.child[0, a]
            if ch >= 0:
                counts[a] = tree.visits[ch]
        return counts

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """One action per row, the rows searched in parallel over the cores (``act_batch_keyed``
        with keys drawn from the agent's generator)."""
        keys = self.rng.integers(0, 2**63 - 1, size=len(np.atleast_2d(observations)), dtype=np.int64)
        return self.act_batch_keyed(observations, action_masks, keys.astype(np.uint64))

    @on_decision_threads
    def act_batch_keyed(self, observations: np.ndarray, action_masks: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """What ``seed(keys[i])`` then ``act`` gives for every row i, the searches run in parallel
        over the idle cores (``threads.decision_threads``; the kernel:
        ``bali_env.bots.mcts_search.ismcts_choose_batch``); each row is checked first, like ``act``.
        With a ``seconds`` budget the rows are searched one by one."""
        if self.seconds > 0:
            return super().act_batch_keyed(observations, action_masks, keys)
        obs, masks = check_observations(observations, action_masks)
        keys = check_keys(keys, len(obs))
        out = np.argmax(masks, axis=1).astype(np.int64)  # forced moves are played without searching
        rows = np.flatnonzero(masks.sum(axis=1) > 1)
        if len(rows) == 0:
            return out
        for i in rows:
            check_position(obs[i], masks[i])
        streams = np.array([seeds.stream_state(int(keys[i])) for i in rows], dtype=np.uint64)
        chosen = np.empty(len(rows), dtype=np.int64)
        search.ismcts_choose_batch(np.ascontiguousarray(obs[rows]), np.ascontiguousarray(masks[rows]), self.sims,
                                   streams, self.c, self._trees(min(len(rows), numba.get_num_threads())), chosen)
        out[rows] = chosen
        return out

    def compile_kernels(self) -> None:
        """Compile (or load from Numba's disk cache) the search kernels: a 2-simulation search of
        a dealt position, one by one and batched."""
        from bali_env.envs.bali_v0 import raw_env

        env = raw_env(num_players=2)
        env.reset(seed=0)
        o = env.observe(env.agent_selection)
        while o["action_mask"].sum() < 2:  # a position that needs a search
            env.step(int(o["action_mask"].argmax()))
            o = env.observe(env.agent_selection)
        probe = MCTSAgent(seed=0, sims=2)
        probe.act(o["observation"], o["action_mask"])
        probe.act_batch_keyed(o["observation"][None], o["action_mask"][None], np.zeros(1, dtype=np.uint64))

    def _trees(self, count: int) -> search.MctsTree:
        """``count`` search trees shaped like the agent's own, stacked (kept for the next call; the
        kernel empties a tree before each search)."""
        if len(self._batch_trees.child) < count:
            self._batch_trees = self._tree.stacked(count)
        return self._batch_trees.first(count)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The most visited legal action (a forced move is played without searching); the
        observation and mask are checked first (``check_observations``)."""
        obs, masks = check_observations(observation, action_mask)
        if obs.shape[0] != 1:
            raise ValueError(f"act takes one observation, got {obs.shape[0]}")
        legal = np.flatnonzero(masks[0])
        if len(legal) == 1:
            return int(legal[0])
        counts = self.search(obs[0], masks[0])
        counts = np.where(masks[0] > 0, counts, -1)
        return int(np.argmax(counts))
