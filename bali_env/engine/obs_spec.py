"""The observation layout, declared once (docs/rules.md section 5; the table is
docs/observation.md).

``OBS_FIELDS`` lists every field of the observation in order: a key, the names of its slots, the
scale (a slot holds ``count / scale``; one-hots have scale 1), the highest value the observation
space allows, and what it means. Everything else is derived from this table: the offsets and
scales the encoder (``observe.py``) and its inverse (``determinization.py``) use,
``observation_slot_names()``, ``OBS_HIGH`` (the observation space's upper bound), the
documentation tables (``markdown_table``), and ``bali_env.engine.decode.decode_observation``. A change
of layout is one edit here (then ``python -m bali_env.apps.docgen`` rewrites the docs).

The four seat blocks (relative seats 0 = you, 1 = your left, ...) repeat ``SEAT_FIELDS``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bali_env.engine.ids import (
    CARD_KEYS,
    CATEGORY_NAMES,
    COLUMN_SIZE,
    DECISION_NAMES,
    MAX_PLAYERS,
    MIN_PLAYERS,
    N_CARD_TYPES,
    N_COLUMNS,
    ORACLE_WINDOW,
)

_CARDS = CARD_KEYS[:N_CARD_TYPES]
_COLS = tuple(f"col{col}" for col in range(N_COLUMNS))
_REL = tuple(f"rel{r}" for r in range(MAX_PLAYERS))
_PLAYER_COUNTS = tuple(str(k) for k in range(MIN_PLAYERS, MAX_PLAYERS + 1))


@dataclass(frozen=True)
class Field:
    """One field of the observation: ``len(names)`` consecutive slots."""

    key: str  #: identifier of the field (offsets are looked up by it)
    names: tuple[str, ...]  #: slot names (seat fields: without the ``seat.relK.`` prefix)
    scale: float  #: a slot holds count / scale
    high: float  #: upper bound of the observation space for these slots
    meaning: str  #: one line for the documentation

    @property
    def width(self) -> int:
        """Number of slots."""
        return len(self.names)


def _names(prefix: str, items: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(f"{prefix}.{x}" for x in items)


#: the fields of one seat block, in order
SEAT_FIELDS: tuple[Field, ...] = (
    Field("present", ("present",), 1.0, 1.0, "present (1 if the seat is in the game)"),
    Field("hand", _names("hand", _CARDS), 3.0, 1.0, "hand, counts by card id 0..6 (hands are public knowledge)"),
    Field("tableau", _names("tableau", _CARDS), 5.0, 3.0, "tableau, counts by card id 0..6"),
    Field("stones", ("stones",), 10.0, 100.0, "stones"),
    Field("vp_tokens", ("vp_tokens",), 10.0, 100.0, "VP tokens"),
    Field("offerings_min", _names("offerings_min", CATEGORY_NAMES), 10.0, 10.0,
          "offering cards by category, at least (exact for yourself)"),
    Field("offerings_max", _names("offerings_max", CATEGORY_NAMES), 10.0, 10.0,
          "offering cards by category, at most (exact for yourself)"),
    Field("offerings_total", ("offerings_total",), 10.0, 10.0, "offering cards, total"),
)
SEAT_WIDTH = sum(f.width for f in SEAT_FIELDS)
SEAT_OFFSET = {f.key: sum(g.width for g in SEAT_FIELDS[:i]) for i, f in enumerate(SEAT_FIELDS)}
SEAT_SCALE = {f.key: f.scale for f in SEAT_FIELDS}


def _seat_blocks() -> Field:
    names = tuple(f"seat.{rel}.{name}" for rel in _REL for f in SEAT_FIELDS for name in f.names)
    return Field("seats", names, 0.0, 0.0, f"{MAX_PLAYERS} seat blocks of {SEAT_WIDTH}, relative seats 0..3")


#: every field of the observation, in order
OBS_FIELDS: tuple[Field, ...] = (
    Field("decision", _names("decision", DECISION_NAMES), 1.0, 1.0,
          "decision being taken (one-hot): " + ", ".join(DECISION_NAMES)),
    Field("active", _names("active_seat", _REL), 1.0, 1.0, "relative seat of the active player (one-hot)"),
    Field("to_move", _names("to_move_seat", _REL), 1.0, 1.0,
          "relative seat that decides now (one-hot; 0 after the end)"),
    _seat_blocks(),
    Field("supply", _names("supply", CATEGORY_NAMES), 25.0, 1.0, "supply by category"),
    Field("deck", ("deck_size",), 58.0, 1.0, "cards left in the deck"),
    Field("market", tuple(f"market.{col}.slot{j}.{card}" for col in _COLS for j in range(COLUMN_SIZE)
                          for card in _CARDS),
          1.0, 1.0, "market: column c, slot j (0 = takeable now), card id k at {start} + 28c + 7j + k "
          "(one-hot; an empty slot is all 0)"),
    Field("demon", _names("demon", _COLS), 1.0, 1.0, "demon column (one-hot; all 0 without the Demon variant)"),
    Field("variants", ("variant.oracle", "variant.demon"), 1.0, 1.0, "variants: oracle, demon"),
    Field("num_players", _names("num_players", _PLAYER_COUNTS), 1.0, 1.0, "number of players: 2, 3, 4 (one-hot)"),
    Field("altar_size", ("altar.size",), 10.0, 6.0, "altar: number of cards"),
    Field("altar_known", _names("altar.known", CATEGORY_NAMES), 10.0, 6.0,
          "altar: cards whose category you know, by category"),
    Field("altar_unknown", ("altar.unknown",), 10.0, 6.0, "altar: cards whose category you do not know"),
    Field("altar_top", tuple(f"altar.depth{d}.{c}" for d in range(ORACLE_WINDOW) for c in CATEGORY_NAMES), 1.0, 1.0,
          "altar top 4 cards: depth d (0 = top), category c at {start} + 4d + c, set only where you know it "
          "(during your oracle decision: the peeked window)"),
    Field("oracle_peeks", ("oracle.peeks_owed",), 4.0, 4.0,
          "oracle peeks still owed (including the one being decided)"),
    Field("oracle_window", ("oracle.window_size",), 4.0, 1.0,
          "oracle window size (cards peeked now; 0 outside an oracle decision)"),
    Field("scoring_type", _names("scoring.type", _CARDS), 1.0, 1.0,
          "scored card id 0..6 (one-hot), during shrine_reward/farmer_choice only"),
    Field("scoring_amount", ("scoring.amount",), 5.0, 2.0,
          "what the pending scoring decision gives (shrine: stones or VP; farmer: 1)"),
    Field("scoring_bonus", ("scoring.majority_bonus",), 1.0, 1.0,
          "the pending scoring decision is (or includes) the majority bonus"),
    Field("deck_cards", _names("deck_cards", CARD_KEYS), 12.0, 1.0,
          "cards left in the deck by card id 0..7 (7 = oracle; every dealt card was seen, so this is public)"),
    Field("last_take", _names("last_take_column", _COLS), 1.0, 1.0,
          "column of the active player's last take this turn (one-hot; scored in phase 4)"),
)
FIELDS = {f.key: f for f in OBS_FIELDS}
OFFSET = {f.key: sum(g.width for g in OBS_FIELDS[:i]) for i, f in enumerate(OBS_FIELDS)}
SCALE = {f.key: f.scale for f in OBS_FIELDS}
OBS_DIM = sum(f.width for f in OBS_FIELDS)


def _slots() -> tuple[tuple[str, float, float], ...]:
    """(name, scale, high) of every slot, in order."""
    out = []
    for f in OBS_FIELDS:
        if f.key == "seats":
            for rel in _REL:
                out += [(f"seat.{rel}.{n}", g.scale, g.high) for g in SEAT_FIELDS for n in g.names]
        else:
            out += [(n, f.scale, f.high) for n in f.names]
    assert len(out) == OBS_DIM
    return tuple(out)


OBS_SLOTS = _slots()  #: (name, scale, high) for every slot
OBS_SCALE = np.array([scale for _, scale, _ in OBS_SLOTS], dtype=np.float64)
OBS_HIGH = np.array([high for _, _, high in OBS_SLOTS], dtype=np.float32)


def observation_slot_names() -> list[str]:
    """The name of every observation slot, index by index (length ``OBS_DIM``)."""
    return [name for name, _, _ in OBS_SLOTS]


def markdown_table() -> str:
    """The observation's block table (index range, meaning, scale) as Markdown."""

    def span(a: int, b: int) -> str:
        return str(a) if a == b else f"{a}-{b}"

    def fmt(x: float) -> str:
        return f"{x:g}"

    rows = ["| index | meaning | scale |", "|---|---|---|"]
    for f in OBS_FIELDS:
        start = OFFSET[f.key]
        if f.key == "seats":
            rows.append(f"| {span(start, start + f.width - 1)} | {f.meaning} (block r starts at {start} + "
                        f"{SEAT_WIDTH} r): | |")
            for g in SEAT_FIELDS:
                a = SEAT_OFFSET[g.key]
                rel = f"+{a}" if g.width == 1 else f"+{a}..+{a + g.width - 1}"
                rows.append(f"| | {rel} {g.meaning} | {fmt(g.scale)} |")
        else:
            rows.append(f"| {span(start, start + f.width - 1)} | {f.meaning.format(start=start)} | {fmt(f.scale)} |")
    return "\n".join(rows)


