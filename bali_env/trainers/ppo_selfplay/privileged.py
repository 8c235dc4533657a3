"""What the critic may see in training and the players may not: the hidden state, as features.

An asymmetric actor-critic (the actor plays from the observation only; the critic, used only to
compute advantages while training, also sees the true state) gives lower-variance advantages in
games of hidden information. ``privileged_features(states, seats, out)`` writes, for every game
and from seat ``seats[i]``'s chair (relative seats, as the observation): every seat's true
offering cards by category, the altar's true counts and values by category, and every seat's
score if the game ended now. The exported policy (the actor) never uses them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bali_env.engine import numba_cache

numba_cache.cover(__file__)  # these kernels call the engine: recompile when it changes

from bali_env.engine import (  # noqa: E402
    absolute_seat,
    MAX_PLAYERS,
    N_CATEGORIES,
    S_NUM_PLAYERS,
    altar_counts,
    altar_values,
    final_scores,
    offerings,
)

N_PRIVILEGED = MAX_PLAYERS * N_CATEGORIES + 2 * N_CATEGORIES + MAX_PLAYERS  #: 28 features


@njit(cache=True)
def privileged_features(states, seats, out):
    """Fill ``out[N, N_PRIVILEGED]`` (float32) from the true states (see the module docstring)."""
    counts = np.zeros(N_CATEGORIES, dtype=np.int64)
    values = np.zeros(N_CATEGORIES, dtype=np.int64)
    scores = np.zeros(MAX_PLAYERS, dtype=np.int64)
    for i in range(states.shape[0]):
        s = states[i]
        n = s[S_NUM_PLAYERS]
        out[i, :] = 0.0
        for r in range(n):
            q = absolute_seat(seats[i], r, n)
            for c in range(N_CATEGORIES):
                out[i, r * N_CATEGORIES + c] = s[offerings(q, c)] / 10.0
        altar_counts(s, counts)
        altar_values(counts, values)
        b = MAX_PLAYERS * N_CATEGORIES
        for c in range(N_CATEGORIES):
            out[i, b + c] = counts[c] / 10.0
            out[i, b + N_CATEGORIES + c] = values[c] / 3.0
        final_scores(s, scores)
        b += 2 * N_CATEGORIES
        for r in range(n):
            out[i, b + r] = scores[absolute_seat(seats[i], r, n)] / 100.0
