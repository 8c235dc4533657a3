"""The public contract of RULES.md sections 6-8 in Python: action names, the validation of the
``reset`` options, and ``state_dict()`` (the whole true state as JSON-serialisable data)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import core as C

CATEGORY_NAMES = ("rice", "peanuts", "bananas", "chilies")
CARD_NAMES = (
    "stonecutter",
    "priest",
    "shrine",
    "rice farmer",
    "peanut farmer",
    "banana farmer",
    "chili farmer",
    "oracle",
)
OPTION_KEYS = ("deck", "starter_sets", "altar")


def _action_names() -> tuple[str, ...]:
    names = [f"take {CATEGORY_NAMES[c]}" for c in range(4)]
    names.append("pass")
    names += ["play stonecutter", "play priest", "play shrine"]
    farmer = ("rice", "peanut", "banana", "chili")
    for c in range(4):
        names += [f"play 1 {farmer[c]} farmer"] + [f"play {k} {farmer[c]} farmers" for k in (2, 3)]
    names.append("discard shrine")
    names += [f"offer own {CATEGORY_NAMES[c]}" for c in range(4)]
    names += [f"offer supply {CATEGORY_NAMES[c]}" for c in range(4)]
    names += [f"take column {col}" for col in range(4)]
    names += [f"oracle: take depth {d}" for d in range(4)]
    names.append("oracle: take none")
    names += ["shrine reward: stones", "shrine reward: VP"]
    names += [f"farmer reward: take {CATEGORY_NAMES[c]}" for c in range(4)]
    assert len(names) == C.N_ACTIONS
    return tuple(names)


ACTION_NAMES = _action_names()


def action_to_str(action: int) -> str:
    """A readable name for an action id, e.g. ``action_to_str(9) == "play 2 rice farmers"``."""
    a = check_action(action)
    return ACTION_NAMES[a]


def check_action(action: Any) -> int:
    """Return ``action`` as an int in 0..43; TypeError for a non-integer, ValueError out of range."""
    if isinstance(action, (bool, np.bool_)):
        raise TypeError(f"action must be an integer in 0..43, got the bool {action!r}")
    if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
        action = action.item()
    if not isinstance(action, (int, np.integer)):
        raise TypeError(f"action must be an integer in 0..43, got {type(action).__name__} {action!r}")
    a = int(action)
    if not 0 <= a < C.N_ACTIONS:
        raise ValueError(f"action {a} is out of range: actions are integers in 0..{C.N_ACTIONS - 1}")
    return a


_EMPTY = np.zeros(0, dtype=np.int64)


def seed_to_uint64(seed: Any) -> np.uint64:
    """A reset/constructor seed (any int, negative ones included) as the uint64 start of a stream."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int or None, got {type(seed).__name__} {seed!r}")
    return np.uint64(int(seed) % 2**64)


def _int_list(key: str, value: Any) -> list[int]:
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__"):
        raise ValueError(f"reset option {key!r} must be a list of integers, got {type(value).__name__}")
    out = []
    for v in value:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"reset option {key!r} must hold integers only, found {v!r}")
        out.append(int(v))
    return out


