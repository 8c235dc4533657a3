"""Determinization (docs/rules.md section 5): a full state consistent with what one seat knows.

``determinize(obs, rng, s)`` is the inverse of ``observe``: it reads seat ``p``'s observation
through the observation spec (``obs_spec``) and fills ``s`` with a whole game state that, observed
from seat 0 (the observer becomes seat 0: seats are relative, and seat numbers do not matter after
the deal), gives back ``obs`` exactly. What the observation shows is copied; what it hides is
drawn from the SplitMix64 stream ``rng``, only among the cards the observer cannot see:

- the deck order, uniform over the public deck composition;
- the others' offering cards, within their public bounds and totals;
- the categories of the altar cards the observer does not know, and the order of the altar
  below the known top cards.

It is a kernel (no checks): ``check_observation`` first, for anything that did not come from
``observe``. The search (``bali_env.bots.mcts_search``) samples one state per iteration with it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from bali_env.engine.ids import (
    ALTAR_MAX,
    BASE_DECK_SIZE,
    D_FARMER_CHOICE,
    D_GAME_OVER,
    D_OFFER_FACE_DOWN,
    D_OFFER_FACE_UP,
    D_OFFER_SUPPLY,
    D_ORACLE,
    D_PLAY,
    D_REFILL,
    D_SHRINE_REWARD,
    D_TAKE_OFFERING,
    MAX_PLAYERS,
    N_CARD_IDS,
    N_CARD_TYPES,
    N_CATEGORIES,
    N_COLUMNS,
    N_DECISIONS,
    N_PLAYER_COUNTS,
    ORACLE_DECK_SIZE,
    ORACLE_WINDOW,
    PH_FARMER_CHOICE,
    PH_GAME_OVER,
    PH_OFFER_OWN,
    PH_OFFER_SUPPLY,
    PH_ORACLE,
    PH_PLAY,
    PH_REFILL,
    PH_SHRINE_REWARD,
    PH_TAKE_OFFERING,
    SUPPLY_PER_CATEGORY,
)
from bali_env.engine.obs_spec import (
    O_ACTIVE,
    O_ALTAR_TOP,
    O_DECISION,
    O_NUM_PLAYERS,
    O_SEATS,
    O_TO_MOVE,
    OBS_DIM,
    OBS_HIGH,
    OBS_SCALE,
    SEAT_WIDTH,
    SO_PRESENT,
    observation_slot_names,
)
from bali_env.engine import decode as D
from bali_env.engine.observe import obs_num_players
from bali_env.engine.seeds import rng_below, shuffle
from bali_env.engine.scoring import majority_seat
from bali_env.engine.state import (
    relative_seat,
    S_ACTIVE,
    S_ALTAR_LEN,
    S_BONUS_SEAT,
    S_DECK_LEN,
    S_DECK_POS,
    S_DEMON,
    S_DEMON_COL,
    S_LAST_COL,
    S_NUM_PLAYERS,
    S_OFFER_STEP,
    S_ORACLE,
    S_PEEKS,
    S_PHASE,
    S_SCORE_STEP,
    S_SCORED,
    S_TO_MOVE,
    S_WINDOW,
    altar,
    altar_known,
    col_len,
    col_pos,
    deck,
    hand,
    known_max,
    known_min,
    market,
    offering_total,
    offerings,
    starter,
    stones,
    supply,
    tableau,
    vp,
)

#: the phase of each decision (``observe.decision_index`` the other way round)
DECISION_PHASE = np.zeros(N_DECISIONS, dtype=np.int64)
for _d, _ph in ((D_TAKE_OFFERING, PH_TAKE_OFFERING), (D_PLAY, PH_PLAY), (D_OFFER_FACE_UP, PH_OFFER_OWN),
                (D_OFFER_FACE_DOWN, PH_OFFER_OWN), (D_OFFER_SUPPLY, PH_OFFER_SUPPLY), (D_REFILL, PH_REFILL),
                (D_ORACLE, PH_ORACLE), (D_SHRINE_REWARD, PH_SHRINE_REWARD), (D_FARMER_CHOICE, PH_FARMER_CHOICE),
                (D_GAME_OVER, PH_GAME_OVER)):
    DECISION_PHASE[_d] = _ph
OFFERING_TRIES = 32  #: random restarts for the others' offering cards before the category totals are ignored


# ----------------------------------------------------------------------------- checking an observation
def _one_hot_problem(o: np.ndarray, start: int, size: int, want: int) -> bool:
    """True unless exactly ``want`` (0 or 1) slots of o[start:start+size] are set."""
    return int(np.count_nonzero(o[start : start + size])) != want


def _count(o: np.ndarray, i: int, scale: float) -> int:
    return int(np.rint(o[i] * scale))


def _range_problem(o: np.ndarray) -> str | None:
    """Every slot a whole count of its scale within the observation space; one decision, one
    player count, one active seat, one seat to decide (none after the end), present seats."""
    counts = o.astype(np.float64) * OBS_SCALE
    bad = ~np.isfinite(o) | (o < 0) | (o > OBS_HIGH * (1 + 1e-5)) | (np.abs(counts - np.rint(counts)) > 1e-3)
    if bad.any():
        slot = int(np.flatnonzero(bad)[0])
        return (f"slot {slot} ({observation_slot_names()[slot]}) = {o[slot]!r} is not a count within "
                f"0..{OBS_HIGH[slot] * OBS_SCALE[slot]:g} divided by {OBS_SCALE[slot]:g}")
    if _one_hot_problem(o, O_DECISION, N_DECISIONS, 1) or _one_hot_problem(o, O_NUM_PLAYERS, N_PLAYER_COUNTS, 1):
        return "the decision and the number of players must be one-hots with exactly one slot set"
    n = int(obs_num_players(o))
    over = o[O_DECISION + D_GAME_OVER] > 0
    if (_one_hot_problem(o, O_ACTIVE, n, 1) or _one_hot_problem(o, O_ACTIVE + n, MAX_PLAYERS - n, 0)
            or _one_hot_problem(o, O_TO_MOVE, n, 0 if over else 1)
            or _one_hot_problem(o, O_TO_MOVE + n, MAX_PLAYERS - n, 0)):
        return f"the active seat and the seat to decide must be one of the {n} seats (no seat to decide at the end)"
    present = [_count(o, O_SEATS + r * SEAT_WIDTH + SO_PRESENT, 1) for r in range(MAX_PLAYERS)]
    if present != [1] * n + [0] * (MAX_PLAYERS - n):
        return f"the present seats {present} do not match {n} players"
    return None


def _count_problem(o: np.ndarray) -> str | None:
    """The deck's cards by id add up to the deck size, the known and unknown altar cards to the
    altar size, and each known top altar card is among the known ones (the counts as the
    decoder reads them, once the slots are whole counts)."""
    v = np.zeros(D.DECODED_SIZE, dtype=np.int64)
    D.decode_counts(o, v)
    deck_cards = int(v[D.V_DECK_CARDS : D.V_DECK_CARDS + N_CARD_IDS].sum())
    most = ORACLE_DECK_SIZE if v[D.V_ORACLE] else BASE_DECK_SIZE
    if deck_cards != v[D.V_DECK_SIZE] or deck_cards > most:
        return f"the deck's cards by id add up to {deck_cards}, the deck holds {v[D.V_DECK_SIZE]} (at most {most})"
    known = v[D.V_KNOWN : D.V_KNOWN + N_CATEGORIES].tolist()
    size = int(v[D.V_ALTAR_SIZE])
    if sum(known) + v[D.V_ALTAR_UNKNOWN] != size or size > ALTAR_MAX:
        return f"known {sum(known)} and unknown altar cards do not add up to the altar's {size} (at most {ALTAR_MAX})"
    for d in range(ORACLE_WINDOW):
        top = o[O_ALTAR_TOP + N_CATEGORIES * d : O_ALTAR_TOP + N_CATEGORIES * (d + 1)]
        if np.count_nonzero(top) > (1 if d < size else 0):
            return f"the altar card at depth {d} has more than one category (or is not on the altar)"
        cat = int(v[D.V_TOP + d])
        if cat >= 0:
            if known[cat] < 1:
                return f"the altar card at depth {d} is not among the known altar cards"
            known[cat] -= 1
    return None


def check_observation(obs: Any) -> np.ndarray:
    """``obs`` as a C-contiguous float32 [OBS_DIM] array (a copy unless it is one already),
    checked to be something ``determinize`` can read safely: every slot a whole count of its
    scale within the observation space, one decision, player count, active seat and seat to
    decide (none at the end), the present seats matching the player count, the deck's cards by id
    adding up to the deck size (at most the deck), the known and unknown altar cards adding up to
    the altar size (at most ``ALTAR_MAX``), each known top altar card among the known ones.
    TypeError / ValueError naming what is wrong.

    It does not prove that a game reaches ``obs``: ``observe`` on a sample tells (the search
    agent checks that too)."""
    o = np.asarray(obs)
    if o.shape != (OBS_DIM,):
        raise ValueError(f"observation must have shape ({OBS_DIM},), got {o.shape}")
    if not (np.issubdtype(o.dtype, np.floating) or np.issubdtype(o.dtype, np.integer)):
        raise TypeError(f"observation must be numeric (float32), got dtype {o.dtype}")
    o = np.ascontiguousarray(o, dtype=np.float32)
    problem = _range_problem(o) or _count_problem(o)
    if problem:
        raise ValueError(f"observation: {problem}")
    return o


# ----------------------------------------------------------------------------- the kernel
@njit(cache=True)
def _copy_public(v, s):
    """The public part of the state, from the decoded observation ``v`` (observer = seat 0)."""
    n = v[D.V_N]
    s[S_NUM_PLAYERS] = n
    s[S_ORACLE] = v[D.V_ORACLE]
    s[S_DEMON] = v[D.V_DEMON]
    s[S_PHASE] = DECISION_PHASE[v[D.V_DECISION]]
    s[S_ACTIVE] = v[D.V_ACTIVE]
    s[S_TO_MOVE] = v[D.V_TO_MOVE]
    for q in range(n):
        for k in range(N_CARD_TYPES):
            s[hand(q, k)] = v[D.hand(q, k)]
            s[tableau(q, k)] = v[D.tableau(q, k)]
        s[stones(q)] = v[D.V_STONES + q]
        s[vp(q)] = v[D.V_VP + q]
        for c in range(N_CATEGORIES):
            s[known_min(q, c)] = v[D.offerings_min(q, c)]
            s[known_max(q, c)] = v[D.offerings_max(q, c)]
        s[starter(q)] = q
    for c in range(N_CATEGORIES):
        s[supply(c)] = v[D.V_SUPPLY + c]
    for col in range(N_COLUMNS):
        for k in range(v[D.V_COL_LEN + col]):
            s[market(col, k)] = v[D.market(col, k)]
        s[col_pos(col)] = 0
        s[col_len(col)] = v[D.V_COL_LEN + col]
    s[S_DEMON_COL] = v[D.V_DEMON_COL] if s[S_DEMON] != 0 else -1
    s[S_PEEKS] = v[D.V_PEEKS]
    s[S_WINDOW] = v[D.V_WINDOW]
    s[S_LAST_COL] = v[D.V_LAST_COL]
    s[S_SCORED] = v[D.V_SCORED]


@njit(cache=True)
def _sample_deck(v, rng, s):
    """The deck: the public composition in a uniformly random order."""
    size = 0
    for card in range(N_CARD_IDS):
        for _ in range(v[D.V_DECK_CARDS + card]):
            s[deck(size)] = card
            size += 1
    shuffle(rng, s[deck(0) : deck(size)], 0, size)
    s[S_DECK_POS] = 0
    s[S_DECK_LEN] = size


@njit(cache=True)
def _sample_others(v, rng, s, rest, strict):
    """One try at the other players' offering cards: each missing card goes to a category still
    below its public upper bound (and, if ``strict``, with cards left in ``rest``). False when a
    player's cards cannot be placed."""
    for q in range(1, s[S_NUM_PLAYERS]):
        for c in range(N_CATEGORIES):
            s[offerings(q, c)] = s[known_min(q, c)]
        missing = v[D.V_OFF_TOTAL + q] - offering_total(s, q)
        for _ in range(missing):
            room = 0
            for c in range(N_CATEGORIES):
                if s[offerings(q, c)] < s[known_max(q, c)] and (rest[c] > 0 or not strict):
                    room += 1
            if room == 0:
                return False
            pick = rng_below(rng, room)
            for c in range(N_CATEGORIES):
                if s[offerings(q, c)] < s[known_max(q, c)] and (rest[c] > 0 or not strict):
                    if pick == 0:
                        s[offerings(q, c)] += 1
                        rest[c] -= 1
                    pick -= 1
    return True


