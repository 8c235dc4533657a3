"""The greedy heuristic's altar: expected category values over a fixed table of random altars.

The final altar is not known: its unknown cards and the cards others will add are drawn from a
fixed table of random completions (``CUM[s, m]``: category counts of the first ``m`` of 80 uniform
random cards in sample ``s``, the same on every call), so category values are expectations over
plausible altars and ties and "3 - distinct counts above" stay exact. The engine's altar values
(``bali_env.engine.altar_values``) only depend on how the 4 counts compare pairwise, so they are
tabled once over the 3^6 sign patterns of the 6 pairs (``PATTERN_VALUES``).

``altar_score`` is what every offering decision maximises: my expected final offering score
minus the weighted mean of the others' for a change of the planned altar.
"""

from __future__ import annotations

import itertools

import numpy as np
from numba import njit

from bali_env.engine import N_CATEGORIES, altar_values, numba_cache

from bali_env.bots.greedy.slots import (
    C_SHRINE_GAIN,
    C_VALUES,
    KERNEL_FILES,
    P_RIVAL_WEIGHT,
    V_FAVOURITE,
    V_N,
    V_PLAN,
    V_RANDOM,
    held,
    offers,
)

numba_cache.cover(__file__, *KERNEL_FILES)

# ----------------------------------------------------------------------------- the tables
N_SAMPLES, MAX_RANDOM = 64, 80
_draws = np.random.default_rng(20170901).integers(0, N_CATEGORIES, size=(N_SAMPLES, MAX_RANDOM))
CUM = np.zeros((N_SAMPLES, MAX_RANDOM + 1, N_CATEGORIES), dtype=np.int64)  #: [sample, m, category]
CUM[:, 1:, :] = np.cumsum(np.eye(N_CATEGORIES, dtype=np.int64)[_draws], axis=1)

PAIR_A = np.array([0, 0, 0, 1, 1, 2])  #: the 6 category pairs (a < b) ...
PAIR_B = np.array([1, 2, 3, 2, 3, 3])
PAIR_POW = 3 ** np.arange(6)  #: ... and the weight of each pair's sign in a pattern number
N_PAIRS = len(PAIR_A)
PATTERN_VALUES = np.zeros((3**N_PAIRS, N_CATEGORIES), dtype=np.int64)  #: [sign pattern, category]
for _counts in itertools.product(range(1, 5), repeat=N_CATEGORIES):
    _v = np.array(_counts, dtype=np.int64)
    # the engine's rule as plain Python (with the JIT disabled the kernel is the plain function already)
    getattr(altar_values, "py_func", altar_values)(
        _v, PATTERN_VALUES[int((np.sign(_v[PAIR_B] - _v[PAIR_A]) + 1) @ PAIR_POW)])


# ----------------------------------------------------------------------------- kernels
@njit(cache=True, inline="always")
def pattern_key(counts):
    """Row of ``PATTERN_VALUES`` for 4 category counts: the signs of the 6 pairwise differences."""
    key = 0
    for i in range(N_PAIRS):
        a = counts[PAIR_A[i]]
        b = counts[PAIR_B[i]]
        key += (1 + (b > a) - (b < a)) * PAIR_POW[i]
    return key


@njit(cache=True)
def expected_values(known, random_cards):
    """Expected category values (a 4-tuple) of the altars ``known`` + the first ``random_cards``
    random cards of each sample of ``CUM``: the mean over the samples (integer sums, then one
    division)."""
    m = min(random_cards, MAX_RANDOM)
    t0 = t1 = t2 = t3 = 0
    for s in range(N_SAMPLES):
        counts = (known[0] + CUM[s, m, 0], known[1] + CUM[s, m, 1], known[2] + CUM[s, m, 2],
                  known[3] + CUM[s, m, 3])
        key = pattern_key(counts)
        t0 += PATTERN_VALUES[key, 0] if counts[0] > 0 else 0
        t1 += PATTERN_VALUES[key, 1] if counts[1] > 0 else 0
        t2 += PATTERN_VALUES[key, 2] if counts[2] > 0 else 0
        t3 += PATTERN_VALUES[key, 3] if counts[3] > 0 else 0
    return (t0 / N_SAMPLES, t1 / N_SAMPLES, t2 / N_SAMPLES, t3 / N_SAMPLES)


@njit(cache=True, inline="always")
def one_card(c):
    """The 4 counts of one card of category ``c`` (all 0 for ``c`` outside 0..3)."""
    return (1 if c == 0 else 0, 1 if c == 1 else 0, 1 if c == 2 else 0, 1 if c == 3 else 0)


@njit(cache=True, inline="always")
def no_card():
    """The 4 counts of no card (typed int64 like ``one_card``'s: one compiled ``altar_score``)."""
    zero = np.int64(0)
    return (zero, zero, zero, zero)


NO_PUSH = (0.0, 0.0, 0.0, 0.0)  #: my offering cards: nothing given up


@njit(cache=True, inline="always")
def my_offers(x, push):
    """My expected final offering cards minus the 4 counts ``push`` (a 4-tuple of floats)."""
    return (x[offers(0, 0)] - push[0], x[offers(0, 1)] - push[1], x[offers(0, 2)] - push[2],
            x[offers(0, 3)] - push[3])


@njit(cache=True)
def altar_score(v, x, params, change, mine, more_random):
    """My expected final offering score minus the weighted mean of the others' when the 4 counts
    ``change`` (may be negative) join the planned altar, ``more_random`` more random cards land
    there and I end up holding ``mine`` (a 4-tuple)."""
    known = (max(0, v[V_PLAN] + change[0]), max(0, v[V_PLAN + 1] + change[1]),
             max(0, v[V_PLAN + 2] + change[2]), max(0, v[V_PLAN + 3] + change[3]))
    values = expected_values(known, v[V_RANDOM] + more_random)
    own = 0.0
    for c in range(N_CATEGORIES):
        own += mine[c] * values[c]
    n = v[V_N]
    others = 0.0
    for q in range(1, n):
        row = 0.0
        for c in range(N_CATEGORIES):
            row += x[offers(q, c)] * values[c]
        others += row
    others = others / (n - 1)
    return own - params[P_RIVAL_WEIGHT] * others


@njit(cache=True)
def shrine_altar_gain(v, x, params):
    """Relative offering points one more shrine of mine brings: my favourite category gets my
    face-down card and a supply card, each other player puts a card face up (at random, as far as
    I can tell) and so loses it. Computed once per decision (kept in ``x[C_SHRINE_GAIN]``)."""
    if not np.isnan(x[C_SHRINE_GAIN]):
        return x[C_SHRINE_GAIN]
    fav = v[V_FAVOURITE]
    fc = one_card(fav)
    used = 1.0 if x[held(0, fav)] > 0 else 0.0  # my face-down card, if I hold one of that category
    mine = my_offers(x, (used * fc[0], used * fc[1], used * fc[2], used * fc[3]))
    change = (2 * fc[0], 2 * fc[1], 2 * fc[2], 2 * fc[3])
    without = altar_score(v, x, params, no_card(), my_offers(x, NO_PUSH), np.int64(0))
    gain = altar_score(v, x, params, change, mine, v[V_N] - 1) - without
    mean_value = 0.0
    for c in range(N_CATEGORIES):
        mean_value += x[C_VALUES + c]
    others_loss = params[P_RIVAL_WEIGHT] * (mean_value / N_CATEGORIES)
    x[C_SHRINE_GAIN] = gain + others_loss
    return x[C_SHRINE_GAIN]
