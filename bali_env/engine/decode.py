"""Decode an observation vector back into readable counts: ``decode_observation(obs)``.

For agents and tools that reason about the table (the greedy agent, ``bali play``, replays). It
reads only the observation, so it knows exactly what that player knows. Offsets and scales come
from the one observation spec (``bali_env.engine.obs_spec``), the player count from the engine's
reader (``obs_num_players``). Seats are relative: index 0 is the observer, 1 the next player
clockwise, and so on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ids
from .obs_spec import FIELDS, OBS_DIM, OBS_SCALE, OFFSET, SEAT_FIELDS, SEAT_OFFSET, SEAT_WIDTH
from .observe import obs_num_players


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


def _raw(o: np.ndarray, key: str) -> np.ndarray:
    """The slots of one field."""
    return o[OFFSET[key] : OFFSET[key] + FIELDS[key].width]


def _one_hot(o: np.ndarray, key: str) -> int:
    """The index set in a one-hot field, -1 if none."""
    v = _raw(o, key)
    return int(np.argmax(v)) if v.any() else -1


_SEAT = {f.key: (SEAT_OFFSET[f.key], f.width) for f in SEAT_FIELDS}  #: seat field -> (offset in a block, width)


def decode_observation(obs: np.ndarray) -> ObservationView:
    """Turn a float32[OBS_DIM] observation into an ``ObservationView`` of integer counts."""
    o = np.asarray(obs)
    if o.shape != (OBS_DIM,):
        raise ValueError(f"an observation has shape ({OBS_DIM},), got {o.shape}")
    counts = np.rint(o.astype(np.float64) * OBS_SCALE).astype(np.int64)  # every slot as the count it encodes
    n = int(obs_num_players(o))
    seats = OFFSET["seats"]
    blocks = counts[seats : seats + n * SEAT_WIDTH].reshape(n, SEAT_WIDTH)

    def seat(key: str) -> np.ndarray:
        a, width = _SEAT[key]
        return blocks[:, a] if width == 1 else blocks[:, a : a + width]

    def count(key: str) -> np.ndarray:
        return counts[OFFSET[key] : OFFSET[key] + FIELDS[key].width]

    cells = _raw(o, "market").reshape(ids.N_COLUMNS, ids.COLUMN_SIZE, ids.N_CARD_TYPES)
    present, card = cells.any(axis=2).tolist(), cells.argmax(axis=2).tolist()
    market = tuple(tuple(card[col][j] for j in range(ids.COLUMN_SIZE) if present[col][j])
                   for col in range(ids.N_COLUMNS))
    top = _raw(o, "altar_top").reshape(ids.ORACLE_WINDOW, ids.N_CATEGORIES)
    variants = _raw(o, "variants")
    return ObservationView(
        decision=ids.DECISION_NAMES[_one_hot(o, "decision")],
        num_players=n,
        oracle=bool(variants[0]),
        demon=bool(variants[1]),
        active=_one_hot(o, "active"),
        to_move=_one_hot(o, "to_move"),
        hands=seat("hand"),
        tableaus=seat("tableau"),
        stones=seat("stones"),
        vp_tokens=seat("vp_tokens"),
        offerings_min=seat("offerings_min"),
        offerings_max=seat("offerings_max"),
        offerings_total=seat("offerings_total"),
        supply=count("supply"),
        deck_size=int(count("deck")[0]),
        deck_cards=count("deck_cards"),
        market=market,
        demon_column=_one_hot(o, "demon"),
        altar_size=int(count("altar_size")[0]),
        altar_known=count("altar_known"),
        altar_unknown=int(count("altar_unknown")[0]),
        altar_top=np.where(top.any(axis=1), top.argmax(axis=1), -1).astype(np.int64),
        peeks_owed=int(count("oracle_peeks")[0]),
        oracle_window=int(count("oracle_window")[0]),
        scored_type=_one_hot(o, "scoring_type"),
        scoring_amount=int(count("scoring_amount")[0]),
        scoring_bonus=bool(_raw(o, "scoring_bonus")[0]),
        last_take_column=_one_hot(o, "last_take"),
    )
