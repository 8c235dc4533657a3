"""Phase 4: scoring (docs/rules.md section 3), then the turn passes.

``start_scoring`` scores the first takeable card of the column of the last take:
stonecutters and priests at once (``score_per_card``); shrines ask each owner in turn order
(``legal_shrine_reward`` / ``apply_shrine_reward``); farmers hand out one offering card per
owner and then the majority bonus, stopping for a choice when the scored category is empty
(``legal_farmer_choice`` / ``apply_farmer_choice``; ``farmer_choice_category`` reads such an
action). ``majority_holder`` is the majority rule.
"""

from __future__ import annotations

from numba import njit

from bali_env.engine.ids import (
    A_FARMER_CHOICE,
    A_SHRINE_STONES,
    A_SHRINE_VP,
    FARMER,
    MAJORITY_MIN,
    N_CARD_TYPES,
    N_CATEGORIES,
    PH_FARMER_CHOICE,
    PH_SHRINE_REWARD,
    PH_TAKE_OFFERING,
    PRIEST,
    SHRINE,
    STONECUTTER,
)
from bali_env.engine.knowledge import gain_offering_public
from bali_env.engine.state import (
    absolute_seat,
    S_ACTIVE,
    S_BONUS_SEAT,
    S_LAST_COL,
    S_NUM_PLAYERS,
    S_PHASE,
    S_SCORE_STEP,
    S_SCORED,
    S_TO_MOVE,
    S_TURN,
    market_top,
    stones,
    supply,
    supply_total,
    tableau,
    vp,
)


@njit(cache=True)
def majority_holder(counts, n):
    """The index among ``counts[:n]`` holding strictly more than every other and at least 2, or
    -1: the majority bonus rule."""
    best = -1
    best_v = -1
    tie = False
    for i in range(n):
        v = counts[i]
        if v > best_v:
            best_v = v
            best = i
            tie = False
        elif v == best_v:
            tie = True
    if tie or best_v < MAJORITY_MIN:
        return -1
    return best


@njit(cache=True)
def majority_seat(s, card):
    """The seat that earns the majority bonus for ``card`` (``majority_holder`` of the
    tableaus), or -1."""
    n = s[S_NUM_PLAYERS]
    counts = s[tableau(0, card) : tableau(n - 1, card) + 1 : N_CARD_TYPES]
    return majority_holder(counts, n)


@njit(cache=True)
def end_turn(s):
    """Pass the turn clockwise."""
    a = (s[S_ACTIVE] + 1) % s[S_NUM_PLAYERS]
    s[S_ACTIVE] = a
    s[S_TO_MOVE] = a
    s[S_PHASE] = PH_TAKE_OFFERING
    s[S_TURN] += 1
    s[S_LAST_COL] = -1
    s[S_SCORED] = -1
    s[S_SCORE_STEP] = 0
    s[S_BONUS_SEAT] = -1


@njit(cache=True)
def start_scoring(s):
    """Phase 4: score the first takeable card of the column of the last take."""
    t = market_top(s, s[S_LAST_COL])
    s[S_SCORED] = t
    s[S_SCORE_STEP] = 0
    s[S_BONUS_SEAT] = majority_seat(s, t)
    if t == STONECUTTER:
        score_per_card(s, STONECUTTER)
        end_turn(s)
    elif t == PRIEST:
        score_per_card(s, PRIEST)
        end_turn(s)
    elif t == SHRINE:
        next_shrine_reward(s)
    else:
        next_farmer_card(s)


# ----------------------------------------------------------------------------- stonecutter, priest
@njit(cache=True)
def score_per_card(s, card):
    """Stonecutter (stones) or priest (VP) scoring: 1 per card in the tableau, +1 for the majority."""
    bonus = s[S_BONUS_SEAT]
    for seat in range(s[S_NUM_PLAYERS]):
        v = s[tableau(seat, card)]
        if seat == bonus:
            v += 1
        if card == STONECUTTER:
            s[stones(seat)] += v
        else:
            s[vp(seat)] += v


# ----------------------------------------------------------------------------- shrine
@njit(cache=True)
def next_shrine_reward(s):
    """Shrine scoring: ask the next seat (from the active one) that owns a shrine, or end the turn."""
    n = s[S_NUM_PLAYERS]
    a = s[S_ACTIVE]
    k = s[S_SCORE_STEP]
    while k < n:
        seat = absolute_seat(a, k, n)
        if s[tableau(seat, SHRINE)] > 0:
            s[S_SCORE_STEP] = k
            s[S_PHASE] = PH_SHRINE_REWARD
            s[S_TO_MOVE] = seat
            return
        k += 1
    end_turn(s)


@njit(cache=True, inline="always")
def shrine_reward_amount(s, seat):
    """Stones or VP a seat receives in shrine scoring: 1 per shrine, +1 for the majority."""
    v = s[tableau(seat, SHRINE)]
    if s[S_BONUS_SEAT] == seat:
        v += 1
    return v


@njit(cache=True, inline="always")
def legal_shrine_reward(s, p, mask):
    """Shrine scoring: stones or VP."""
    mask[A_SHRINE_STONES] = 1
    mask[A_SHRINE_VP] = 1


@njit(cache=True)
def apply_shrine_reward(s, p, action):
    """Give the shrine reward as chosen, then ask the next shrine owner."""
    v = shrine_reward_amount(s, p)
    if action == A_SHRINE_STONES:
        s[stones(p)] += v
    else:
        s[vp(p)] += v
    s[S_SCORE_STEP] += 1
    next_shrine_reward(s)


# ----------------------------------------------------------------------------- farmers
@njit(cache=True)
def next_farmer_card(s):
    """Farmer scoring: hand out one card per owner in turn order, then the majority bonus card;
    stop for a choice when the scored category is empty but the supply is not."""
    n = s[S_NUM_PLAYERS]
    a = s[S_ACTIVE]
    c = s[S_SCORED] - FARMER
    k = s[S_SCORE_STEP]
    while k <= n:
        if k < n:
            seat = absolute_seat(a, k, n)
            eligible = s[tableau(seat, FARMER + c)] > 0
        else:
            seat = s[S_BONUS_SEAT]
            eligible = seat >= 0
        if eligible:
            if s[supply(c)] > 0:
                s[supply(c)] -= 1
                gain_offering_public(s, seat, c)
            elif supply_total(s) > 0:
                s[S_SCORE_STEP] = k
                s[S_PHASE] = PH_FARMER_CHOICE
                s[S_TO_MOVE] = seat
                return
        k += 1
    end_turn(s)


@njit(cache=True, inline="always")
def legal_farmer_choice(s, p, mask):
    """The scored category is empty: any category the supply still has."""
    for c in range(N_CATEGORIES):
        if s[supply(c)] > 0:
            mask[A_FARMER_CHOICE + c] = 1


@njit(cache=True, inline="always")
def farmer_choice_category(action):
    """The category a farmer-choice action takes (0..3), -1 for any other action."""
    c = action - A_FARMER_CHOICE
    return c if 0 <= c < N_CATEGORIES else -1


@njit(cache=True)
def apply_farmer_choice(s, p, action):
    """Take the chosen category instead, then hand out the next farmer card."""
    c = farmer_choice_category(action)
    s[supply(c)] -= 1
    gain_offering_public(s, p, c)
    s[S_SCORE_STEP] += 1
    next_farmer_card(s)
