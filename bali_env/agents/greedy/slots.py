"""The greedy heuristic's named slots: its weights and the two flat rows one decision works in.

Like the engine's state, what the heuristic knows about one decision is two flat rows read by
named slots (``v[V_STONES]``) and, for per-seat or per-card fields, small index kernels named
after them (``v[tableau(q, SHRINE)]``, ``x[offers(0, c)]``):

- ``v`` (int64, ``V_*``): the observation's counts (``context.decode_counts``) and the integers
  the context derives (favourite category, planned altar, random altar cards), plus scratch;
- ``x`` (float64, ``C_*``): the context's estimates (turns left, shares, holdings now and at the
  end, category values, reward units) and the refill's per-card values.

``params`` (float64, ``P_*``) holds the keyword weights of ``GreedyAgent`` in ``PARAM_NAMES``
order. ``KERNEL_FILES`` lists the package's kernel files for Numba's cache (``numba_cache.cover``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit

from bali_env.engine import (
    COLUMN_SIZE,
    HAND_SIZE,
    MAX_PLAYERS,
    N_ACTIONS,
    N_CARD_TYPES,
    N_CATEGORIES,
    N_COLUMNS,
    ORACLE_WINDOW,
    numba_cache,
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
V_N = 0  #: number of players
V_DECISION = 1  #: D_* (D_GAME_OVER when none is set)
V_DECK_SIZE = 2
V_DEMON_COL = 3  #: -1 without the demon
V_ALTAR_UNKNOWN = 4
V_AMOUNT = 5  #: what a pending scoring decision gives
V_FAVOURITE = 6  #: the category I push onto the altar
V_RANDOM = 7  #: random altar cards expected (unknown ones and the others' additions)
V_PLAN = 8  #: [category] known altar counts plus the cards I plan to put there
V_KNOWN = V_PLAN + N_CATEGORIES  #: [category] altar cards of known category
V_TOP = V_KNOWN + N_CATEGORIES  #: [depth] category of the altar card at that depth, -1 unknown
V_SUPPLY = V_TOP + ORACLE_WINDOW  #: [category]
V_DECK_CARDS = V_SUPPLY + N_CATEGORIES  #: [card id] cards left in the deck
V_COL_LEN = V_DECK_CARDS + N_CARD_TYPES  #: [column] cards in the column
V_MARKET = V_COL_LEN + N_COLUMNS  #: [column, slot] card ids, take order
V_TABLEAU = V_MARKET + N_COLUMNS * COLUMN_SIZE  #: [seat, card id]
V_HAND = V_TABLEAU + MAX_PLAYERS * N_CARD_TYPES  #: [seat, card id]
V_STONES = V_HAND + MAX_PLAYERS * N_CARD_TYPES  #: [seat]
V_VP = V_STONES + MAX_PLAYERS  #: [seat]
V_OFF_MIN = V_VP + MAX_PLAYERS  #: [seat, category] offering cards, at least (mine: exact)
V_OFF_MAX = V_OFF_MIN + MAX_PLAYERS * N_CATEGORIES  #: [seat, category] at most
V_COUNTS = V_OFF_MAX + MAX_PLAYERS * N_CATEGORIES  #: [seat] scratch: counts for the majority rule
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


# ----------------------------------------------------------------------------- index kernels
@njit(cache=True, inline="always")
def tableau(seat, card):
    """Index in ``v`` of a seat's tableau count of ``card``."""
    return V_TABLEAU + seat * N_CARD_TYPES + card


@njit(cache=True, inline="always")
def hand(seat, card):
    """Index in ``v`` of a seat's hand count of ``card``."""
    return V_HAND + seat * N_CARD_TYPES + card


@njit(cache=True, inline="always")
def market(col, j):
    """Index in ``v`` of the card at slot ``j`` (take order) of column ``col``."""
    return V_MARKET + col * COLUMN_SIZE + j


@njit(cache=True, inline="always")
def offerings_min(seat, c):
    """Index in ``v`` of the least number of offering cards of category ``c`` a seat may hold."""
    return V_OFF_MIN + seat * N_CATEGORIES + c


@njit(cache=True, inline="always")
def offerings_max(seat, c):
    """Index in ``v`` of the most offering cards of category ``c`` a seat may hold."""
    return V_OFF_MAX + seat * N_CATEGORIES + c


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
