"""The observation encoder (docs/rules.md section 5): one player's view of the table.

``observe(s, p, obs, mask)`` writes seat ``p``'s observation, laid out as ``obs_spec.OBS_FIELDS``
declares (offsets and scales come from there), and the action mask (all 0 unless ``p`` decides
now). Only what ``p`` may know goes in: others' offering cards as the public bounds, the altar
categories ``p`` saw, no deck order. ``obs_one_hot``, ``obs_count`` and ``obs_num_players`` read
fields back (for the agents' Numba kernels, ``determinization.py`` and ``bali_env.engine.decode``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bali_env.engine.ids import (
    COLUMN_SIZE,
    D_OFFER_FACE_DOWN,
    D_OFFER_FACE_UP,
    D_PLAY,
    D_TAKE_OFFERING,
    MIN_PLAYERS,
    N_CARD_IDS,
    N_CARD_TYPES,
    N_CATEGORIES,
    N_COLUMNS,
    N_PLAYER_COUNTS,
    ORACLE_WINDOW,
    PH_FARMER_CHOICE,
    PH_GAME_OVER,
    PH_OFFER_OWN,
    PH_PLAY,
    PH_SHRINE_REWARD,
    PH_TAKE_OFFERING,
)
from bali_env.engine.obs_spec import (
    O_ACTIVE,
    O_ALTAR,
    O_ALTAR_KNOWN,
    O_ALTAR_TOP,
    O_ALTAR_UNKNOWN,
    O_DECISION,
    O_DECK,
    O_DECK_CARDS,
    O_DEMON,
    O_LAST_COL,
    O_MARKET,
    O_NUM_PLAYERS,
    O_ORACLE,
    O_ORACLE_WINDOW,
    O_SCORING,
    O_SCORING_AMOUNT,
    O_SCORING_BONUS,
    O_SEATS,
    O_SUPPLY,
    O_TO_MOVE,
    O_VARIANTS,
    SEAT_WIDTH,
    SO_HAND,
    SO_OFF_MAX,
    SO_OFF_MIN,
    SO_OFF_TOTAL,
    SO_PRESENT,
    SO_STONES,
    SO_TABLEAU,
    SO_VP,
    X_ALTAR,
    X_DECK,
    X_DECK_CARDS,
    X_HAND,
    X_OFFERINGS,
    X_PEEKS,
    X_SCORING_AMOUNT,
    X_STONES,
    X_SUPPLY,
    X_TABLEAU,
    X_VP,
    X_WINDOW,
)
from bali_env.engine.scoring import shrine_reward_amount
from bali_env.engine.state import (
    absolute_seat,
    relative_seat,
    S_ACTIVE,
    S_ALTAR_LEN,
    S_BONUS_SEAT,
    S_DECK_LEN,
    S_DECK_POS,
    S_DEMON,
    S_DEMON_COL,
    S_LAST_COL,
    S_NUM_PLAYERS,
    S_ORACLE,
    S_PEEKS,
    S_PHASE,
    S_SCORE_STEP,
    S_SCORED,
    S_TO_MOVE,
    S_WINDOW,
    altar,
    altar_known,
    col_len,
    col_pos,
    deck,
    deck_left,
    hand,
    known_max,
    known_min,
    market,
    offering_total,
    offerings,
    stones,
    supply,
    tableau,
    vp,
)
from bali_env.engine.step import legal_mask


# ----------------------------------------------------------------------------- reading an observation
@njit(cache=True, inline="always")
def obs_one_hot(obs, start, size):
    """Index (0..size-1) of the largest value in obs[start:start+size], -1 if all are 0 (a one-hot
    field of the observation)."""
    best = -1
    best_v = 0.0
    for k in range(size):
        if obs[start + k] > best_v:
            best_v = obs[start + k]
            best = k
    return best


@njit(cache=True, inline="always")
def obs_count(obs, i, scale):
    """The count stored at obs[i] as count / scale."""
    return np.int64(np.rint(obs[i] * scale))


@njit(cache=True, inline="always")
def obs_num_players(obs):
    """The number of players (2..4) an observation's ``num_players`` one-hot says."""
    return MIN_PLAYERS + obs_one_hot(obs, O_NUM_PLAYERS, N_PLAYER_COUNTS)


# ----------------------------------------------------------------------------- writing one
@njit(cache=True, inline="always")
def decision_index(s):
    """The decision being taken now (``ids.DECISION_NAMES``): the phase as the mover sees it."""
    ph = s[S_PHASE]
    if ph == PH_TAKE_OFFERING:
        return D_TAKE_OFFERING
    if ph == PH_PLAY:
        return D_PLAY
    if ph == PH_OFFER_OWN:
        return D_OFFER_FACE_DOWN if s[S_TO_MOVE] == s[S_ACTIVE] else D_OFFER_FACE_UP
    return ph + 1  # offer_supply 4, refill 5, oracle 6, shrine 7, farmer 8, game_over 9


