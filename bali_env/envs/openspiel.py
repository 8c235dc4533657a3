"""Bali as an OpenSpiel game: ``pyspiel.load_game("python_bali", {"players": 4})`` once this
module is imported (``import bali_env.envs.openspiel``; the ``openspiel`` extra installs
OpenSpiel). Everything is the engine's: the rules, the observation, the deal's order.

Parameters: ``players`` (2-4, default 2), ``oracle`` and ``demon`` (the variants, default off).
There is no ``seed``: chance is explicit, so the game holds no randomness of its own (passing
one gives pyspiel's unknown-parameter error; ``SeededChance`` plays a seed's game). The game is
sequential, of imperfect information and general-sum (win/loss rewards at the end: +1 to every
winner, -1 to every other player, as the AEC env's default).

- **Chance** is explicit (``EXPLICIT_STOCHASTIC``), so OpenSpiel's algorithms that need the
  chance probabilities (the CFR family, e.g. outcome-sampling MCCFR) apply, and ``evaluate_bots``
  and ``rl_environment`` draw the outcomes themselves. ``new_initial_state()`` is always the same
  chance node; the deal is
  chance nodes in the engine's order: the starter set of each seat 0..n-1 (set id 0..3 among
  those not given yet, uniform), the 16 market cards one by one (card id, by the copies left of
  the 50 base cards), with the Oracle variant the 4 altar cards top first (category among those
  not placed yet, uniform). In play, a move that deals a new column waits (``state.pending``)
  while chance nodes draw its cards one by one (card id, by the copies left in the deck, the
  oracles included; a group of 4 oracles is replaced by 4 more cards, so a draw takes as many
  chance nodes as cards read); then the move is applied. ``chance_outcomes()`` lists the
  outcomes with probability > 0 (at most 8: ``max_chance_outcomes``); their names read
  ``"seat 0 gets starter set 2"``, ``"market card 3 of 16: shrine"``, ``"altar card 1 from the
  top: rice"``, ``"deck card: oracle"``. The deck cards not drawn yet have no order: the state
  keeps them sorted (``str(state)``'s ``deck``), which changes no observation (a player sees
  how many of each are left).
- **Same seed, same game**: ``SeededChance(players, oracle, demon, seed)`` is a callable giving
  the outcome at a chance node that deals and draws the game ``bali_env.env(...).reset(seed=seed)``
  plays (e.g. OpenSpiel's ``rl_environment.Environment(game, chance_event_sampler=...)``, for
  one game).
- **Serialization**: a state is its history replayed from that initial node, so
  ``state.serialize()``, ``game.deserialize_state`` and ``pyspiel.serialize_game_and_state``
  work (in the deal and in the middle of a draw too), and ``pyspiel.random_sim_test(game,
  serialize=True)`` passes. ``clone`` and pickling copy the state.
- **Observations**: ``observation_tensor(p)`` is the engine's ``float32[293]`` observation of
  player p (docs/observation.md: what that player may know); ``observation_string(p)`` lists the
  same counts by name (``decode_observation``). Bali's observation holds all that a player knows
  of the past that the rules use (the bounds on the others' offering cards, the altar cards seen),
  so the information state is the observation: ``information_state_tensor/string`` give the same
  (not perfect recall in OpenSpiel's strict sense: two histories that leave a player knowing the
  same things share an information state). During the deal the tensor is all zeros (the string
  says ``dealing``); while a move waits on its cards it is the observation before the move.
- **Resampling**: ``resample_from_infostate(p, sampler)`` draws a full state consistent with
  player p's information state (the engine's ``determinize``), what information-set MCTS asks
  for (OpenSpiel's ``ismcts.ISMCTSBot``). The sample's whole deck order is drawn with it, so its
  draws are no chance nodes; it keeps the players' numbers and has no history.
- ``str(state)`` is the true state as JSON (``state_dict``: hidden information, not for a player)
  with ``deck_fixed`` (the undrawn cards whose order chance has fixed) and ``pending_action``;
  during the deal, the outcomes so far.

OpenSpiel's Python ``ismcts.ISMCTSBot`` has no ``restart_at``, so ``evaluate_bots`` cannot drive
it; play it in a loop that draws the chance outcomes::

    game = pyspiel.load_game("python_bali", {"players": 2})
    bot = ismcts.ISMCTSBot(game=game, uct_c=1.5, max_simulations=20, evaluator=mcts.RandomRolloutEvaluator())
    rng, state = np.random.default_rng(0), game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            state.apply_action(bot.step(state))  # every seat the bot, or any player of yours
    print(state.returns())
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyspiel

from bali_env import engine as C
from bali_env.engine.contract import action_to_str, dealt_state, state_dict
from bali_env.engine.decode import decode_observation
from bali_env.engine.validate import check_flag, check_num_players

SHORT_NAME = "python_bali"  #: the name ``pyspiel.load_game`` knows
MAX_GAME_LENGTH = 1000  #: decisions a game can take at most, generously (random games: 153 at most in 240)
_EMPTY = np.zeros(0, dtype=np.int64)
_ALTAR_DEAL = 4  #: chance nodes of the Oracle variant's altar
_BASE_COUNTS = np.where(np.arange(C.N_CARD_IDS) == C.ORACLE, 0, C.DECK_COUNTS)  #: the 50 base cards by id

_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Bali (Klaus-Jürgen Wrede, 2017), bali-env's engine",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=C.MAX_PLAYERS,
    min_num_players=C.MIN_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"players": 2, "oracle": False, "demon": False},
)


class BaliGame(pyspiel.Game):
    """The game: its parameters (see the module docstring)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**_GAME_TYPE.parameter_specification, **(params or {})}
        self.num_players_ = check_num_players(params["players"], "players")
        self.oracle = check_flag("oracle", params["oracle"])
        self.demon = check_flag("demon", params["demon"])
        #: chance outcomes of the deal: the starter sets, the market, the altar (Oracle)
        self.deal_length = self.num_players_ + C.MARKET_SIZE + (_ALTAR_DEAL if self.oracle else 0)
        info = pyspiel.GameInfo(num_distinct_actions=C.N_ACTIONS, max_chance_outcomes=C.N_CARD_IDS,
                                num_players=self.num_players_, min_utility=-1.0, max_utility=1.0,
                                utility_sum=None, max_game_length=MAX_GAME_LENGTH)
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self) -> BaliState:
        """The first chance node of the deal (always the same)."""
        return BaliState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> BaliObserver:
        """The observer of observations and information states (the same here)."""
        if params:
            raise ValueError(f"python_bali's observer takes no parameters, got {params}")
        return BaliObserver()


