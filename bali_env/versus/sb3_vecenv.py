"""The learner-vs-opponents vector env as a stable-baselines3 ``VecEnv``, for MaskablePPO:
``bali train`` trains on it.

``BaliSB3VecEnv(num_envs, opponents, num_players=2, ...)`` is SB3's view of a
``BaliGymVectorEnv`` (``bali_env.versus.vector``: ``num_envs`` games on the batched engine, the
learner's seat rotating per game, the opponents moving inside the batch): ``step_wait`` returns
SB3's ``(obs, rewards, dones, infos)``, and a game that ends reports the learner's terminal reward,
``done`` and, in its info, ``terminal_observation`` (the learner's last observation, as SB3's
wrappers and ``VecMonitor`` expect) with the game's result; the slot goes on with a new game at
once (SB3's convention). ``env_method("action_masks")`` / ``action_masks()`` give the learners'
legal actions, what sb3-contrib's ``MaskablePPO`` asks for. ``opponents`` is an opponents spec
(``"random:1,greedy:3"``) or an ``OpponentPool`` (``bali train``'s, with its self-play snapshots).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv

from bali_env.versus.opponents import DEFAULT_OPPONENTS, OpponentPool
from bali_env.versus.vector import BaliGymVectorEnv

__all__ = ["BaliSB3VecEnv"]


class BaliSB3VecEnv(VecEnv):
    """Learner-vs-opponents games on the batched engine, as an SB3 VecEnv (see the module docstring)."""

    def __init__(self, num_envs: int, opponents: str | OpponentPool = DEFAULT_OPPONENTS, num_players: int = 2,
                 oracle: bool = False, demon: bool = False, seed: int | None = None, reward: str = "win_loss",
                 features: str | None = None, illegal_action: str = "terminate") -> None:
        self.gym = BaliGymVectorEnv(num_envs, opponents=opponents, num_players=num_players, oracle=oracle,
                                    demon=demon, reward=reward, features=features, illegal_action=illegal_action,
                                    autoreset_mode=AutoresetMode.SAME_STEP)  # SB3's convention
        self.render_mode = None  # nothing to render (SB3 asks for the attribute)
        super().__init__(num_envs, self.gym.single_observation_space, self.gym.single_action_space)
        self._actions: np.ndarray | None = None
        self._seed = seed

    # ------------------------------------------------------------------ what training reads
    @property
    def games(self) -> Any:
        """The batched engine's games (``BaliVectorEnv``): states, observations, seats to move."""
        return self.gym.games

    @property
    def pool(self) -> OpponentPool:
        """The opponents the games draw from."""
        return self.gym.pool

    @property
    def learner_seat(self) -> np.ndarray:
        """The learner's seat in each game."""
        return self.gym.learner_seat

    @property
    def episode_returns(self) -> list[float]:
        """The learner's return of every finished game, in order."""
        return self.gym.episode_returns

    @property
    def episode_opponents(self) -> list[str]:
        """Who the learner played in each finished game."""
        return self.gym.episode_opponents

    def observations(self) -> np.ndarray:
        """The learners' network inputs now."""
        return self.gym.observations()

    def checkpoint(self) -> dict[str, np.ndarray]:
        """Every game in flight (``BaliGymVectorEnv.checkpoint``)."""
        return self.gym.checkpoint()

    def restore(self, saved: dict[str, np.ndarray]) -> None:
        """Put back the games ``checkpoint()`` saved."""
        self.gym.restore(saved)

    # ------------------------------------------------------------------ VecEnv API
    def reset(self) -> np.ndarray:
        """Deal every game (from ``seed``, as set), seat the learners, play the opponents up to them."""
        obs, _ = self.gym.reset(seed=self._seed)
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Store the learner's actions (one per game)."""
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        """Apply the learner's actions, then the opponents' moves; SB3's (obs, rewards, dones, infos)."""
        obs, rewards, terminated, truncated, infos = self.gym.step(self._actions)
        dones = terminated | truncated
        out: list[dict] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            out[i] = {"terminal_observation": infos["final_obs"][i], "TimeLimit.truncated": bool(truncated[i]),
                      **{k: v[i] for k, v in infos["final_info"].items() if not k.startswith("_")}}
        return obs, rewards, dones, out

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, bool [num_envs, 44]."""
        return self.gym.action_masks()

    def close(self) -> None:
        """Release the opponents."""
        self.gym.close()

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