# ----------------------------------------------------------------------------- derived constants
# Offsets and scales for the Numba kernels (compile-time constants), all read from the table.
O_DECISION = OFFSET["decision"]
O_ACTIVE = OFFSET["active"]
O_TO_MOVE = OFFSET["to_move"]
O_SEATS = OFFSET["seats"]
O_SUPPLY = OFFSET["supply"]
O_DECK = OFFSET["deck"]
O_MARKET = OFFSET["market"]
O_DEMON = OFFSET["demon"]
O_VARIANTS = OFFSET["variants"]
O_NUM_PLAYERS = OFFSET["num_players"]
O_ALTAR = OFFSET["altar_size"]
O_ALTAR_KNOWN = OFFSET["altar_known"]
O_ALTAR_UNKNOWN = OFFSET["altar_unknown"]
O_ALTAR_TOP = OFFSET["altar_top"]
O_ORACLE = OFFSET["oracle_peeks"]
O_ORACLE_WINDOW = OFFSET["oracle_window"]
O_SCORING = OFFSET["scoring_type"]
O_SCORING_AMOUNT = OFFSET["scoring_amount"]
O_SCORING_BONUS = OFFSET["scoring_bonus"]
O_DECK_CARDS = OFFSET["deck_cards"]
O_LAST_COL = OFFSET["last_take"]
SO_PRESENT = SEAT_OFFSET["present"]
SO_HAND = SEAT_OFFSET["hand"]
SO_TABLEAU = SEAT_OFFSET["tableau"]
SO_STONES = SEAT_OFFSET["stones"]
SO_VP = SEAT_OFFSET["vp_tokens"]
SO_OFF_MIN = SEAT_OFFSET["offerings_min"]
SO_OFF_MAX = SEAT_OFFSET["offerings_max"]
SO_OFF_TOTAL = SEAT_OFFSET["offerings_total"]
X_HAND = SEAT_SCALE["hand"]
X_TABLEAU = SEAT_SCALE["tableau"]
X_STONES = SEAT_SCALE["stones"]
X_VP = SEAT_SCALE["vp_tokens"]
X_OFFERINGS = SEAT_SCALE["offerings_min"]
X_SUPPLY = SCALE["supply"]
X_DECK = SCALE["deck"]
X_ALTAR = SCALE["altar_size"]
X_PEEKS = SCALE["oracle_peeks"]
X_WINDOW = SCALE["oracle_window"]
X_SCORING_AMOUNT = SCALE["scoring_amount"]
X_DECK_CARDS = SCALE["deck_cards"]
assert SEAT_SCALE["offerings_max"] == SEAT_SCALE["offerings_total"] == X_OFFERINGS
assert SCALE["altar_known"] == SCALE["altar_unknown"] == X_ALTAR

_NOT_EXPORTED = ('annotations', 'np', 'dataclass')
__all__ = [name for name in list(globals()) if not name.startswith("_") and name not in _NOT_EXPORTED]
