"""Bali (Klaus-Jürgen Wrede, White Goblin Games, 2017) as a PettingZoo AEC environment.

| Import             | `from bali_env import bali_v0` (or `bali_env.env(...)`)     |
|--------------------|-------------------------------------------------------------|
| Actions            | Discrete(44), with an action mask                           |
| Parallel API       | No                                                          |
| Manual control     | No                                                          |
| Agents             | `agents = ['player_0', ..., 'player_{n-1}']`, n = 2, 3, 4   |
| Action space       | Discrete(44): a scalar int 0..43 (RULES.md section 6)       |
| Observation shape  | `{"observation": (293,) float32, "action_mask": (44,) int8}` |
| Observation values | observation in [0, OBS_HIGH] (scaled counts, one-hots)      |

Bali is a card game for 2-4 players: take offering cards, play farmers, stonecutters, priests
and shrines into your tableau, offer to the altar when a shrine is built, refill your hand from
a four-column market whose card decides what every player scores this turn. The rules are
`RULES.md` of this project (the rulebook plus a ruling on every open point); the Oracle and
Demon variants are the constructor flags `oracle` and `demon`.

### Arguments

``env(num_players=4, oracle=False, demon=False, render_mode=None, reward="win_loss",
illegal_action="raise")``

- `num_players`: 2, 3 or 4. Seat i is `"player_i"`; seat 0 starts.
- `oracle`, `demon`: the two variants (independent, combinable).
- `render_mode`: None, `"ansi"` (`render()` returns text) or `"human"` (prints it).
- `reward`: `"win_loss"` (default: +1 to every winner, -1 to every other player, at the end
  only) or `"score"` (at the end: own final score minus the mean final score of the others).
- `illegal_action`: `"raise"` (default: `step` raises `ValueError` naming the action and the
  legal ones; nothing changes) or `"terminate"` (PettingZoo's convention: the game ends, the
  offender gets -1, the others 0, and `infos[offender]["illegal_action"]` is True).

### Observation

`observe(agent)` returns `{"observation": float32[293], "action_mask": int8[44]}`: the table as
that player may know it (RULES.md section 5) from their own seat; relative seat 0 is the
observer, 1 the player on their left (next clockwise), and so on. Blocks for seats that are not
in the game are 0. Each value is a count divided by the scale given (one-hots have scale 1).
`bali_env.observation_slot_names()` names every index.

| index     | meaning                                                                  | scale |
|-----------|--------------------------------------------------------------------------|-------|
| 0-9       | decision being taken (one-hot): take_offering, play, offer_face_up, offer_face_down, offer_supply, refill, oracle, shrine_reward, farmer_choice, game_over | 1 |
| 10-13     | relative seat of the active player (one-hot)                             | 1     |
| 14-17     | relative seat that decides now (one-hot; 0 after the end)                | 1     |
| 18-121    | 4 seat blocks of 26, relative seats 0..3 (block r starts at 18 + 26 r):  |       |
|           | +0 present (1 if the seat is in the game)                                | 1     |
|           | +1..+7 hand, counts by card id 0..6 (hands are public knowledge)         | 3     |
|           | +8..+14 tableau, counts by card id 0..6                                  | 5     |
|           | +15 stones                                                               | 10    |
|           | +16 VP tokens                                                            | 10    |
|           | +17..+20 offering cards by category, at least (exact for yourself)       | 10    |
|           | +21..+24 offering cards by category, at most (exact for yourself)        | 10    |
|           | +25 offering cards, total                                                | 10    |
| 122-125   | supply by category                                                       | 25    |
| 126       | cards left in the deck                                                   | 58    |
| 127-238   | market: column c, slot j (0 = takeable now), card id k at 127 + 28c + 7j + k (one-hot; an empty slot is all 0) | 1 |
| 239-242   | demon column (one-hot; all 0 without the Demon variant)                  | 1     |
| 243-244   | variants: oracle, demon                                                  | 1     |
| 245-247   | number of players: 2, 3, 4 (one-hot)                                     | 1     |
| 248       | altar: number of cards                                                   | 10    |
| 249-252   | altar: cards whose category you know, by category                        | 10    |
| 253       | altar: cards whose category you do not know                              | 10    |
| 254-269   | altar top 4 cards: depth d (0 = top), category c at 254 + 4d + c, set only where you know it (during your oracle decision: the peeked window) | 1 |
| 270       | oracle peeks still owed (including the one being decided)                | 4     |
| 271       | oracle window size (cards peeked now; 0 outside an oracle decision)      | 4     |
| 272-278   | scored card id 0..6 (one-hot), during shrine_reward/farmer_choice only   | 1     |
| 279       | what the pending scoring decision gives (shrine: stones or VP; farmer: 1) | 5    |
| 280       | the pending scoring decision is (or includes) the majority bonus         | 1     |
| 281-288   | cards left in the deck by card id 0..7 (7 = oracle; every dealt card was seen, so this is public) | 12 |
| 289-292   | column of the active player's last take this turn (one-hot; scored in phase 4) | 1 |

What others know of a player's offering cards: exact until that player offers face down or takes
a card by oracle; from then on a lower and an upper bound per category (`at least`, `at most`)
kept from public events only, together with the exact total (it lies on the table). What you
know of the altar: the category of every card placed face up, of your own face-down cards, and
of the cards you peeked at, until someone else takes from a window you saw (RULES.md section 5:
you then forget that window).

### Action mask

`action_mask[a] == 1` when action `a` is legal for the player to move; the mask of every other
player is all 0, and so is everyone's after the end. Every decision is a step, even with one
legal action. Action ids (RULES.md section 6): 0-3 take an offering card, 4 pass, 5 stonecutter,
6 priest, 7 shrine, 8 + 3c + (k-1) play k farmers of category c, 20 discard a shrine, 21-24 put
an own offering card on the altar, 25-28 put a supply card on the altar, 29-32 take from a
column, 33-36 oracle take at depth d, 37 oracle take none, 38/39 shrine reward stones/VP,
40-43 choose a category when the scored farmer category is empty.
`bali_env.action_to_str(a)` names them.

### Rewards

0 until the end; then every winner +1 and every other player -1 (ties after the tie-breaks
share the win), or the score difference with `reward="score"`. When the game ends, every
agent's `infos` holds `final_scores`, `winners` (seats) and `score_breakdown` (per seat: VP
tokens, shrines, stones, offerings by category, total).

### Version history

* v0: initial release.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from . import core as C
from .contract import action_to_str, check_action, parse_options, score_breakdown, seed_to_uint64, state_dict
from .render import render_ansi

__all__ = ["env", "raw_env"]

_REWARDS = ("win_loss", "score")
_ILLEGAL = ("raise", "terminate")


class _OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's OrderEnforcingWrapper, except that stepping a finished game (every agent
    gone) raises instead of only logging a warning."""

    def step(self, action: Any) -> None:
        """Step the wrapped env; RuntimeError once the game is over and every agent has left."""
        if self._has_reset and not self.env.agents:
            raise RuntimeError("the game is over and every agent has left: call reset() to start a new game")
        super().step(action)


