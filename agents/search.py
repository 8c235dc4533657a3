"""The search agent's Numba kernels: sampling a hidden state from an observation, and
information-set MCTS over the engine's rules.

- ``determinize(obs, rng, s)``: a full state consistent with one player's observation (hidden
  parts sampled), read through the observation spec's offsets and scales
  (``bali_env.engine.obs_spec``), so it never sees more than the observation.
- ``ismcts_reset`` / ``ismcts_iterate``: the tree search of ``agents.mcts.MCTSAgent``;
  ``ismcts_choose_batch``: the same search for a batch of positions, in parallel over the cores.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from bali_env.engine import numba_cache

numba_cache.cover(__file__)  # these kernels call the engine: recompile when it changes

from bali_env.engine import (  # noqa: E402
    ALTAR_MAX,
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
    N_ACTIONS,
    N_CARD_TYPES,
    N_CATEGORIES,
    N_COLUMNS,
    N_DECISIONS,
    O_ACTIVE,
    O_ALTAR,
    O_ALTAR_KNOWN,
    O_ALTAR_TOP,
    O_ALTAR_UNKNOWN,
    O_DECISION,
    O_DECK_CARDS,
    O_DEMON,
    O_LAST_COL,
    O_MARKET,
    O_NUM_PLAYERS,
    O_ORACLE,
    O_ORACLE_WINDOW,
    O_SCORING,
    O_SCORING_BONUS,
    O_SEATS,
    O_SUPPLY,
    O_TO_MOVE,
    O_VARIANTS,
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
    S_WINNERS,
    SEAT_WIDTH,
    SO_HAND,
    SO_OFF_MAX,
    SO_OFF_MIN,
    SO_OFF_TOTAL,
    SO_STONES,
    SO_TABLEAU,
    SO_VP,
    STATE_SIZE,
    SUPPLY_PER_CATEGORY,
    X_ALTAR,
    X_DECK_CARDS,
    X_HAND,
    X_OFFERINGS,
    X_PEEKS,
    X_STONES,
    X_SUPPLY,
    X_TABLEAU,
    X_VP,
    X_WINDOW,
    altar,
    altar_known,
    apply_action,
    col_len,
    col_pos,
    deck,
    hand,
    known_max,
    known_min,
    legal_mask,
    majority_seat,
    market,
    obs_count,
    obs_one_hot,
    offering_total,
    offerings,
    play_out,
    rng_below,
    shuffle,
    starter,
    stones,
    supply,
    tableau,
    vp,
)


_DECISION_PHASE = np.zeros(N_DECISIONS, dtype=np.int64)
for _d, _ph in ((D_TAKE_OFFERING, PH_TAKE_OFFERING), (D_PLAY, PH_PLAY), (D_OFFER_FACE_UP, PH_OFFER_OWN),
                (D_OFFER_FACE_DOWN, PH_OFFER_OWN), (D_OFFER_SUPPLY, PH_OFFER_SUPPLY), (D_REFILL, PH_REFILL),
                (D_ORACLE, PH_ORACLE), (D_SHRINE_REWARD, PH_SHRINE_REWARD), (D_FARMER_CHOICE, PH_FARMER_CHOICE),
                (D_GAME_OVER, PH_GAME_OVER)):
    _DECISION_PHASE[_d] = _ph


@njit(cache=True)
def _decode_public(obs, s):
    """The public part of the state, read from the observation (observer = seat 0)."""
    n = obs_one_hot(obs, O_NUM_PLAYERS, 3) + 2
    s[S_NUM_PLAYERS] = n
    s[S_ORACLE] = 1 if obs[O_VARIANTS] > 0.5 else 0
    s[S_DEMON] = 1 if obs[O_VARIANTS + 1] > 0.5 else 0
    s[S_PHASE] = _DECISION_PHASE[obs_one_hot(obs, O_DECISION, N_DECISIONS)]
    s[S_ACTIVE] = obs_one_hot(obs, O_ACTIVE, MAX_PLAYERS)
    s[S_TO_MOVE] = obs_one_hot(obs, O_TO_MOVE, MAX_PLAYERS)
    for q in range(n):
        b = O_SEATS + q * SEAT_WIDTH
        for k in range(N_CARD_TYPES):
            s[hand(q, k)] = obs_count(obs, b + SO_HAND + k, X_HAND)
            s[tableau(q, k)] = obs_count(obs, b + SO_TABLEAU + k, X_TABLEAU)
        s[stones(q)] = obs_count(obs, b + SO_STONES, X_STONES)
        s[vp(q)] = obs_count(obs, b + SO_VP, X_VP)
        for c in range(N_CATEGORIES):
            s[known_min(q, c)] = obs_count(obs, b + SO_OFF_MIN + c, X_OFFERINGS)
            s[known_max(q, c)] = obs_count(obs, b + SO_OFF_MAX + c, X_OFFERINGS)
        s[starter(q)] = q
    for c in range(N_CATEGORIES):
        s[supply(c)] = obs_count(obs, O_SUPPLY + c, X_SUPPLY)
    for col in range(N_COLUMNS):
        k = 0
        for j in range(4):
            card = obs_one_hot(obs, O_MARKET + (col * 4 + j) * N_CARD_TYPES, N_CARD_TYPES)
            if card >= 0:
                s[market(col, k)] = card
                k += 1
        s[col_pos(col)] = 0
        s[col_len(col)] = k
    s[S_DEMON_COL] = obs_one_hot(obs, O_DEMON, N_COLUMNS) if s[S_DEMON] != 0 else -1
    s[S_PEEKS] = obs_count(obs, O_ORACLE, X_PEEKS)
    s[S_WINDOW] = obs_count(obs, O_ORACLE_WINDOW, X_WINDOW)
    s[S_LAST_COL] = obs_one_hot(obs, O_LAST_COL, N_COLUMNS)
    s[S_SCORED] = obs_one_hot(obs, O_SCORING, N_CARD_TYPES)


@njit(cache=True)
def _sample_deck(obs, rng, s):
    """The deck: the public composition in a uniformly random order."""
    size = 0
    for card in range(8):
        for _ in range(obs_count(obs, O_DECK_CARDS + card, X_DECK_CARDS)):
            s[deck(size)] = card
            size += 1
    shuffle(rng, s[deck(0) : deck(size)], 0, size)
    s[S_DECK_POS] = 0
    s[S_DECK_LEN] = size


@njit(cache=True)
def _sample_others(obs, rng, s, rest, strict):
    """One try at the other players' offering cards: each missing card goes to a category still
    below its public upper bound (and, if ``strict``, with cards left in ``rest``). False when a
    player's cards cannot be placed."""
    for q in range(1, s[S_NUM_PLAYERS]):
        for c in range(N_CATEGORIES):
            s[offerings(q, c)] = s[known_min(q, c)]
        missing = obs_count(obs, O_SEATS + q * SEAT_WIDTH + SO_OFF_TOTAL, X_OFFERINGS) - offering_total(s, q)
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
def _sample_offerings(obs, rng, s, rest):
    """Own offering cards exact, the others' sampled within their public bounds and totals; writes
    into ``rest`` the cards of each category not placed anywhere yet (candidates for the altar)."""
    n = s[S_NUM_PLAYERS]
    for c in range(N_CATEGORIES):
        own = s[known_min(0, c)]
        s[offerings(0, c)] = own
        rest[c] = SUPPLY_PER_CATEGORY - s[supply(c)] - own - obs_count(obs, O_ALTAR_KNOWN + c, X_ALTAR)
        for q in range(1, n):
            s[offerings(q, c)] = s[known_min(q, c)]
            rest[c] -= s[known_min(q, c)]
    base_rest = rest.copy()
    for attempt in range(33):  # random restarts; the last attempt ignores the category totals
        rest[:] = base_rest
        if _sample_others(obs, rng, s, rest, attempt < 32):
            break
    for c in range(N_CATEGORIES):
        rest[c] = max(rest[c], 0)
    # own knowledge bounds as the others hold them do not matter for the observer: exact
    for c in range(N_CATEGORIES):
        s[known_max(0, c)] = s[known_min(0, c)]


