"""Phase 1: take an offering card, or pass (docs/rules.md section 3).

A category-c card costs ``max(0, 5 - f)`` stones, f the c farmers in the tableau
(``offering_price``); the supply of c must not be empty (``legal_take_offering`` /
``apply_take_offering``). Phase 2a follows.
"""

from __future__ import annotations

from numba import njit

from bali_env.engine.ids import A_PASS, A_TAKE_OFFERING, FARMER, N_CATEGORIES, OFFERING_BASE_PRICE, PH_PLAY
from bali_env.engine.knowledge import gain_offering_public
from bali_env.engine.state import S_PHASE, stones, supply, tableau


@njit(cache=True, inline="always")
def offering_price(farmers):
    """Phase 1 price of an offering card with ``farmers`` farmers of its category in the tableau."""
    return max(0, OFFERING_BASE_PRICE - farmers)


@njit(cache=True, inline="always")
def offering_cost(s, seat, c):
    """Phase 1 price of a category-c offering card for a seat."""
    return offering_price(s[tableau(seat, FARMER + c)])


@njit(cache=True, inline="always")
def legal_take_offering(s, p, mask):
    """Every category in the supply the player can pay for, and pass."""
    for c in range(N_CATEGORIES):
        if s[supply(c)] > 0 and s[stones(p)] >= offering_cost(s, p, c):
            mask[A_TAKE_OFFERING + c] = 1
    mask[A_PASS] = 1


@njit(cache=True)
def apply_take_offering(s, p, action):
    """Pay and take the card (or pass); phase 2a follows."""
    if action != A_PASS:
        c = action - A_TAKE_OFFERING
        s[stones(p)] -= offering_cost(s, p, c)
        s[supply(c)] -= 1
        gain_offering_public(s, p, c)
    s[S_PHASE] = PH_PLAY
