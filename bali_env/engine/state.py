"""The state of one game: a flat ``int16`` array, its layout and named accessors (docs/rules.md
section 8 lists what it holds).

A game is ``np.zeros(STATE_SIZE, np.int16)``; a batch of games is ``[N, STATE_SIZE]``. Header
fields are single slots read by name (``s[S_PHASE]``); every per-seat or per-card field is
reached through a small index kernel named after it, so a rule reads like the rulebook::

    s[hand(p, SHRINE)] -= 1
    s[tableau(p, SHRINE)] += 1
    s[stones(p)] -= SHRINE_COST

The index kernels compile to the same code as hand-written offsets (measured: no slowdown).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from bali_env.engine.ids import (
    ALTAR_MAX,
    COLUMN_SIZE,
    MAX_PLAYERS,
    N_CARD_TYPES,
    N_CATEGORIES,
    N_COLUMNS,
    ORACLE_DECK_SIZE,
)

# ----------------------------------------------------------------------------- header: one slot each
S_NUM_PLAYERS = 0
S_ORACLE = 1  #: 1 if the Oracle variant is on
S_DEMON = 2  #: 1 if the Demon variant is on
S_PHASE = 3  #: PH_*
S_ACTIVE = 4  #: seat whose turn it is
S_TO_MOVE = 5  #: seat that decides now, -1 after the end
S_DEMON_COL = 6  #: column of the demon, -1 without the variant
S_DECK_POS = 7  #: index in the deck of the next card to deal
S_DECK_LEN = 8  #: 50 or 58
S_ALTAR_LEN = 9
S_OFFER_STEP = 10  #: phase 2b: k of seat (active + k) % n deciding; k == n is the active player
S_LAST_COL = 11  #: column of the active player's last take this turn, -1 before
S_SCORED = 12  #: card id scored this turn (phase 4), -1 outside phase 4
S_SCORE_STEP = 13  #: phase 4: k of seat (active + k) % n being scored; k == n is the majority bonus
S_BONUS_SEAT = 14  #: phase 4: the seat that earns the majority bonus, -1 if none
S_PEEKS = 15  #: oracle peeks still owed this take (including the one being decided)
S_WINDOW = 16  #: size of the altar window during an oracle decision, 0 otherwise
S_TURN = 17  #: turns completed
S_DECISIONS = 18  #: decisions taken (steps)
S_WINNERS = 19  #: bit mask of winning seats after the end
HEADER_SIZE = 24

# ----------------------------------------------------------------------------- blocks
S_HANDS = HEADER_SIZE  #: [seat, card id] card counts
S_TABLEAUS = S_HANDS + MAX_PLAYERS * N_CARD_TYPES  #: [seat, card id]
S_STONES = S_TABLEAUS + MAX_PLAYERS * N_CARD_TYPES  #: [seat]
S_VP = S_STONES + MAX_PLAYERS  #: [seat] VP tokens
S_OFFERINGS = S_VP + MAX_PLAYERS  #: [seat, category] true offering cards
S_KNOWN_MIN = S_OFFERINGS + MAX_PLAYERS * N_CATEGORIES  #: [seat, category] what the others know: at least
S_KNOWN_MAX = S_KNOWN_MIN + MAX_PLAYERS * N_CATEGORIES  #: [seat, category] what the others know: at most
S_STARTER = S_KNOWN_MAX + MAX_PLAYERS * N_CATEGORIES  #: [seat] starter set id
S_SCORES = S_STARTER + MAX_PLAYERS  #: [seat] final scores
S_SUPPLY = S_SCORES + MAX_PLAYERS  #: [category]
S_MARKET = S_SUPPLY + N_CATEGORIES  #: [column, slot] card ids in take order
S_COL_POS = S_MARKET + N_COLUMNS * COLUMN_SIZE  #: [column] slot of the first takeable card
S_COL_LEN = S_COL_POS + N_COLUMNS  #: [column] cards dealt into the column
S_DECK = S_COL_LEN + N_COLUMNS  #: [58] the play deck, top first (dealt cards stay: see S_DECK_POS)
S_ALTAR = S_DECK + ORACLE_DECK_SIZE  #: [52] altar categories, bottom first (top = S_ALTAR_LEN - 1)
S_ALTAR_KNOWN = S_ALTAR + ALTAR_MAX  #: [52] bit p set: seat p knows that altar card's category
STATE_SIZE = S_ALTAR_KNOWN + ALTAR_MAX
STATE_DTYPE = np.int16


# ----------------------------------------------------------------------------- seats
@njit(cache=True, inline="always")
def absolute_seat(seat, k, n):
    """The seat ``k`` places after ``seat`` clockwise at a table of ``n``: an observation's
    relative seat ``k`` as a table seat when ``seat`` observes (the one copy of this arithmetic;
    a kernel that Python code calls too)."""
    return (seat + k) % n


@njit(cache=True, inline="always")
def relative_seat(seat, other, n):
    """How many places after ``seat`` the seat ``other`` sits: ``other`` as ``seat`` sees it
    (0 = itself, 1 = the next player clockwise); ``absolute_seat`` the other way round."""
    return (other - seat) % n


# ----------------------------------------------------------------------------- index kernels
@njit(cache=True, inline="always")
def hand(seat, card):
    """Index of a seat's count of ``card`` in hand."""
    return S_HANDS + seat * N_CARD_TYPES + card


@njit(cache=True, inline="always")
def tableau(seat, card):
    """Index of a seat's count of ``card`` in its tableau."""
    return S_TABLEAUS + seat * N_CARD_TYPES + card


@njit(cache=True, inline="always")
def stones(seat):
    """Index of a seat's stones."""
    return S_STONES + seat


