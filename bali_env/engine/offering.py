"""Phase 2b: the offering after a shrine is played (docs/rules.md section 3).

Each other player from the active player's left puts one of their offering cards face up on the
altar; then the active player puts one face down (both ``legal_offer_own`` /
``apply_offer_own``); then a supply card face up (``legal_offer_supply`` /
``apply_offer_supply``). A player with no offering cards is skipped; then phase 3.
"""

from __future__ import annotations

from numba import njit

from bali_env.engine.ids import A_OFFER_OWN, A_OFFER_SUPPLY, N_CATEGORIES, PH_OFFER_OWN, PH_OFFER_SUPPLY
from bali_env.engine.knowledge import lose_offering_hidden, lose_offering_public
from bali_env.engine.refill import start_refill
from bali_env.engine.state import (
    absolute_seat,
    S_ACTIVE,
    S_ALTAR_LEN,
    S_NUM_PLAYERS,
    S_OFFER_STEP,
    S_PHASE,
    S_TO_MOVE,
    altar,
    altar_known,
    offering_total,
    offerings,
    supply,
    supply_total,
)


@njit(cache=True)
def push_altar(s, cat, known):
    """Put a card on top of the altar; ``known`` is the bit mask of seats that see its category."""
    top = s[S_ALTAR_LEN]
    s[altar(top)] = cat
    s[altar_known(top)] = known
    s[S_ALTAR_LEN] = top + 1


@njit(cache=True)
def start_offering(s):
    """A shrine was played: phase 2b begins with the player on the active player's left."""
    s[S_OFFER_STEP] = 0
    next_offering(s)


@njit(cache=True)
def next_offering(s):
    """The next seat clockwise from the active one that has offering cards offers one (the active
    player last, face down); then a supply card; then phase 3."""
    n = s[S_NUM_PLAYERS]
    a = s[S_ACTIVE]
    k = s[S_OFFER_STEP] + 1
    while k <= n:
        seat = absolute_seat(a, k, n)
        if offering_total(s, seat) > 0:
            s[S_OFFER_STEP] = k
            s[S_PHASE] = PH_OFFER_OWN
            s[S_TO_MOVE] = seat
            return
        k += 1
    s[S_OFFER_STEP] = n
    if supply_total(s) > 0:
        s[S_PHASE] = PH_OFFER_SUPPLY
        s[S_TO_MOVE] = a
        return
    start_refill(s)


@njit(cache=True, inline="always")
def legal_offer_own(s, p, mask):
    """Any category of which the player has an offering card."""
    for c in range(N_CATEGORIES):
        if s[offerings(p, c)] > 0:
            mask[A_OFFER_OWN + c] = 1


@njit(cache=True)
def apply_offer_own(s, p, action):
    """Put the card on the altar: face down for the active player, face up for the others."""
    c = action - A_OFFER_OWN
    if p == s[S_ACTIVE]:
        lose_offering_hidden(s, p, c)
        push_altar(s, c, 1 << p)
    else:
        lose_offering_public(s, p, c)
        push_altar(s, c, (1 << s[S_NUM_PLAYERS]) - 1)
    next_offering(s)


@njit(cache=True, inline="always")
def legal_offer_supply(s, p, mask):
    """Any category the supply still has."""
    for c in range(N_CATEGORIES):
        if s[supply(c)] > 0:
            mask[A_OFFER_SUPPLY + c] = 1


@njit(cache=True)
def apply_offer_supply(s, p, action):
    """Put a supply card face up on the altar, then phase 3."""
    c = action - A_OFFER_SUPPLY
    s[supply(c)] -= 1
    push_altar(s, c, (1 << s[S_NUM_PLAYERS]) - 1)
    start_refill(s)