class BaliState(pyspiel.State):
    """One game: the deal's chance outcomes so far, then an engine state, how its seats map to
    the players (a resampled state's engine seats start at the player it was resampled for), how
    much of the deck's order chance has fixed and the move waiting on its cards."""

    def __init__(self, game: BaliGame, s: np.ndarray | None = None, offset: int = 0, deal: Any = (),
                 fixed: int | None = None, pending: int = -1) -> None:
        super().__init__(game)
        self.n = game.num_players_
        self.oracle, self.demon = game.oracle, game.demon
        self.deal_length = game.deal_length
        self.deal = [int(x) for x in deal]  #: the deal's chance outcomes so far (all of them once dealt)
        self.dealt = s is not None or len(self.deal) == self.deal_length  #: whether the engine state is dealt
        if s is None:
            s = np.zeros(C.STATE_SIZE, dtype=C.STATE_DTYPE)
            if self.dealt:
                self._deal_engine(s)
        self.s = s
        self.offset = offset  #: player p sits at engine seat ``relative_seat(offset, p, n)``
        #: deck positions before this one are chance's (or the deal's); the rest is sorted
        self.fixed = int(s[C.S_DECK_POS]) if fixed is None else int(fixed)
        self.pending = int(pending)  #: the move waiting on its deck cards, -1 if none
        self._mask = np.zeros(C.N_ACTIONS, dtype=np.int8)

    # ------------------------------------------------------------------ seats
    def _seat(self, player: int) -> int:
        """The engine seat of player ``player``."""
        return C.relative_seat(self.offset, player, self.n)

    def _player(self, seat: int) -> int:
        """The player at engine seat ``seat``."""
        return C.absolute_seat(self.offset, seat, self.n)

    # ------------------------------------------------------------------ chance
    def _deal_engine(self, s: np.ndarray) -> None:
        """The engine state ``init_game`` deals with these outcomes: the market cards on top of
        the deck, the rest of it sorted (its order is drawn card by card later)."""
        n, market = self.n, self.deal[self.n : self.n + C.MARKET_SIZE]
        rest = C.DECK_COUNTS.copy() if self.oracle else _BASE_COUNTS.copy()
        np.subtract.at(rest, market, 1)
        deck = np.concatenate([np.array(market, dtype=np.int64), np.repeat(np.arange(C.N_CARD_IDS), rest)])
        altar = np.array(self.deal[n + C.MARKET_SIZE :], dtype=np.int64) if self.oracle else _EMPTY
        C.init_game(s, n, self.oracle, self.demon, np.uint64(0), deck, np.array(self.deal[:n], dtype=np.int64),
                    altar)

    def _chance_weights(self) -> np.ndarray:
        """The chance node's outcomes by id, weighted (copies or 1 each; 0: impossible)."""
        k = len(self.deal)
        if not self.dealt:
            if k < self.n:  # a starter set
                w = np.ones(4, dtype=np.int64)
                w[self.deal[:k]] = 0
            elif k < self.n + C.MARKET_SIZE:  # a market card
                w = _BASE_COUNTS.copy()
                np.subtract.at(w, self.deal[self.n : k], 1)
            else:  # an altar card, top first
                w = np.ones(4, dtype=np.int64)
                w[self.deal[self.n + C.MARKET_SIZE : k]] = 0
            return w
        rest = self.s[C.S_DECK + self.fixed : C.S_DECK + int(self.s[C.S_DECK_LEN])]
        return np.bincount(rest, minlength=C.N_CARD_IDS)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """The chance node's outcomes with probability > 0, as (outcome, probability)."""
        if not self.is_chance_node():
            raise pyspiel.SpielError("chance_outcomes() at a player's node")
        w = self._chance_weights()
        total = int(w.sum())
        return [(int(a), int(w[a]) / total) for a in np.flatnonzero(w)]

    def _apply_chance(self, outcome: int) -> None:
        """A deal outcome, or the card at deck position ``fixed`` for the waiting move."""
        w = self._chance_weights()
        if not 0 <= outcome < len(w) or w[outcome] == 0:
            raise pyspiel.SpielError(f"impossible chance outcome {outcome} here")
        if not self.dealt:
            self.deal.append(outcome)
            if len(self.deal) == self.deal_length:
                self._deal_engine(self.s)
                self.dealt, self.fixed = True, int(self.s[C.S_DECK_POS])
            return
        rest = self.s[C.S_DECK + self.fixed : C.S_DECK + int(self.s[C.S_DECK_LEN])]  # sorted
        i = int(np.searchsorted(rest, outcome))
        rest[1 : i + 1] = rest[:i].copy()  # all smaller: what follows position 0 stays sorted
        rest[0] = outcome
        self.fixed += 1
        self._try_pending()

    def _try_pending(self) -> None:
        """Apply the waiting move if it reads only deck cards chance has fixed."""
        after = self.s.copy()
        C.step_checked(after, self.pending)
        if int(after[C.S_DECK_POS]) <= self.fixed:
            self.s[:] = after
            self.pending = -1

    # ------------------------------------------------------------------ OpenSpiel's state
    def current_player(self) -> int:
        """The player to move, ``pyspiel.PlayerId.CHANCE`` or ``pyspiel.PlayerId.TERMINAL``."""
        if not self.dealt or self.pending >= 0:
            return pyspiel.PlayerId.CHANCE
        if self.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return self._player(int(self.s[C.S_TO_MOVE]))

    def _legal_actions(self, player: int) -> list[int]:
        """The legal action ids of the player to move, or the chance node's outcomes."""
        if player == pyspiel.PlayerId.CHANCE:
            return [a for a, _ in self.chance_outcomes()]
        C.legal_mask(self.s, self._mask)
        return [int(a) for a in np.flatnonzero(self._mask)]

    def _apply_action(self, action: int) -> None:
        """A chance outcome, or one decision of the player to move (OpenSpiel checks that it is
        legal); a decision that deals a new column waits on chance for its cards."""
        action = int(action)
        if self.is_chance_node():
            self._apply_chance(action)
            return
        after = self.s.copy()
        if C.step_checked(after, action) != 0:
            raise pyspiel.SpielError(f"illegal action {action} ({action_to_str(action)})")
        if int(after[C.S_DECK_POS]) > self.fixed:  # it read cards chance has not drawn yet
            self.pending = action
        else:
            self.s[:] = after

    def _action_to_string(self, player: int, action: int) -> str:
        if player != pyspiel.PlayerId.CHANCE:
            return action_to_str(int(action))
        k = len(self.deal)
        if self.dealt:
            return f"deck card: {C.CARD_NAMES[action]}"
        if k < self.n:
            return f"seat {k} gets starter set {action}"
        if k < self.n + C.MARKET_SIZE:
            return f"market card {k - self.n + 1} of {C.MARKET_SIZE}: {C.CARD_NAMES[action]}"
        return f"altar card {k - self.n - C.MARKET_SIZE + 1} from the top: {C.CATEGORY_NAMES[action]}"

    def is_terminal(self) -> bool:
        """Whether the game is over."""
        return self.dealt and self.pending < 0 and int(self.s[C.S_PHASE]) == C.PH_GAME_OVER

    def returns(self) -> list[float]:
        """+1 to every winner, -1 to every other player at the end; 0 before."""
        if not self.is_terminal():
            return [0.0] * self.n
        rewards = np.zeros(C.MAX_PLAYERS, dtype=np.float64)
        C.terminal_rewards(self.s, False, rewards)
        return [float(rewards[self._seat(p)]) for p in range(self.n)]

    def observe(self, player: int) -> np.ndarray:
        """The engine's observation of ``player`` (float32[293]; zeros during the deal)."""
        obs = np.zeros(C.OBS_DIM, dtype=np.float32)
        if self.dealt:
            C.observe(self.s, self._seat(player), obs, np.zeros(C.N_ACTIONS, dtype=np.int8))
        return obs

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> BaliState:
        """A full state consistent with what ``player_id`` knows (the engine's ``determinize``),
        drawn from a stream seeded by ``probability_sampler()`` (a uniform float in [0, 1)); its
        whole deck order is drawn with it (no chance nodes in its draws)."""
        if not self.dealt or self.pending >= 0:
            raise pyspiel.SpielError("resample_from_infostate at a chance node")
        stream = np.array([np.uint64(int(probability_sampler() * 2**53))], dtype=np.uint64)
        s = np.zeros(C.STATE_SIZE, dtype=C.STATE_DTYPE)
        C.determinize(self.observe(player_id), stream, s)  # the observer becomes engine seat 0
        return BaliState(self.get_game(), s=s, offset=player_id, fixed=int(s[C.S_DECK_LEN]))

    def __str__(self) -> str:
        """The true state (hidden information included) as JSON."""
        if not self.dealt:
            n, m = self.n, self.n + C.MARKET_SIZE
            return json.dumps({"dealing": {"starter_sets": self.deal[:n], "market": self.deal[n:m],
                                           "altar": self.deal[m:]}}, sort_keys=True)
        d = state_dict(self.s)
        d["deck_fixed"] = max(0, self.fixed - int(self.s[C.S_DECK_POS]))
        d["pending_action"] = self.pending if self.pending >= 0 else None
        return json.dumps(d, sort_keys=True)


