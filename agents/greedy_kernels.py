"""The greedy heuristic (``agents.greedy``) in Numba: a whole batch of decisions in one call.

``greedy_decide_batch(obs, masks, params, rng_state, out)`` decides one action per row exactly as
``GreedyAgent.act`` does: the same context estimates (``GreedyAgent._context``), the same scorer
per decision, the same weights (``params``: the keyword weights of ``GreedyAgent.__init__`` in
order, see ``PARAM_NAMES``) and the same fixed table of random altar completions
(``agents.greedy._CUM``, valued through its sign-pattern table ``_PATTERN_VALUES``). The
observation is read through the observation spec (``bali_env.engine.obs_spec``) and the rules
through the engine's kernels (``altar_values`` via the pattern table, ``majority_holder``,
``offering_price``, ``farmers_price``, ``shrine_points``, ``stone_points``). Only the tie-break
differs: actions scoring within 1e-9 of the best are drawn from a SplitMix64 stream
(``rng_state``) instead of NumPy's generator.

The Python agent's per-decision objects become two flat rows, like the engine's state:

- ``v`` (int64, ``V_*`` slots): the observation's counts (``decode_counts``) and the integers the
  context derives (favourite category, planned altar, random altar cards);
- ``x`` (float64, ``C_*`` slots): the context's estimates (turns left, shares, holdings now and at
  the end, category values, reward units) and the refill's per-card values.

Every ``score_*`` kernel writes the score of each legal action into ``scores`` (-inf elsewhere).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit

from bali_env.engine import numba_cache

# these kernels call the engine and read agents/greedy.py's tables as constants: recompile when either changes
numba_cache.cover(__file__, str(Path(__file__).with_name("greedy.py")))

from agents.greedy import _CUM, _MAX_RANDOM, _PAIR_A, _PAIR_B, _PAIR_POW, _PATTERN_VALUES  # noqa: E402
from bali_env.engine import (  # noqa: E402
    A_DISCARD_SHRINE,
    A_FARMER_CHOICE,
    A_OFFER_OWN,
    A_OFFER_SUPPLY,
    A_ORACLE_NONE,
    A_ORACLE_TAKE,
    A_PASS,
    A_PLAY_FARMERS,
    A_PLAY_PRIEST,
    A_PLAY_SHRINE,
    A_PLAY_STONECUTTER,
    A_REFILL,
    A_SHRINE_STONES,
    A_SHRINE_VP,
    A_TAKE_OFFERING,
    COLUMN_SIZE,
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
    FARMER,
    HAND_SIZE,
    MAX_PLAYERS,
    N_ACTIONS,
    N_CARD_TYPES,
    N_CATEGORIES,
    N_COLUMNS,
    N_DECISIONS,
    O_ALTAR_KNOWN,
    O_ALTAR_TOP,
    O_ALTAR_UNKNOWN,
    O_DECISION,
    O_DECK,
    O_DECK_CARDS,
    O_DEMON,
    O_MARKET,
    O_NUM_PLAYERS,
    O_SCORING_AMOUNT,
    O_SEATS,
    O_SUPPLY,
    ORACLE_WINDOW,
    PRIEST,
    SEAT_WIDTH,
    SHRINE,
    SHRINE_COST,
    SHRINE_POINTS,
    SO_HAND,
    SO_OFF_MAX,
    SO_OFF_MIN,
    SO_STONES,
    SO_TABLEAU,
    SO_VP,
    STONECUTTER,
    X_ALTAR,
    X_DECK,
    X_DECK_CARDS,
    X_HAND,
    X_OFFERINGS,
    X_SCORING_AMOUNT,
    X_STONES,
    X_SUPPLY,
    X_TABLEAU,
    X_VP,
    farmers_price,
    majority_holder,
    offering_price,
    rng_below,
    shrine_points,
    stone_points,
    obs_count,
    obs_one_hot,
)

# ----------------------------------------------------------------------------- weights
#: the keyword weights of ``GreedyAgent.__init__``, in order: ``params[i]`` is ``PARAM_NAMES[i]``
PARAM_NAMES = ("rival_weight", "stone_high", "stone_low", "stone_mid", "shrine_bonus", "project", "stone_complete",
               "rival_stone", "tempo", "future_altar", "discount")
P_RIVAL_WEIGHT, P_STONE_HIGH, P_STONE_LOW, P_STONE_MID, P_SHRINE_BONUS, P_PROJECT = 0, 1, 2, 3, 4, 5
P_STONE_COMPLETE, P_RIVAL_STONE, P_TEMPO, P_FUTURE_ALTAR, P_DISCOUNT = 6, 7, 8, 9, 10
N_PARAMS = len(PARAM_NAMES)

TIE_EPS = 1e-9  #: actions scoring within this of the best are ties (as in ``GreedyAgent.act``)
NO_ACTION = -1  #: the answer for a row without any legal action (a finished game)
NO_PUSH = (0.0, 0.0, 0.0, 0.0)  #: my offering cards: nothing given up

# ----------------------------------------------------------------------------- the tables (agents.greedy's own)
N_SAMPLES = _CUM.shape[0]
MAX_RANDOM = _MAX_RANDOM
CUM = _CUM  # [sample, m, category]: category counts of the first m random cards of a sample
PATTERN_VALUES = _PATTERN_VALUES  # [sign pattern of the 6 pairs, category]: the engine's altar values
PAIR_A, PAIR_B, PAIR_POW = _PAIR_A, _PAIR_B, _PAIR_POW  # the 6 category pairs (a < b) and 3**i
N_PAIRS = len(PAIR_A)

# ----------------------------------------------------------------------------- v: the integer row
V_N = 0  #: number of players
V_DECISION = 1  #: D_* (D_GAME_OVER when none is set)
V_DECK_SIZE = 2
V_DEMON_COL = 3  #: -1 without the demon
V_ALTAR_UNKNOWN = 4
V_AMOUNT = 5  #: what a pending scoring decision gives
V_FAVOURITE = 6  #: the category I push onto the altar
V_RANDOM = 7  #: random altar cards expected (unknown ones and the others' additions)
V_PLAN = 8  #: [category] known altar counts plus the cards I plan to put there
V_KNOWN = V_PLAN + N_CATEGORIES  #: [category] altar cards of known category
V_TOP = V_KNOWN + N_CATEGORIES  #: [depth] category of the altar card at that depth, -1 unknown
V_SUPPLY = V_TOP + ORACLE_WINDOW  #: [category]
V_DECK_CARDS = V_SUPPLY + N_CATEGORIES  #: [card id] cards left in the deck
V_COL_LEN = V_DECK_CARDS + N_CARD_TYPES  #: [column] cards in the column
V_MARKET = V_COL_LEN + N_COLUMNS  #: [column, slot] card ids, take order
V_TABLEAU = V_MARKET + N_COLUMNS * COLUMN_SIZE  #: [seat, card id]
V_HAND = V_TABLEAU + MAX_PLAYERS * N_CARD_TYPES  #: [seat, card id]
V_STONES = V_HAND + MAX_PLAYERS * N_CARD_TYPES  #: [seat]
V_VP = V_STONES + MAX_PLAYERS  #: [seat]
V_OFF_MIN = V_VP + MAX_PLAYERS  #: [seat, category]
V_OFF_MAX = V_OFF_MIN + MAX_PLAYERS * N_CATEGORIES  #: [seat, category]
V_COUNTS = V_OFF_MAX + MAX_PLAYERS * N_CATEGORIES  #: [seat] scratch: counts for the majority rule
V_SEQ = V_COUNTS + MAX_PLAYERS  #: [take] scratch: a sequence of refill columns
V_TAKEN = V_SEQ + HAND_SIZE  #: [column] scratch: cards taken from each column in a sequence
V_ALLOWED = V_TAKEN + N_COLUMNS  #: [k] the columns a later refill take may use
V_N_ALLOWED = V_ALLOWED + N_COLUMNS
V_SIZE = V_N_ALLOWED + 1

# ----------------------------------------------------------------------------- x: the float row
C_TURNS_LEFT = 0  #: turns still to be played by everybody (the current one included)
C_MY_TURNS = 1  #: of which mine
C_SHRINE_GAIN = 2  #: ``shrine_altar_gain`` once computed, NaN before
C_SHARE = 3  #: [card id] share among the cards still to come
C_UNITS = C_SHARE + N_CARD_TYPES  #: [card id] value to me of one scoring reward
C_RIVAL_UNITS = C_UNITS + N_CARD_TYPES  #: [card id] the same for the others
C_VALUES = C_RIVAL_UNITS + N_CARD_TYPES  #: [category] expected final category values
C_NOW_VALUES = C_VALUES + N_CATEGORIES  #: [category] category values if the game ended now
C_HELD = C_NOW_VALUES + N_CATEGORIES  #: [seat, category] offering cards now (others: middle of the bounds)
C_OFFERS = C_HELD + MAX_PLAYERS * N_CATEGORIES  #: [seat, category] expected at the end
C_CARD_VALUE = C_OFFERS + MAX_PLAYERS * N_CATEGORIES  #: [card id] refill: value of a card in my hand
C_SCORING = C_CARD_VALUE + N_CARD_TYPES  #: [card id] refill: relative value of one scoring
C_SIZE = C_SCORING + N_CARD_TYPES


@njit(cache=True, inline="always")
def v_tableau(seat, card):
    """Index in ``v`` of a seat's tableau count of ``card``."""
    return V_TABLEAU + seat * N_CARD_TYPES + card


