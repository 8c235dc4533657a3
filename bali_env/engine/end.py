"""End of the game and the final score (docs/rules.md section 4), and the rewards it gives.

- ``deck_too_short_to_deal`` / ``deck_ran_out``: the two ways the game ends (section 3, phase 3
  ruling); ``refill.deal_column`` asks them every time a column must be dealt.
- ``altar_values``: what each category's offering cards are worth.
- ``score_parts``: every seat's score by part (VP tokens, shrines, stones, offerings by category):
  the one copy of the scoring formula; ``final_scores`` adds the parts up.
- ``decide_winners``: highest score, then most shrines, then most stones, then a shared win;
  also says which of these decided (``TIEBREAK_NAMES``).
- ``end_game``: stop at once, score, record the winners.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bali_env.engine.ids import (
    COLUMN_SIZE,
    MAX_PLAYERS,
    N_CATEGORIES,
    PH_GAME_OVER,
    SHRINE,
    SHRINE_POINTS,
    STONES_PER_POINT,
)
from bali_env.engine.state import (
    S_ALTAR_LEN,
    S_NUM_PLAYERS,
    S_PEEKS,
    S_PHASE,
    S_TO_MOVE,
    S_WINDOW,
    S_WINNERS,
    altar,
    deck_left,
    final_score,
    offerings,
    stones,
    tableau,
    vp,
)

#: columns of ``score_parts``: VP tokens, shrines, stones, then offerings of category 0..3
PART_VP, PART_SHRINES, PART_STONES, PART_OFFERINGS = 0, 1, 2, 3
N_PARTS = PART_OFFERINGS + N_CATEGORIES


@njit(cache=True)
def deck_too_short_to_deal(s):
    """A column must be dealt but the deck holds fewer than 4 cards: the game ends."""
    return deck_left(s) < COLUMN_SIZE


@njit(cache=True)
def deck_ran_out(s):
    """The deck is empty right after a column was dealt: the game ends."""
    return deck_left(s) == 0


@njit(cache=True)
def altar_values(counts, values):
    """Value of each category: 3 - (number of distinct counts above its own), >= 0; 0 if absent."""
    for c in range(N_CATEGORIES):
        if counts[c] == 0:
            values[c] = 0
            continue
        above = 0
        for d in range(N_CATEGORIES):
            v = counts[d]
            if v > counts[c]:
                seen = False
                for e in range(d):
                    if counts[e] == v:
                        seen = True
                if not seen:
                    above += 1
        values[c] = max(0, 3 - above)


@njit(cache=True)
def altar_counts(s, counts):
    """The altar's cards per category."""
    counts[:] = 0
    for i in range(s[S_ALTAR_LEN]):
        counts[s[altar(i)]] += 1


@njit(cache=True)
def shrine_points(shrines):
    """Final score of the shrines in a tableau: 4 each."""
    return SHRINE_POINTS * shrines


@njit(cache=True)
def stone_points(n_stones):
    """Final score of stones: 1 per full 5."""
    return n_stones // STONES_PER_POINT


@njit(cache=True)
def score_parts(s, parts):
    """Write each seat's final score by part into ``parts`` (int64[MAX_PLAYERS, N_PARTS]): VP
    tokens, shrines, stones, and the offering cards of each category times its altar value."""
    counts = np.zeros(N_CATEGORIES, dtype=np.int64)
    altar_counts(s, counts)
    values = np.zeros(N_CATEGORIES, dtype=np.int64)
    altar_values(counts, values)
    parts[:] = 0
    for seat in range(s[S_NUM_PLAYERS]):
        parts[seat, PART_VP] = s[vp(seat)]
        parts[seat, PART_SHRINES] = shrine_points(s[tableau(seat, SHRINE)])
        parts[seat, PART_STONES] = stone_points(s[stones(seat)])
        for c in range(N_CATEGORIES):
            parts[seat, PART_OFFERINGS + c] = s[offerings(seat, c)] * values[c]


@njit(cache=True)
def final_scores(s, out):
    """Write each seat's final score (the sum of its ``score_parts``) into ``out``."""
    parts = np.zeros((MAX_PLAYERS, N_PARTS), dtype=np.int64)
    score_parts(s, parts)
    for seat in range(s[S_NUM_PLAYERS]):
        out[seat] = parts[seat].sum()


@njit(cache=True)
def _best_among(s, candidates, key_kind, scores):
    """Keep (as a bit mask) the candidates with the highest score (0), shrines (1) or stones (2)."""
    best = -1
    keep = 0
    for seat in range(s[S_NUM_PLAYERS]):
        if not (candidates >> seat) & 1:
            continue
        if key_kind == 0:
            v = scores[seat]
        elif key_kind == 1:
            v = s[tableau(seat, SHRINE)]
        else:
            v = s[stones(seat)]
        if v > best:
            best = v
            keep = 1 << seat
        elif v == best:
            keep |= 1 << seat
    return keep


@njit(cache=True)
def decide_winners(s, scores):
    """The winners (bit mask of seats) for these final scores: the highest score, then the most
    shrines, then the most stones; players still tied share the win. Also returns the deciding
    level: 0 the score, 1 shrines, 2 stones, 3 a shared win (``TIEBREAK_NAMES``)."""
    mask = (1 << s[S_NUM_PLAYERS]) - 1
    for level in range(3):
        mask = _best_among(s, mask, level, scores)
        if mask & (mask - 1) == 0:  # a single seat is left
            return mask, level
    return mask, 3


@njit(cache=True)
def end_game(s):
    """Stop the game at once: final scores, then the winners (ties share)."""
    n = s[S_NUM_PLAYERS]
    scores = np.zeros(MAX_PLAYERS, dtype=np.int64)
    final_scores(s, scores)
    for seat in range(n):
        s[final_score(seat)] = scores[seat]
    mask, _ = decide_winners(s, scores)
    s[S_WINNERS] = mask
    s[S_PHASE] = PH_GAME_OVER
    s[S_TO_MOVE] = -1
    s[S_PEEKS] = 0
    s[S_WINDOW] = 0


@njit(cache=True)
def terminal_rewards(s, score_mode, out):
    """Rewards of a finished game per seat: +1 winners / -1 others, or with ``score_mode`` the own
    final score minus the mean final score of the others."""
    n = s[S_NUM_PLAYERS]
    total = 0
    for q in range(n):
        total += s[final_score(q)]
    for q in range(n):
        if score_mode:
            out[q] = s[final_score(q)] - (total - s[final_score(q)]) / (n - 1)
        elif (s[S_WINNERS] >> q) & 1:
            out[q] = 1.0
        else:
            out[q] = -1.0