class SeededChance:
    """The chance outcomes of one seeded game: called with a chance node of a ``python_bali``
    state of the same players and variants (dealt from ``new_initial_state()``), it gives the
    outcome that deals and draws the game ``bali_env.env(num_players=players, oracle=oracle,
    demon=demon).reset(seed=seed)`` plays, so the same moves give the same game on both APIs."""

    def __init__(self, players: int, oracle: bool = False, demon: bool = False, seed: int = 0) -> None:
        self.players = check_num_players(players, "players")
        self.oracle, self.demon = check_flag("oracle", oracle), check_flag("demon", demon)
        s = dealt_state(self.players, self.oracle, self.demon, seed)
        v = C.state_blocks(s)
        altar = [int(v.altar[_ALTAR_DEAL - 1 - j]) for j in range(_ALTAR_DEAL)] if self.oracle else []  # top first
        self.deck = v.deck[: int(s[C.S_DECK_LEN])].astype(int).tolist()  #: the whole deck, top first
        self.deal = v.starter_sets[: self.players].astype(int).tolist() + self.deck[: C.MARKET_SIZE] + altar

    def __call__(self, state: BaliState) -> int:
        """The outcome at chance node ``state``."""
        if not state.is_chance_node():
            raise ValueError("SeededChance: the state is no chance node")
        if (state.n, state.oracle, state.demon) != (self.players, self.oracle, self.demon):
            raise ValueError(f"SeededChance: a game of {state.n} players, oracle={state.oracle}, "
                             f"demon={state.demon}; this chance is of {self.players}, {self.oracle}, {self.demon}")
        return self.deal[len(state.deal)] if not state.dealt else self.deck[state.fixed]


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
        if not state.dealt:
            return f"dealing: {len(state.deal)} of {state.deal_length} outcomes"
        view = decode_observation(state.observe(player))
        parts = []
        for key, value in vars(view).items():
            parts.append(f"{key}={value.tolist() if isinstance(value, np.ndarray) else value}")
        return "; ".join(parts)


pyspiel.register_game(_GAME_TYPE, BaliGame)

__all__ = ["MAX_GAME_LENGTH", "SHORT_NAME", "BaliGame", "BaliObserver", "BaliState", "SeededChance"]