@njit(cache=True, inline="always")
def v_hand(seat, card):
    """Index in ``v`` of a seat's hand count of ``card``."""
    return V_HAND + seat * N_CARD_TYPES + card


@njit(cache=True, inline="always")
def v_market(col, j):
    """Index in ``v`` of the card at slot ``j`` (take order) of column ``col``."""
    return V_MARKET + col * COLUMN_SIZE + j


@njit(cache=True, inline="always")
def c_held(seat, c):
    """Index in ``x`` of a seat's offering cards of category ``c`` now."""
    return C_HELD + seat * N_CATEGORIES + c


@njit(cache=True, inline="always")
def c_offers(seat, c):
    """Index in ``x`` of a seat's offering cards of category ``c`` expected at the end."""
    return C_OFFERS + seat * N_CATEGORIES + c


def new_workspace() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The scratch rows one decision needs: ``v``, ``x``, ``scores`` [44] and ``legal`` [44]."""
    return (np.zeros(V_SIZE, np.int64), np.zeros(C_SIZE, np.float64), np.zeros(N_ACTIONS, np.float64),
            np.zeros(N_ACTIONS, np.int64))


# ----------------------------------------------------------------------------- reading the observation
@njit(cache=True)
def decode_seats(obs, n, v):
    """Hands, tableaus, stones, VP tokens and offering bounds of the ``n`` seats (observer first)."""
    for q in range(n):
        b = O_SEATS + q * SEAT_WIDTH
        for k in range(N_CARD_TYPES):
            v[v_hand(q, k)] = obs_count(obs, b + SO_HAND + k, X_HAND)
            v[v_tableau(q, k)] = obs_count(obs, b + SO_TABLEAU + k, X_TABLEAU)
        v[V_STONES + q] = obs_count(obs, b + SO_STONES, X_STONES)
        v[V_VP + q] = obs_count(obs, b + SO_VP, X_VP)
        for c in range(N_CATEGORIES):
            v[V_OFF_MIN + q * N_CATEGORIES + c] = obs_count(obs, b + SO_OFF_MIN + c, X_OFFERINGS)
            v[V_OFF_MAX + q * N_CATEGORIES + c] = obs_count(obs, b + SO_OFF_MAX + c, X_OFFERINGS)


@njit(cache=True)
def decode_market(obs, v):
    """The market's columns as card ids in take order (empty slots skipped) and their lengths."""
    for col in range(N_COLUMNS):
        k = 0
        for j in range(COLUMN_SIZE):
            card = obs_one_hot(obs, O_MARKET + (col * COLUMN_SIZE + j) * N_CARD_TYPES, N_CARD_TYPES)
            if card >= 0:
                v[v_market(col, k)] = card
                k += 1
        v[V_COL_LEN + col] = k


