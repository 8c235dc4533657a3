"""Phase 3: refill the hand (docs/rules.md section 3), with new columns and the peeks they owe.

The active player takes the first takeable card of a column (``legal_refill`` /
``apply_refill``) until the hand holds 3. A take that empties a column deals a new one
(``deal_column``): oracles leave the game and owe a peek, and the deal is where the game ends
(``end.deck_too_short_to_deal``, ``end.deck_ran_out``). Owed peeks open the oracle decision
(``oracle.py``) before the next take; a full hand starts phase 4.
"""

from __future__ import annotations

from numba import njit

from bali_env.engine.end import deck_ran_out, deck_too_short_to_deal, end_game
from bali_env.engine.ids import A_REFILL, COLUMN_SIZE, HAND_SIZE, N_COLUMNS, ORACLE, ORACLE_WINDOW, PH_ORACLE, PH_REFILL
from bali_env.engine.scoring import start_scoring
from bali_env.engine.state import (
    S_ACTIVE,
    S_ALTAR_LEN,
    S_DECK_POS,
    S_DEMON_COL,
    S_LAST_COL,
    S_PEEKS,
    S_PHASE,
    S_TO_MOVE,
    S_WINDOW,
    altar_known,
    col_len,
    col_pos,
    deck,
    hand,
    hand_size,
    market,
    market_top,
)


@njit(cache=True)
def start_refill(s):
    """Phase 3 begins: the active player takes."""
    s[S_PHASE] = PH_REFILL
    s[S_TO_MOVE] = s[S_ACTIVE]


@njit(cache=True)
def deal_column(s, col):
    """Deal a new column from the deck (oracles leave the game and owe a peek; an all-oracle
    group is replaced). Returns False when the game ended instead."""
    while True:
        if deck_too_short_to_deal(s):
            end_game(s)
            return False
        pos = s[S_DECK_POS]
        k = 0
        had_oracle = False
        for i in range(COLUMN_SIZE):
            card = s[deck(pos + i)]
            if card == ORACLE:
                had_oracle = True
            else:
                s[market(col, k)] = card
                k += 1
        s[S_DECK_POS] = pos + COLUMN_SIZE
        if had_oracle:
            s[S_PEEKS] += 1
        if k > 0:
            s[col_pos(col)] = 0
            s[col_len(col)] = k
            break
    if deck_ran_out(s):
        end_game(s)
        return False
    return True


@njit(cache=True)
def open_oracle_window(s):
    """An owed peek: the active player sees the top 4 altar cards (all if fewer). Returns False
    (and drops the owed peeks) when the altar is empty."""
    a = s[S_ACTIVE]
    top = s[S_ALTAR_LEN]
    if top == 0:
        s[S_PEEKS] = 0
        return False
    w = min(ORACLE_WINDOW, top)
    s[S_WINDOW] = w
    for d in range(w):
        s[altar_known(top - 1 - d)] |= 1 << a
    s[S_PHASE] = PH_ORACLE
    s[S_TO_MOVE] = a
    return True


@njit(cache=True)
def continue_refill(s):
    """After a take: owed oracle peeks first, then more takes until the hand holds 3, then phase 4."""
    if s[S_PEEKS] > 0 and open_oracle_window(s):
        return
    if hand_size(s, s[S_ACTIVE]) < HAND_SIZE:
        start_refill(s)
        return
    start_scoring(s)


@njit(cache=True, inline="always")
def legal_refill(s, p, mask):
    """Any column that has a card, except the demon's."""
    for col in range(N_COLUMNS):
        if col != s[S_DEMON_COL] and s[col_pos(col)] < s[col_len(col)]:
            mask[A_REFILL + col] = 1


@njit(cache=True)
def apply_refill(s, p, action):
    """Take the first takeable card of a column; deal a new column if it empties."""
    col = action - A_REFILL
    s[hand(p, market_top(s, col))] += 1
    s[col_pos(col)] += 1
    s[S_LAST_COL] = col
    if s[col_pos(col)] == s[col_len(col)] and not deal_column(s, col):
        return
    continue_refill(s)
