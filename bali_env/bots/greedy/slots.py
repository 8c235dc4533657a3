"""The greedy heuristic's named slots: its weights and the two flat rows one decision works in.

Like the engine's state, what the heuristic knows about one decision is two flat rows read by
named slots (``v[V_STONES]``) and, for per-seat or per-card fields, small index kernels named
after them (``v[tableau(q, SHRINE)]``, ``x[offers(0, c)]``):

- ``v`` (int64, ``V_*``): the observation's counts in the engine decoder's slots
  (``bali_env.engine.decode``: ``v[hand(q, k)]``...), then the integers the context derives
  (favourite category, planned altar, random altar cards), plus scratch;
- ``x`` (float64, ``C_*``): the context's estimates (turns left, shares, holdings now and at the
  end, category values, reward units) and the refill's per-card values.

``params`` (float64, ``P_*``) holds the keyword weights of ``GreedyAgent`` in ``PARAM_NAMES``
order. ``KERNEL_FILES`` lists the package's kernel files for Numba's cache (``numba_cache.cover``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit

from bali_env.engine import HAND_SIZE, MAX_PLAYERS, N_ACTIONS, N_CARD_TYPES, N_CATEGORIES, N_COLUMNS, numba_cache
from bali_env.engine.decode import (  # noqa: F401 - the decoded slots and accessors, re-exported for the heuristic
    DECODED_SIZE,
    V_ALTAR_UNKNOWN,
    V_AMOUNT,
    V_COL_LEN,
    V_DECISION,
    V_DECK_CARDS,
    V_DECK_SIZE,
    V_DEMON_COL,
    V_KNOWN,
    V_N,
    V_STONES,
    V_SUPPLY,
    V_TOP,
    V_VP,
    hand,
    market,
    offerings_min,
    offerings_max,
    tableau,
)

_HERE = Path(__file__).resolve().parent
#: every file of the package that defines kernels: each kernel file's Numba cache is keyed on all of
#: them (a kernel holds its callees' code and the tables it reads as constants), and on the engine
KERNEL_FILES = tuple(str(_HERE / name) for name in ("slots.py", "altar.py", "context.py", "scorers.py", "decide.py"))
numba_cache.cover(__file__, *KERNEL_FILES)

# ----------------------------------------------------------------------------- weights
#: the keyword weights of ``GreedyAgent``, in order: ``params[i]`` is ``PARAM_NAMES[i]``
PARAM_NAMES = ("rival_weight", "stone_high", "stone_low", "stone_mid", "shrine_bonus", "project", "stone_complete",
               "rival_stone", "tempo", "future_altar", "discount")
P_RIVAL_WEIGHT, P_STONE_HIGH, P_STONE_LOW, P_STONE_MID, P_SHRINE_BONUS, P_PROJECT = 0, 1, 2, 3, 4, 5
P_STONE_COMPLETE, P_RIVAL_STONE, P_TEMPO, P_FUTURE_ALTAR, P_DISCOUNT = 6, 7, 8, 9, 10
N_PARAMS = len(PARAM_NAMES)

TIE_EPS = 1e-9  #: actions scoring within this of the best are ties
NO_ACTION = -1  #: the answer for a row without any legal action (a finished game)

# ----------------------------------------------------------------------------- v: the integer row
# the observation's counts, in the engine decoder's slots (``V_N`` .. ``V_OFF_TOTAL``), then the
# integers the context derives and the scratch of one decision
V_FAVOURITE = DECODED_SIZE  #: the category I push onto the altar
V_RANDOM = V_FAVOURITE + 1  #: random altar cards expected (unknown ones and the others' additions)
V_PLAN = V_RANDOM + 1  #: [category] known altar counts plus the cards I plan to put there
V_COUNTS = V_PLAN + N_CATEGORIES  #: [seat] scratch: counts for the majority rule
V_SEQ = V_COUNTS + MAX_PLAYERS  #: [take] scratch: a sequence of refill columns
V_TAKEN = V_SEQ + HAND_SIZE  #: [column] scratch: cards taken from each column in a sequence
V_ALLOWED = V_TAKEN + N_COLUMNS  #: [k] the columns a later refill take may use
V_N_ALLOWED = V_ALLOWED + N_COLUMNS
V_SIZE = V_N_ALLOWED + 1

# ----------------------------------------------------------------------------- x: the float row
C_TURNS_LEFT = 0  #: turns still to be played by everybody (the current one included)
C_MY_TURNS = 1  #: of which mine
C_SHRINE_GAIN = 2  #: ``altar.shrine_altar_gain`` once computed, NaN before
C_SHARE = 3  #: [card id] share among the cards still to come
C_UNITS = C_SHARE + N_CARD_TYPES  #: [card id] value to me of one scoring reward
C_RIVAL_UNITS = C_UNITS + N_CARD_TYPES  #: [card id] the same for the others
C_VALUES = C_RIVAL_UNITS + N_CARD_TYPES  #: [category] expected final category values
C_NOW_VALUES = C_VALUES + N_CATEGORIES  #: [category] category values if the game ended now
C_HELD = C_NOW_VALUES + N_CATEGORIES  #: [seat, category] offering cards now (others: middle of the bounds)
C_OFFERS = C_HELD + MAX_PLAYERS * N_CATEGORIES  #: [seat, category] expected at the end
C_CARD_VALUE = C_OFFERS + MAX_PLAYERS * N_CATEGORIES  #: [card id] refill: value of a card in my hand
C_SCORING = C_CARD_VALUE + N_CARD_TYPES  #: [card id] refill: relative value of one scoring
C_SIZE = C_SCORING + N_CARD_TYPES


# ----------------------------------------------------------------------------- index kernels of x
@njit(cache=True, inline="always")
def held(seat, c):
    """Index in ``x`` of a seat's offering cards of category ``c`` now."""
    return C_HELD + seat * N_CATEGORIES + c


@njit(cache=True, inline="always")
def offers(seat, c):
    """Index in ``x`` of a seat's offering cards of category ``c`` expected at the end."""
    return C_OFFERS + seat * N_CATEGORIES + c


def new_workspace() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The scratch rows one decision needs: ``v``, ``x``, ``scores`` [N_ACTIONS] and ``legal`` [N_ACTIONS]."""
    return (np.zeros(V_SIZE, np.int64), np.zeros(C_SIZE, np.float64), np.zeros(N_ACTIONS, np.float64),
            np.zeros(N_ACTIONS, np.int64))