@njit(cache=True)
def _sample_offerings(v, rng, s, rest):
    """Own offering cards exact, the others' sampled within their public bounds and totals; writes
    into ``rest`` the cards of each category not placed anywhere yet (candidates for the altar)."""
    n = s[S_NUM_PLAYERS]
    for c in range(N_CATEGORIES):
        own = s[known_min(0, c)]
        s[offerings(0, c)] = own
        rest[c] = SUPPLY_PER_CATEGORY - s[supply(c)] - own - v[D.V_KNOWN + c]
        for q in range(1, n):
            s[offerings(q, c)] = s[known_min(q, c)]
            rest[c] -= s[known_min(q, c)]
    base_rest = rest.copy()
    for attempt in range(OFFERING_TRIES + 1):  # the last attempt ignores the category totals
        rest[:] = base_rest
        if _sample_others(v, rng, s, rest, attempt < OFFERING_TRIES):
            break
    for c in range(N_CATEGORIES):
        rest[c] = max(rest[c], 0)
    # own knowledge bounds as the others hold them do not matter for the observer: exact
    for c in range(N_CATEGORIES):
        s[known_max(0, c)] = s[known_min(0, c)]


@njit(cache=True)
def _unknown_category(rng, rest):
    """A category for an altar card the observer never saw: drawn in proportion to the cards of
    each category not placed yet (``rest``, taken from), uniform when none is left."""
    total_rest = 0
    for c in range(N_CATEGORIES):
        total_rest += rest[c]
    if total_rest == 0:
        return rng_below(rng, N_CATEGORIES)
    k = rng_below(rng, total_rest)
    c = 0
    while k >= rest[c]:
        k -= rest[c]
        c += 1
    rest[c] -= 1
    return c


