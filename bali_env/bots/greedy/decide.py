"""The greedy heuristic's decision: score one observation, pick the best legal action, batch it.

``greedy_decide_batch(obs, masks, params, rng_state, out)`` is the one entry point
``GreedyAgent`` calls (``act`` is a batch of one). Ties (actions scoring within ``TIE_EPS`` of the
best) and decisions without a scorer are drawn from a SplitMix64 stream (``rng_state``, the
engine's ``rng_below``): one stream for the whole batch, or one per row, so that a row's choice
depends on that row only.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bali_env.engine import D_GAME_OVER, N_ACTIONS, decode_counts, numba_cache, rng_below

from bali_env.bots.greedy.context import fill_context
from bali_env.bots.greedy.scorers import score_decision
from bali_env.bots.greedy.slots import C_SIZE, KERNEL_FILES, NO_ACTION, TIE_EPS, V_DECISION, V_SIZE

numba_cache.cover(__file__, *KERNEL_FILES)


@njit(cache=True)
def greedy_scores(obs, mask, params, v, x, scores):
    """The heuristic's score of every legal action of one observation into ``scores`` (-inf for the
    others and after the end of the game); returns the decision id (``D_*``). ``v``, ``x``: the
    scratch rows (``slots.new_workspace``), cleared first and left holding the context."""
    v[:] = 0
    x[:] = 0.0
    scores[:] = -np.inf
    decode_counts(obs, v)
    if v[V_DECISION] != D_GAME_OVER:
        fill_context(v, x, params)
        score_decision(v, x, params, mask, scores)
    return v[V_DECISION]


@njit(cache=True)
def pick_best(mask, scores, rng_state, legal):
    """The legal action with the best score; ties (within ``TIE_EPS``) drawn with ``rng_below``."""
    best = -np.inf
    for a in range(N_ACTIONS):
        if mask[a] and scores[a] > best:
            best = scores[a]
    count = 0
    for a in range(N_ACTIONS):
        if mask[a] and scores[a] >= best - TIE_EPS:
            legal[count] = a
            count += 1
    if count == 1:
        return legal[0]
    return legal[rng_below(rng_state, count)]


@njit(cache=True)
def greedy_decide(obs, mask, params, rng_state, v, x, scores, legal):
    """The heuristic's action for one observation: a single legal action is returned as it is, a
    decision without a scorer gets a random legal action, otherwise the best-scoring one;
    ``NO_ACTION`` when nothing is legal. ``v``, ``x``, ``scores``, ``legal``: ``new_workspace()``."""
    count = 0
    for a in range(N_ACTIONS):
        if mask[a]:
            legal[count] = a
            count += 1
    if count <= 1:
        return legal[0] if count == 1 else NO_ACTION
    if greedy_scores(obs, mask, params, v, x, scores) == D_GAME_OVER:
        return legal[rng_below(rng_state, count)]
    return pick_best(mask, scores, rng_state, legal)


@njit(cache=True)
def greedy_decide_batch(obs, masks, params, rng_state, out):
    """The greedy heuristic's action for every row: ``obs`` float32[N, OBS_DIM], ``masks``
    int8[N, N_ACTIONS], ``params`` float64[N_PARAMS] (``PARAM_NAMES``), ``rng_state`` uint64[1]
    (one tie-break stream for the batch, advanced) or uint64[N] (a stream per row: row i's
    choice then depends on row i only), ``out`` int64[N] (``NO_ACTION`` for a row without a
    legal action)."""
    v = np.zeros(V_SIZE, np.int64)
    x = np.zeros(C_SIZE, np.float64)
    scores = np.zeros(N_ACTIONS, np.float64)
    legal = np.zeros(N_ACTIONS, np.int64)
    per_row = rng_state.shape[0] > 1
    for i in range(obs.shape[0]):
        stream = rng_state[i : i + 1] if per_row else rng_state[0:1]
        out[i] = greedy_decide(obs[i], masks[i], params, stream, v, x, scores, legal)