def parse_options(options: Any, num_players: int, oracle: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate the ``reset`` options of RULES.md section 7 and return (deck, starter_sets, altar)
    as int64 arrays (empty = random). Raises ValueError saying what is wrong; warns on unknown keys."""
    if options is None:
        return _EMPTY, _EMPTY, _EMPTY
    if not isinstance(options, dict):
        raise ValueError(f"reset options must be a dict, got {type(options).__name__}")
    unknown = [k for k in options if k not in OPTION_KEYS]
    if unknown:
        warnings.warn(f"bali_v0 reset: ignoring unknown option(s) {unknown!r}; known: {list(OPTION_KEYS)}", stacklevel=3)
    deck = starters = altar = _EMPTY
    if options.get("deck") is not None:
        cards = _int_list("deck", options["deck"])
        size = C.ORACLE_DECK_SIZE if oracle else C.BASE_DECK_SIZE
        if len(cards) != size:
            raise ValueError(f"reset option 'deck' must hold {size} card ids ({'with' if oracle else 'without'} the Oracle variant), got {len(cards)}")
        want = C.DECK_COUNTS.copy()
        if not oracle:
            want[C.ORACLE] = 0
        got = np.bincount([c for c in cards if 0 <= c <= 7], minlength=8)
        bad = [c for c in cards if not 0 <= c <= 7]
        if bad or not np.array_equal(got, want):
            diff = ", ".join(f"{CARD_NAMES[k]}: {got[k]} instead of {want[k]}" for k in range(8) if got[k] != want[k])
            raise ValueError(f"reset option 'deck' is not the deck's multiset of card ids: {diff or f'unknown ids {bad}'}")
        if oracle and C.ORACLE in cards[: C.MARKET_SIZE]:
            raise ValueError("reset option 'deck': the first 16 cards (the starting market) must hold no oracle")
        deck = np.array(cards, dtype=np.int64)
    if options.get("starter_sets") is not None:
        sets = _int_list("starter_sets", options["starter_sets"])
        if len(sets) != num_players:
            raise ValueError(f"reset option 'starter_sets' needs one set id per seat ({num_players}), got {len(sets)}")
        if any(not 0 <= k <= 3 for k in sets) or len(set(sets)) != len(sets):
            raise ValueError(f"reset option 'starter_sets' must be distinct ids in 0..3, got {sets}")
        starters = np.array(sets, dtype=np.int64)
    if options.get("altar") is not None:
        if not oracle:
            raise ValueError("reset option 'altar' needs the Oracle variant (oracle=True)")
        order = _int_list("altar", options["altar"])
        if sorted(order) != [0, 1, 2, 3]:
            raise ValueError(f"reset option 'altar' must be a permutation of the categories 0..3 (top first), got {order}")
        altar = np.array(order, dtype=np.int64)
    return deck, starters, altar


def _seat_rows(s: np.ndarray, start: int, width: int, n: int) -> list[list[int]]:
    return [[int(v) for v in s[start + q * width : start + (q + 1) * width]] for q in range(n)]


def score_breakdown(s: np.ndarray) -> list[dict[str, Any]]:
    """Each seat's final score by part: VP tokens, shrines, stones, offerings by category."""
    n = int(s[C.S_NUM_PLAYERS])
    counts = np.bincount(s[C.S_ALTAR : C.S_ALTAR + s[C.S_ALTAR_LEN]].astype(np.int64), minlength=4)
    values = np.zeros(4, dtype=np.int64)
    C.altar_values(counts, values)
    rows = []
    for q in range(n):
        shrines = int(s[C.S_TABLEAUS + q * C.N_CARD_TYPES + C.SHRINE])
        offered = {
            CATEGORY_NAMES[c]: int(s[C.S_OFFERINGS + q * 4 + c]) * int(values[c]) for c in range(4)
        }
        row = {
            "vp_tokens": int(s[C.S_VP + q]),
            "shrines": 4 * shrines,
            "stones": int(s[C.S_STONES + q]) // 5,
            "offerings": offered,
        }
        row["total"] = row["vp_tokens"] + row["shrines"] + row["stones"] + sum(offered.values())
        rows.append(row)
    return rows


def state_dict(s: np.ndarray) -> dict[str, Any]:
    """The full true state of RULES.md section 8 (hidden parts included), JSON-serialisable."""
    n = int(s[C.S_NUM_PLAYERS])
    over = int(s[C.S_PHASE]) == C.PH_GAME_OVER
    market = []
    for col in range(4):
        pos, length = int(s[C.S_COL_POS + col]), int(s[C.S_COL_LEN + col])
        market.append([int(v) for v in s[C.S_MARKET + 4 * col + pos : C.S_MARKET + 4 * col + length]])
    altar_len = int(s[C.S_ALTAR_LEN])
    altar_bottom_first = [int(v) for v in s[C.S_ALTAR : C.S_ALTAR + altar_len]]
    known = [int(v) for v in s[C.S_ALTAR_KNOWN : C.S_ALTAR_KNOWN + altar_len]]
    return {
        "num_players": n,
        "variants": {"oracle": bool(s[C.S_ORACLE]), "demon": bool(s[C.S_DEMON])},
        "active": int(s[C.S_ACTIVE]),
        "to_move": None if over else int(s[C.S_TO_MOVE]),
        "phase": C.PHASE_NAMES[int(s[C.S_PHASE])],
        "hands": _seat_rows(s, C.S_HANDS, C.N_CARD_TYPES, n),
        "tableaus": _seat_rows(s, C.S_TABLEAUS, C.N_CARD_TYPES, n),
        "stones": [int(v) for v in s[C.S_STONES : C.S_STONES + n]],
        "vp_tokens": [int(v) for v in s[C.S_VP : C.S_VP + n]],
        "offerings": _seat_rows(s, C.S_OFFERINGS, 4, n),
        "supply": [int(v) for v in s[C.S_SUPPLY : C.S_SUPPLY + 4]],
        "altar": altar_bottom_first[::-1],
        "market": market,
        "deck": [int(v) for v in s[C.S_DECK + s[C.S_DECK_POS] : C.S_DECK + s[C.S_DECK_LEN]]],
        "demon": int(s[C.S_DEMON_COL]) if s[C.S_DEMON] else None,
        "scores": [int(v) for v in s[C.S_SCORES : C.S_SCORES + n]] if over else None,
        "winners": [q for q in range(n) if int(s[C.S_WINNERS]) >> q & 1] if over else None,
        # extras beyond RULES.md section 8
        "turn": int(s[C.S_TURN]),
        "decisions": int(s[C.S_DECISIONS]),
        "starter_sets": [int(v) for v in s[C.S_STARTER : C.S_STARTER + n]],
        "peeks_owed": int(s[C.S_PEEKS]),
        "oracle_window": int(s[C.S_WINDOW]),
        "scored_type": None if s[C.S_SCORED] < 0 else int(s[C.S_SCORED]),
        "last_take_column": None if s[C.S_LAST_COL] < 0 else int(s[C.S_LAST_COL]),
        "altar_known_by": [[q for q in range(n) if m >> q & 1] for m in known[::-1]],
        "offerings_known_min": _seat_rows(s, C.S_KNOWN_MIN, 4, n),
        "offerings_known_max": _seat_rows(s, C.S_KNOWN_MAX, 4, n),
    }