@njit(cache=True)
def _sample_altar(v, rng, s, rest):
    """The altar: known top cards in place, the other positions from the known pool + ``rest``."""
    top = v[D.V_ALTAR_SIZE]
    s[S_ALTAR_LEN] = top
    pool = np.zeros(N_CATEGORIES, dtype=np.int64)  # known-category cards not at a known depth
    fixed = np.full(ALTAR_MAX, -1, dtype=np.int64)
    _fix_known_top(v, top, pool, fixed)
    cats = np.zeros(ALTAR_MAX, dtype=np.int64)
    known = np.zeros(ALTAR_MAX, dtype=np.int64)
    free = _altar_pool(v, rng, rest, pool, cats, known)
    # a top-window depth whose category the observer does not know holds a card of unknown category
    n_known = free - v[D.V_ALTAR_UNKNOWN]
    shuffle(rng, cats, n_known, free)
    next_unknown = n_known
    for d in range(min(ORACLE_WINDOW, top)):
        i = top - 1 - d
        if fixed[i] < 0:
            fixed[i] = cats[next_unknown]
            known[next_unknown] = -1  # placed
            next_unknown += 1
    order = np.zeros(ALTAR_MAX, dtype=np.int64)
    m = 0
    for j in range(free):
        if known[j] >= 0:
            order[m] = j
            m += 1
    shuffle(rng, order, 0, m)
    _lay_altar(v, s, top, fixed, cats, known, order)


