"""Oracle variant: a peek at the top of the altar (docs/rules.md section 3, phase 3).

The window is opened by ``refill.open_oracle_window``; here the active player takes one of the
peeked cards into their own offering cards, or none (``legal_oracle`` / ``apply_oracle``). The
others see only that a card was taken, and forget the categories of the rest of the window
(section 5 ruling).
"""

from __future__ import annotations

from numba import njit

from bali_env.engine.ids import A_ORACLE_NONE, A_ORACLE_TAKE
from bali_env.engine.knowledge import gain_offering_hidden
from bali_env.engine.refill import continue_refill
from bali_env.engine.state import S_ALTAR_LEN, S_PEEKS, S_WINDOW, altar, altar_known


@njit(cache=True, inline="always")
def legal_oracle(s, p, mask):
    """Any card of the window, or none."""
    for d in range(s[S_WINDOW]):
        mask[A_ORACLE_TAKE + d] = 1
    mask[A_ORACLE_NONE] = 1


@njit(cache=True)
def take_from_altar(s, p, depth):
    """Seat ``p`` takes the altar card at ``depth`` of the open window; the others forget the
    categories of the rest of the window."""
    top = s[S_ALTAR_LEN]
    w = s[S_WINDOW]
    idx = top - 1 - depth
    cat = s[altar(idx)]
    for i in range(idx, top - 1):
        s[altar(i)] = s[altar(i + 1)]
        s[altar_known(i)] = s[altar_known(i + 1)]
    top -= 1
    s[altar(top)] = 0
    s[altar_known(top)] = 0
    s[S_ALTAR_LEN] = top
    for i in range(top - (w - 1), top):
        s[altar_known(i)] &= 1 << p
    gain_offering_hidden(s, p, cat)


@njit(cache=True)
def apply_oracle(s, p, action):
    """Take the chosen window card (or none), close the window, go on with the refill."""
    if action != A_ORACLE_NONE:
        take_from_altar(s, p, action - A_ORACLE_TAKE)
    s[S_PEEKS] -= 1
    s[S_WINDOW] = 0
    continue_refill(s)
