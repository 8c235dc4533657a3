"""The public contract of docs/rules.md sections 4 and 6-8 in Python: action names, the validation
of the ``reset`` options and of game states, ``state_dict()`` (the whole true state as
JSON-serialisable data) and the final score by part. Names of cards, categories and actions live
in ``bali_env.engine.ids``, the argument validators in ``bali_env.engine.validate``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from bali_env import engine as C

from bali_env.engine.ids import ACTION_NAMES, CARD_NAMES, CATEGORY_NAMES, TIEBREAK_NAMES
from bali_env.engine.validate import check_action, check_seed, is_int

OPTION_KEYS = ("deck", "starter_sets", "altar")


def action_to_str(action: int) -> str:
    """A readable name for an action id, e.g. ``action_to_str(9) == "play 2 rice farmers"``."""
    a = check_action(action)
    return ACTION_NAMES[a]


_EMPTY = np.zeros(0, dtype=np.int64)


def _state_problem(states: np.ndarray) -> str | None:
    """What is inconsistent in a batch of game states (``[N, STATE_SIZE]``), or None: every value
    the kernels use as an index or a loop bound must be in range (docs/rules.md section 8)."""
    n = states[:, C.S_NUM_PLAYERS].astype(np.int64)
    if not np.isin(n, (2, 3, 4)).all():
        return "num_players must be 2, 3 or 4"
    if len(set(n.tolist())) > 1:
        return "all states must have the same number of players"
    n0 = int(n[0])
    h = states[:, : C.HEADER_SIZE].astype(np.int64)
    over = h[:, C.S_PHASE] == C.PH_GAME_OVER
    deck_len = np.where(h[:, C.S_ORACLE] == 1, C.ORACLE_DECK_SIZE, C.BASE_DECK_SIZE)
    checks = [
        ("oracle flag", np.isin(h[:, C.S_ORACLE], (0, 1))),
        ("demon flag", np.isin(h[:, C.S_DEMON], (0, 1))),
        ("phase", (h[:, C.S_PHASE] >= 0) & (h[:, C.S_PHASE] <= C.PH_GAME_OVER)),
        ("active seat", (h[:, C.S_ACTIVE] >= 0) & (h[:, C.S_ACTIVE] < n0)),
        ("seat to move", np.where(over, h[:, C.S_TO_MOVE] == -1, (h[:, C.S_TO_MOVE] >= 0) & (h[:, C.S_TO_MOVE] < n0))),
        ("demon column", np.where(h[:, C.S_DEMON] == 1,
                                  (h[:, C.S_DEMON_COL] >= 0) & (h[:, C.S_DEMON_COL] < C.N_COLUMNS),
                                  h[:, C.S_DEMON_COL] == -1)),
        ("deck length", (h[:, C.S_DECK_LEN] >= 0) & (h[:, C.S_DECK_LEN] <= deck_len)),  # a search sample: the rest
        ("deck position", (h[:, C.S_DECK_POS] >= 0) & (h[:, C.S_DECK_POS] <= h[:, C.S_DECK_LEN])),
        ("altar length", (h[:, C.S_ALTAR_LEN] >= 0) & (h[:, C.S_ALTAR_LEN] <= C.ALTAR_MAX)),
        ("offer step", (h[:, C.S_OFFER_STEP] >= 0) & (h[:, C.S_OFFER_STEP] <= n0)),
        ("last column", (h[:, C.S_LAST_COL] >= -1) & (h[:, C.S_LAST_COL] < C.N_COLUMNS)),
        ("scored card", (h[:, C.S_SCORED] >= -1) & (h[:, C.S_SCORED] < C.N_CARD_TYPES)),
        ("score step", (h[:, C.S_SCORE_STEP] >= 0) & (h[:, C.S_SCORE_STEP] <= n0)),
        ("majority seat", (h[:, C.S_BONUS_SEAT] >= -1) & (h[:, C.S_BONUS_SEAT] < n0)),
        ("oracle peeks", (h[:, C.S_PEEKS] >= 0) & (h[:, C.S_PEEKS] <= C.DECK_COUNTS[C.ORACLE])),
        ("oracle window", (h[:, C.S_WINDOW] >= 0) & (h[:, C.S_WINDOW] <= np.minimum(C.ORACLE_WINDOW,
                                                                                    h[:, C.S_ALTAR_LEN]))),
    ]
    for name, ok in checks:
        if not ok.all():
            return f"{name} out of range (game {int(np.flatnonzero(~ok)[0])})"
    p, k, c = C.MAX_PLAYERS, C.N_CARD_TYPES, C.N_CATEGORIES
    absent = np.arange(p) >= n0  # seats not in the game

    def block(start: int, *shape: int) -> np.ndarray:
        return states[:, start : start + int(np.prod(shape))].reshape(len(states), *shape).astype(np.int64)

    most = C.DECK_COUNTS[:k] + p  # the deck's copies and the starter sets'
    per_seat = [("hands", block(C.S_HANDS, p, k), most), ("tableaus", block(C.S_TABLEAUS, p, k), most),
                ("stones", block(C.S_STONES, p, 1), None), ("VP", block(C.S_VP, p, 1), None),
                ("offerings", block(C.S_OFFERINGS, p, c), None), ("known offerings", block(C.S_KNOWN_MIN, p, c), None),
                ("known offerings", block(C.S_KNOWN_MAX, p, c), None),
                ("starter sets", block(C.S_STARTER, p, 1), np.array([c - 1]))]
    for name, values, high in per_seat:
        ok = (values >= 0).all(axis=(1, 2)) & ~(values[:, absent] != 0).any(axis=(1, 2))
        if high is not None:
            ok &= (values <= high).all(axis=(1, 2))
        if not ok.all():
            return f"{name} out of range or set for an absent seat (game {int(np.flatnonzero(~ok)[0])})"
    supply = block(C.S_SUPPLY, c)
    pos, length = block(C.S_COL_POS, C.N_COLUMNS), block(C.S_COL_LEN, C.N_COLUMNS)
    slot = np.arange(C.COLUMN_SIZE)
    live = (slot >= pos[:, :, None]) & (slot < length[:, :, None])
    market = block(C.S_MARKET, C.N_COLUMNS, C.COLUMN_SIZE)
    deck_cards = block(C.S_DECK, C.ORACLE_DECK_SIZE)
    altar_cards = block(C.S_ALTAR, C.ALTAR_MAX)
    in_deck = np.arange(C.ORACLE_DECK_SIZE) < h[:, C.S_DECK_LEN, None]
    on_altar = np.arange(C.ALTAR_MAX) < h[:, C.S_ALTAR_LEN, None]
    known = block(C.S_ALTAR_KNOWN, C.ALTAR_MAX)
    more = [
        ("supply", ((supply >= 0) & (supply <= C.SUPPLY_PER_CATEGORY)).all(axis=1)),
        ("market column bounds",
         ((length >= 0) & (length <= C.COLUMN_SIZE) & (pos >= 0) & (pos <= length)).all(axis=1)),
        ("market card", (~live | ((market >= 0) & (market < k))).all(axis=(1, 2))),
        ("deck card", (~in_deck | ((deck_cards >= 0) & (deck_cards <= C.ORACLE))).all(axis=1)),
        ("altar card", (~on_altar | ((altar_cards >= 0) & (altar_cards < c))).all(axis=1)),
        ("altar knowledge", ((known >= 0) & (known < 1 << n0)).all(axis=1)),
    ]
    for name, ok in more:
        if not ok.all():
            return f"{name} out of range (game {int(np.flatnonzero(~ok)[0])})"
    return None


def check_states(states: Any) -> np.ndarray:
    """A batch of game states as a C-contiguous ``int16 [N, STATE_SIZE]`` array (a copy when it is
    not already one), checked for consistency: ValueError saying what is out of range (nothing
    reaches a kernel before this passes)."""
    arr = np.asarray(states)
    if arr.ndim != 2 or arr.shape[1] != C.STATE_SIZE:
        raise ValueError(f"states must have shape [N, {C.STATE_SIZE}], got {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"states must be integers (int16), got dtype {arr.dtype}")
    if arr.size and (arr.min() < np.iinfo(C.STATE_DTYPE).min or arr.max() > np.iinfo(C.STATE_DTYPE).max):
        raise ValueError("states: values beyond int16")
    arr = np.ascontiguousarray(arr, dtype=C.STATE_DTYPE)
    problem = _state_problem(arr) if len(arr) else None
    if problem:
        raise ValueError(f"states: {problem}")
    return arr


def seed_to_uint64(seed: Any) -> np.uint64:
    """A reset/constructor seed (any int, negative ones included) as the uint64 start of a stream."""
    return np.uint64(check_seed(seed) % 2**64)


def deal(state: np.ndarray, num_players: int, oracle: bool, demon: bool, stream: np.ndarray,
         deck: np.ndarray, starters: np.ndarray, altar: np.ndarray) -> int:
    """Deal a game into ``state`` the way ``reset`` does: the next deal seed of ``stream`` (a
    uint64[1] stream of deal seeds, advanced) and ``engine.init_game`` with the parsed options
    (``parse_options``). Returns the deal seed."""
    deal_seed = int(C.next_deal_seed(stream))
    C.init_game(state, num_players, oracle, demon, np.uint64(deal_seed), deck, starters, altar)
    return deal_seed


def dealt_state(num_players: int, oracle: bool, demon: bool, seed: int, options: Any = None) -> np.ndarray:
    """A new state holding the game ``reset(seed=seed, options=options)`` deals (as a game
    record keeps it: ``bali_env.envs.records``). ValueError for bad options."""
    deck, starters, altar = parse_options(options or None, num_players, oracle)
    state = np.zeros(C.STATE_SIZE, dtype=C.STATE_DTYPE)
    deal(state, num_players, oracle, demon, np.array([seed_to_uint64(seed)], dtype=np.uint64), deck, starters, altar)
    return state


def _int_list(key: str, value: Any) -> list[int]:
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__"):
        raise ValueError(f"reset option {key!r} must be a list of integers, got {type(value).__name__}")
    out = []
    for v in value:
        if not is_int(v):
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
    deck = _EMPTY if options.get("deck") is None else _deck_option(options["deck"], oracle)
    starters = _EMPTY if options.get("starter_sets") is None else _starters_option(options["starter_sets"],
                                                                                     num_players)
    altar = _EMPTY if options.get("altar") is None else _altar_option(options["altar"], oracle)
    return deck, starters, altar


def _deck_option(value: Any, oracle: bool) -> np.ndarray:
    """``options["deck"]``: the whole play deck, top first (ValueError saying what is wrong)."""
    cards = _int_list("deck", value)
    size = C.ORACLE_DECK_SIZE if oracle else C.BASE_DECK_SIZE
    if len(cards) != size:
        variant = "with" if oracle else "without"
        raise ValueError(f"reset option 'deck' must hold {size} card ids ({variant} the Oracle variant), "
                         f"got {len(cards)}")
    _check_deck_multiset(cards, oracle)
    if oracle and C.ORACLE in cards[: C.MARKET_SIZE]:
        raise ValueError("reset option 'deck': the first 16 cards (the starting market) must hold no oracle")
    return np.array(cards, dtype=np.int64)


def _check_deck_multiset(cards: list[int], oracle: bool) -> None:
    """The deck option's cards are the deck's multiset of card ids (the oracles only with the
    Oracle variant); ValueError naming the counts that differ, or the unknown ids."""
    want = C.DECK_COUNTS.copy()
    if not oracle:
        want[C.ORACLE] = 0
    got = np.bincount([c for c in cards if 0 <= c <= 7], minlength=8)
    bad = [c for c in cards if not 0 <= c <= 7]
    if bad or not np.array_equal(got, want):
        diff = ", ".join(f"{CARD_NAMES[k]}: {got[k]} instead of {want[k]}" for k in range(8) if got[k] != want[k])
        raise ValueError(f"reset option 'deck' is not the deck's multiset of card ids: {diff or f'unknown ids {bad}'}")


def _starters_option(value: Any, num_players: int) -> np.ndarray:
    """``options["starter_sets"]``: one distinct starter set id per seat."""
    sets = _int_list("starter_sets", value)
    if len(sets) != num_players:
        raise ValueError(f"reset option 'starter_sets' needs one set id per seat ({num_players}), got {len(sets)}")
    if any(not 0 <= k <= 3 for k in sets) or len(set(sets)) != len(sets):
        raise ValueError(f"reset option 'starter_sets' must be distinct ids in 0..3, got {sets}")
    return np.array(sets, dtype=np.int64)


def _altar_option(value: Any, oracle: bool) -> np.ndarray:
    """``options["altar"]``: the altar's four categories, top first (the Oracle variant only)."""
    if not oracle:
        raise ValueError("reset option 'altar' needs the Oracle variant (oracle=True)")
    order = _int_list("altar", value)
    if sorted(order) != [0, 1, 2, 3]:
        raise ValueError(f"reset option 'altar' must be a permutation of the categories 0..3 (top first), "
                         f"got {order}")
    return np.array(order, dtype=np.int64)


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
    ``"stones"`` or ``"shared"``), the altar's counts and values, the score breakdown, and every
    seat's offering cards by category (``offering_cards``: shown to all at the final scoring)."""
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
        "offering_cards": [[int(x) for x in C.state_blocks(s).offerings[q]] for q in range(n)],
    }


def state_dict(s: np.ndarray) -> dict[str, Any]:
    """The full true state of docs/rules.md section 8 (hidden parts included), JSON-serialisable."""
    n = int(s[C.S_NUM_PLAYERS])
    over = int(s[C.S_PHASE]) == C.PH_GAME_OVER
    v = C.state_blocks(s)
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
