"""``ppo+search``: information-set search guided by a trained policy and its value head (PUCT).

AlphaZero's search over the hidden-information game: for every decision, ``sims`` descents each
sample a full state consistent with the agent's own observation (the engine's ``determinize``),
walk the tree by PUCT with the policy's probabilities as priors, and stop at a new position,
which the network evaluates (its priors for the next descents, its value head's expected win
share for every seat, backed up the path) instead of a random playout. The agent plays the
most visited action. The tree work is Numba (``bali_env.bots.puct_search``); the network runs in NumPy on
all the leaves of a round at once (``leaves`` per tree per round, with a virtual loss), over
every position of a batch together (tournaments, training opponents).

Settings (``make_agent("ppo+search:sims=400,c=1.5")``): ``sims`` descents per decision after the
root's own evaluation (default 800; rounded up to whole rounds), ``c`` the exploration weight
(default 1.5), ``leaves`` descents per tree per round (default 16),
``path`` a policy file with a value head (default: the shipped one for the game's player count;
``bali fit-value`` adds a head to a file; a head with one output per seat is cut to a game of
fewer seats and refused for one of more), ``gumbel`` the number of actions Gumbel root selection
considers (default 0: the root is PUCT like every node; 16 is Gumbel MuZero's): the root's
descents then go to the actions sequential halving keeps, and the agent plays the one left with
the highest Gumbel noise plus log prior plus scaled Q (Danihelka et al. 2022), which needs far
fewer descents than PUCT's most visited. A forced move is played without searching.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from bali_env.engine import MIN_PLAYERS, N_ACTIONS, N_PLAYER_COUNTS, O_NUM_PLAYERS
from bali_env.engine.validate import check_int, check_number

from bali_env.bots import network
from bali_env.bots import puct_search as K
from bali_env.bots.base import Agent, check_keys, check_observations
from bali_env.engine import seeds
from bali_env.bots.mcts import check_position
from bali_env.bots.ppo import ExportedPolicy, PPOAgent
from bali_env.bots.threads import on_decision_threads

MAX_DEPTH = 1024  #: decisions a descent may go down before it evaluates where it stands


class PolicySearchAgent(Agent):
    """Policy-guided information-set search (see the module docstring)."""

    batched = True

    def __init__(self, seed: int | None = None, sims: int = 800, c: float = 1.5, leaves: int = 16,
                 path: str | Path | None = None, gumbel: int = 0) -> None:
        self.sims = check_int("ppo+search setting sims", sims, 1)
        self.c = check_number("ppo+search setting c", c, 0)
        self.leaves = min(check_int("ppo+search setting leaves", leaves, 1), self.sims)
        self.gumbel = check_int("ppo+search setting gumbel", gumbel, 0)
        self._policy = PPOAgent(path=path) if path is not None else PPOAgent()
        self._networks: dict[int, ExportedPolicy] = {}  #: the network searched, by player count
        if path is not None:
            self._check_value(self._policy._policy_for(0))
        self.name = "ppo+search" if path is None else f"ppo+search:{Path(path).stem}"
        super().__init__(seed)

    @staticmethod
    def _check_value(policy: ExportedPolicy) -> ExportedPolicy:
        if policy.value_weights is None:
            where = policy.path or "the policy"
            raise ValueError(f"ppo+search needs a policy with a value head; {where} has none "
                             "(add one: bali fit-value POLICY --out FILE.npz, then ppo+search:path=FILE.npz)")
        return policy

    def check_players(self, num_players: int) -> None:
        """ValueError unless there is a policy with a value head for ``num_players``."""
        self._network_for(num_players)

    def _network_for(self, num_players: int) -> ExportedPolicy:
        """The network searched in games of ``num_players``: the policy, whose value head gives one
        share (the other seats split the rest) or one per seat; a per-seat head for more seats is
        cut to the game's (``ExportedPolicy.for_players``); ValueError for no head or too few seats
        (the kernels would read past the head's outputs)."""
        if num_players not in self._networks:
            policy = self._check_value(self._policy._policy_for(num_players))
            outputs = policy.value_weights[-1][0].shape[1]
            if outputs not in (1, num_players):
                if outputs < num_players:
                    raise ValueError(f"ppo+search: the value head of {policy.path or 'the policy'} gives {outputs} "
                                     f"seats' shares, fewer than the {num_players} seats of this game; search it "
                                     f"in {outputs}-player games, or fit a head for {num_players} (bali fit-value)")
                policy = policy.for_players(num_players)
            self._networks[num_players] = policy
        return self._networks[num_players]

    def compile_kernels(self) -> None:
        """Compile (or load) the search and feature kernels on a dealt 2-player position."""
        from bali_env.envs.bali_v0 import raw_env

        self._policy.compile_kernels()
        env = raw_env(num_players=2)
        env.reset(seed=0)
        o = env.observe(env.agent_selection)
        while o["action_mask"].sum() < 2:
            env.step(int(o["action_mask"].argmax()))
            o = env.observe(env.agent_selection)
        probe = PolicySearchAgent(seed=0, sims=2, leaves=2, gumbel=self.gumbel)
        probe._policy = self._policy  # the policies this agent already loaded
        probe.act(o["observation"], o["action_mask"])

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The most visited legal action of one search (checked first, like ``act_batch``)."""
        obs, masks = check_observations(observation, action_mask)
        if obs.shape[0] != 1:
            raise ValueError(f"act takes one observation, got {obs.shape[0]}")
        return int(self.act_batch(obs, masks)[0])

    def seed(self, seed: int | None = None) -> None:
        """Seed the agent's generator; the next search's key is ``seed`` itself, so ``seed(k)``
        then ``act`` is what ``act_batch_keyed`` gives a row of key k (as ``mcts``)."""
        super().seed(seed)
        self._key = seed

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """One action per row (``act_batch_keyed`` with keys from the agent's generator; the first
        row's key is the seed, when it was just set)."""
        keys = self.rng.integers(0, 2**63 - 1, size=len(np.atleast_2d(observations)), dtype=np.int64).astype(np.uint64)
        if self._key is not None and len(keys):
            keys[0] = self._key % 2**64
            self._key = None
        return self.act_batch_keyed(observations, action_masks, keys)

    @on_decision_threads
    def act_batch_keyed(self, observations: np.ndarray, action_masks: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """Row i's action is what ``seed(keys[i])`` then ``act`` gives; all rows searched together
        (on the idle cores: ``threads.decision_threads``)."""
        obs, masks = check_observations(observations, action_masks)
        keys = check_keys(keys, len(obs))
        out = np.argmax(masks, axis=1).astype(np.int64)  # forced moves are played without searching
        rows = np.flatnonzero(masks.sum(axis=1) > 1)
        counts = MIN_PLAYERS + np.argmax(obs[:, O_NUM_PLAYERS : O_NUM_PLAYERS + N_PLAYER_COUNTS], axis=1)
        for n in np.unique(counts[rows]):
            part = rows[counts[rows] == n]
            for i in part:
                check_position(obs[i], masks[i])
            policy = self._network_for(int(n))
            if self.gumbel:
                out[part] = self.search_root(obs[part], masks[part], keys[part], policy)["action"]
            else:
                visits = self.search(obs[part], masks[part], keys[part], policy)
                out[part] = np.argmax(visits, axis=1)  # the lowest id among the most visited
        return out

    def search(self, obs: np.ndarray, masks: np.ndarray, keys: np.ndarray, policy: ExportedPolicy) -> np.ndarray:
        """The root visits per action ([N, N_ACTIONS]) of one search per checked row."""
        return self.search_root(obs, masks, keys, policy)["visits"]

    def search_root(self, obs: np.ndarray, masks: np.ndarray, keys: np.ndarray, policy: ExportedPolicy,
                    noise: tuple[float, float] | None = None) -> dict[str, np.ndarray]:
        """One search per checked row, and what its root learned: ``visits`` per action
        ([N, N_ACTIONS] int64), ``q`` (the mean win share the root's seat found under each action,
        NaN where unvisited), ``prior`` (the network's probabilities over the legal actions) and
        ``value`` (the network's win share for the root's seat, [N]). With ``noise = (alpha,
        eps)`` the root's priors are mixed with Dirichlet(alpha) noise over the legal actions,
        ``(1 - eps) * prior + eps * noise``, AlphaZero's exploration in self-play (drawn from
        each row's key, so a row's search still depends on its key only). With the ``gumbel``
        setting the root is Gumbel's (the module docstring; noise drawn from each row's key, and
        ``noise`` should be None), ``action`` is the action it chose and ``sigma`` the
        ``puct_search.root_sigma`` of its completed q that chose it."""
        trees, per = len(obs), self.leaves
        players = MIN_PLAYERS + int(np.argmax(obs[0, O_NUM_PLAYERS : O_NUM_PLAYERS + N_PLAYER_COUNTS]))
        cap = -(-self.sims // per) * per + 2  # at most one new node a descent, and the root
        forest = K.PuctTrees.allocate(trees, cap)
        full = K.Descents.allocate(trees * per, MAX_DEPTH)
        streams = np.array([seeds.stream_state(int(k)) for k in keys], dtype=np.uint64)
        roots = np.ascontiguousarray(obs, dtype=np.float32)
        gumbel = K.GumbelRoot.off(trees)  # Gumbel's root (after the roots' evaluation), or none
        K.puct_reset(forest)
        for k, descents in enumerate([full.first(trees)] + [full] * (-(-self.sims // per))):  # the roots, then rounds
            K.puct_descend(roots, streams, self.c, forest, descents, gumbel)
            rows = np.flatnonzero(descents.depths >= 0)
            if len(rows) == 0:
                continue
            x = policy.input(descents.leaf_obs[rows], descents.leaf_masks[rows], checked=True)
            K.puct_expand(rows, network.softmax_weights(policy.forward(x)),
                          policy.seat_values(x, players).astype(np.float64), descents, forest)
            if k == 0:
                legal = masks > 0
                prior = np.where(legal, forest.logits[:, 0, :], 0.0).astype(np.float64)
                prior /= network.row_sums(prior)[:, None]
                root_value = forest.prior_v[:, 0].copy()
                if noise is not None:
                    forest.logits[:, 0, :] = np.where(legal, root_noise(prior, legal, keys, *noise), 1e-30)
                if self.gumbel:
                    gumbel = K.GumbelRoot(*gumbel_root(prior, legal, keys, self.gumbel, cap - 2))
        out = np.zeros((trees, N_ACTIONS), dtype=np.int64)
        K.root_visits(forest, np.ascontiguousarray(masks), out)
        kids = forest.child[:, 0, :]
        n = np.where(kids >= 0, np.take_along_axis(forest.visits, np.maximum(kids, 0), axis=1), 0)
        w = np.where(kids >= 0, np.take_along_axis(forest.value, np.maximum(kids, 0), axis=1), 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            q = np.where((n > 0) & (masks > 0), w / n, np.nan)
        found = {"visits": out, "q": q, "prior": prior, "value": root_value}
        if self.gumbel:
            sigma = np.zeros((trees, N_ACTIONS), dtype=np.float64)
            K.root_sigma(out, q, prior, root_value, np.ascontiguousarray(masks > 0), sigma)
            top = (out == out.max(axis=1, keepdims=True)) & (masks > 0)
            found["action"] = np.argmax(np.where(top, gumbel.score + sigma, -np.inf), axis=1)
            found["sigma"] = sigma  # the improved policy's too (self-play's target)
        return found


def gumbel_root(prior: np.ndarray, legal: np.ndarray, keys: np.ndarray, considered: int,
                descents: int) -> tuple[np.ndarray, np.ndarray]:
    """Gumbel root selection's inputs for ``puct_search.puct_descend``: each row's Gumbel(0, 1)
    noise (a hash of the row's key and the action, ``gumbel_noise``) plus log prior over its legal
    actions (-inf elsewhere), and its sequential-halving schedule over min(``considered``, legal
    actions) actions for ``descents`` descents."""
    g = gumbel_noise(keys, prior.shape[1])
    score = np.where(legal, g + network.fixed_log(np.maximum(prior, 1e-30)), -np.inf)
    width = np.minimum(considered, legal.sum(axis=1))
    halving = np.stack([_schedule(int(m), descents) for m in width])
    return score, halving


def gumbel_noise(keys: np.ndarray, actions: int) -> np.ndarray:
    """Gumbel(0, 1) noise [len(keys), actions], each value a SplitMix64 hash of the row's key and
    the action (so a row's noise depends on its key only)."""
    with np.errstate(over="ignore"):
        rows = np.asarray(keys, dtype=np.uint64)[:, None]
        z = seeds.mix(rows * np.uint64(seeds.GOLDEN) + np.arange(1, actions + 1, dtype=np.uint64))
    u = ((z >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0**53  # in (0, 1)
    return -network.fixed_log(-network.fixed_log(u))


@lru_cache(maxsize=256)
def _schedule(considered: int, descents: int) -> np.ndarray:
    """``halving_schedule``, kept: a search asks for the same few again and again."""
    return K.halving_schedule(considered, descents)


def root_noise(prior: np.ndarray, legal: np.ndarray, keys: np.ndarray, alpha: float, eps: float) -> np.ndarray:
    """Each row's prior mixed with Dirichlet(``alpha``) noise over its legal actions (drawn from
    a generator seeded by the row's key): ``(1 - eps) * prior + eps * noise``."""
    out = prior.copy()
    for i, key in enumerate(keys):
        acts = np.flatnonzero(legal[i])
        eta = np.random.default_rng([int(key), 1]).dirichlet(np.full(len(acts), float(alpha)))
        out[i, acts] = (1.0 - eps) * prior[i, acts] + eps * eta
    return out