@njit(cache=True, inline="always")
def vp(seat):
    """Index of a seat's VP tokens."""
    return S_VP + seat


@njit(cache=True, inline="always")
def offerings(seat, c):
    """Index of a seat's offering cards of category ``c`` (the truth)."""
    return S_OFFERINGS + seat * N_CATEGORIES + c


@njit(cache=True, inline="always")
def known_min(seat, c):
    """Index of what the others know at least of a seat's category-``c`` offering cards."""
    return S_KNOWN_MIN + seat * N_CATEGORIES + c


@njit(cache=True, inline="always")
def known_max(seat, c):
    """Index of what the others know at most of a seat's category-``c`` offering cards."""
    return S_KNOWN_MAX + seat * N_CATEGORIES + c


@njit(cache=True, inline="always")
def starter(seat):
    """Index of a seat's starter set id."""
    return S_STARTER + seat


@njit(cache=True, inline="always")
def final_score(seat):
    """Index of a seat's final score (set at the end)."""
    return S_SCORES + seat


@njit(cache=True, inline="always")
def supply(c):
    """Index of the supply of category ``c``."""
    return S_SUPPLY + c


@njit(cache=True, inline="always")
def market(col, slot):
    """Index of the card in ``slot`` (take order) of market column ``col``."""
    return S_MARKET + COLUMN_SIZE * col + slot


@njit(cache=True, inline="always")
def col_pos(col):
    """Index of the slot of a column's first takeable card."""
    return S_COL_POS + col


@njit(cache=True, inline="always")
def col_len(col):
    """Index of the number of cards dealt into a column."""
    return S_COL_LEN + col


@njit(cache=True, inline="always")
def deck(i):
    """Index of deck card ``i`` (0 = top of the play deck as dealt)."""
    return S_DECK + i


@njit(cache=True, inline="always")
def altar(i):
    """Index of the category of altar card ``i`` (0 = bottom)."""
    return S_ALTAR + i


@njit(cache=True, inline="always")
def altar_known(i):
    """Index of the bit mask of seats that know altar card ``i``'s category."""
    return S_ALTAR_KNOWN + i


# ----------------------------------------------------------------------------- derived counts
@njit(cache=True, inline="always")
def hand_size(s, seat):
    """Number of cards in a seat's hand."""
    t = 0
    for card in range(N_CARD_TYPES):
        t += s[hand(seat, card)]
    return t


@njit(cache=True, inline="always")
def offering_total(s, seat):
    """Number of offering cards in front of a seat."""
    t = 0
    for c in range(N_CATEGORIES):
        t += s[offerings(seat, c)]
    return t


@njit(cache=True, inline="always")
def supply_total(s):
    """Offering cards left in the supply."""
    t = 0
    for c in range(N_CATEGORIES):
        t += s[supply(c)]
    return t


@njit(cache=True, inline="always")
def market_top(s, col):
    """The first takeable card of a column."""
    return s[market(col, s[col_pos(col)])]


@njit(cache=True, inline="always")
def deck_left(s):
    """Cards left in the play deck."""
    return s[S_DECK_LEN] - s[S_DECK_POS]


# ----------------------------------------------------------------------------- named views (Python)
class StateBlocks(NamedTuple):
    """NumPy views of one state's blocks, by name (for Python code: ``state_dict``, renderers,
    tests). Writing through a view writes the state."""

    hands: np.ndarray  #: [4, 7]
    tableaus: np.ndarray  #: [4, 7]
    stones: np.ndarray  #: [4]
    vp_tokens: np.ndarray  #: [4]
    offerings: np.ndarray  #: [4, 4]
    known_min: np.ndarray  #: [4, 4]
    known_max: np.ndarray  #: [4, 4]
    starter_sets: np.ndarray  #: [4]
    scores: np.ndarray  #: [4]
    supply: np.ndarray  #: [4]
    market: np.ndarray  #: [4 columns, 4 slots]
    col_pos: np.ndarray  #: [4]
    col_len: np.ndarray  #: [4]
    deck: np.ndarray  #: [58]
    altar: np.ndarray  #: [52], bottom first
    altar_known: np.ndarray  #: [52]


def state_blocks(s: np.ndarray) -> StateBlocks:
    """Named NumPy views of the blocks of a state array (no copy)."""
    p, c, k = MAX_PLAYERS, N_CATEGORIES, N_CARD_TYPES
    return StateBlocks(
        hands=s[S_HANDS:S_TABLEAUS].reshape(p, k),
        tableaus=s[S_TABLEAUS:S_STONES].reshape(p, k),
        stones=s[S_STONES:S_VP],
        vp_tokens=s[S_VP:S_OFFERINGS],
        offerings=s[S_OFFERINGS:S_KNOWN_MIN].reshape(p, c),
        known_min=s[S_KNOWN_MIN:S_KNOWN_MAX].reshape(p, c),
        known_max=s[S_KNOWN_MAX:S_STARTER].reshape(p, c),
        starter_sets=s[S_STARTER:S_SCORES],
        scores=s[S_SCORES:S_SUPPLY],
        supply=s[S_SUPPLY:S_MARKET],
        market=s[S_MARKET:S_COL_POS].reshape(N_COLUMNS, COLUMN_SIZE),
        col_pos=s[S_COL_POS:S_COL_LEN],
        col_len=s[S_COL_LEN:S_DECK],
        deck=s[S_DECK:S_ALTAR],
        altar=s[S_ALTAR:S_ALTAR_KNOWN],
        altar_known=s[S_ALTAR_KNOWN:STATE_SIZE],
    )

_NOT_EXPORTED = ('annotations', 'np', 'njit', 'NamedTuple')
__all__ = [name for name in list(globals()) if not name.startswith("_") and name not in _NOT_EXPORTED]
