"""Set-up (docs/rules.md section 2): ``init_game`` deals a new game into a state array."""

from __future__ import annotations

import numpy as np
from numba import njit

from bali_env.engine.ids import (
    BASE_DECK_SIZE,
    COLUMN_SIZE,
    DECK_COUNTS,
    FARMER,
    MARKET_SIZE,
    N_CATEGORIES,
    N_COLUMNS,
    ORACLE,
    ORACLE_DECK_SIZE,
    PH_TAKE_OFFERING,
    START_STONES,
    STONECUTTER,
    SUPPLY_PER_CATEGORY,
)
from bali_env.engine.seeds import shuffle
from bali_env.engine.state import (
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
    S_PHASE,
    S_SCORED,
    S_TO_MOVE,
    altar,
    altar_known,
    col_len,
    col_pos,
    deck,
    hand,
    known_max,
    known_min,
    market,
    offerings,
    starter,
    stones,
    supply,
    tableau,
)


@njit(cache=True)
def deal_market_column(s, col, start):
    """Deal the four deck cards from index ``start`` into a column (set-up: no oracle there)."""
    for j in range(COLUMN_SIZE):
        s[market(col, j)] = s[deck(start + j)]
    s[col_pos(col)] = 0
    s[col_len(col)] = COLUMN_SIZE


@njit(cache=True)
def deal_starter_sets(s, n, rng, starter_option):
    """Each seat gets a distinct starter set (set k: a stonecutter in the tableau, the farmers of
    every category but k in hand), one offering card of each category and 2 + seat stones."""
    sets = np.arange(4)
    if starter_option.size == 0:
        shuffle(rng, sets, 0, 4)
    else:
        for i in range(n):
            sets[i] = starter_option[i]
    for seat in range(n):
        s[starter(seat)] = sets[seat]
        s[tableau(seat, STONECUTTER)] = 1
        for c in range(N_CATEGORIES):
            if c != sets[seat]:
                s[hand(seat, FARMER + c)] = 1
            s[offerings(seat, c)] = 1
            s[known_min(seat, c)] = 1
            s[known_max(seat, c)] = 1
        s[stones(seat)] = START_STONES + seat
    for c in range(N_CATEGORIES):
        s[supply(c)] = SUPPLY_PER_CATEGORY - n


@njit(cache=True)
def deal_deck_and_market(s, oracle, rng, deck_option):
    """Shuffle the 50 base cards, deal the market from the top 16; with the Oracle variant the
    8 oracles are shuffled into the rest of the deck afterwards."""
    deck_len = ORACLE_DECK_SIZE if oracle else BASE_DECK_SIZE
    if deck_option.size == 0:
        cards = np.empty(deck_len, dtype=np.int64)
        k = 0
        for card in range(8):
            if card == ORACLE and not oracle:
                continue
            for _ in range(DECK_COUNTS[card]):
                cards[k] = card
                k += 1
        shuffle(rng, cards, 0, BASE_DECK_SIZE)
        if oracle:
            shuffle(rng, cards, MARKET_SIZE, deck_len)
        for i in range(deck_len):
            s[deck(i)] = cards[i]
    else:
        for i in range(deck_len):
            s[deck(i)] = deck_option[i]
    s[S_DECK_LEN] = deck_len
    for col in range(N_COLUMNS):
        deal_market_column(s, col, COLUMN_SIZE * col)
    s[S_DECK_POS] = MARKET_SIZE


@njit(cache=True)
def deal_oracle_altar(s, rng, altar_option):
    """Oracle variant: one supply card of each category face down on the altar, in an order
    nobody knows."""
    order = np.arange(4)  # top first
    if altar_option.size == 0:
        shuffle(rng, order, 0, 4)
    else:
        for i in range(4):
            order[i] = altar_option[i]
    for i in range(4):
        s[altar(i)] = order[3 - i]
        s[altar_known(i)] = 0
        s[supply(i)] -= 1
    s[S_ALTAR_LEN] = 4


@njit(cache=True)
def init_game(s, num_players, oracle, demon, seed, deck_option, starter_option, altar_option):
    """Deal a new game into ``s``. The options are the ``reset`` options (validated by the
    caller); an empty array means "draw it at random from ``seed``", in this order: starter
    sets, the deck, the Oracle altar."""
    s[:] = 0
    rng = np.empty(1, dtype=np.uint64)
    rng[0] = np.uint64(seed)
    s[S_NUM_PLAYERS] = num_players
    s[S_ORACLE] = 1 if oracle else 0
    s[S_DEMON] = 1 if demon else 0
    deal_starter_sets(s, num_players, rng, starter_option)
    deal_deck_and_market(s, oracle, rng, deck_option)
    if oracle:
        deal_oracle_altar(s, rng, altar_option)
    s[S_DEMON_COL] = 0 if demon else -1
    s[S_PHASE] = PH_TAKE_OFFERING
    s[S_ACTIVE] = 0
    s[S_TO_MOVE] = 0
    s[S_LAST_COL] = -1
    s[S_SCORED] = -1
    s[S_BONUS_SEAT] = -1
