"""Decode an observation vector back into readable counts: ``decode_observation(obs)``.

For agents and tools that reason about the table (the greedy agent, the search agent, a human
front end). It reads only the observation, so it knows exactly what that player knows. Seats
are relative: index 0 is the observer, 1 the next player clockwise, and so on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import core as C


@dataclass(frozen=True)
class ObservationView:
    """One player's observation as integer counts (seats relative to the observer)."""

    decision: str  #: one of core.DECISION_NAMES
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


def _counts(values: np.ndarray, scale: float) -> np.ndarray:
    return np.rint(np.asarray(values, dtype=np.float64) * scale).astype(np.int64)


def decode_observation(obs: np.ndarray) -> ObservationView:
    """Turn a float32[OBS_DIM] observation into an ``ObservationView`` of integer counts."""
    o = np.asarray(obs)
    if o.shape != (C.OBS_DIM,):
        raise ValueError(f"an observation has shape ({C.OBS_DIM},), got {o.shape}")
    n = int(np.argmax(o[C.O_NUM_PLAYERS : C.O_NUM_PLAYERS + 3])) + 2
    blocks = o[C.O_SEATS : C.O_SEATS + n * C.SEAT_WIDTH].reshape(n, C.SEAT_WIDTH)
    market = []
    cells = o[C.O_MARKET : C.O_MARKET + 4 * 4 * C.N_CARD_TYPES].reshape(4, 4, C.N_CARD_TYPES)
    for col in range(4):
        market.append(tuple(int(np.argmax(cells[col, j])) for j in range(4) if cells[col, j].any()))
    top = o[C.O_ALTAR_TOP : C.O_ALTAR_TOP + 16].reshape(4, 4)
    scoring = o[C.O_SCORING : C.O_SCORING + 7]
    demon = o[C.O_DEMON : C.O_DEMON + 4]
    last = o[C.O_LAST_COL : C.O_LAST_COL + 4]
    to_move = o[C.O_TO_MOVE : C.O_TO_MOVE + 4]
    return ObservationView(
        decision=C.DECISION_NAMES[int(np.argmax(o[C.O_DECISION : C.O_DECISION + 10]))],
        num_players=n,
        oracle=bool(o[C.O_VARIANTS]),
        demon=bool(o[C.O_VARIANTS + 1]),
        active=int(np.argmax(o[C.O_ACTIVE : C.O_ACTIVE + 4])),
        to_move=int(np.argmax(to_move)) if to_move.any() else -1,
        hands=_counts(blocks[:, C.SO_HAND : C.SO_HAND + 7], 3),
        tableaus=_counts(blocks[:, C.SO_TABLEAU : C.SO_TABLEAU + 7], 5),
        stones=_counts(blocks[:, C.SO_STONES], 10),
        vp_tokens=_counts(blocks[:, C.SO_VP], 10),
        offerings_min=_counts(blocks[:, C.SO_OFF_MIN : C.SO_OFF_MIN + 4], 10),
        offerings_max=_counts(blocks[:, C.SO_OFF_MAX : C.SO_OFF_MAX + 4], 10),
        offerings_total=_counts(blocks[:, C.SO_OFF_TOTAL], 10),
        supply=_counts(o[C.O_SUPPLY : C.O_SUPPLY + 4], 25),
        deck_size=int(np.rint(o[C.O_DECK] * 58)),
        deck_cards=_counts(o[C.O_DECK_CARDS : C.O_DECK_CARDS + 8], 12),
        market=tuple(market),
        demon_column=int(np.argmax(demon)) if demon.any() else -1,
        altar_size=int(np.rint(o[C.O_ALTAR] * 10)),
        altar_known=_counts(o[C.O_ALTAR + 1 : C.O_ALTAR + 5], 10),
        altar_unknown=int(np.rint(o[C.O_ALTAR + 5] * 10)),
        altar_top=np.array([int(np.argmax(top[d])) if top[d].any() else -1 for d in range(4)], dtype=np.int64),
        peeks_owed=int(np.rint(o[C.O_ORACLE] * 4)),
        oracle_window=int(np.rint(o[C.O_ORACLE + 1] * 4)),
        scored_type=int(np.argmax(scoring)) if scoring.any() else -1,
        scoring_amount=int(np.rint(o[C.O_SCORING + 7] * 5)),
        scoring_bonus=bool(o[C.O_SCORING + 8]),
        last_take_column=int(np.argmax(last)) if last.any() else -1,
    )
