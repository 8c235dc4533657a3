"""A Gymnasium single-agent view of Bali: the learner plays one seat, opponents play the others.

``BaliSingleAgentEnv(opponents, num_players=2, ...)`` is a ``gymnasium.Env`` whose observation
is the learner's own observation (the AEC env's ``float32[293]`` encoding: only what that seat
may know) and whose action space is ``Discrete(44)``; ``action_masks()`` gives the legal actions
as sb3-contrib's ``MaskablePPO`` expects. After the learner's action the opponents move until
it is the learner's turn again or the game ends. The reward is 0 until the end, then the
learner's terminal reward (+1 win / -1 loss, or the score difference with ``reward="score"``),
also when the game ends on an opponent's move.

Opponents are agents (``agents.Agent``: anything with ``act(observation, action_mask)``), one per
other seat, cycling through the given list. The learner's seat is ``learner_seat``: ``"random"``
(from the env's seeded generator; the default), ``"rotate"`` (seat = episode number mod n) or a
fixed seat number. An illegal learner action raises ValueError, or with
``illegal_action="terminate"`` ends the episode with reward -1. With ``"random"`` the same
``reset(seed=...)`` gives the same game and seat, as Gymnasium's checker expects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from bali_env import engine as C
from .bali_v0 import raw_env
from bali_env.engine.contract import seed_to_uint64
from bali_env.engine.validate import check_seat


class BaliSingleAgentEnv(gymnasium.Env):
    """One learner seat against fixed opponents (see the module docstring)."""

    metadata = {"render_modes": ["ansi"], "name": "bali_single_v0"}

    def __init__(
        self,
        opponents: Sequence[Any] | Any,
        num_players: int = 2,
        oracle: bool = False,
        demon: bool = False,
        learner_seat: str | int = "random",
        reward: str = "win_loss",
        render_mode: str | None = None,
        illegal_action: str = "raise",
    ) -> None:
        self._env = raw_env(num_players=num_players, oracle=oracle, demon=demon, reward=reward, render_mode=render_mode,
                            illegal_action=illegal_action)
        self.opponents = list(opponents) if isinstance(opponents, (list, tuple)) else [opponents]
        if not self.opponents or not all(hasattr(o, "act") for o in self.opponents):
            raise ValueError("opponents must be one agent or a list of agents with act(observation, action_mask)")
        if not (isinstance(learner_seat, str) and learner_seat in ("rotate", "random")):
            try:
                learner_seat = check_seat(learner_seat, num_players, "learner_seat")
            except (TypeError, ValueError):
                raise ValueError(f"learner_seat must be 'rotate', 'random' or a seat in 0..{num_players - 1}, "
                                 f"got {learner_seat!r}") from None
        self.num_players = num_players
        self.learner_seat_mode = learner_seat
        self.render_mode = render_mode
        self.observation_space = gymnasium.spaces.Box(low=0.0, high=C.OBS_HIGH, dtype=np.float32)
        self.action_space = gymnasium.spaces.Discrete(C.N_ACTIONS)
        self._episode = -1
        self.learner = 0
        self._seat_agent: dict[int, Any] = {}
        self._obs: dict[str, np.ndarray] | None = None

    def _choose_seats(self) -> None:
        n = self.num_players
        if self.learner_seat_mode == "rotate":
            self.learner = self._episode % n
        elif self.learner_seat_mode == "random":
            self.learner = int(self.np_random.integers(n))
        else:
            self.learner = int(self.learner_seat_mode)
        others = [C.absolute_seat(self.learner, k, n) for k in range(1, n)]
        self._seat_agent = {seat: self.opponents[k % len(self.opponents)] for k, seat in enumerate(others)}

    def _play_opponents(self) -> None:
        env = self._env
        try:
            while not all(env.terminations.values()):
                seat = env.agent_name_mapping[env.agent_selection]
                if seat == self.learner:
                    break
                o = env.observe(env.possible_agents[seat])
                env.step(int(self._seat_agent[seat].act(o["observation"], o["action_mask"])))
        except BaseException:
            self._obs = None  # the game stands at an opponent's turn: only reset() goes on from here
            raise
        self._obs = env.observe(env.possible_agents[self.learner])

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"learner_seat": self.learner, "action_mask": self._obs["action_mask"]}
        info.update(self._env.infos[self._env.possible_agents[self.learner]])  # final scores, illegal action
        return info

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal a new game (``seed``/``options`` as the AEC env), seat the learner, let the
        opponents move until the learner's first decision."""
        own_seed = None if seed is None else int(seed_to_uint64(seed))  # any int, as the AEC env; else TypeError
        self._env.reset(seed=seed, options=options)  # bad options: ValueError, nothing changed
        super().reset(seed=own_seed)
        self._episode += 1
        self._choose_seats()
        self._play_opponents()
        return self._obs["observation"], self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The learner's action, then the opponents' until the learner's turn or the end."""
        if self._obs is None:
            raise RuntimeError("call reset() before step() (after an opponent failed too)")
        env = self._env
        if all(env.terminations.values()):
            raise RuntimeError("the episode is over: call reset()")
        env.step(action)
        self._play_opponents()
        done = all(env.terminations.values())
        reward = float(env.rewards[env.possible_agents[self.learner]]) if done else 0.0
        return self._obs["observation"], reward, done, False, self._info()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as a bool[44] (all False after the end)."""
        return self._obs["action_mask"].astype(bool)

    def state_dict(self) -> dict[str, Any]:
        """The full true state of the current game (for tests and tools, never for the learner)."""
        return self._env.state_dict()

    def render(self) -> str | None:
        """The table as text (render_mode="ansi")."""
        return self._env.render()
