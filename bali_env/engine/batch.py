"""Many games at once: the batched environment's kernels and whole random games (rollouts).

- ``batch_reset`` / ``batch_step_parallel`` / ``batch_step_serial``: one call deals or steps N
  games, writing observations, masks, rewards into caller-owned buffers; a finished game records
  its rewards, scores and winners and is dealt anew (``bali_env.envs.batched.BaliVectorEnv``).
  Two records carry their arguments: ``DealSettings`` (which game every deal deals) and
  ``BatchBuffers`` (the caller-owned arrays the kernels write), typed NamedTuples that Numba
  compiles to structs (a field read costs nothing per game).
- ``random_legal_action``: the uniform random policy, on a SplitMix64 stream.
- ``rollout_states`` / ``rollout_new_games``: play games to the end with that policy.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from bali_env.engine.deal import init_game
from bali_env.engine.end import terminal_rewards
from bali_env.engine.ids import MAX_PLAYERS, N_ACTIONS, PH_GAME_OVER
from bali_env.engine.obs_spec import OBS_DIM
from bali_env.engine.observe import observe
from bali_env.engine.seeds import rng_below, rng_next
from bali_env.engine.state import S_PHASE, S_TO_MOVE, S_WINNERS, STATE_DTYPE, STATE_SIZE, final_score
from bali_env.engine.step import apply_action, is_legal, legal_mask


@njit(cache=True)
def next_deal_seed(stream):
    """The next deal seed of an environment's seed stream (a one-element uint64 array)."""
    return rng_next(stream)


@njit(cache=True)
def random_legal_action(rng, mask):
    """Uniform random legal action from ``mask`` using the SplitMix64 stream ``rng``."""
    count = 0
    for a in range(N_ACTIONS):
        count += mask[a]
    k = rng_below(rng, count)
    for a in range(N_ACTIONS):
        if mask[a]:
            if k == 0:
                return a
            k -= 1
    return -1


