"""Many games at once: the batched environment's kernels and whole random games (rollouts).

- ``batch_reset`` / ``batch_step_parallel`` / ``batch_step_serial``: one call deals or steps N
  games, writing observations, masks, rewards into caller-owned buffers; a finished game records
  its rewards, scores and winners and is dealt anew (``bali_env.envs.batched.BaliVectorEnv``).
- ``random_legal_action``: the uniform random policy, on a SplitMix64 stream.
- ``rollout_states`` / ``rollout_new_games``: play games to the end with that policy.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from bali_env.engine.deal import init_game
from bali_env.engine.end import terminal_rewards
from bali_env.engine.ids import MAX_PLAYERS, N_ACTIONS, PH_GAME_OVER
from bali_env.engine.observe import observe
from bali_env.engine.seeds import rng_below, rng_next
from bali_env.engine.state import S_PHASE, S_TO_MOVE, S_WINNERS, STATE_SIZE, final_score
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
@njit(cache=True)
def batch_reset_one(states, i, streams, num_players, oracle, demon, deck, starters, altar, obs, masks, to_move):
    """Deal game i from the next seed of its stream and write its first observation."""
    s = states[i]
    init_game(s, num_players, oracle, demon, rng_next(streams[i : i + 1]), deck, starters, altar)
    to_move[i] = s[S_TO_MOVE]
    observe(s, s[S_TO_MOVE], obs[i], masks[i])


@njit(cache=True, parallel=True)
def batch_reset(states, streams, num_players, oracle, demon, deck, starters, altar, obs, masks, to_move):
    """Deal every game of a batch (one Numba call, parallel over games)."""
    for i in prange(states.shape[0]):
        batch_reset_one(states, i, streams, num_players, oracle, demon, deck, starters, altar, obs, masks, to_move)


@njit(cache=True)
def _batch_step_one(states, i, action, streams, num_players, oracle, demon, deck, starters, altar,
                    score_mode, obs, masks, to_move, rewards, terminated, final_scores, winners, final_states):
    """Step game i (action -1: leave it as it is); if it ends, record its rewards, scores,
    winners and final state and deal the next game."""
    s = states[i]
    rewards[i, :] = 0.0
    if action < 0:
        terminated[i] = False
        return
    apply_action(s, action)
    if s[S_PHASE] == PH_GAME_OVER:
        terminal_rewards(s, score_mode, rewards[i])
        for q in range(num_players):
            final_scores[i, q] = s[final_score(q)]
        winners[i] = s[S_WINNERS]
        final_states[i, :] = s
        terminated[i] = True
        init_game(s, num_players, oracle, demon, rng_next(streams[i : i + 1]), deck, starters, altar)
    else:
        terminated[i] = False
    to_move[i] = s[S_TO_MOVE]
    observe(s, s[S_TO_MOVE], obs[i], masks[i])


@njit(cache=True)
def _first_illegal(states, actions):
    """Index of the first game whose action is illegal (-1 = skip the game is allowed), or -1."""
    for i in range(states.shape[0]):
        if actions[i] != -1 and not is_legal(states[i], actions[i]):
            return i
    return -1


@njit(cache=True, parallel=True)
def batch_step_parallel(states, actions, streams, num_players, oracle, demon, deck, starters, altar,
                        score_mode, obs, masks, to_move, rewards, terminated, final_scores, winners, final_states):
    """Step every game of a batch (parallel over games). Returns -1, or the index of the first
    game whose action is illegal, in which case nothing was changed. A game that ends leaves its
    last state in ``final_states`` (its observations after the end), then is dealt anew."""
    bad = _first_illegal(states, actions)
    if bad >= 0:
        return bad
    for i in prange(states.shape[0]):
        _batch_step_one(states, i, actions[i], streams, num_players, oracle, demon, deck, starters, altar,
                        score_mode, obs, masks, to_move, rewards, terminated, final_scores, winners, final_states)
    return -1


@njit(cache=True)
def batch_step_serial(states, actions, streams, num_players, oracle, demon, deck, starters, altar,
                      score_mode, obs, masks, to_move, rewards, terminated, final_scores, winners, final_states):
    """``batch_step_parallel`` on one thread (lower call overhead for small batches)."""
    bad = _first_illegal(states, actions)
    if bad >= 0:
        return bad
    for i in range(states.shape[0]):
        _batch_step_one(states, i, actions[i], streams, num_players, oracle, demon, deck, starters, altar,
                        score_mode, obs, masks, to_move, rewards, terminated, final_scores, winners, final_states)
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
