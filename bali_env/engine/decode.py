"""The observation decoder (docs/rules.md section 5): one observation back into the counts it
encodes, the one reading of an observation that everything shares.

``decode_counts(obs, v)`` is the kernel: it reads a ``float32[OBS_DIM]`` observation through the
observation spec (``obs_spec``: ``O_*`` offsets, ``SO_*`` seat offsets, ``X_*`` scales) into the
``int64`` row ``v`` with the named slots below (``V_*``; ``hand(seat, card)`` and the other
accessors index the per-seat blocks). The determinizer (``determinization.determinize``) and the
greedy heuristic (``bali_env.bots.greedy``, whose own working slots follow ``DECODED_SIZE``)
read observations through it; ``decode_observation(obs)`` turns the same row into an
``ObservationView`` of readable counts for Python code (``bali play``, the pictures, the bot
protocol).

It reads only the observation, so it knows exactly what that player knows. Seats are relative:
seat 0 is the observer, 1 the next player clockwise, and so on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from bali_env.engine.ids import (
    COLUMN_SIZE,
    D_GAME_OVER,
    DECISION_NAMES,
    MAX_PLAYERS,
    N_CARD_IDS,
    N_CARD_TYPES,
    N_CATEGORIES,
    N_COLUMNS,
    N_DECISIONS,
    ORACLE_WINDOW,
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
    O_ORACLE,
    O_ORACLE_WINDOW,
    O_SCORING,
    O_SCORING_AMOUNT,
    O_SCORING_BONUS,
    O_SEATS,
    O_SUPPLY,
    O_TO_MOVE,
    O_VARIANTS,
    OBS_DIM,
    SEAT_WIDTH,
    SO_HAND,
    SO_OFF_MAX,
    SO_OFF_MIN,
    SO_OFF_TOTAL,
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
from bali_env.engine.observe import obs_count, obs_num_players, obs_one_hot

# ----------------------------------------------------------------------------- the decoded row
V_N = 0  #: number of players
V_DECISION = 1  #: the decision being taken (``ids.D_*``; ``D_GAME_OVER`` when none is set)
V_ORACLE = 2  #: 1 with the Oracle variant
V_DEMON = 3  #: 1 with the Demon variant
V_ACTIVE = 4  #: relative seat of the active player
V_TO_MOVE = 5  #: relative seat that decides now, -1 after the end
V_DECK_SIZE = 6
V_DEMON_COL = 7  #: the demon's column, -1 without the Demon variant
V_ALTAR_SIZE = 8
V_ALTAR_UNKNOWN = 9  #: altar cards whose category the observer does not know
V_PEEKS = 10  #: oracle peeks owed
V_WINDOW = 11  #: top altar cards the observer has seen with the oracle (a count)
V_SCORED = 12  #: the card id being scored in a pending decision, -1 none
V_AMOUNT = 13  #: what the pending scoring decision gives
V_BONUS = 14  #: 1 when the pending farmer choice carries the majority bonus
V_LAST_COL = 15  #: the column of the turn's first take, -1 before it
V_KNOWN = 16  #: [category] altar cards of known category
V_TOP = V_KNOWN + N_CATEGORIES  #: [depth] category of the altar card at that depth, -1 unknown
V_SUPPLY = V_TOP + ORACLE_WINDOW  #: [category] offering cards left in the supply
V_DECK_CARDS = V_SUPPLY + N_CATEGORIES  #: [card id, the oracle included] cards left in the deck
V_COL_LEN = V_DECK_CARDS + N_CARD_IDS  #: [column] cards in the column
V_MARKET = V_COL_LEN + N_COLUMNS  #: [column, slot] card ids in take order
V_TABLEAU = V_MARKET + N_COLUMNS * COLUMN_SIZE  #: [seat, card id]
V_HAND = V_TABLEAU + MAX_PLAYERS * N_CARD_TYPES  #: [seat, card id]
V_STONES = V_HAND + MAX_PLAYERS * N_CARD_TYPES  #: [seat]
V_VP = V_STONES + MAX_PLAYERS  #: [seat] victory point tokens
V_OFF_MIN = V_VP + MAX_PLAYERS  #: [seat, category] offering cards, at least (the observer's: exact)
V_OFF_MAX = V_OFF_MIN + MAX_PLAYERS * N_CATEGORIES  #: [seat, category] at most
V_OFF_TOTAL = V_OFF_MAX + MAX_PLAYERS * N_CATEGORIES  #: [seat] offering cards in all
DECODED_SIZE = V_OFF_TOTAL + MAX_PLAYERS  #: the length of a decoded row


@njit(cache=True, inline="always")
def tableau(seat, card):
    """Slot of ``seat``'s tableau count of ``card``."""
    return V_TABLEAU + seat * N_CARD_TYPES + card


@njit(cache=True, inline="always")
def hand(seat, card):
    """Slot of ``seat``'s hand count of ``card``."""
    return V_HAND + seat * N_CARD_TYPES + card