@njit(cache=True)
def decode_counts(obs, v):
    """What ``bali_env.decode_observation`` gives the greedy agent, as integers in ``v``."""
    n = obs_one_hot(obs, O_NUM_PLAYERS, 3) + 2
    v[V_N] = n
    d = obs_one_hot(obs, O_DECISION, N_DECISIONS)
    v[V_DECISION] = D_GAME_OVER if d < 0 else d
    v[V_DECK_SIZE] = obs_count(obs, O_DECK, X_DECK)
    v[V_DEMON_COL] = obs_one_hot(obs, O_DEMON, N_COLUMNS)
    v[V_ALTAR_UNKNOWN] = obs_count(obs, O_ALTAR_UNKNOWN, X_ALTAR)
    v[V_AMOUNT] = obs_count(obs, O_SCORING_AMOUNT, X_SCORING_AMOUNT)
    for c in range(N_CATEGORIES):
        v[V_KNOWN + c] = obs_count(obs, O_ALTAR_KNOWN + c, X_ALTAR)
        v[V_SUPPLY + c] = obs_count(obs, O_SUPPLY + c, X_SUPPLY)
    for depth in range(ORACLE_WINDOW):
        v[V_TOP + depth] = obs_one_hot(obs, O_ALTAR_TOP + depth * N_CATEGORIES, N_CATEGORIES)
    for k in range(N_CARD_TYPES):
        v[V_DECK_CARDS + k] = obs_count(obs, O_DECK_CARDS + k, X_DECK_CARDS)
    decode_seats(obs, n, v)
    decode_market(obs, v)


# ----------------------------------------------------------------------------- altar values
@njit(cache=True, inline="always")
def pattern_key(counts):
    """Row of ``PATTERN_VALUES`` for 4 category counts: the signs of the 6 pairwise differences."""
    key = 0
    for i in range(N_PAIRS):
        a = counts[PAIR_A[i]]
        b = counts[PAIR_B[i]]
        key += (1 + (b > a) - (b < a)) * PAIR_POW[i]
    return key


@njit(cache=True)
def expected_values(known, random_cards):
    """Expected category values (a 4-tuple) of the altars ``known`` + the first ``random_cards``
    random cards of each sample of ``CUM``: the mean over the samples, as in
    ``agents.greedy._expected_values`` (integer sums, so the same floats)."""
    m = min(random_cards, MAX_RANDOM)
    t0 = t1 = t2 = t3 = 0
    for s in range(N_SAMPLES):
        counts = (known[0] + CUM[s, m, 0], known[1] + CUM[s, m, 1], known[2] + CUM[s, m, 2],
                  known[3] + CUM[s, m, 3])
        key = pattern_key(counts)
        t0 += PATTERN_VALUES[key, 0] if counts[0] > 0 else 0
        t1 += PATTERN_VALUES[key, 1] if counts[1] > 0 else 0
        t2 += PATTERN_VALUES[key, 2] if counts[2] > 0 else 0
        t3 += PATTERN_VALUES[key, 3] if counts[3] > 0 else 0
    return (t0 / N_SAMPLES, t1 / N_SAMPLES, t2 / N_SAMPLES, t3 / N_SAMPLES)


@njit(cache=True)
def altar_score(v, x, params, change, mine, more_random):
    """``GreedyAgent._altar_score``: my expected final offering score minus the weighted mean of
    the others' when the 4 counts ``change`` join the planned altar, ``more_random`` more random
    cards land there and I end up holding ``mine`` (a 4-tuple)."""
    known = (max(0, v[V_PLAN] + change[0]), max(0, v[V_PLAN + 1] + change[1]),
             max(0, v[V_PLAN + 2] + change[2]), max(0, v[V_PLAN + 3] + change[3]))
    values = expected_values(known, v[V_RANDOM] + more_random)
    own = 0.0
    for c in range(N_CATEGORIES):
        own += mine[c] * values[c]
    n = v[V_N]
    others = 0.0
    for q in range(1, n):
        row = 0.0
        for c in range(N_CATEGORIES):
            row += x[c_offers(q, c)] * values[c]
        others += row
    others = others / (n - 1)
    return own - params[P_RIVAL_WEIGHT] * others