@njit(cache=True)
def _fix_known_top(v, top, pool, fixed):
    """The top altar cards whose category the observer knows, at their depth in ``fixed``; the
    other known cards by category in ``pool``."""
    for c in range(N_CATEGORIES):
        pool[c] = v[D.V_KNOWN + c]
    for d in range(min(ORACLE_WINDOW, top)):
        cat = v[D.V_TOP + d]
        if cat >= 0:
            fixed[top - 1 - d] = cat
            pool[cat] -= 1


@njit(cache=True)
def _altar_pool(v, rng, rest, pool, cats, known):
    """The altar cards not fixed at a depth, into ``cats``: the known ones (``known`` 1), then a
    drawn category for each unknown one (``known`` 0); returns how many."""
    free = 0
    for c in range(N_CATEGORIES):
        for _ in range(pool[c]):
            cats[free] = c
            known[free] = 1
            free += 1
    for _ in range(v[D.V_ALTAR_UNKNOWN]):
        cats[free] = _unknown_category(rng, rest)
        known[free] = 0
        free += 1
    return free


@njit(cache=True)
def _lay_altar(v, s, top, fixed, cats, known, order):
    """Write the altar, bottom first: the fixed depths as they are (known to the observer where
    it saw them), the other positions from the pool in ``order``."""
    j = 0
    for i in range(top):
        if fixed[i] >= 0:
            s[altar(i)] = fixed[i]
            depth = top - 1 - i
            seen = depth >= ORACLE_WINDOW or v[D.V_TOP + depth] >= 0
            s[altar_known(i)] = 1 if seen else 0
        else:
            s[altar(i)] = cats[order[j]]
            s[altar_known(i)] = known[order[j]]
            j += 1