@njit(cache=True, inline="always")
def market(col, j):
    """Slot of the ``j``-th card (take order) of market column ``col``."""
    return V_MARKET + col * COLUMN_SIZE + j


@njit(cache=True, inline="always")
def offerings_min(seat, c):
    """Slot of the fewest offering cards of category ``c`` that ``seat`` may hold."""
    return V_OFF_MIN + seat * N_CATEGORIES + c


@njit(cache=True, inline="always")
def offerings_max(seat, c):
    """Slot of the most offering cards of category ``c`` that ``seat`` may hold."""
    return V_OFF_MAX + seat * N_CATEGORIES + c


# ----------------------------------------------------------------------------- the kernel
@njit(cache=True)
def _decode_seats(obs, n, v):
    """Hands, tableaus, stones, VP tokens and offering bounds and totals of the ``n`` seats."""
    for q in range(n):
        b = O_SEATS + q * SEAT_WIDTH
        for k in range(N_CARD_TYPES):
            v[hand(q, k)] = obs_count(obs, b + SO_HAND + k, X_HAND)
            v[tableau(q, k)] = obs_count(obs, b + SO_TABLEAU + k, X_TABLEAU)
        v[V_STONES + q] = obs_count(obs, b + SO_STONES, X_STONES)
        v[V_VP + q] = obs_count(obs, b + SO_VP, X_VP)
        for c in range(N_CATEGORIES):
            v[offerings_min(q, c)] = obs_count(obs, b + SO_OFF_MIN + c, X_OFFERINGS)
            v[offerings_max(q, c)] = obs_count(obs, b + SO_OFF_MAX + c, X_OFFERINGS)
        v[V_OFF_TOTAL + q] = obs_count(obs, b + SO_OFF_TOTAL, X_OFFERINGS)


@njit(cache=True)
def _decode_market(obs, v):
    """The market's columns as card ids in take order (empty slots skipped) and their lengths."""
    for col in range(N_COLUMNS):
        k = 0
        for j in range(COLUMN_SIZE):
            card = obs_one_hot(obs, O_MARKET + (col * COLUMN_SIZE + j) * N_CARD_TYPES, N_CARD_TYPES)
            if card >= 0:
                v[market(col, k)] = card
                k += 1
        v[V_COL_LEN + col] = k


@njit(cache=True)
def decode_counts(obs, v):
    """Every count of one observation ``obs`` (float32[OBS_DIM]) into the row ``v``
    (int64[DECODED_SIZE] or longer), in the ``V_*`` slots. Seats beyond the player count and
    market slots beyond a column's length keep what ``v`` held."""
    n = obs_num_players(obs)
    v[V_N] = n
    d = obs_one_hot(obs, O_DECISION, N_DECISIONS)
    v[V_DECISION] = D_GAME_OVER if d < 0 else d
    v[V_ORACLE] = 1 if obs[O_VARIANTS] > 0.5 else 0
    v[V_DEMON] = 1 if obs[O_VARIANTS + 1] > 0.5 else 0
    v[V_ACTIVE] = obs_one_hot(obs, O_ACTIVE, MAX_PLAYERS)
    v[V_TO_MOVE] = obs_one_hot(obs, O_TO_MOVE, MAX_PLAYERS)
    v[V_DECK_SIZE] = obs_count(obs, O_DECK, X_DECK)
    v[V_DEMON_COL] = obs_one_hot(obs, O_DEMON, N_COLUMNS)
    v[V_ALTAR_SIZE] = obs_count(obs, O_ALTAR, X_ALTAR)
    v[V_ALTAR_UNKNOWN] = obs_count(obs, O_ALTAR_UNKNOWN, X_ALTAR)
    v[V_PEEKS] = obs_count(obs, O_ORACLE, X_PEEKS)
    v[V_WINDOW] = obs_count(obs, O_ORACLE_WINDOW, X_WINDOW)
    v[V_SCORED] = obs_one_hot(obs, O_SCORING, N_CARD_TYPES)
    v[V_AMOUNT] = obs_count(obs, O_SCORING_AMOUNT, X_SCORING_AMOUNT)
    v[V_BONUS] = 1 if obs[O_SCORING_BONUS] > 0.5 else 0
    v[V_LAST_COL] = obs_one_hot(obs, O_LAST_COL, N_COLUMNS)
    for c in range(N_CATEGORIES):
        v[V_KNOWN + c] = obs_count(obs, O_ALTAR_KNOWN + c, X_ALTAR)
        v[V_SUPPLY + c] = obs_count(obs, O_SUPPLY + c, X_SUPPLY)
    for depth in range(ORACLE_WINDOW):
        v[V_TOP + depth] = obs_one_hot(obs, O_ALTAR_TOP + depth * N_CATEGORIES, N_CATEGORIES)
    for k in range(N_CARD_IDS):
        v[V_DECK_CARDS + k] = obs_count(obs, O_DECK_CARDS + k, X_DECK_CARDS)
    _decode_seats(obs, n, v)
    _decode_market(obs, v)