# ----------------------------------------------------------------------------- batched env
class DealSettings(NamedTuple):
    """Which game every deal of a batch deals: the player count, the variants and the ``reset``
    options (``contract.parse_options``'s int64 arrays ``deck``, ``starters``, ``altar``; an empty
    array: drawn at random from the game's seed), as ``deal.init_game`` takes them."""

    num_players: int
    oracle: bool
    demon: bool
    deck: np.ndarray
    starters: np.ndarray
    altar: np.ndarray

    @classmethod
    def of(cls, num_players: int, oracle: bool, demon: bool,
           options: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> DealSettings:
        """The settings of checked arguments; ``options`` (deck, starters, altar): none by default."""
        empty = np.zeros(0, dtype=np.int64)
        deck, starters, altar = (empty, empty, empty) if options is None else options
        return cls(int(num_players), bool(oracle), bool(demon), deck, starters, altar)


class BatchBuffers(NamedTuple):
    """The caller-owned arrays the batched kernels write, one row per game: the observation of the
    seat to move ``obs`` (float32 [N, OBS_DIM]), its legal actions ``masks`` (int8 [N, N_ACTIONS]),
    ``to_move`` (int64 [N]); for the step that ends a game its ``rewards`` (float64 [N, players];
    zero otherwise), ``terminated`` (bool [N]), ``final_scores`` (int64 [N, players]), ``winners``
    (int64 [N], a bit per winning seat) and its last state ``final_states`` ([N, STATE_SIZE])."""

    obs: np.ndarray
    masks: np.ndarray
    to_move: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    final_scores: np.ndarray
    winners: np.ndarray
    final_states: np.ndarray

    @classmethod
    def allocate(cls, num_games: int, num_players: int) -> BatchBuffers:
        """Zeroed buffers for ``num_games`` games of ``num_players`` players."""
        n = num_games
        return cls(np.zeros((n, OBS_DIM), dtype=np.float32), np.zeros((n, N_ACTIONS), dtype=np.int8),
                   np.zeros(n, dtype=np.int64), np.zeros((n, num_players), dtype=np.float64),
                   np.zeros(n, dtype=np.bool_), np.zeros((n, num_players), dtype=np.int64),
                   np.zeros(n, dtype=np.int64), np.zeros((n, STATE_SIZE), dtype=STATE_DTYPE))


@njit(cache=True)
def batch_reset_one(states, i, streams, deal, out):
    """Deal game i (``DealSettings`` ``deal``) from the next seed of its stream and write its first
    observation into the ``BatchBuffers`` ``out`` (``obs``, ``masks``, ``to_move``)."""
    s = states[i]
    init_game(s, deal.num_players, deal.oracle, deal.demon, rng_next(streams[i : i + 1]), deal.deck, deal.starters,
              deal.altar)
    out.to_move[i] = s[S_TO_MOVE]
    observe(s, s[S_TO_MOVE], out.obs[i], out.masks[i])


@njit(cache=True, parallel=True)
def batch_reset(states, streams, deal, out):
    """Deal every game of a batch (one Numba call, parallel over games)."""
    for i in prange(states.shape[0]):
        batch_reset_one(states, i, streams, deal, out)


@njit(cache=True)
def _batch_step_one(states, i, action, streams, deal, score_mode, out):
    """Step game i (action -1: leave it as it is); if it ends, record its rewards, scores,
    winners and final state and deal the next game."""
    s = states[i]
    out.rewards[i, :] = 0.0
    if action < 0:
        out.terminated[i] = False
        return
    apply_action(s, action)
    if s[S_PHASE] == PH_GAME_OVER:
        terminal_rewards(s, score_mode, out.rewards[i])
        for q in range(deal.num_players):
            out.final_scores[i, q] = s[final_score(q)]
        out.winners[i] = s[S_WINNERS]
        out.final_states[i, :] = s
        out.terminated[i] = True
        init_game(s, deal.num_players, deal.oracle, deal.demon, rng_next(streams[i : i + 1]), deal.deck,
                  deal.starters, deal.altar)
    else:
        out.terminated[i] = False
    out.to_move[i] = s[S_TO_MOVE]
    observe(s, s[S_TO_MOVE], out.obs[i], out.masks[i])


@njit(cache=True)
def _first_illegal(states, actions):
    """Index of the first game whose action is illegal (-1 = skip the game is allowed), or -1."""
    for i in range(states.shape[0]):
        if actions[i] != -1 and not is_legal(states[i], actions[i]):
            return i
    return -1


@njit(cache=True, parallel=True)
def batch_step_parallel(states, actions, streams, deal, score_mode, out):
    """Step every game of a batch (parallel over games): ``deal`` the ``DealSettings`` of the
    games dealt anew, ``score_mode`` the rewards (``end.terminal_rewards``), ``out`` the
    ``BatchBuffers`` written. Returns -1, or the index of the first game whose action is illegal,
    in which case nothing was changed. A game that ends leaves its last state in
    ``out.final_states`` (its observations after the end), then is dealt anew."""
    bad = _first_illegal(states, actions)
    if bad >= 0:
        return bad
    for i in prange(states.shape[0]):
        _batch_step_one(states, i, actions[i], streams, deal, score_mode, out)
    return -1


@njit(cache=True)
def batch_step_serial(states, actions, streams, deal, score_mode, out):
    """``batch_step_parallel`` on one thread (lower call overhead for small batches)."""
    bad = _first_illegal(states, actions)
    if bad >= 0:
        return bad
    for i in range(states.shape[0]):
        _batch_step_one(states, i, actions[i], streams, deal, score_mode, out)
    return -1


# ----------------------------------------------------------------------------- rollouts
@njit(cache=True)
def play_out(s, rng, mask):
    """Play the game in ``s`` to the end with uniform random legal actions; return the steps."""
    steps = 0
    while s[S_PHASE] != PH_GAME_OVER:
        legal_mask(s, mask)
        apply_action(s, random_legal_action(rng, mask))
        steps += 1
    return steps


@njit(cache=True)
def _record_result(s, i, scores, winners):
    for q in range(MAX_PLAYERS):
        scores[i, q] = s[final_score(q)]
    winners[i] = s[S_WINNERS]


@njit(cache=True, parallel=True)
def rollout_states(states, policy_seeds, scores, winners, steps):
    """Play copies of ``states`` to the end with the uniform random policy (game i draws from the
    SplitMix64 stream ``policy_seeds[i]``); write final scores [N, 4], winner masks [N] and
    decisions [N]. The input states are not modified."""
    for i in prange(states.shape[0]):
        s = states[i].copy()
        rng = policy_seeds[i : i + 1].copy()
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        steps[i] = play_out(s, rng, mask)
        _record_result(s, i, scores, winners)


@njit(cache=True, parallel=True)
def rollout_new_games(streams, num_players, oracle, demon, scores, winners, steps):
    """Game i: deal from the first seed of the SplitMix64 stream ``streams[i]`` (as the AEC env's
    ``reset(seed=streams[i])`` does), then play it to the end with the uniform random policy
    drawing from the rest of that stream. Outputs as ``rollout_states``; ``streams`` unchanged."""
    empty = np.zeros(0, dtype=np.int64)
    for i in prange(streams.shape[0]):
        s = np.zeros(STATE_SIZE, dtype=np.int16)
        rng = streams[i : i + 1].copy()
        init_game(s, num_players, oracle, demon, rng_next(rng), empty, empty, empty)
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        steps[i] = play_out(s, rng, mask)
        _record_result(s, i, scores, winners)
