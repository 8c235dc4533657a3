"""A learner's seat against opponent bots in N games at once: a ``gymnasium.vector.VectorEnv`` on
the batched engine (``BaliVectorEnv``), what ``gymnasium.make_vec("bali_env/Bali-v0",
num_envs=N)`` returns.

``BaliGymVectorEnv(num_envs, opponents="random", num_players=2, ...)`` keeps N games in one
``BaliVectorEnv`` (one Numba call per step). In every game the learner plays one seat, rotating
with the games a slot has played so every seat is trained; the other seats are played by
opponents drawn from an ``OpponentPool`` (``bali_env.versus.opponents``: an opponents spec such as
``"random:1,greedy:3"``, or a pool) when the game starts. ``step(actions)`` applies the learner's
actions, then the opponents move, in batches grouped by opponent, inside the same batched engine,
until every game waits for its learner again.

Gymnasium 1.x conventions:

- spaces: ``single_observation_space`` ``Box(0, OBS_HIGH, (293,))`` (more with ``features``),
  ``single_action_space`` ``Discrete(44)``, and their batched versions;
- ``metadata["autoreset_mode"]`` is ``NEXT_STEP`` by default (Gymnasium's own default, the mode
  its vector wrappers take): a game that ends (on the learner's move or an opponent's) returns
  the learner's terminal reward, ``terminated[i]``, the learner's last observation of it and its
  result in ``infos`` (``final_scores`` and ``winners`` by seat, ``learner_seat`` and
  ``illegal_action``, each with its ``_`` mask; a game the learner forfeited by an illegal move
  has no scores: zeros, and no winners); the next ``step`` ignores that slot's action and
  returns the first observation of its next game (reward 0). The mask handed with the last
  observation is already the next game's first one, so every mask has a legal action (a
  ``-inf``-masked softmax never sees an empty row) and whatever is sampled from it is ignored. With
  ``autoreset_mode=AutoresetMode.SAME_STEP`` (what the SB3 adapter uses) the step that ends a
  game returns already the next game's first observation, the last one in
  ``infos["final_obs"][i]`` and the result in ``infos["final_info"]``;
- the learner's legal actions are ``infos["action_mask"]`` (bool ``[N, 44]``, also
  ``action_masks()``, what sb3-contrib's MaskablePPO asks for);
- seeding as ``SyncVectorEnv``: ``reset(seed=s)`` deals game i from seed ``s + i`` (the game the
  AEC env's ``reset(seed=s + i)`` deals), the opponents' draws and randomness from ``s`` too.

An illegal learner action ends that game with -1 for the learner (PettingZoo classic's
convention; ``illegal_action="raise"`` raises ValueError naming the game instead, nothing
changed). The multi-agent batched env (``BaliVectorEnv``) keeps its pgx-style interface.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode

from bali_env import engine as C
from bali_env.bots.features import feature_count, policy_input
from bali_env.engine.validate import check_action, check_choice, check_seed
from bali_env.envs.batched import BaliVectorEnv

from bali_env.versus.opponents import DEFAULT_OPPONENTS, OpponentPool, pool_from_spec

_ILLEGAL = ("terminate", "raise")


class BaliGymVectorEnv(gymnasium.vector.VectorEnv):
    """The learner's seat against opponents in ``num_envs`` games (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 8, opponents: str | OpponentPool = DEFAULT_OPPONENTS, num_players: int = 2,
                 oracle: bool = False, demon: bool = False, reward: str = "win_loss",
                 illegal_action: str = "terminate", features: str | None = None, mcts_sims: int = 200,
                 render_mode: str | None = None, autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP) -> None:
        extra = feature_count(features)  # ValueError for an unknown feature set
        check_choice("illegal_action", illegal_action, _ILLEGAL)
        check_choice("render_mode", render_mode, (None,))
        mode = AutoresetMode(autoreset_mode) if isinstance(autoreset_mode, str) else autoreset_mode
        self.autoreset_mode = check_choice("autoreset_mode", mode, (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP))
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.games = BaliVectorEnv(num_envs, num_players=num_players, oracle=oracle, demon=demon, reward=reward,
                                   parallel=False)  # a learner's framework uses the cores while the games step
        self._own_pool = isinstance(opponents, str)  # built here: reseeded by reset(seed=...)
        self.pool = pool_from_spec(opponents, mcts_sims=mcts_sims) if self._own_pool else opponents
        if len(self.pool) == 0:
            raise ValueError("the opponent pool is empty")
        self.num_envs, self.num_players, self.features = self.games.num_envs, self.games.num_players, features
        self.illegal_action, self.render_mode = illegal_action, None
        self.reward_scale = 0.1 if reward == "score" else 1.0  #: score margins (points) / 10
        low = np.concatenate([np.zeros(C.OBS_DIM), np.full(extra, -np.inf)]).astype(np.float32)
        high = np.concatenate([C.OBS_HIGH, np.full(extra, np.inf)]).astype(np.float32)
        self.single_observation_space = gymnasium.spaces.Box(low=low, high=high, dtype=np.float32)
        self.single_action_space = gymnasium.spaces.Discrete(C.N_ACTIONS)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gymnasium.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.learner_seat = np.zeros(self.num_envs, dtype=np.int64)
        self.seat_opponent = np.zeros((self.num_envs, self.num_players), dtype=np.int64)  # pool index per seat
        self.games_started = np.zeros(self.num_envs, dtype=np.int64)
        self.episode_returns: list[float] = []  #: the learner's return of every finished game, in order
        self.episode_opponents: list[str] = []  #: who it played in each (``" | "``-joined names)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)  # NEXT_STEP: slots whose game ended last step
        self._seeded = False

    # ------------------------------------------------------------------ seating and the opponents' moves
    def _seat_game(self, i: int) -> None:
        n = self.num_players
        self.learner_seat[i] = (self.games_started[i] + i) % n
        self.games_started[i] += 1
        for seat in range(n):
            self.seat_opponent[i, seat] = -1 if seat == self.learner_seat[i] else self.pool.sample()

    def _opponents_move(self, out: _StepResult) -> None:
        """Let opponents move until every game waits for its learner; collect the games that end."""
        g = self.games
        rows = np.arange(self.num_envs)
        while True:
            waiting = g.to_move != self.learner_seat
            if not waiting.any():
                return
            actions = np.full(self.num_envs, -1, dtype=np.int64)
            who = self.seat_opponent[rows, g.to_move]
            for k in np.unique(who[waiting]):
                sel = np.flatnonzero(waiting & (who == k))
                agent = self.pool.agents[k]
                decide = getattr(agent, "act_batch_unchecked", agent.act_batch)  # the engine's own rows
                actions[sel] = decide(g.obs[sel], g.action_masks[sel])
            _, r, term, _, _ = g.step(actions)
            self._collect(r, term, out)

    def _collect(self, r: np.ndarray, term: np.ndarray, out: _StepResult) -> None:
        """The learner's result of every game that just ended; its slot is seated anew."""
        for i in np.flatnonzero(term):
            seat = int(self.learner_seat[i])
            final_obs, _ = self.games.final_observation(int(i), seat)
            winners = (int(self.games.winner_masks[i]) >> np.arange(self.num_players)) & 1 == 1
            self._end(int(i), float(r[i, seat]) * self.reward_scale, final_obs, {
                "final_scores": self.games.final_scores[i].copy(), "winners": winners, "learner_seat": seat,
                "illegal_action": False}, out)

    def _end(self, i: int, ret: float, final_obs: np.ndarray, final_info: dict[str, Any], out: _StepResult) -> None:
        out.rewards[i] = ret
        out.terminated[i] = True
        out.finals[i] = (self._observation_row(final_obs, np.zeros(C.N_ACTIONS, np.int8)), final_info)
        self.episode_returns.append(ret)
        self.episode_opponents.append(" | ".join(self.pool.names[k] for k in self.seat_opponent[i] if k >= 0))
        self._seat_game(i)

    def _forfeit(self, rows: np.ndarray, actions: np.ndarray, out: _StepResult) -> None:
        """The learner moved illegally in these games: -1, the game ends, the slot deals the next."""
        if self.illegal_action == "raise":
            i = int(rows[0])
            legal = np.flatnonzero(self.games.action_masks[i]).tolist()
            raise ValueError(f"illegal action {int(actions[i])} in game {i} (the learner's seat "
                             f"{int(self.learner_seat[i])}); legal: {legal}")
        for i in rows:
            final_obs = self.games.obs[i].copy()
            seat = int(self.learner_seat[i])
            self.games.restart_game(int(i))
            self._end(int(i), -1.0, final_obs, {"final_scores": np.zeros(self.num_players, dtype=np.int64),
                                                "winners": np.zeros(self.num_players, dtype=bool),
                                                "learner_seat": seat, "illegal_action": True}, out)

    # ------------------------------------------------------------------ observations
    def _observation_row(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.features is None:
            return obs
        return policy_input(obs[None], mask[None], self.features, checked=True)[0]

    def observations(self) -> np.ndarray:
        """The learners' network inputs now: their observations, followed by the ``features``."""
        g = self.games
        if self.features is None:
            return g.obs.copy()
        return policy_input(g.obs, g.action_masks, self.features, checked=True)  # the env's own buffers

    def action_masks(self) -> np.ndarray:
        """The learners' legal actions, bool ``[num_envs, 44]``; RuntimeError before the first
        ``reset()``."""
        if not self._seeded:
            raise RuntimeError("call reset() before action_masks()")
        return self.games.action_masks.astype(bool)

    def _infos(self, masks: np.ndarray, out: _StepResult | None = None) -> dict[str, Any]:
        every = np.ones(self.num_envs, dtype=bool)
        infos: dict[str, Any] = {"action_mask": masks, "_action_mask": every,
                                 "learner_seat": self.learner_seat.copy(), "_learner_seat": every.copy()}
        for i, (final_obs, final_info) in ({} if out is None else out.finals).items():
            if self.autoreset_mode == AutoresetMode.SAME_STEP:
                infos = self._add_info(infos, {"final_obs": final_obs, "final_info": final_info}, i)
            else:
                infos = self._add_info(infos, final_info, i)
        return infos

    # ------------------------------------------------------------------ the VectorEnv API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal every game (game i from seed ``seed + i``; ``options``: the AEC env's ``reset``
        options, for every game), seat the learners, let the opponents move up to them."""
        if seed is not None:
            seed = check_seed(seed)
        elif not self._seeded and self._own_pool:
            seed = int(np.random.SeedSequence().generate_state(1)[0])
        if seed is not None and self._own_pool:
            self.pool.reseed(seed)
        super().reset(seed=seed)
        self._seeded = True
        self.games.reset(seed=seed, options=options)
        self.games_started[:] = 0
        self._autoreset[:] = False
        for i in range(self.num_envs):
            self._seat_game(i)
        out = _StepResult(self.num_envs)
        self._opponents_move(out)
        return self.observations(), self._infos(self.action_masks())

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The learner's action in every game, then the opponents' moves; Gymnasium's
        ``(obs, rewards, terminated, truncated, infos)`` with SAME_STEP autoreset."""
        if not self._seeded:
            raise RuntimeError("call reset() before step()")
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or not np.issubdtype(acts.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_envs} integers (one per game), got {acts.dtype} {acts.shape}")
        if acts.size and acts.min() < 0:  # -1 leaves a batched game as it is; a learner's action is 0..43
            check_action(int(acts[np.flatnonzero(acts < 0)[0]]))  # raises the AEC env's out-of-range error
        acts = self.games._check_actions(acts).copy()  # ids out of 0..43: the AEC env's error
        out = _StepResult(self.num_envs)
        resetting = self._autoreset.copy()  # NEXT_STEP: these slots show their next game, their action unused
        acts[resetting] = -1
        legal = self.games.action_masks[np.arange(self.num_envs), np.clip(acts, 0, C.N_ACTIONS - 1)] > 0
        bad = np.flatnonzero(~resetting & (~legal | (acts < 0)))
        if bad.size:
            self._forfeit(bad, acts, out)
            acts[bad] = -1
        _, r, term, _, _ = self.games.step(acts)
        self._collect(r, term, out)
        self._opponents_move(out)
        obs, masks = self.observations(), self.action_masks()
        self._autoreset[:] = False
        if self.autoreset_mode == AutoresetMode.NEXT_STEP:  # an ended game shows its end now, the next one next step
            for i, (final_obs, _) in out.finals.items():  # the mask stays the next game's: never empty
                obs[i], self._autoreset[i] = final_obs, True
        return obs, out.rewards, out.terminated, np.zeros(self.num_envs, dtype=bool), self._infos(masks, out)

    def close_extras(self, **kwargs: Any) -> None:
        """Release the opponents (a ``cmd:`` bot's process)."""
        for agent in self.pool.agents:
            close = getattr(agent, "close", None)
            if callable(close):
                close()

    # ------------------------------------------------------------------ resuming a run
    _SAVED = ("learner_seat", "seat_opponent", "games_started")
    _SAVED_GAMES = ("states", "obs", "action_masks", "to_move", "_streams")

    def checkpoint(self) -> dict[str, np.ndarray]:
        """Copies of every game in flight (states, random streams, seats and opponents), for
        ``restore``: a resumed training run continues the same games."""
        saved = {name: getattr(self, name).copy() for name in self._SAVED}
        saved.update({f"games.{name}": getattr(self.games, name).copy() for name in self._SAVED_GAMES})
        return saved

    def restore(self, saved: dict[str, np.ndarray]) -> None:
        """Put back the games ``checkpoint()`` saved (same number of games and players); the
        states are checked (``check_states``) before any kernel sees them."""
        from bali_env.engine.contract import check_states

        for name in self._SAVED:
            if saved[name].shape != getattr(self, name).shape:
                raise ValueError(f"checkpoint {name} has shape {saved[name].shape}, this env "
                                 f"{getattr(self, name).shape} (same --envs and --players needed)")
        states = check_states(saved["games.states"])
        if states.shape != self.games.states.shape:
            raise ValueError(f"checkpoint holds {len(states)} games, this env {self.num_envs}")
        if saved["seat_opponent"].max() >= len(self.pool):
            raise ValueError("checkpoint seats an opponent the pool does not hold")
        for name in self._SAVED:
            getattr(self, name)[...] = saved[name]
        for name in self._SAVED_GAMES:
            getattr(self.games, name)[...] = states if name == "states" else saved[f"games.{name}"]
        self.games.terminated[:] = False
        self.games._has_reset = True
        self._autoreset[:] = False
        self._seeded = True


class _StepResult:
    """What one ``step`` collects: the learner's rewards and ends, and each ended game's last
    observation and result by slot."""

    def __init__(self, n: int) -> None:
        self.rewards = np.zeros(n, dtype=np.float32)
        self.terminated = np.zeros(n, dtype=bool)
        self.finals: dict[int, tuple[np.ndarray, dict[str, Any]]] = {}


__all__ = ["BaliGymVectorEnv"]