@njit(cache=True, inline="always")
def _observe_seat(s, q, own, obs, b):
    """Seat ``q``'s block at ``obs[b:]``; ``own``: the observer's own seat (exact offerings)."""
    obs[b + SO_PRESENT] = 1.0
    for k in range(N_CARD_TYPES):
        obs[b + SO_HAND + k] = s[hand(q, k)] / X_HAND
        obs[b + SO_TABLEAU + k] = s[tableau(q, k)] / X_TABLEAU
    obs[b + SO_STONES] = s[stones(q)] / X_STONES
    obs[b + SO_VP] = s[vp(q)] / X_VP
    for c in range(N_CATEGORIES):
        if own:
            lo = s[offerings(q, c)]
            hi = lo
        else:
            lo = s[known_min(q, c)]
            hi = s[known_max(q, c)]
        obs[b + SO_OFF_MIN + c] = lo / X_OFFERINGS
        obs[b + SO_OFF_MAX + c] = hi / X_OFFERINGS
    obs[b + SO_OFF_TOTAL] = offering_total(s, q) / X_OFFERINGS


@njit(cache=True, inline="always")
def _observe_altar(s, p, obs):
    """The altar as seat ``p`` knows it: size, known cards by category, unknown cards, the top 4."""
    top = s[S_ALTAR_LEN]
    bit = 1 << p
    known = np.zeros(N_CATEGORIES + 1, dtype=np.int64)  # by category, then unknown
    for i in range(top):
        if s[altar_known(i)] & bit:
            known[s[altar(i)]] += 1
        else:
            known[N_CATEGORIES] += 1
    obs[O_ALTAR] = top / X_ALTAR
    for c in range(N_CATEGORIES):
        obs[O_ALTAR_KNOWN + c] = known[c] / X_ALTAR
    obs[O_ALTAR_UNKNOWN] = known[N_CATEGORIES] / X_ALTAR
    for d in range(min(ORACLE_WINDOW, top)):
        i = top - 1 - d
        if s[altar_known(i)] & bit:
            obs[O_ALTAR_TOP + N_CATEGORIES * d + s[altar(i)]] = 1.0


@njit(cache=True, inline="always")
def _observe_scoring(s, obs):
    """The pending phase-4 decision: scored type, what it gives, whether it is the majority bonus."""
    ph = s[S_PHASE]
    if ph != PH_SHRINE_REWARD and ph != PH_FARMER_CHOICE:
        return
    obs[O_SCORING + s[S_SCORED]] = 1.0
    q = s[S_TO_MOVE]
    if ph == PH_SHRINE_REWARD:
        obs[O_SCORING_AMOUNT] = shrine_reward_amount(s, q) / X_SCORING_AMOUNT
        obs[O_SCORING_BONUS] = 1.0 if s[S_BONUS_SEAT] == q else 0.0
    else:
        obs[O_SCORING_AMOUNT] = 1.0 / X_SCORING_AMOUNT
        obs[O_SCORING_BONUS] = 1.0 if s[S_SCORE_STEP] == s[S_NUM_PLAYERS] else 0.0


@njit(cache=True)
def observe(s, p, obs, mask):
    """Write seat ``p``'s observation (float32[OBS_DIM]) and action mask (int8[44], all 0 unless
    ``p`` decides now). Only what ``p`` may know goes in."""
    obs[:] = 0.0
    n = s[S_NUM_PLAYERS]
    obs[O_DECISION + decision_index(s)] = 1.0
    obs[O_ACTIVE + relative_seat(p, s[S_ACTIVE], n)] = 1.0
    if s[S_PHASE] != PH_GAME_OVER:
        obs[O_TO_MOVE + relative_seat(p, s[S_TO_MOVE], n)] = 1.0
    for r in range(n):
        _observe_seat(s, absolute_seat(p, r, n), r == 0, obs, O_SEATS + r * SEAT_WIDTH)
    for c in range(N_CATEGORIES):
        obs[O_SUPPLY + c] = s[supply(c)] / X_SUPPLY
    obs[O_DECK] = deck_left(s) / X_DECK
    for col in range(N_COLUMNS):
        pos = s[col_pos(col)]
        for j in range(s[col_len(col)] - pos):
            obs[O_MARKET + (col * COLUMN_SIZE + j) * N_CARD_TYPES + s[market(col, pos + j)]] = 1.0
    if s[S_DEMON] != 0:
        obs[O_DEMON + s[S_DEMON_COL]] = 1.0
    obs[O_VARIANTS] = s[S_ORACLE]
    obs[O_VARIANTS + 1] = s[S_DEMON]
    obs[O_NUM_PLAYERS + n - MIN_PLAYERS] = 1.0
    _observe_altar(s, p, obs)
    obs[O_ORACLE] = s[S_PEEKS] / X_PEEKS
    obs[O_ORACLE_WINDOW] = s[S_WINDOW] / X_WINDOW
    _observe_scoring(s, obs)
    for i in range(s[S_DECK_POS], s[S_DECK_LEN]):
        obs[O_DECK_CARDS + s[deck(i)]] += 1.0
    for k in range(N_CARD_IDS):
        obs[O_DECK_CARDS + k] /= X_DECK_CARDS
    if s[S_LAST_COL] >= 0:
        obs[O_LAST_COL + s[S_LAST_COL]] = 1.0
    if p == s[S_TO_MOVE]:
        legal_mask(s, mask)
    else:
        mask[:] = 0