@njit(cache=True, inline="always")
def my_offers(x, push):
    """My expected final offering cards minus the 4 counts ``push`` (a 4-tuple of floats)."""
    return (x[c_offers(0, 0)] - push[0], x[c_offers(0, 1)] - push[1], x[c_offers(0, 2)] - push[2],
            x[c_offers(0, 3)] - push[3])


@njit(cache=True, inline="always")
def one_card(c):
    """The 4 counts of one card of category ``c`` (all 0 for ``c`` outside 0..3)."""
    return (1 if c == 0 else 0, 1 if c == 1 else 0, 1 if c == 2 else 0, 1 if c == 3 else 0)


@njit(cache=True, inline="always")
def no_card():
    """The 4 counts of no card (typed int64 like ``one_card``'s: one compiled ``altar_score``)."""
    zero = np.int64(0)
    return (zero, zero, zero, zero)


@njit(cache=True)
def shrine_altar_gain(v, x, params):
    """``_Ctx.shrine_altar_gain``: relative offering points one more shrine of mine brings (my
    favourite category gets two cards, each other player loses one at random). Cached in ``x``."""
    if not np.isnan(x[C_SHRINE_GAIN]):
        return x[C_SHRINE_GAIN]
    fav = v[V_FAVOURITE]
    fc = one_card(fav)
    used = 1.0 if x[c_held(0, fav)] > 0 else 0.0  # my face-down card, if I hold one of that category
    mine = my_offers(x, (used * fc[0], used * fc[1], used * fc[2], used * fc[3]))
    change = (2 * fc[0], 2 * fc[1], 2 * fc[2], 2 * fc[3])
    without = altar_score(v, x, params, no_card(), my_offers(x, NO_PUSH), np.int64(0))
    gain = altar_score(v, x, params, change, mine, v[V_N] - 1) - without
    mean_value = 0.0
    for c in range(N_CATEGORIES):
        mean_value += x[C_VALUES + c]
    others_loss = params[P_RIVAL_WEIGHT] * (mean_value / N_CATEGORIES)
    x[C_SHRINE_GAIN] = gain + others_loss
    return x[C_SHRINE_GAIN]


