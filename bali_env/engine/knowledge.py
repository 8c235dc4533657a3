"""What the others know of a seat's offering cards (docs/rules.md section 5, ruling 9.1).

The others keep an exact total plus a lower and an upper bound per category, updated from
public events only: a phase-1 take or a farmer reward is seen (the supply piles are visible),
a face-up offering is seen, a face-down offering or an oracle take is one card of unknown
category. Every change to a seat's offering cards goes through one of these four kernels.
"""

from __future__ import annotations

from numba import njit

from bali_env.engine.ids import N_CATEGORIES
from bali_env.engine.state import known_max, known_min, offering_total, offerings


@njit(cache=True)
def tighten_knowledge(s, seat):
    """Keep the public bounds on a seat's offering cards consistent with their public total."""
    total = offering_total(s, seat)
    sum_max = 0
    for c in range(N_CATEGORIES):
        if s[known_max(seat, c)] > total:
            s[known_max(seat, c)] = total
        sum_max += s[known_max(seat, c)]
    for c in range(N_CATEGORIES):
        lo = total - (sum_max - s[known_max(seat, c)])
        if s[known_min(seat, c)] < lo:
            s[known_min(seat, c)] = lo


@njit(cache=True)
def gain_offering_public(s, seat, c):
    """A seat gains a category-c offering card that everybody sees (phase 1, farmer scoring)."""
    s[offerings(seat, c)] += 1
    s[known_min(seat, c)] += 1
    s[known_max(seat, c)] += 1


@njit(cache=True)
def lose_offering_public(s, seat, c):
    """A seat puts a category-c offering card face up on the altar."""
    s[offerings(seat, c)] -= 1
    if s[known_min(seat, c)] > 0:
        s[known_min(seat, c)] -= 1
    s[known_max(seat, c)] -= 1
    tighten_knowledge(s, seat)


@njit(cache=True)
def lose_offering_hidden(s, seat, c):
    """A seat puts a category-c card face down: the others only know one card left."""
    s[offerings(seat, c)] -= 1
    for k in range(N_CATEGORIES):
        if s[known_min(seat, k)] > 0:
            s[known_min(seat, k)] -= 1
    tighten_knowledge(s, seat)


@njit(cache=True)
def gain_offering_hidden(s, seat, c):
    """A seat takes a category-c card in an oracle peek: the others only know one card came."""
    s[offerings(seat, c)] += 1
    for k in range(N_CATEGORIES):
        s[known_max(seat, k)] += 1
    tighten_knowledge(s, seat)
