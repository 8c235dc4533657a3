"""The greedy heuristic's context: what every decision needs, read and estimated once per observation.

The engine's decoder (``bali_env.engine.decode_counts``) reads the observation into the integer
row ``v``; ``fill_context`` then estimates, into the float row ``x`` (slots:
``bali_env.bots.greedy.slots``):

- turns left (random play takes about one card a turn and the game ends about 10 cards before the
  deck and market run out, measured) and the share of each card type among the cards to come;
- offering cards held now (mine exact, the others' the middle of their bounds) and at the end
  (plus the farmer scorings to come), the favourite category I push onto the altar, the planned
  altar (two cards of it per shrine in hand I can afford) and how many random cards will join it;
- the expected final category values (``altar.expected_values``) and the value of one scoring
  reward of each card type, to me and to the others.

The value kernels every scorer shares live here too: ``stone_worth`` / ``stone_delta`` (stones
are dear while a shrine in hand needs them), ``scoring_gain`` (one scoring of a card type, majority
bonus included) and ``tableau_gain`` (more cards of a type in my tableau).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bali_env.engine import (
    FARMER,
    MAX_PLAYERS,
    N_CARD_TYPES,
    N_CATEGORIES,
    N_COLUMNS,
    PRIEST,
    SHRINE,
    SHRINE_COST,
    SHRINE_POINTS,
    STONECUTTER,
    majority_holder,
    numba_cache,
    offering_price,
    stone_points,
)

from bali_env.bots.greedy.altar import expected_values, shrine_altar_gain
from bali_env.bots.greedy.slots import (
    C_MY_TURNS,
    C_NOW_VALUES,
    C_RIVAL_UNITS,
    C_SHARE,
    C_SHRINE_GAIN,
    C_TURNS_LEFT,
    C_UNITS,
    C_VALUES,
    KERNEL_FILES,
    P_DISCOUNT,
    P_FUTURE_ALTAR,
    P_PROJECT,
    P_RIVAL_STONE,
    P_RIVAL_WEIGHT,
    P_SHRINE_BONUS,
    P_STONE_COMPLETE,
    P_STONE_HIGH,
    P_STONE_LOW,
    P_STONE_MID,
    V_ALTAR_UNKNOWN,
    V_COL_LEN,
    V_COUNTS,
    V_DECK_CARDS,
    V_FAVOURITE,
    V_KNOWN,
    V_N,
    V_PLAN,
    V_RANDOM,
    V_STONES,
    hand,
    held,
    market,
    offerings_max,
    offerings_min,
    offers,
    tableau,
)

numba_cache.cover(__file__, *KERNEL_FILES)



# ----------------------------------------------------------------------------- stones
@njit(cache=True)
def stone_worth(x, params, stones, shrines):
    """What holding ``stones`` stones is worth with ``shrines`` shrines in hand: each stone that a
    shrine in hand still needs (7 per shrine, up to 2) is worth ``stone_high``, and one that
    completes a shrine ``stone_complete`` more; with no shrine in hand, 7 stones are saved at
    ``stone_mid`` for one to come; any other stone is worth ``stone_low``. The saving fades over my
    last 3 turns; in my last turn a stone counts exactly (1 point per 5)."""
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
    affordable = min(shrines, stones // SHRINE_COST)  # shrines in hand I can pay for
    return low * stones + (high - low) * min(stones, target) + params[P_STONE_COMPLETE] * urgency * affordable


@njit(cache=True)
def stone_delta(v, x, params, delta):
    """The value of gaining (negative: paying) ``delta`` stones now."""
    stones = v[V_STONES]
    shrines = v[hand(0, SHRINE)]
    return stone_worth(x, params, stones + delta, shrines) - stone_worth(x, params, stones, shrines)


# ----------------------------------------------------------------------------- scorings and tableaus
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
    the majority holder (the engine's ``majority_holder``: strictly ahead with at least 2), or -1."""
    n = v[V_N]
    for q in range(1, n):
        v[V_COUNTS + q] = v[tableau(q, card)]
    v[V_COUNTS] = mine
    return majority_holder(v[V_COUNTS:V_COUNTS + MAX_PLAYERS], n)


