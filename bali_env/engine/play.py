"""Phase 2a: play cards from the hand (docs/rules.md section 3).

Exactly one of: a stonecutter, a priest (the demon moves a column right), a shrine for 7 stones
(phase 2b follows), or 1-3 farmers of one category for 0-2 stones; with only three shrines in
hand and fewer than 7 stones, a shrine is discarded instead (``legal_play`` / ``apply_play``).
"""

from __future__ import annotations

from numba import njit

from bali_env.engine.ids import (
    A_DISCARD_SHRINE,
    A_PLAY_FARMERS,
    A_PLAY_PRIEST,
    A_PLAY_SHRINE,
    A_PLAY_STONECUTTER,
    FARMER,
    HAND_SIZE,
    N_CATEGORIES,
    N_COLUMNS,
    PRIEST,
    SHRINE,
    SHRINE_COST,
    STONECUTTER,
)
from bali_env.engine.offering import start_offering
from bali_env.engine.refill import start_refill
from bali_env.engine.state import S_DEMON, S_DEMON_COL, hand, stones, tableau


@njit(cache=True, inline="always")
def farmers_price(k):
    """Stones to play ``k`` farmers of one category at once: 0, 1 or 2."""
    return k - 1


@njit(cache=True, inline="always")
def legal_play(s, p, mask):
    """The cards of the hand the player can afford to play, or the forced shrine discard."""
    money = s[stones(p)]
    if s[hand(p, STONECUTTER)] > 0:
        mask[A_PLAY_STONECUTTER] = 1
    if s[hand(p, PRIEST)] > 0:
        mask[A_PLAY_PRIEST] = 1
    if s[hand(p, SHRINE)] > 0 and money >= SHRINE_COST:
        mask[A_PLAY_SHRINE] = 1
    for c in range(N_CATEGORIES):
        for k in range(1, 4):
            if s[hand(p, FARMER + c)] >= k and money >= farmers_price(k):
                mask[A_PLAY_FARMERS + 3 * c + k - 1] = 1
    if s[hand(p, SHRINE)] == HAND_SIZE and money < SHRINE_COST:
        mask[A_DISCARD_SHRINE] = 1


@njit(cache=True)
def _play_card(s, p, card, k):
    """Move ``k`` cards from the hand to the tableau."""
    s[hand(p, card)] -= k
    s[tableau(p, card)] += k


@njit(cache=True)
def apply_play(s, p, action):
    """Play the card(s); a shrine starts phase 2b, anything else phase 3."""
    if action == A_PLAY_SHRINE:
        _play_card(s, p, SHRINE, 1)
        s[stones(p)] -= SHRINE_COST
        start_offering(s)
        return
    if action == A_PLAY_STONECUTTER:
        _play_card(s, p, STONECUTTER, 1)
    elif action == A_PLAY_PRIEST:
        _play_card(s, p, PRIEST, 1)
        if s[S_DEMON] != 0:
            s[S_DEMON_COL] = (s[S_DEMON_COL] + 1) % N_COLUMNS
    elif action == A_DISCARD_SHRINE:
        s[hand(p, SHRINE)] -= 1
    else:
        c = (action - A_PLAY_FARMERS) // 3
        k = (action - A_PLAY_FARMERS) % 3 + 1
        _play_card(s, p, FARMER + c, k)
        s[stones(p)] -= farmers_price(k)
    start_refill(s)
