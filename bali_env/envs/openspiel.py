"""Bali as an OpenSpiel game: ``pyspiel.load_game("python_bali", {"players": 4})`` once this
module is imported (``import bali_env.envs.openspiel``; the ``openspiel`` extra installs
OpenSpiel). Everything is the engine's: the deal, the rules, the observation.

Parameters: ``players`` (2-4, default 2), ``oracle`` and ``demon`` (the variants, default off),
``seed`` (default 0). The game is sequential, of imperfect information and general-sum (win/loss
rewards at the end: +1 to every winner, -1 to every other player, as the AEC env's default).

- **Chance** is sampled inside the state (``SAMPLED_STOCHASTIC``): the game holds the AEC env's
  stream of deal seeds, seeded by ``seed``, and each ``new_initial_state()`` deals the next game
  of it, so the first state of ``load_game(..., {"seed": s})`` is the game ``bali_env.env(...)
  .reset(seed=s)`` deals, the next ones the games its following seedless resets deal. (OpenSpiel
  creates states of its own, e.g. to learn the observation's shape: count on a seed giving the
  same sequence of deals, not on which deal a given state of yours gets.)
- **Observations**: ``observation_tensor(p)`` is the engine's ``float32[293]`` observation of
  player p (docs/observation.md: what that player may know); ``observation_string(p)`` lists the
  same counts by name (``decode_observation``). Bali's observation holds all that a player knows
  of the past that the rules use (the bounds on the others' offering cards, the altar cards seen),
  so the information state is the observation: ``information_state_tensor/string`` give the same
  (not perfect recall in OpenSpiel's strict sense: two histories that leave a player knowing the
  same things share an information state).
- **Resampling**: ``resample_from_infostate(p, sampler)`` draws a full state consistent with
  player p's information state (the engine's ``determinize``), what information-set MCTS asks
  for (OpenSpiel's ``ismcts.ISMCTSBot``). The resampled state keeps the players' numbers.
- ``clone`` and pickling copy the state; ``str(state)`` is the true state as JSON
  (``state_dict``): hidden information, not for a player.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyspiel

from bali_env import engine as C
from bali_env.engine.contract import action_to_str, seed_to_uint64, state_dict
from bali_env.engine.decode import decode_observation
from bali_env.engine.validate import check_flag, check_num_players, check_seed

SHORT_NAME = "python_bali"  #: the name ``pyspiel.load_game`` knows
MAX_GAME_LENGTH = 1000  #: decisions a game can take at most, generously (random games: 153 at most in 240)
_EMPTY = np.zeros(0, dtype=np.int64)

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Bali (Klaus-Jürgen Wrede, 2017), bali-env's engine",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=C.MAX_PLAYERS,
    min_num_players=C.MIN_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"players": 2, "oracle": False, "demon": False, "seed": 0},
)


class BaliGame(pyspiel.Game):
    """The game: its parameters and the stream its states deal from (see the module docstring)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**_GAME_TYPE.parameter_specification, **(params or {})}
        self.num_players_ = check_num_players(params["players"], "players")
        self.oracle = check_flag("oracle", params["oracle"])
        self.demon = check_flag("demon", params["demon"])
        self._stream = np.array([seed_to_uint64(check_seed(params["seed"]))], dtype=np.uint64)
        info = pyspiel.GameInfo(num_distinct_actions=C.N_ACTIONS, max_chance_outcomes=0,
                                num_players=self.num_players_, min_utility=-1.0, max_utility=1.0,
                                utility_sum=None, max_game_length=MAX_GAME_LENGTH)
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self) -> BaliState:
        """The next game of the stream, dealt."""
        return BaliState(self, np.uint64(C.next_deal_seed(self._stream)))

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> BaliObserver:
        """The observer of observations and information states (the same here)."""
        if params:
            raise ValueError(f"python_bali's observer takes no parameters, got {params}")
        return BaliObserver()


