"""A Gymnasium single-agent view of Bali: the learner plays one seat, opponent bots play the
others. ``gymnasium.make("bali_env/Bali-v0", ...)`` builds it (registered when ``bali_env`` is
imported).

``BaliSingleAgentEnv(opponents="random", num_players=2, ...)`` is a ``gymnasium.Env`` whose
observation is the learner's own observation (the AEC env's ``float32[293]`` encoding: only what
that seat may know) and whose action space is ``Discrete(44)``; the legal actions are
``info["action_mask"]`` and ``action_masks()`` (what sb3-contrib's ``MaskablePPO`` asks for).
After the learner's action the opponents move until it is the learner's turn again or the game
ends. The reward is 0 until the end, then the learner's terminal reward (+1 win / -1 loss, or the
score difference with ``reward="score"``), also when the game ends on an opponent's move.

``opponents``: an opponents spec as ``bali train --opponents`` takes it (``"greedy"``,
``"random:1,greedy:3"``, ``"ppo"``, ``"mcts:sims=200"``, ``"cmd:python3 bot.py"``...), from which
every other seat draws its opponent when a game starts (with the env's seeded generator), or
agent objects (anything with ``act(observation, action_mask)``), one per other seat, cycling
through the list. The learner's seat is ``learner_seat``: ``"random"`` (from the env's seeded
generator; the default), ``"rotate"`` (seat = episode number mod n) or a fixed seat number. An
illegal learner action ends the episode with reward -1 and ``info["illegal_action"] = True``
(PettingZoo classic's convention, without its printed warning; with ``illegal_action="raise"`` it
raises ValueError, for debugging). The same ``reset(seed=...)``
gives the same game, seats, opponents and opponents' moves, as Gymnasium's checker expects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from bali_env import engine as C
from bali_env.engine.contract import seed_to_uint64
from bali_env.engine.validate import check_seat
from bali_env.envs.bali_v0 import raw_env

from bali_env.versus.opponents import DEFAULT_OPPONENTS, pool_from_spec

RENDER_FPS = 2  #: frames per second a video of a game plays at (a decision every half second)


class BaliSingleAgentEnv(gymnasium.Env):
    """One learner seat against opponent bots (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": RENDER_FPS, "name": "bali_single_v0"}

    def __init__(
        self,
        opponents: str | Sequence[Any] | Any = DEFAULT_OPPONENTS,
        num_players: int = 2,
        oracle: bool = False,
        demon: bool = False,
        learner_seat: str | int = "random",
        reward: str = "win_loss",
        render_mode: str | None = None,
        illegal_action: str = "terminate",
        mcts_sims: int = 200,
    ) -> None:
        self._env = raw_env(num_players=num_players, oracle=oracle, demon=demon, reward=reward, render_mode=render_mode,
                            illegal_action=illegal_action)
        self._env.warn_illegal = False  # Gymnasium's way: info["illegal_action"], no printed warning
        if not (isinstance(learner_seat, str) and learner_seat in ("rotate", "random")):
            try:
                learner_seat = check_seat(learner_seat, num_players, "learner_seat")
            except (TypeError, ValueError):
                raise ValueError(f"learner_seat must be 'rotate', 'random' or a seat in 0..{num_players - 1}, "
                                 f"got {learner_seat!r}") from None
        self.pool = pool_from_spec(opponents, mcts_sims=mcts_sims) if isinstance(opponents, str) else None
        if self.pool is None:
            self.opponents = list(opponents) if isinstance(opponents, (list, tuple)) else [opponents]
            if not self.opponents or not all(hasattr(o, "act") for o in self.opponents):
                raise ValueError("opponents must be an opponents spec (e.g. 'random:1,greedy:3') or agents with "
                                 "act(observation, action_mask)")
        else:
            self.opponents = list(self.pool.agents)
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
        if self.pool is not None:  # each other seat draws its opponent
            self._seat_agent = {seat: self.pool.agents[self.pool.sample()] for seat in others}
        else:
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
        if self.pool is not None and (seed is not None or self._episode < 0):  # the opponents' draws and moves too
            self.pool.reseed(int(self.np_random.integers(2**62)))
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
        """The learner's legal actions as a bool[44] (all False after the end); RuntimeError
        before the first ``reset()``."""
        if self._obs is None:
            raise RuntimeError("call reset() before action_masks()")
        return self._obs["action_mask"].astype(bool)

    def state_dict(self) -> dict[str, Any]:
        """The full true state of the current game (for tests and tools, never for the learner)."""
        return self._env.state_dict()

    def render(self) -> str | np.ndarray | None:
        """The public table: text (``"ansi"``), printed (``"human"``) or a ``uint8`` picture
        (``"rgb_array"``, 720 x 1280 x 3; the render extra), as the AEC env renders it."""
        return self._env.render()

    def close(self) -> None:
        """Release the opponents (a ``cmd:`` bot's process)."""
        for agent in self.pool.agents if self.pool is not None else []:
            close = getattr(agent, "close", None)
            if callable(close):
                close()
