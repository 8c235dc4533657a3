"""A stable-baselines3 ``VecEnv`` over the batched Numba environment, for MaskablePPO.

``BaliSB3VecEnv(num_envs, pool, num_players=2, ...)`` runs ``num_envs`` games in one
``BaliVectorEnv`` (one Numba call per step, no Python env object per game). In every game the
learner plays one seat, rotating with the game count of that slot so every seat is trained;
the other seats are played by opponents drawn from an ``OpponentPool`` (``bali_env.training.pool``) when
the game starts (random, greedy, frozen copies of past policies, ...). ``step`` applies the learner's actions,
then lets the opponents move (in batches, grouped by opponent) until every game waits for the
learner again. A game that ends (on anyone's move) reports the learner's terminal reward and
``done``, and the slot starts a new game at once (SB3's VecEnv convention).

``env_method("action_masks")`` / ``action_masks()`` give the learner's legal actions, which is
what sb3-contrib's ``MaskablePPO`` asks for. With ``features="greedy-v1"`` each observation is
followed by the heuristic's features (``bali_env.agents.features``): the network input of the policies
``bali train`` ships.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from bali_env.agents.features import feature_count, policy_input
from bali_env import engine as C
from bali_env.envs.batched import BaliVectorEnv

from .pool import OpponentPool, make_policy_opponent

__all__ = ["BaliSB3VecEnv", "OpponentPool", "make_policy_opponent"]  # the pool's names: re-exported


class BaliSB3VecEnv(VecEnv):
    """Learner-vs-pool games on the batched Numba env, as an SB3 VecEnv (see the module docstring)."""

    def __init__(
        self,
        num_envs: int,
        pool: OpponentPool,
        num_players: int = 2,
        oracle: bool = False,
        demon: bool = False,
        seed: int | None = None,
        reward: str = "win_loss",
        features: str | None = None,
    ) -> None:
        extra = feature_count(features)  # ValueError for an unknown feature set
        if len(pool) == 0:
            raise ValueError("the opponent pool is empty")
        self.reward_scale = 0.1 if reward == "score" else 1.0  #: score margins (points) / 10
        self.venv = BaliVectorEnv(num_envs, num_players=num_players, oracle=oracle, demon=demon, seed=seed,
                                  reward=reward, parallel=False)  # PyTorch uses the cores while the env steps
        self.pool = pool
        self.num_players = num_players
        self.features = features  #: what ``bali_env.agents.features.policy_input`` appends to the observations
        low = np.concatenate([np.zeros(C.OBS_DIM), np.full(extra, -np.inf)]).astype(np.float32)
        high = np.concatenate([C.OBS_HIGH, np.full(extra, np.inf)]).astype(np.float32)
        obs_space = gymnasium.spaces.Box(low=low, high=high, dtype=np.float32)
        self.render_mode = None  # nothing to render (SB3 asks for the attribute)
        super().__init__(num_envs, obs_space, gymnasium.spaces.Discrete(C.N_ACTIONS))
        self.learner_seat = np.zeros(num_envs, dtype=np.int64)
        self.seat_opponent = np.zeros((num_envs, num_players), dtype=np.int64)  # pool index per seat
        self.games_started = np.zeros(num_envs, dtype=np.int64)
        self.episode_returns: list[float] = []
        self.episode_opponents: list[str] = []
        self._actions: np.ndarray | None = None
        self._seed = seed

    # ------------------------------------------------------------------ seating
    def _seat_game(self, i: int) -> None:
        n = self.num_players
        self.learner_seat[i] = (self.games_started[i] + i) % n
        self.games_started[i] += 1
        for seat in range(n):
            self.seat_opponent[i, seat] = -1 if seat == self.learner_seat[i] else self.pool.sample()

    def _opponents_move(self, rewards: np.ndarray, dones: np.ndarray) -> None:
        """Let opponents move until every game waits for its learner; collect the learner's
        terminal rewards of games that end meanwhile."""
        v = self.venv
        rows = np.arange(self.num_envs)
        while True:
            waiting = v.to_move != self.learner_seat
            if not waiting.any():
                return
            actions = np.full(self.num_envs, -1, dtype=np.int64)
            who = self.seat_opponent[rows, v.to_move]
            for k in np.unique(who[waiting]):
                sel = np.flatnonzero(waiting & (who == k))
                actions[sel] = self.pool.agents[k].act_batch(v.obs[sel], v.action_masks[sel])
            _, r, term, _, _ = v.step(actions)
            self._collect(r, term, rewards, dones)

    def _collect(self, r: np.ndarray, term: np.ndarray, rewards: np.ndarray, dones: np.ndarray) -> None:
        for i in np.flatnonzero(term):
            ret = float(r[i, self.learner_seat[i]]) * self.reward_scale
            rewards[i] = ret
            dones[i] = True
            self.episode_returns.append(ret)
            self.episode_opponents.append(" | ".join(self.pool.names[k] for k in self.seat_opponent[i] if k >= 0))
            self._seat_game(int(i))

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> np.ndarray:
        """Deal every game, seat the learners, play the opponents up to the learners' turns."""
        seed = self._seed
        self.venv.reset(seed=seed)
        self.games_started[:] = 0
        for i in range(self.num_envs):
            self._seat_game(i)
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        self._opponents_move(rewards, dones)
        return self.observations()

    def observations(self) -> np.ndarray:
        """The learners' network inputs: their observations, followed by the ``features`` (if any)."""
        if self.features is None:
            return self.venv.obs.copy()
        return policy_input(self.venv.obs, self.venv.action_masks, self.features, checked=True)  # the env's own

    _SAVED = ("learner_seat", "seat_opponent", "games_started")
    _SAVED_GAMES = ("states", "obs", "action_masks", "to_move", "_streams")

    def checkpoint(self) -> dict[str, np.ndarray]:
        """Copies of every game in flight (states, random streams, seats and opponents), for
        ``restore``: a resumed training run continues the same games."""
        saved = {name: getattr(self, name).copy() for name in self._SAVED}
        saved.update({f"games.{name}": getattr(self.venv, name).copy() for name in self._SAVED_GAMES})
        return saved

    def restore(self, saved: dict[str, np.ndarray]) -> None:
        """Put back the games ``checkpoint()`` saved (same number of games and players); the
        states are checked (``check_states``) before any kernel sees them. Returns the learners'
        observations via ``self.venv.obs``."""
        from bali_env.engine.contract import check_states

        for name in self._SAVED:
            if saved[name].shape != getattr(self, name).shape:
                raise ValueError(f"checkpoint {name} has shape {saved[name].shape}, this env "
                                 f"{getattr(self, name).shape} (same --envs and --players needed)")
        states = check_states(saved["games.states"])
        if states.shape != self.venv.states.shape:
            raise ValueError(f"checkpoint holds {len(states)} games, this env {self.num_envs}")
        if saved["seat_opponent"].max() >= len(self.pool):
            raise ValueError("checkpoint seats an opponent the pool does not hold")
        for name in self._SAVED:
            getattr(self, name)[...] = saved[name]
        for name in self._SAVED_GAMES:
            getattr(self.venv, name)[...] = states if name == "states" else saved[f"games.{name}"]
        self.venv.terminated[:] = False
        self.venv._has_reset = True

    def step_async(self, actions: np.ndarray) -> None:
        """Store the learner's actions (one per game)."""
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        """Apply the learner's actions, then the opponents' moves; SB3's (obs, rewards, dones, infos)."""
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        dones = np.zeros(self.num_envs, dtype=bool)
        _, r, term, _, _ = self.venv.step(self._actions)
        self._collect(r, term, rewards, dones)
        self._opponents_move(rewards, dones)
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        return self.observations(), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, bool [num_envs, 44]."""
        return self.venv.action_masks.astype(bool)

    def close(self) -> None:
        """Nothing to release."""

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The attribute of this (single) object, once per selected env."""
        return [getattr(self, attr_name)] * len(self._get_indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set an attribute on this object."""
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        """``action_masks`` per env (what MaskablePPO calls); other methods are called once per env."""
        idx = self._get_indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in idx]
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result for _ in idx]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """No per-env wrappers here."""
        return [False] * len(self._get_indices(indices))

    def has_attr(self, attr_name: str) -> bool:
        """True for attributes of this object (``action_masks`` included)."""
        return hasattr(self, attr_name)

    def seed(self, seed: int | None = None) -> Sequence[None | int]:
        """Seed the next reset()."""
        self._seed = seed
        return [seed] * self.num_envs

    def _get_indices(self, indices: Any) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)