@njit(cache=True)
def _place_pending_decision(v, s):
    """Where the pending decision stands: whose offering or scoring step it is."""
    ph = s[S_PHASE]
    n = s[S_NUM_PLAYERS]
    a = s[S_ACTIVE]
    p = s[S_TO_MOVE]
    s[S_BONUS_SEAT] = -1
    if ph == PH_OFFER_OWN:
        k = relative_seat(a, p, n)
        s[S_OFFER_STEP] = n if k == 0 else k
    elif ph == PH_OFFER_SUPPLY:
        s[S_OFFER_STEP] = n
    elif ph in (PH_SHRINE_REWARD, PH_FARMER_CHOICE):
        s[S_BONUS_SEAT] = majority_seat(s, s[S_SCORED])
        k = relative_seat(a, p, n)
        if ph == PH_FARMER_CHOICE and v[D.V_BONUS] != 0:
            k = n
        s[S_SCORE_STEP] = k
    elif ph == PH_GAME_OVER:
        s[S_TO_MOVE] = -1


@njit(cache=True)
def determinize(obs, rng, s):
    """Fill ``s`` (int16[STATE_SIZE]) with a full game state consistent with one seat's
    observation ``obs`` (float32[OBS_DIM]), drawing what it hides from the SplitMix64 stream
    ``rng`` (uint64[1]) and reading nothing else: ``observe(s, 0)`` gives back ``obs`` exactly.

    The observer becomes seat 0. Copied: everything the observation shows (read once by the
    engine's decoder, ``decode.decode_counts``). Drawn: the deck order (uniform over the public
    deck composition), the others' offering cards (within the public bounds and totals,
    preferring categories with cards left), the categories of the altar cards the observer does
    not know (in proportion to the cards of each category not placed elsewhere) and the order of
    the altar below the known top cards. A kernel: check an observation that ``observe`` did not
    write with ``check_observation`` first."""
    v = np.zeros(D.DECODED_SIZE, dtype=np.int64)
    D.decode_counts(obs, v)
    s[:] = 0
    _copy_public(v, s)
    _sample_deck(v, rng, s)
    rest = np.zeros(N_CATEGORIES, dtype=np.int64)
    _sample_offerings(v, rng, s, rest)
    _sample_altar(v, rng, s, rest)
    _place_pending_decision(v, s)