# ----------------------------------------------------------------------------- for Python code
@dataclass(frozen=True)
class ObservationView:
    """One player's observation as integer counts (seats relative to the observer)."""

    decision: str  #: one of ids.DECISION_NAMES
    num_players: int
    oracle: bool
    demon: bool
    active: int  #: relative seat of the active player
    to_move: int  #: relative seat that decides now (-1 after the end)
    hands: np.ndarray  #: [n, 7] by card id
    tableaus: np.ndarray  #: [n, 7]
    stones: np.ndarray  #: [n]
    vp_tokens: np.ndarray  #: [n]
    offerings_min: np.ndarray  #: [n, 4] offering cards known at least (exact for seat 0)
    offerings_max: np.ndarray  #: [n, 4] known at most (exact for seat 0)
    offerings_total: np.ndarray  #: [n]
    supply: np.ndarray  #: [4]
    deck_size: int
    deck_cards: np.ndarray  #: [8] cards left in the deck by card id (7 = oracle)
    market: tuple[tuple[int, ...], ...]  #: 4 columns of card ids, first = takeable now
    demon_column: int  #: -1 without the Demon variant
    altar_size: int
    altar_known: np.ndarray  #: [4] altar cards of known category, by category
    altar_unknown: int
    altar_top: np.ndarray  #: [4] category at depth 0..3 where known, else -1
    peeks_owed: int
    oracle_window: int
    scored_type: int  #: card id being scored in a pending decision, else -1
    scoring_amount: int
    scoring_bonus: bool
    last_take_column: int  #: -1 before the first take of the turn

    @property
    def own_offerings(self) -> np.ndarray:
        """The observer's own offering cards by category."""
        return self.offerings_min[0]


def decode_observation(obs: np.ndarray) -> ObservationView:
    """Turn a float32[OBS_DIM] observation into an ``ObservationView`` of integer counts (read by
    ``decode_counts``, the decoder every reader shares)."""
    o = np.asarray(obs)
    if o.shape != (OBS_DIM,):
        raise ValueError(f"an observation has shape ({OBS_DIM},), got {o.shape}")
    v = np.zeros(DECODED_SIZE, dtype=np.int64)
    decode_counts(np.ascontiguousarray(o, dtype=np.float32), v)
    n = int(v[V_N])

    def block(start: int, width: int) -> np.ndarray:
        """The per-seat block at ``start`` for the ``n`` seats: [n] or [n, width]."""
        rows = v[start : start + MAX_PLAYERS * width].reshape(MAX_PLAYERS, width)[:n]
        return rows[:, 0].copy() if width == 1 else rows.copy()

    def row(start: int, width: int) -> np.ndarray:
        return v[start : start + width].copy()

    market = tuple(tuple(int(c) for c in v[V_MARKET + col * COLUMN_SIZE : V_MARKET + col * COLUMN_SIZE
                                          + v[V_COL_LEN + col]]) for col in range(N_COLUMNS))
    return ObservationView(
        decision=DECISION_NAMES[v[V_DECISION]],
        num_players=n,
        oracle=bool(v[V_ORACLE]),
        demon=bool(v[V_DEMON]),
        active=int(v[V_ACTIVE]),
        to_move=int(v[V_TO_MOVE]),
        hands=block(V_HAND, N_CARD_TYPES),
        tableaus=block(V_TABLEAU, N_CARD_TYPES),
        stones=block(V_STONES, 1),
        vp_tokens=block(V_VP, 1),
        offerings_min=block(V_OFF_MIN, N_CATEGORIES),
        offerings_max=block(V_OFF_MAX, N_CATEGORIES),
        offerings_total=block(V_OFF_TOTAL, 1),
        supply=row(V_SUPPLY, N_CATEGORIES),
        deck_size=int(v[V_DECK_SIZE]),
        deck_cards=row(V_DECK_CARDS, N_CARD_IDS),
        market=market,
        demon_column=int(v[V_DEMON_COL]),
        altar_size=int(v[V_ALTAR_SIZE]),
        altar_known=row(V_KNOWN, N_CATEGORIES),
        altar_unknown=int(v[V_ALTAR_UNKNOWN]),
        altar_top=row(V_TOP, ORACLE_WINDOW),
        peeks_owed=int(v[V_PEEKS]),
        oracle_window=int(v[V_WINDOW]),
        scored_type=int(v[V_SCORED]),
        scoring_amount=int(v[V_AMOUNT]),
        scoring_bonus=bool(v[V_BONUS]),
        last_take_column=int(v[V_LAST_COL]),
    )


__all__ = [
    "DECODED_SIZE", "ObservationView", "decode_counts", "decode_observation", "hand", "market", "offerings_min",
    "offerings_max", "tableau",
]