@njit(cache=True)
def _sample_altar(obs, rng, s, rest):
    """The altar: known top cards in place, the other positions from the known pool + ``rest``."""
    top = obs_count(obs, O_ALTAR, X_ALTAR)
    s[S_ALTAR_LEN] = top
    pool = np.zeros(N_CATEGORIES, dtype=np.int64)  # known-category cards not at a known depth
    for c in range(N_CATEGORIES):
        pool[c] = obs_count(obs, O_ALTAR_KNOWN + c, X_ALTAR)
    fixed = np.full(ALTAR_MAX, -1, dtype=np.int64)
    for d in range(min(ORACLE_WINDOW, top)):
        cat = obs_one_hot(obs, O_ALTAR_TOP + N_CATEGORIES * d, N_CATEGORIES)
        if cat >= 0:
            fixed[top - 1 - d] = cat
            pool[cat] -= 1
    free = 0
    cats = np.zeros(ALTAR_MAX, dtype=np.int64)
    known = np.zeros(ALTAR_MAX, dtype=np.int64)
    for c in range(N_CATEGORIES):
        for _ in range(pool[c]):
            cats[free] = c
            known[free] = 1
            free += 1
    n_unknown = obs_count(obs, O_ALTAR_UNKNOWN, X_ALTAR)
    for _ in range(n_unknown):
        total_rest = rest[0] + rest[1] + rest[2] + rest[3]
        c = 0
        if total_rest > 0:
            k = rng_below(rng, total_rest)
            while k >= rest[c]:
                k -= rest[c]
                c += 1
            rest[c] -= 1
        else:
            c = rng_below(rng, N_CATEGORIES)
        cats[free] = c
        known[free] = 0
        free += 1
    # a top-4 depth whose category the observer does not know holds a card of unknown category
    n_known = free - n_unknown
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
    j = 0
    for i in range(top):
        if fixed[i] >= 0:
            s[altar(i)] = fixed[i]
            depth = top - 1 - i
            seen = i < top - ORACLE_WINDOW or obs_one_hot(obs, O_ALTAR_TOP + N_CATEGORIES * depth, N_CATEGORIES) >= 0
            s[altar_known(i)] = 1 if seen else 0
        else:
            s[altar(i)] = cats[order[j]]
            s[altar_known(i)] = known[order[j]]
            j += 1