def env(**kwargs: Any) -> AECEnv:
    """The Bali AEC environment (``raw_env`` in PettingZoo's OrderEnforcingWrapper)."""
    return _OrderEnforcing(raw_env(**kwargs))


def _observation_space() -> gymnasium.spaces.Dict:
    return gymnasium.spaces.Dict(
        {
            "observation": gymnasium.spaces.Box(low=0.0, high=C.OBS_HIGH, dtype=np.float32),
            "action_mask": gymnasium.spaces.Box(low=0, high=1, shape=(C.N_ACTIONS,), dtype=np.int8),
        }
    )


class raw_env(AECEnv):
    """Bali as a PettingZoo AEC environment; see the module docstring for the full documentation."""

    metadata = {"name": "bali_v0", "render_modes": ["ansi", "human"], "is_parallelizable": False, "render_fps": 1}

    def __init__(
        self,
        num_players: int = 4,
        oracle: bool = False,
        demon: bool = False,
        render_mode: str | None = None,
        reward: str = "win_loss",
        illegal_action: str = "raise",
    ) -> None:
        super().__init__()
        if isinstance(num_players, (bool, np.bool_)) or not isinstance(num_players, (int, np.integer)) or num_players not in (2, 3, 4):
            raise ValueError(f"num_players must be the int 2, 3 or 4, got {num_players!r}")
        for flag, value in (("oracle", oracle), ("demon", demon)):
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{flag} must be a bool, got {type(value).__name__} {value!r}")
        if render_mode not in (None, "ansi", "human"):
            raise ValueError(f"render_mode must be None, 'ansi' or 'human', got {render_mode!r}")
        if reward not in _REWARDS:
            raise ValueError(f"reward must be one of {_REWARDS}, got {reward!r}")
        if illegal_action not in _ILLEGAL:
            raise ValueError(f"illegal_action must be one of {_ILLEGAL}, got {illegal_action!r}")
        self.num_players = int(num_players)
        self.oracle = bool(oracle)
        self.demon = bool(demon)
        self.render_mode = render_mode
        self.reward_mode = reward
        self.illegal_action = illegal_action
        self.possible_agents = [f"player_{i}" for i in range(self.num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        # one space object per agent, returned every time (PettingZoo's seeding relies on it)
        self.observation_spaces = {a: _observation_space() for a in self.possible_agents}
        self.action_spaces = {a: gymnasium.spaces.Discrete(C.N_ACTIONS) for a in self.possible_agents}
        self._state = np.zeros(C.STATE_SIZE, dtype=C.STATE_DTYPE)
        self._mask = np.zeros(C.N_ACTIONS, dtype=np.int8)
        # the stream of deal seeds (SplitMix64, core.next_deal_seed); seeded by reset(seed=...)
        self._seed_stream = np.array([np.random.SeedSequence().entropy % 2**64], dtype=np.uint64)
        self._deal_seed: int | None = None
        self._illegal_end = False
        self._rewards_buf = np.zeros(C.MAX_PLAYERS, dtype=np.float64)
        self._seat_of = self.agent_name_mapping

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        """The observation space of ``agent`` (the same object every call)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        """The action space of ``agent``: Discrete(44) (the same object every call)."""
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ reset / step
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new game. ``seed`` (any int) restarts the environment's stream of deal seeds;
        each reset without a seed deals the next game of that stream. ``options`` are RULES.md
        section 7's ``deck``/``starter_sets``/``altar``, validated before anything changes."""
        deck, starters, altar = parse_options(options, self.num_players, self.oracle)
        if seed is not None:
            self._seed_stream[0] = seed_to_uint64(seed)
        self._reset_seed = int(self._seed_stream[0])  # reset(seed=this) deals this game again
        self._options = {k: v for k, v in (options or {}).items() if k in ("deck", "starter_sets", "altar") and v is not None}
        self._actions: list[int] = []
        self._deal_seed = int(C.next_deal_seed(self._seed_stream))
        C.init_game(self._state, self.num_players, self.oracle, self.demon, np.uint64(self._deal_seed), deck, starters, altar)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._illegal_end = False
        self.agent_selection = self.agents[int(self._state[C.S_TO_MOVE])]
        if self.render_mode == "human":
            self.render()

    def step(self, action: Any) -> None:
        """Apply the current agent's ``action`` (an int in 0..43; ``None`` for a finished agent)."""
        if not self.agents:
            raise RuntimeError("the game is over and every agent has left: call reset() to start a new game")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        a = check_action(action)
        if C.step_checked(self._state, a) != 0:
            self._illegal(agent, a)
            return
        self._actions.append(a)
        self._cumulative_rewards[agent] = 0.0
        if self._state[C.S_PHASE] == C.PH_GAME_OVER:
            self._finish()
        else:
            self.agent_selection = self.possible_agents[int(self._state[C.S_TO_MOVE])]
        if self.render_mode == "human":
            self.render()

    def _illegal(self, agent: str, a: int) -> None:
        C.legal_mask(self._state, self._mask)
        legal = [int(i) for i in np.flatnonzero(self._mask)]
        if self.illegal_action == "raise":
            phase = C.PHASE_NAMES[int(self._state[C.S_PHASE])]
            names = ", ".join(f"{i} ({action_to_str(i)})" for i in legal)
            raise ValueError(f"illegal action {a} ({action_to_str(a)}) for {agent} in phase {phase}; legal: {names}")
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {x: (-1.0 if x == agent else 0.0) for x in self.agents}
        self.terminations = {x: True for x in self.agents}
        self.infos[agent] = {"illegal_action": True, "action": a, "legal_actions": legal}
        self._illegal_end = True
        self._accumulate_rewards()

    def _finish(self) -> None:
        s = self._state
        n = self.num_players
        scores = [int(v) for v in s[C.S_SCORES : C.S_SCORES + n]]
        winners = [q for q in range(n) if int(s[C.S_WINNERS]) >> q & 1]
        C.terminal_rewards(s, self.reward_mode == "score", self._rewards_buf)
        rewards = self._rewards_buf[:n].tolist()
        info = {"final_scores": scores, "winners": winners, "score_breakdown": score_breakdown(s)}
        for q, x in enumerate(self.possible_agents):
            self.rewards[x] = float(rewards[q])
            self.terminations[x] = True
            self.infos[x] = dict(info)
        self._accumulate_rewards()

    # ------------------------------------------------------------------ observation
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": float32[293], "action_mask": int8[44]}`` for ``agent`` (fresh arrays)."""
        obs = np.empty(C.OBS_DIM, dtype=np.float32)
        mask = np.empty(C.N_ACTIONS, dtype=np.int8)
        C.observe(self._state, self._seat_of[agent], obs, mask)
        if self._illegal_end:
            mask[:] = 0
        return {"observation": obs, "action_mask": mask}

    # ------------------------------------------------------------------ tools
    def state_dict(self) -> dict[str, Any]:
        """The whole true state (RULES.md section 8), hidden parts included; JSON-serialisable."""
        return state_dict(self._state)

    def legal_actions(self) -> list[int]:
        """The legal action ids of the agent to move (empty after the end)."""
        if self._illegal_end:
            return []
        C.legal_mask(self._state, self._mask)
        return [int(i) for i in np.flatnonzero(self._mask)]

    def game_record(self, agents: list[str] | None = None) -> dict[str, Any]:
        """This game as a JSON-serialisable record (``bali_env.records``): the seed and options
        that deal it again, every action so far, and the final scores once it is over."""
        from .records import make_record

        return make_record(self, agents)

    @staticmethod
    def action_to_str(action: int) -> str:
        """A readable name for an action id."""
        return action_to_str(action)

    @property
    def deal_seed(self) -> int | None:
        """The 64-bit seed the current game was dealt from (``core.init_game``)."""
        return self._deal_seed

    def render(self) -> str | None:
        """``"ansi"``: return the table as text; ``"human"``: print it."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; use render_mode='ansi' or 'human'")
            return None
        text = render_ansi(self._state)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""

    def __str__(self) -> str:
        return "bali_v0"