class BaliState(pyspiel.State):
    """One game: an engine state and how its seats map to the players (a resampled state's
    engine seats start at the player it was resampled for)."""

    def __init__(self, game: BaliGame, deal_seed: np.uint64 | None = None, s: np.ndarray | None = None,
                 offset: int = 0) -> None:
        super().__init__(game)
        self.n = game.num_players_
        if s is None:
            s = np.zeros(C.STATE_SIZE, dtype=C.STATE_DTYPE)
            C.init_game(s, self.n, game.oracle, game.demon, deal_seed, _EMPTY, _EMPTY, _EMPTY)
        self.s = s
        self.offset = offset  #: player p sits at engine seat ``relative_seat(offset, p, n)``
        self._mask = np.zeros(C.N_ACTIONS, dtype=np.int8)

    def _seat(self, player: int) -> int:
        """The engine seat of player ``player``."""
        return C.relative_seat(self.offset, player, self.n)

    def _player(self, seat: int) -> int:
        """The player at engine seat ``seat``."""
        return C.absolute_seat(self.offset, seat, self.n)

    def current_player(self) -> int:
        """The player to move, or ``pyspiel.PlayerId.TERMINAL``."""
        if self.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return self._player(int(self.s[C.S_TO_MOVE]))

    def _legal_actions(self, player: int) -> list[int]:
        """The legal action ids of the player to move."""
        C.legal_mask(self.s, self._mask)
        return [int(a) for a in np.flatnonzero(self._mask)]

    def _apply_action(self, action: int) -> None:
        """One decision of the player to move (OpenSpiel checks that it is legal)."""
        if C.step_checked(self.s, int(action)) != 0:
            raise pyspiel.SpielError(f"illegal action {action} ({action_to_str(int(action))})")

    def _action_to_string(self, player: int, action: int) -> str:
        return action_to_str(int(action))

    def is_terminal(self) -> bool:
        """Whether the game is over."""
        return int(self.s[C.S_PHASE]) == C.PH_GAME_OVER

    def returns(self) -> list[float]:
        """+1 to every winner, -1 to every other player at the end; 0 before."""
        if not self.is_terminal():
            return [0.0] * self.n
        rewards = np.zeros(C.MAX_PLAYERS, dtype=np.float64)
        C.terminal_rewards(self.s, False, rewards)
        return [float(rewards[self._seat(p)]) for p in range(self.n)]

    def observe(self, player: int) -> np.ndarray:
        """The engine's observation of ``player`` (float32[293])."""
        obs = np.zeros(C.OBS_DIM, dtype=np.float32)
        C.observe(self.s, self._seat(player), obs, np.zeros(C.N_ACTIONS, dtype=np.int8))
        return obs

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> BaliState:
        """A full state consistent with what ``player_id`` knows (the engine's ``determinize``),
        drawn from a stream seeded by ``probability_sampler()`` (a uniform float in [0, 1))."""
        stream = np.array([np.uint64(int(probability_sampler() * 2**53))], dtype=np.uint64)
        s = np.zeros(C.STATE_SIZE, dtype=C.STATE_DTYPE)
        C.determinize(self.observe(player_id), stream, s)  # the observer becomes engine seat 0
        return BaliState(self.get_game(), s=s, offset=player_id)

    def __getstate__(self) -> dict[str, Any]:
        return {"s": self.s.tolist(), "offset": self.offset, "game": self.get_game().get_parameters()}

    def __setstate__(self, saved: dict[str, Any]) -> None:
        game = pyspiel.load_game(SHORT_NAME, saved["game"])
        self.__init__(game, s=np.array(saved["s"], dtype=C.STATE_DTYPE), offset=saved["offset"])

    def __str__(self) -> str:
        """The true state (hidden information included) as JSON."""
        return json.dumps(state_dict(self.s), sort_keys=True)


class BaliObserver:
    """OpenSpiel's Python observer: the engine's observation as the tensor, its counts by name
    as the string."""

    def __init__(self) -> None:
        self.tensor = np.zeros(C.OBS_DIM, dtype=np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: BaliState, player: int) -> None:
        """Write ``player``'s observation of ``state`` into ``tensor``."""
        self.tensor[:] = state.observe(player)

    def string_from(self, state: BaliState, player: int) -> str:
        """``player``'s observation of ``state`` as text: every count by name."""
        view = decode_observation(state.observe(player))
        parts = []
        for key, value in vars(view).items():
            parts.append(f"{key}={value.tolist() if isinstance(value, np.ndarray) else value}")
        return "; ".join(parts)


pyspiel.register_game(_GAME_TYPE, BaliGame)

__all__ = ["MAX_GAME_LENGTH", "SHORT_NAME", "BaliGame", "BaliObserver", "BaliState"]