@njit(cache=True)
def _place_pending_decision(obs, s):
    """Where the pending decision stands: whose offering or scoring step it is."""
    ph = s[S_PHASE]
    n = s[S_NUM_PLAYERS]
    a = s[S_ACTIVE]
    p = s[S_TO_MOVE]
    s[S_BONUS_SEAT] = -1
    if ph == PH_OFFER_OWN:
        k = (p - a) % n
        s[S_OFFER_STEP] = n if k == 0 else k
    elif ph == PH_OFFER_SUPPLY:
        s[S_OFFER_STEP] = n
    elif ph in (PH_SHRINE_REWARD, PH_FARMER_CHOICE):
        s[S_BONUS_SEAT] = majority_seat(s, s[S_SCORED])
        k = (p - a) % n
        if ph == PH_FARMER_CHOICE and obs[O_SCORING_BONUS] > 0.5:
            k = n
        s[S_SCORE_STEP] = k
    elif ph == PH_GAME_OVER:
        s[S_TO_MOVE] = -1


@njit(cache=True)
def determinize(obs, rng, s):
    """Sample into ``s`` a full game state consistent with one player's observation ``obs``, using
    nothing else (so a search that plays such samples never peeks at hidden information).

    The observer becomes seat 0 (seats are relative, and seat numbers do not matter after the
    deal). Sampled: the deck order (uniform over the public deck composition), the other
    players' offering cards (within the public bounds and totals), the categories of the altar
    cards the observer does not know, and the order of the altar below the known top cards.
    Knowledge fields are set so that ``observe(s, 0)`` gives back ``obs`` exactly."""
    s[:] = 0
    _decode_public(obs, s)
    _sample_deck(obs, rng, s)
    rest = np.zeros(N_CATEGORIES, dtype=np.int64)
    _sample_offerings(obs, rng, s, rest)
    _sample_altar(obs, rng, s, rest)
    _place_pending_decision(obs, s)


# ============================================================================= information-set MCTS
@njit(cache=True)
def _new_node(child, visits, avail, value, mover, n_nodes, seat):
    """Append a tree node (no children yet) moved into by ``seat``; return its index."""
    node = n_nodes[0]
    n_nodes[0] = node + 1
    child[node, :] = -1
    visits[node] = 0
    avail[node] = 1
    value[node] = 0.0
    mover[node] = seat
    return node


