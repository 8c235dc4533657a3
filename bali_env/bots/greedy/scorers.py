"""The greedy heuristic's scorers: one kernel per decision, each named after the decision it scores.

Every ``score_<decision>(v, x, params, mask, scores)`` reads the context (``v``, ``x`` after
``context.fill_context``) and writes, for each legal action of its decision, its value in expected
end-of-game points relative to the others (own gain minus ``rival_weight`` x the others' mean
gain) into ``scores`` (left at -inf elsewhere). ``score_decision`` dispatches on the decision.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bali_env.engine import (
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
    N_CARD_TYPES,
    N_CATEGORIES,
    N_COLUMNS,
    ORACLE_WINDOW,
    PRIEST,
    SHRINE,
    SHRINE_COST,
    STONECUTTER,
    farmers_price,
    numba_cache,
    offering_price,
    shrine_points,
    stone_points,
)

from bali_env.bots.greedy.altar import NO_PUSH, altar_score, my_offers, no_card, one_card
from bali_env.bots.greedy.context import scoring_gain, stone_delta, tableau_gain
from bali_env.bots.greedy.slots import (
    C_CARD_VALUE,
    C_MY_TURNS,
    C_NOW_VALUES,
    C_SCORING,
    C_SHARE,
    C_TURNS_LEFT,
    C_VALUES,
    KERNEL_FILES,
    P_STONE_LOW,
    P_TEMPO,
    V_ALLOWED,
    V_AMOUNT,
    V_COL_LEN,
    V_DECISION,
    V_DECK_CARDS,
    V_DECK_SIZE,
    V_DEMON_COL,
    V_N,
    V_N_ALLOWED,
    V_SEQ,
    V_STONES,
    V_SUPPLY,
    V_TAKEN,
    V_TOP,
    V_VP,
    hand,
    held,
    market,
    tableau,
)

numba_cache.cover(__file__, *KERNEL_FILES)

DISCARD_SCORE = -10.0  #: discarding a shrine: only legal when nothing else is
THREE_SHRINES = 6.0  #: a refill leaving three shrines in hand without the stones for one forces a discard
WIN_BONUS = 10.0  #: ending the game now: my lead plus this for a win (minus it else)


# ----------------------------------------------------------------------------- phase 1
@njit(cache=True)
def score_take_offering(v, x, params, mask, scores):
    """Phase 1: buy a card when its expected final value beats the stones it costs (stones kept for
    a shrine in hand are dear, spare stones cheap). Passing scores 0."""
    scores[A_PASS] = 0.0
    for c in range(N_CATEGORIES):
        if mask[A_TAKE_OFFERING + c]:
            cost = offering_price(v[tableau(0, FARMER + c)])
            scores[A_TAKE_OFFERING + c] = x[C_VALUES + c] + stone_delta(v, x, params, -cost)


# ----------------------------------------------------------------------------- phase 2a
@njit(cache=True)
def play_score(v, x, params, a):
    """The score of one play action ``a`` (see ``score_play``)."""
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
    """Phase 2a: the card whose tableau income (with majorities) is worth most now; a shrine adds
    4 points and altar control for its 7 stones (valued at their end worth: saving them was for
    this shrine); extra farmers played at once cost a stone each and bring ``tempo`` each."""
    for a in range(A_PLAY_STONECUTTER, A_DISCARD_SHRINE):
        if mask[a]:
            scores[a] = play_score(v, x, params, a)
    if mask[A_DISCARD_SHRINE]:
        scores[A_DISCARD_SHRINE] = DISCARD_SCORE


# ----------------------------------------------------------------------------- phase 2b
@njit(cache=True)
def score_offer_face_up(v, x, params, mask, scores):
    """Someone else's shrine: give up the card whose loss (and whose push on the altar) costs me
    least relative to the others."""
    for c in range(N_CATEGORIES):
        if mask[A_OFFER_OWN + c]:
            push = one_card(c)
            scores[A_OFFER_OWN + c] = altar_score(v, x, params, push, my_offers(x, push), np.int64(0))


@njit(cache=True)
def score_offer_face_down(v, x, params, mask, scores):
    """My shrine, my own card face down: the card that, together with the best supply card placed
    next (none when the supply is empty), raises my categories most."""
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
    """My shrine, a supply card face up: the category whose push helps me most relative to the others."""
    for c in range(N_CATEGORIES):
        if mask[A_OFFER_SUPPLY + c]:
            scores[A_OFFER_SUPPLY + c] = altar_score(v, x, params, one_card(c), my_offers(x, NO_PUSH), np.int64(0))


# ----------------------------------------------------------------------------- oracle
@njit(cache=True)
def score_oracle(v, x, params, mask, scores):
    """An oracle peek: take the window card that raises my relative final score most (it leaves the
    altar and joins my offerings), or none when every card would lower it."""
    scores[A_ORACLE_NONE] = altar_score(v, x, params, no_card(), my_offers(x, NO_PUSH), np.int64(0))
    for depth in range(ORACLE_WINDOW):
        c = v[V_TOP + depth]
        if mask[A_ORACLE_TAKE + depth] and c >= 0:  # always known during my own peek
            card = one_card(c)
            gained = my_offers(x, (-1.0 * card[0], -1.0 * card[1], -1.0 * card[2], -1.0 * card[3]))
            scores[A_ORACLE_TAKE + depth] = altar_score(v, x, params, (-card[0], -card[1], -card[2], -card[3]),
                                                        gained, np.int64(0))


# ----------------------------------------------------------------------------- phase 4
@njit(cache=True)
def score_shrine_reward(v, x, params, mask, scores):
    """Shrine scoring: stones at their current worth (dear while a shrine in hand needs them, with
    time left to build it) against the VP (worth at least as much at the end otherwise)."""
    amount = max(1, v[V_AMOUNT])
    scores[A_SHRINE_STONES] = stone_delta(v, x, params, amount)
    scores[A_SHRINE_VP] = float(amount)


@njit(cache=True)
def score_farmer_choice(v, x, params, mask, scores):
    """The scored category is empty: the category with the best expected final value."""
    for c in range(N_CATEGORIES):
        if mask[A_FARMER_CHOICE + c]:
            scores[A_FARMER_CHOICE + c] = x[C_VALUES + c]


# ----------------------------------------------------------------------------- phase 3
@njit(cache=True)
def hand_value(v, x, params, card):
    """A market card's worth in my hand: the tableau gain of playing it on my next turn; a shrine
    only as far as I can afford it, less for each shrine already waiting."""
    turns = max(0.0, x[C_TURNS_LEFT] - v[V_N])
    if card != SHRINE:
        return tableau_gain(v, x, params, card, np.int64(1), turns) if x[C_MY_TURNS] > 1 else 0.0
    waiting = v[hand(0, SHRINE)] + 1
    stones = v[V_STONES]
    income = v[tableau(0, STONECUTTER)] * x[C_TURNS_LEFT] * x[C_SHARE + STONECUTTER]
    afford = min(1.0, max(0.0, (stones + income - SHRINE_COST * (waiting - 1)) / (SHRINE_COST * waiting)))
    if x[C_MY_TURNS] <= 1:
        afford = 1.0 if stones >= SHRINE_COST * waiting else 0.0
    return afford * (tableau_gain(v, x, params, card, np.int64(1), turns) - SHRINE_COST * params[P_STONE_LOW])


@njit(cache=True)
def end_now_value(v, x):
    """Value of ending the game now: my estimated lead over the best other, plus ``WIN_BONUS`` for
    a win (minus it else)."""
    n = v[V_N]
    mine = 0.0
    best_other = -np.inf
    for q in range(n):
        offering_points = 0.0
        for c in range(N_CATEGORIES):
            offering_points += x[held(q, c)] * x[C_NOW_VALUES + c]
        score = (v[V_VP + q] + shrine_points(v[tableau(q, SHRINE)]) + stone_points(v[V_STONES + q])) + offering_points
        if q == 0:
            mine = score
        else:
            best_other = max(best_other, score)
    lead = mine - best_other
    return lead + (WIN_BONUS if lead > 0 else -WIN_BONUS)


@njit(cache=True)
def take_sequence(v, x, takes, mean_card, mean_scoring, end_value):
    """Value of taking from the columns ``v[V_SEQ:V_SEQ+takes]`` in order: the hand values of the
    cards plus the relative scoring of the card the last take reveals (a column dealt anew holds
    unknown cards, valued at the deck's mean); ``end_value`` when a take ends the game."""
    for col in range(N_COLUMNS):
        v[V_TAKEN + col] = 0
    fresh = 0  # bit col: column dealt anew
    total = 0.0
    shrines = v[hand(0, SHRINE)]
    for t in range(takes):
        col = v[V_SEQ + t]
        if (fresh >> col) & 1 or v[V_COL_LEN + col] == 0:
            total += mean_card
            continue
        card = v[market(col, v[V_TAKEN + col])]
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
        total += x[C_SCORING + v[market(last, v[V_TAKEN + last])]]
    if shrines >= HAND_SIZE and v[V_STONES] < SHRINE_COST:
        total -= THREE_SHRINES
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
        x[C_SCORING + card] = scoring_gain(v, x, params, card, v[tableau(0, card)])
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
    it; emptying a column with 4 or fewer cards in the deck ends the game (``end_now_value``: good
    only when ahead)."""
    cards = 0
    for k in range(N_CARD_TYPES):
        cards += v[hand(0, k)]
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


# ----------------------------------------------------------------------------- dispatch
@njit(cache=True)
def score_decision(v, x, params, mask, scores):
    """Score the legal actions of the decision in ``v`` (after ``fill_context``) with its scorer;
    False for a decision without one (the game is over)."""
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
