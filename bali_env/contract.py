"""The public contract of docs/rules.md sections 4 and 6-8 in Python: action checks, the validation
of the ``reset`` options, ``state_dict()`` (the whole true state as JSON-serialisable data) and
the final score by part. Names of cards, categories and actions live in ``bali_env.engine.ids``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import engine as C
from .engine.ids import ACTION_NAMES, CARD_NAMES, CATEGORY_NAMES, TIEBREAK_NAMES

OPTION_KEYS = ("deck", "starter_sets", "altar")


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
    """Validate the ``reset`` options of docs/rules.md section 7 and return (deck, starter_sets, altar)
    as int64 arrays (empty = random). Raises ValueError saying what is wrong; warns on unknown keys."""
    if options is None:
        return _EMPTY, _EMPTY, _EMPTY
    if not isinstance(options, dict):
        raise ValueError(f"reset options must be a dict, got {type(options).__name__}")
    unknown = [k for k in options if k not in OPTION_KEYS]
    if unknown:
        warnings.warn(f"bali_v0 reset: ignoring unknown option(s) {unknown!r}; known: {list(OPTION_KEYS)}",
                      stacklevel=3)
    deck = starters = altar = _EMPTY
    if options.get("deck") is not None:
        cards = _int_list("deck", options["deck"])
        size = C.ORACLE_DECK_SIZE if oracle else C.BASE_DECK_SIZE
        if len(cards) != size:
            variant = "with" if oracle else "without"
            raise ValueError(f"reset option 'deck' must hold {size} card ids ({variant} the Oracle variant), "
                             f"got {len(cards)}")
        want = C.DECK_COUNTS.copy()
        if not oracle:
            want[C.ORACLE] = 0
        got = np.bincount([c for c in cards if 0 <= c <= 7], minlength=8)
        bad = [c for c in cards if not 0 <= c <= 7]
        if bad or not np.array_equal(got, want):
            diff = ", ".join(f"{CARD_NAMES[k]}: {got[k]} instead of {want[k]}" for k in range(8) if got[k] != want[k])
            what = diff or f"unknown ids {bad}"
            raise ValueError(f"reset option 'deck' is not the deck's multiset of card ids: {what}")
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
            raise ValueError(f"reset option 'altar' must be a permutation of the categories 0..3 (top first), "
                             f"got {order}")
        altar = np.array(order, dtype=np.int64)
    return deck, starters, altar


def _score_parts(s: np.ndarray) -> np.ndarray:
    """``engine.score_parts`` of a state: int64[MAX_PLAYERS, N_PARTS]."""
    parts = np.zeros((C.MAX_PLAYERS, C.N_PARTS), dtype=np.int64)
    C.score_parts(s, parts)
    return parts


def _breakdown(parts: np.ndarray, n: int) -> list[dict[str, Any]]:
    rows = []
    for q in range(n):
        row: dict[str, Any] = {
            "vp_tokens": int(parts[q, C.PART_VP]),
            "shrines": int(parts[q, C.PART_SHRINES]),
            "stones": int(parts[q, C.PART_STONES]),
            "offerings": {CATEGORY_NAMES[c]: int(parts[q, C.PART_OFFERINGS + c]) for c in range(C.N_CATEGORIES)},
        }
        row["total"] = int(parts[q].sum())
        rows.append(row)
    return rows


def score_breakdown(s: np.ndarray) -> list[dict[str, Any]]:
    """Each seat's final score by part (``engine.score_parts``): VP tokens, shrines, stones,
    offerings by category, and the total."""
    return _breakdown(_score_parts(s), int(s[C.S_NUM_PLAYERS]))


def final_result(s: np.ndarray) -> dict[str, Any]:
    """The end of a finished game: scores, winners, what decided it (``"score"``, ``"shrines"``,
    ``"stones"`` or ``"shared"``), the altar's counts and values, and the score breakdown."""
    n = int(s[C.S_NUM_PLAYERS])
    parts = _score_parts(s)
    scores = parts.sum(axis=1)
    mask, level = C.decide_winners(s, scores)
    counts = np.zeros(C.N_CATEGORIES, dtype=np.int64)
    C.altar_counts(s, counts)
    values = np.zeros(C.N_CATEGORIES, dtype=np.int64)
    C.altar_values(counts, values)
    return {
        "final_scores": [int(v) for v in scores[:n]],
        "winners": [q for q in range(n) if int(mask) >> q & 1],
        "decided_by": TIEBREAK_NAMES[int(level)],
        "altar_counts": [int(v) for v in counts],
        "altar_values": [int(v) for v in values],
        "score_breakdown": _breakdown(parts, n),
    }


def state_dict(s: np.ndarray) -> dict[str, Any]:
    """The full true state of docs/rules.md section 8 (hidden parts included), JSON-serialisable."""
    n = int(s[C.S_NUM_PLAYERS])
    over = int(s[C.S_PHASE]) == C.PH_GAME_OVER
    v = C.view(s)
    top = int(s[C.S_ALTAR_LEN])

    def ints(a: np.ndarray) -> list[Any]:
        return a.astype(int).tolist()

    return {
        "num_players": n,
        "variants": {"oracle": bool(s[C.S_ORACLE]), "demon": bool(s[C.S_DEMON])},
        "active": int(s[C.S_ACTIVE]),
        "to_move": None if over else int(s[C.S_TO_MOVE]),
        "phase": C.PHASE_NAMES[int(s[C.S_PHASE])],
        "hands": ints(v.hands[:n]),
        "tableaus": ints(v.tableaus[:n]),
        "stones": ints(v.stones[:n]),
        "vp_tokens": ints(v.vp_tokens[:n]),
        "offerings": ints(v.offerings[:n]),
        "supply": ints(v.supply),
        "altar": ints(v.altar[:top][::-1]),
        "market": [ints(v.market[col, v.col_pos[col] : v.col_len[col]]) for col in range(C.N_COLUMNS)],
        "deck": ints(v.deck[s[C.S_DECK_POS] : s[C.S_DECK_LEN]]),
        "demon": int(s[C.S_DEMON_COL]) if s[C.S_DEMON] else None,
        "scores": ints(v.scores[:n]) if over else None,
        "winners": [q for q in range(n) if int(s[C.S_WINNERS]) >> q & 1] if over else None,
        # extras beyond docs/rules.md section 8
        "turn": int(s[C.S_TURN]),
        "decisions": int(s[C.S_DECISIONS]),
        "starter_sets": ints(v.starter_sets[:n]),
        "peeks_owed": int(s[C.S_PEEKS]),
        "oracle_window": int(s[C.S_WINDOW]),
        "scored_type": None if s[C.S_SCORED] < 0 else int(s[C.S_SCORED]),
        "last_take_column": None if s[C.S_LAST_COL] < 0 else int(s[C.S_LAST_COL]),
        "altar_known_by": [[q for q in range(n) if int(m) >> q & 1] for m in v.altar_known[:top][::-1]],
        "offerings_known_min": ints(v.known_min[:n]),
        "offerings_known_max": ints(v.known_max[:n]),
    }