@njit(cache=True)
def scoring_gain(v, x, params, card, mine):
    """Relative value of one scoring of ``card`` when I hold ``mine`` of them (the others: their
    tableaus): my reward minus ``rival_weight`` x the others' mean reward, in points."""
    n = v[V_N]
    bonus = load_counts(v, card, mine)
    others = 0
    for q in range(1, n):
        others += seat_reward(v, card, q, bonus)
    mine = seat_reward(v, card, 0, bonus) * x[C_UNITS + card]
    return mine - params[P_RIVAL_WEIGHT] * x[C_RIVAL_UNITS + card] * others / (n - 1)


@njit(cache=True)
def tableau_gain(v, x, params, card, k, turns):
    """Value of ``k`` more ``card`` in my tableau with ``turns`` turns left: the change of its
    relative income (expected scorings x reward, majorities included) plus, for farmers, cheaper
    phase-1 purchases and, for a shrine, its 4 points and the altar control it brings."""
    mine = v[tableau(0, card)]
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
                to_come += v[market(col, j)] == k
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
            low = v[offerings_min(q, c)]
            now = float(low) if q == 0 else (low + v[offerings_max(q, c)]) / 2.0
            x[held(q, c)] = now
            x[offers(q, c)] = now
    for c in range(N_CATEGORIES):
        bonus = load_counts(v, FARMER + c, v[tableau(0, FARMER + c)])
        factor = params[P_PROJECT] * x[C_TURNS_LEFT] * x[C_SHARE + FARMER + c]
        for q in range(n):
            x[offers(q, c)] += factor * seat_reward(v, FARMER + c, q, bonus)


@njit(cache=True)
def favourite_category(v, x):
    """The category I will hold most of at the end (having its farmer, then the lowest id, breaks
    ties): the one I push onto the altar."""
    best = 0
    for c in range(1, N_CATEGORIES):
        more = x[offers(0, c)] > x[offers(0, best)]
        same = x[offers(0, c)] == x[offers(0, best)]
        if more or (same and v[tableau(0, FARMER + c)] > 0 and v[tableau(0, FARMER + best)] == 0):
            best = c
    return best


@njit(cache=True)
def planned_shrines(v, x):
    """Shrines in my hand I can still afford with my stones and stonecutter income."""
    if x[C_MY_TURNS] < 1:
        return 0
    income = v[tableau(0, STONECUTTER)] * x[C_TURNS_LEFT] * x[C_SHARE + STONECUTTER]
    return min(v[hand(0, SHRINE)], int((v[V_STONES] + income) // SHRINE_COST))


@njit(cache=True)
def random_altar_cards(v, x, params, planned):
    """Random altar cards expected: the unknown ones, the others' face-up cards on my planned
    shrines, their own likely shrines (random-ish placements) and the shrines not in sight yet."""
    n = v[V_N]
    others_sh = 0
    for j in range(1, n):
        others_sh += min(v[hand(j, SHRINE)], int((v[V_STONES + j] + 2 * x[C_MY_TURNS]) // SHRINE_COST))
    unseen = params[P_FUTURE_ALTAR] * min(1.0, x[C_TURNS_LEFT] / 40.0)
    return int(v[V_ALTAR_UNKNOWN] + (n - 1) * planned + 0.5 * others_sh * (n + 1) + unseen)


@njit(cache=True)
def fill_values(v, x, planned):
    """The category values if the game ended now and expected at the end (the planned altar: my
    favourite category gets two cards per planned shrine, plus the random cards)."""
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
    """The context of the observation in ``v`` (after ``decode_counts``) into ``v`` and ``x``:
    turns left, shares, holdings, the favourite category, the planned altar, category values and
    the value of one scoring reward of each card type (stones at their current worth, at least
    ``stone_low``; to the others at ``rival_stone``)."""
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