@njit(cache=True)
def ismcts_reset(child, visits, avail, value, mover, n_nodes):
    """Empty the tree: only the root (node 0) remains."""
    n_nodes[0] = 0
    _new_node(child, visits, avail, value, mover, n_nodes, -1)


@njit(cache=True)
def _backup(s, path, depth, reward, visits, value, mover):
    """Credit every node on the path with its mover's share of the win of the finished game ``s``."""
    n = s[S_NUM_PLAYERS]
    winners = 0
    for q in range(n):
        winners += (s[S_WINNERS] >> q) & 1
    for q in range(n):
        reward[q] = ((s[S_WINNERS] >> q) & 1) / winners
    for d in range(1, depth + 1):
        nd = path[d]
        visits[nd] += 1
        value[nd] += reward[mover[nd]]


@njit(cache=True)
def ismcts_iterate(obs, iterations, rng, c_uct, child, visits, avail, value, mover, n_nodes):
    """Run ``iterations`` of single-observer information-set MCTS from ``obs`` on the given tree.

    Each iteration samples a state consistent with the observation (``determinize``), descends
    the tree over the actions legal in that sample (UCB1 with availability counts, from the
    point of view of the seat to move), adds one node, finishes the game with uniform random
    moves and backs up each seat's share of the win. The observer is seat 0 of every sample."""
    s = np.zeros(STATE_SIZE, dtype=np.int16)
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    path = np.zeros(4096, dtype=np.int64)
    reward = np.zeros(MAX_PLAYERS, dtype=np.float64)
    capacity = child.shape[0]
    for _ in range(iterations):
        determinize(obs, rng, s)
        node = 0
        depth = 0
        while s[S_PHASE] != PH_GAME_OVER and depth < 4095:
            legal_mask(s, mask)
            seat = s[S_TO_MOVE]
            unexpanded = 0
            for act in range(N_ACTIONS):
                if mask[act]:
                    ch = child[node, act]
                    if ch < 0:
                        unexpanded += 1
                    else:
                        avail[ch] += 1
            if unexpanded > 0:
                if n_nodes[0] >= capacity:
                    break
                k = rng_below(rng, unexpanded)
                for act in range(N_ACTIONS):
                    if mask[act] and child[node, act] < 0:
                        if k == 0:
                            new = _new_node(child, visits, avail, value, mover, n_nodes, seat)
                            child[node, act] = new
                            apply_action(s, act)
                            depth += 1
                            path[depth] = new
                            break
                        k -= 1
                break
            best = -1
            best_u = -1.0
            for act in range(N_ACTIONS):
                if mask[act]:
                    ch = child[node, act]
                    u = value[ch] / visits[ch] + c_uct * np.sqrt(np.log(avail[ch]) / visits[ch])
                    if u > best_u:
                        best_u = u
                        best = act
            node = child[node, best]
            apply_action(s, best)
            depth += 1
            path[depth] = node
        play_out(s, rng, mask)
        _backup(s, path, depth, reward, visits, value, mover)


@njit(cache=True, parallel=True)
def ismcts_choose_batch(obs, masks, iterations, streams, c_uct, child, visits, avail, value, mover, n_nodes, out):
    """Search every row of ``obs`` (``iterations`` each, row i's randomness from ``streams[i:i+1]``
    only) and write its most visited legal action (``masks``; the lowest id among equals) to
    ``out[i]``: what ``ismcts_reset`` + ``ismcts_iterate`` give for that row alone. The rows are
    shared out over the trees (the first axis of ``child`` ... ``n_nodes``, one per thread), so a
    row's choice does not depend on the batch or the thread count."""
    trees = child.shape[0]
    rows = obs.shape[0]
    for t in prange(trees):
        for i in range(t, rows, trees):
            ismcts_reset(child[t], visits[t], avail[t], value[t], mover[t], n_nodes[t])
            ismcts_iterate(obs[i], iterations, streams[i : i + 1], c_uct, child[t], visits[t], avail[t], value[t],
                           mover[t], n_nodes[t])
            best = -1
            most = -1
            for a in range(N_ACTIONS):
                if masks[i, a]:
                    ch = child[t, 0, a]
                    count = visits[t, ch] if ch >= 0 else 0
                    if count > most:
                        most = count
                        best = a
            out[i] = best