# ----------------------------------------------------------------------------- stones, rewards, tableaus
@njit(cache=True)
def stone_worth(x, params, stones, shrines):
    """``GreedyAgent._stone_worth``: what holding ``stones`` stones is worth with ``shrines``
    shrines in hand (dear while a shrine needs them, 1 point per 5 in my last turn)."""
    my_turns = x[C_MY_TURNS]
    if my_turns < 1:
        return float(stone_points(stones))
    low = params[P_STONE_LOW]
    target, high = 0, low
    if shrines > 0:
        target, high = SHRINE_COST * min(shrines, 2), params[P_STONE_HIGH]
    elif x[C_SHARE + SHRINE] > 0 and my_turns >= 3:
        target, high = SHRINE_COST, params[P_STONE_MID]
    urgency = min(1.0, my_turns / 3.0)
    high = low + (high - low) * urgency
    affordable = min(shrines, stones // SHRINE_COST)
    return low * stones + (high - low) * min(stones, target) + params[P_STONE_COMPLETE] * urgency * affordable


@njit(cache=True)
def stone_delta(v, x, params, delta):
    """The value of gaining (negative: paying) ``delta`` stones now."""
    stones = v[V_STONES]
    shrines = v[v_hand(0, SHRINE)]
    return stone_worth(x, params, stones + delta, shrines) - stone_worth(x, params, stones, shrines)


@njit(cache=True, inline="always")
def seat_reward(v, card, seat, bonus):
    """A seat's reward when ``card`` is scored, for the counts in ``v[V_COUNTS:]``: one per card
    (one in all for farmers), plus one for the majority holder ``bonus``."""
    k = v[V_COUNTS + seat]
    base = (1 if k >= 1 else 0) if card >= FARMER else k
    return base + (1 if seat == bonus else 0)


@njit(cache=True)
def load_counts(v, card, mine):
    """Put every seat's tableau count of ``card`` in ``v[V_COUNTS:]`` (mine: ``mine``) and return
    the majority holder (``majority_holder``), or -1."""
    n = v[V_N]
    for q in range(1, n):
        v[V_COUNTS + q] = v[v_tableau(q, card)]
    v[V_COUNTS] = mine
    return majority_holder(v[V_COUNTS:V_COUNTS + MAX_PLAYERS], n)


@njit(cache=True)
def scoring_gain(v, x, params, card, mine):
    """``GreedyAgent._scoring_gain``: relative value of one scoring of ``card`` when I hold
    ``mine`` of them (the others: their tableaus)."""
    n = v[V_N]
    bonus = load_counts(v, card, mine)
    others = 0
    for q in range(1, n):
        others += seat_reward(v, card, q, bonus)
    mine = seat_reward(v, card, 0, bonus) * x[C_UNITS + card]
    return mine - params[P_RIVAL_WEIGHT] * x[C_RIVAL_UNITS + card] * others / (n - 1)


@njit(cache=True)
def tableau_gain(v, x, params, card, k, turns):
    """``GreedyAgent._tableau_gain``: value of ``k`` more ``card`` in my tableau with ``turns``
    turns left (income and majorities; farmers: cheaper purchases; a shrine: points and altar)."""
    mine = v[v_tableau(0, card)]
    scorings = turns * x[C_SHARE + card]
    gain = (scoring_gain(v, x, params, card, mine + k) - scoring_gain(v, x, params, card, mine)) * scorings
    if card >= FARMER:
        cheaper = offering_price(mine) - offering_price(mine + k)
        gain += cheaper * params[P_DISCOUNT] * (turns / v[V_N]) * x[C_VALUES + card - FARMER] / 3.0
    if card == SHRINE:
        gain += SHRINE_POINTS + params[P_SHRINE_BONUS] + max(0.0, shrine_altar_gain(v, x, params))
    return gain


# ----------------------------------------------------------------------------- the context
@njit(cache=True)
def fill_shares(v, x):
    """Shares of the card types among the cards still to come (deck and market); returns how many
    cards are still to come."""
    total = 0
    for k in range(N_CARD_TYPES):
        to_come = v[V_DECK_CARDS + k]
        for col in range(N_COLUMNS):
            for j in range(v[V_COL_LEN + col]):
                to_come += v[v_market(col, j)] == k
        x[C_SHARE + k] = to_come
        total += to_come
    for k in range(N_CARD_TYPES):
        x[C_SHARE + k] = x[C_SHARE + k] / max(1, total)
    return total


@njit(cache=True)
def fill_holdings(v, x, params):
    """Offering cards everybody holds now (mine exact, the others' the middle of their bounds) and
    at the end (plus the farmer scorings to come, ``project``-weighted)."""
    n = v[V_N]
    for q in range(n):
        for c in range(N_CATEGORIES):
            low = v[V_OFF_MIN + q * N_CATEGORIES + c]
            held = float(low) if q == 0 else (low + v[V_OFF_MAX + q * N_CATEGORIES + c]) / 2.0
            x[c_held(q, c)] = held
            x[c_offers(q, c)] = held
    for c in range(N_CATEGORIES):
        bonus = load_counts(v, FARMER + c, v[v_tableau(0, FARMER + c)])
        factor = params[P_PROJECT] * x[C_TURNS_LEFT] * x[C_SHARE + FARMER + c]
        for q in range(n):
            x[c_offers(q, c)] += factor * seat_reward(v, FARMER + c, q, bonus)


@njit(cache=True)
def favourite_category(v, x):
    """The category I hold most of at the end (having its farmer, then the lowest id, breaks ties)."""
    best = 0
    for c in range(1, N_CATEGORIES):
        more = x[c_offers(0, c)] > x[c_offers(0, best)]
        same = x[c_offers(0, c)] == x[c_offers(0, best)]
        if more or (same and v[v_tableau(0, FARMER + c)] > 0 and v[v_tableau(0, FARMER + best)] == 0):
            best = c
    return best


@njit(cache=True)
def planned_shrines(v, x):
    """Shrines in my hand I can still afford with my stones and stonecutter income."""
    if x[C_MY_TURNS] < 1:
        return 0
    income = v[v_tableau(0, STONECUTTER)] * x[C_TURNS_LEFT] * x[C_SHARE + STONECUTTER]
    return min(v[v_hand(0, SHRINE)], int((v[V_STONES] + income) // SHRINE_COST))


@njit(cache=True)
def random_altar_cards(v, x, params, planned):
    """Random altar cards expected: the unknown ones, the others' face-up cards on my planned
    shrines, their own likely shrines and the shrines not in sight yet."""
    n = v[V_N]
    others_sh = 0
    for j in range(1, n):
        others_sh += min(v[v_hand(j, SHRINE)], int((v[V_STONES + j] + 2 * x[C_MY_TURNS]) // SHRINE_COST))
    unseen = params[P_FUTURE_ALTAR] * min(1.0, x[C_TURNS_LEFT] / 40.0)
    return int(v[V_ALTAR_UNKNOWN] + (n - 1) * planned + 0.5 * others_sh * (n + 1) + unseen)


@njit(cache=True)
def fill_values(v, x, planned):
    """The category values if the game ended now and expected at the end (planned altar)."""
    known = (v[V_KNOWN], v[V_KNOWN + 1], v[V_KNOWN + 2], v[V_KNOWN + 3])
    now = expected_values(known, v[V_ALTAR_UNKNOWN])
    for c in range(N_CATEGORIES):
        x[C_NOW_VALUES + c] = now[c]
        v[V_PLAN + c] = v[V_KNOWN + c] + (2 * planned if c == v[V_FAVOURITE] else 0)
    plan = (v[V_PLAN], v[V_PLAN + 1], v[V_PLAN + 2], v[V_PLAN + 3])
    values = expected_values(plan, v[V_RANDOM])
    for c in range(N_CATEGORIES):
        x[C_VALUES + c] = values[c]


@njit(cache=True)
def fill_context(v, x, params):
    """``GreedyAgent._context`` into ``v`` and ``x`` (after ``decode_counts``): turns left, shares,
    holdings, the favourite category, the planned altar, category values and reward units."""
    n = v[V_N]
    total = fill_shares(v, x)
    x[C_TURNS_LEFT] = max(1.0, (total - 10) / 1.05)
    x[C_MY_TURNS] = x[C_TURNS_LEFT] / n
    x[C_SHRINE_GAIN] = np.nan
    planned = planned_shrines(v, x)
    fill_holdings(v, x, params)
    v[V_FAVOURITE] = favourite_category(v, x)
    v[V_RANDOM] = random_altar_cards(v, x, params, planned)
    fill_values(v, x, planned)
    stone = max(params[P_STONE_LOW], stone_delta(v, x, params, np.int64(5)) / 5)
    x[C_UNITS + STONECUTTER] = stone
    x[C_UNITS + PRIEST] = 1.0
    x[C_UNITS + SHRINE] = max(1.0, stone)
    x[C_RIVAL_UNITS + STONECUTTER] = params[P_RIVAL_STONE]
    x[C_RIVAL_UNITS + PRIEST] = 1.0
    x[C_RIVAL_UNITS + SHRINE] = 1.0
    for c in range(N_CATEGORIES):
        x[C_UNITS + FARMER + c] = x[C_VALUES + c]
        x[C_RIVAL_UNITS + FARMER + c] = x[C_VALUES + c]


# ----------------------------------------------------------------------------- decisions
@njit(cache=True)
def score_take_offering(v, x, params, mask, scores):
    """Phase 1: a card's expected final value plus the value of the stones it costs; pass 0."""
    scores[A_PASS] = 0.0
    for c in range(N_CATEGORIES):
        if mask[A_TAKE_OFFERING + c]:
            cost = offering_price(v[v_tableau(0, FARMER + c)])
            scores[A_TAKE_OFFERING + c] = x[C_VALUES + c] + stone_delta(v, x, params, -cost)


@njit(cache=True)
def play_score(v, x, params, a):
    """The score of one play action ``a`` (5..19; see ``score_play``)."""
    turns = x[C_TURNS_LEFT]
    if a >= A_PLAY_FARMERS:
        card = FARMER + (a - A_PLAY_FARMERS) // 3
        k = (a - A_PLAY_FARMERS) % 3 + 1
        return (tableau_gain(v, x, params, card, k, turns)
                + stone_delta(v, x, params, -farmers_price(k)) + params[P_TEMPO] * (k - 1))
    card = SHRINE if a == A_PLAY_SHRINE else (PRIEST if a == A_PLAY_PRIEST else STONECUTTER)
    gain = tableau_gain(v, x, params, card, np.int64(1), turns)
    return gain - SHRINE_COST * params[P_STONE_LOW] if card == SHRINE else gain


@njit(cache=True)
def score_play(v, x, params, mask, scores):
    """Phase 2a: the tableau gain of each playable card (shrine: less its stones at their end
    worth; k farmers at once: less their stones, plus ``tempo`` per extra farmer)."""
    for a in range(A_PLAY_STONECUTTER, A_DISCARD_SHRINE):
        if mask[a]:
            scores[a] = play_score(v, x, params, a)
    if mask[A_DISCARD_SHRINE]:
        scores[A_DISCARD_SHRINE] = -10.0


@njit(cache=True)
def score_offer_face_up(v, x, params, mask, scores):
    """Someone else's shrine: the relative final offering score after giving up each card."""
    for c in range(N_CATEGORIES):
        if mask[A_OFFER_OWN + c]:
            push = one_card(c)
            scores[A_OFFER_OWN + c] = altar_score(v, x, params, push, my_offers(x, push), np.int64(0))


@njit(cache=True)
def score_offer_face_down(v, x, params, mask, scores):
    """My shrine, my own card face down: the best of it together with each supply card (or none
    when the supply is empty)."""
    any_supply = False
    for e in range(N_CATEGORIES):
        any_supply = any_supply or v[V_SUPPLY + e] > 0
    for c in range(N_CATEGORIES):
        if not mask[A_OFFER_OWN + c]:
            continue
        push = one_card(c)
        mine = my_offers(x, push)
        best = -np.inf
        for e in range(N_CATEGORIES + 1):
            if (e < N_CATEGORIES and v[V_SUPPLY + e] > 0) or (e == N_CATEGORIES and not any_supply):
                extra = one_card(e)
                change = (push[0] + extra[0], push[1] + extra[1], push[2] + extra[2], push[3] + extra[3])
                best = max(best, altar_score(v, x, params, change, mine, np.int64(0)))
        scores[A_OFFER_OWN + c] = best


@njit(cache=True)
def score_offer_supply(v, x, params, mask, scores):
    """My shrine, a supply card face up: the relative final offering score after each push."""
    for c in range(N_CATEGORIES):
        if mask[A_OFFER_SUPPLY + c]:
            scores[A_OFFER_SUPPLY + c] = altar_score(v, x, params, one_card(c), my_offers(x, NO_PUSH), np.int64(0))


@njit(cache=True)
def score_oracle(v, x, params, mask, scores):
    """An oracle peek: taking each known window card (it leaves the altar for my offerings), or none."""
    scores[A_ORACLE_NONE] = altar_score(v, x, params, no_card(), my_offers(x, NO_PUSH), np.int64(0))
    for depth in range(ORACLE_WINDOW):
        c = v[V_TOP + depth]
        if mask[A_ORACLE_TAKE + depth] and c >= 0:
            card = one_card(c)
            gained = my_offers(x, (-1.0 * card[0], -1.0 * card[1], -1.0 * card[2], -1.0 * card[3]))
            scores[A_ORACLE_TAKE + depth] = altar_score(v, x, params, (-card[0], -card[1], -card[2], -card[3]),
                                                        gained, np.int64(0))


@njit(cache=True)
def score_shrine_reward(v, x, params, mask, scores):
    """Shrine scoring: the stones at their current worth against the VP."""
    amount = max(1, v[V_AMOUNT])
    scores[A_SHRINE_STONES] = stone_delta(v, x, params, amount)
    scores[A_SHRINE_VP] = float(amount)


@njit(cache=True)
def score_farmer_choice(v, x, params, mask, scores):
    """The scored category is empty: each category's expected final value."""
    for c in range(N_CATEGORIES):
        if mask[A_FARMER_CHOICE + c]:
            scores[A_FARMER_CHOICE + c] = x[C_VALUES + c]


# ----------------------------------------------------------------------------- refill
@njit(cache=True)
def hand_value(v, x, params, card):
    """``GreedyAgent._hand_value``: a market card's worth in my hand (its tableau gain next turn; a
    shrine as far as I can afford it, less for each shrine already waiting)."""
    turns = max(0.0, x[C_TURNS_LEFT] - v[V_N])
    if card != SHRINE:
        return tableau_gain(v, x, params, card, np.int64(1), turns) if x[C_MY_TURNS] > 1 else 0.0
    waiting = v[v_hand(0, SHRINE)] + 1
    stones = v[V_STONES]
    income = v[v_tableau(0, STONECUTTER)] * x[C_TURNS_LEFT] * x[C_SHARE + STONECUTTER]
    afford = min(1.0, max(0.0, (stones + income - SHRINE_COST * (waiting - 1)) / (SHRINE_COST * waiting)))
    if x[C_MY_TURNS] <= 1:
        afford = 1.0 if stones >= SHRINE_COST * waiting else 0.0
    return afford * (tableau_gain(v, x, params, card, np.int64(1), turns) - SHRINE_COST * params[P_STONE_LOW])


@njit(cache=True)
def end_now_value(v, x):
    """``GreedyAgent._end_now_value``: my lead if the game ended now, plus 10 for a win (else -10)."""
    n = v[V_N]
    mine = 0.0
    best_other = -np.inf
    for q in range(n):
        held = 0.0
        for c in range(N_CATEGORIES):
            held += x[c_held(q, c)] * x[C_NOW_VALUES + c]
        score = (v[V_VP + q] + shrine_points(v[v_tableau(q, SHRINE)]) + stone_points(v[V_STONES + q])) + held
        if q == 0:
            mine = score
        else:
            best_other = max(best_other, score)
    lead = mine - best_other
    return lead + (10.0 if lead > 0 else -10.0)


@njit(cache=True)
def take_sequence(v, x, takes, mean_card, mean_scoring, end_value):
    """``GreedyAgent._take_sequence``: value of taking from the columns ``v[V_SEQ:V_SEQ+takes]`` in
    order (hand values of the cards, the relative scoring of the card the last take reveals)."""
    for col in range(N_COLUMNS):
        v[V_TAKEN + col] = 0
    fresh = 0  # bit col: column dealt anew, its cards unknown (valued at the deck's mean)
    total = 0.0
    shrines = v[v_hand(0, SHRINE)]
    for t in range(takes):
        col = v[V_SEQ + t]
        if (fresh >> col) & 1 or v[V_COL_LEN + col] == 0:
            total += mean_card
            continue
        card = v[v_market(col, v[V_TAKEN + col])]
        v[V_TAKEN + col] += 1
        total += x[C_CARD_VALUE + card]
        shrines += card == SHRINE
        if v[V_TAKEN + col] == v[V_COL_LEN + col]:
            if v[V_DECK_SIZE] <= COLUMN_SIZE:
                return end_value  # the game ends at once, without phase 4
            fresh |= 1 << col
    last = v[V_SEQ + takes - 1]
    if (fresh >> last) & 1 or v[V_COL_LEN + last] == 0:
        total += mean_scoring
    else:
        total += x[C_SCORING + v[v_market(last, v[V_TAKEN + last])]]
    if shrines >= HAND_SIZE and v[V_STONES] < SHRINE_COST:
        total -= 6.0  # a hand of three shrines forces a discard
    return total


@njit(cache=True)
def fill_refill_values(v, x, params):
    """Per card id, its hand value and the relative value of one scoring of it; returns the deck's
    mean of each (0 for an empty deck)."""
    in_deck = 0
    mean_card = 0.0
    mean_scoring = 0.0
    for card in range(N_CARD_TYPES):
        x[C_CARD_VALUE + card] = hand_value(v, x, params, card)
        x[C_SCORING + card] = scoring_gain(v, x, params, card, v[v_tableau(0, card)])
        in_deck += v[V_DECK_CARDS + card]
    for card in range(N_CARD_TYPES):
        mean_card += v[V_DECK_CARDS + card] * x[C_CARD_VALUE + card]
        mean_scoring += v[V_DECK_CARDS + card] * x[C_SCORING + card]
    if in_deck == 0:
        return 0.0, 0.0
    return mean_card / in_deck, mean_scoring / in_deck


@njit(cache=True)
def best_sequence_from(v, x, first, takes, mean_card, mean_scoring, end_value):
    """The best ``take_sequence`` that starts with column ``first`` (later takes: every column but
    the demon's)."""
    n_allowed = v[V_N_ALLOWED]
    combos = 1
    for _ in range(takes - 1):
        combos *= n_allowed
    best = -np.inf
    v[V_SEQ] = first
    for i in range(combos):
        rest = i
        for t in range(1, takes):
            v[V_SEQ + t] = v[V_ALLOWED + rest % n_allowed]
            rest //= n_allowed
        best = max(best, take_sequence(v, x, takes, mean_card, mean_scoring, end_value))
    return best


@njit(cache=True)
def score_refill(v, x, params, mask, scores):
    """Phase 3: each column scores the best sequence of the takes still to make that starts with
    it; emptying a column with 4 or fewer cards in the deck ends the game (``end_now_value``)."""
    cards = 0
    for k in range(N_CARD_TYPES):
        cards += v[v_hand(0, k)]
    takes = max(1, HAND_SIZE - cards)
    n_allowed = 0
    for col in range(N_COLUMNS):
        if col != v[V_DEMON_COL]:
            v[V_ALLOWED + n_allowed] = col
            n_allowed += 1
    v[V_N_ALLOWED] = n_allowed
    mean_card, mean_scoring = fill_refill_values(v, x, params)
    end_value = end_now_value(v, x) if v[V_DECK_SIZE] <= COLUMN_SIZE else 0.0
    for col in range(N_COLUMNS):
        if mask[A_REFILL + col]:
            scores[A_REFILL + col] = best_sequence_from(v, x, col, takes, mean_card, mean_scoring, end_value)


# ----------------------------------------------------------------------------- deciding
@njit(cache=True)
def score_decision(v, x, params, mask, scores):
    """Score the legal actions of the decision in ``v`` (after ``fill_context``); False for a
    decision without a scorer (game over)."""
    d = v[V_DECISION]
    if d == D_TAKE_OFFERING:
        score_take_offering(v, x, params, mask, scores)
    elif d == D_PLAY:
        score_play(v, x, params, mask, scores)
    elif d == D_OFFER_FACE_UP:
        score_offer_face_up(v, x, params, mask, scores)
    elif d == D_OFFER_FACE_DOWN:
        score_offer_face_down(v, x, params, mask, scores)
    elif d == D_OFFER_SUPPLY:
        score_offer_supply(v, x, params, mask, scores)
    elif d == D_REFILL:
        score_refill(v, x, params, mask, scores)
    elif d == D_ORACLE:
        score_oracle(v, x, params, mask, scores)
    elif d == D_SHRINE_REWARD:
        score_shrine_reward(v, x, params, mask, scores)
    elif d == D_FARMER_CHOICE:
        score_farmer_choice(v, x, params, mask, scores)
    else:
        return False
    return True


@njit(cache=True)
def greedy_scores(obs, mask, params, v, x, scores):
    """The heuristic's score of every legal action of one observation into ``scores`` (-inf for
    the others); returns the decision id (``D_*``). ``v``, ``x``: scratch rows (``new_workspace``)."""
    scores[:] = -np.inf
    decode_counts(obs, v)
    fill_context(v, x, params)
    score_decision(v, x, params, mask, scores)
    return v[V_DECISION]


@njit(cache=True)
def pick_best(mask, scores, rng_state, legal):
    """The legal action with the best score; ties (within ``TIE_EPS``) drawn with ``rng_below``."""
    best = -np.inf
    for a in range(N_ACTIONS):
        if mask[a] and scores[a] > best:
            best = scores[a]
    count = 0
    for a in range(N_ACTIONS):
        if mask[a] and scores[a] >= best - TIE_EPS:
            legal[count] = a
            count += 1
    if count == 1:
        return legal[0]
    return legal[rng_below(rng_state, count)]


@njit(cache=True)
def greedy_decide(obs, mask, params, rng_state, v, x, scores, legal):
    """``GreedyAgent.act`` for one observation: a single legal action is returned as it is, a
    decision without a scorer gets a random legal action, otherwise the best-scoring one.
    ``NO_ACTION`` when nothing is legal. ``v``, ``x``, ``scores``, ``legal``: ``new_workspace()``."""
    count = 0
    for a in range(N_ACTIONS):
        if mask[a]:
            legal[count] = a
            count += 1
    if count <= 1:
        return legal[0] if count == 1 else NO_ACTION
    scores[:] = -np.inf
    decode_counts(obs, v)
    if v[V_DECISION] == D_GAME_OVER:
        return legal[rng_below(rng_state, count)]
    fill_context(v, x, params)
    score_decision(v, x, params, mask, scores)
    return pick_best(mask, scores, rng_state, legal)


@njit(cache=True)
def greedy_decide_batch(obs, masks, params, rng_state, out):
    """The greedy heuristic's action for every row: ``obs`` float32[N, OBS_DIM], ``masks``
    int8[N, N_ACTIONS], ``params`` float64[N_PARAMS] (``PARAM_NAMES``), ``rng_state`` uint64[1]
    (one tie-break stream for the batch, advanced) or uint64[N] (a stream per row: row i's
    choice then depends on row i only), ``out`` int64[N] (``NO_ACTION`` for a row without a
    legal action)."""
    v = np.zeros(V_SIZE, np.int64)
    x = np.zeros(C_SIZE, np.float64)
    scores = np.zeros(N_ACTIONS, np.float64)
    legal = np.zeros(N_ACTIONS, np.int64)
    per_row = rng_state.shape[0] > 1
    for i in range(obs.shape[0]):
        stream = rng_state[i : i + 1] if per_row else rng_state[0:1]
        out[i] = greedy_decide(obs[i], masks[i], params, stream, v, x, scores, legal)
