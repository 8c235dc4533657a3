"""docs/rules.md section 3, phase 2a (play cards): each play and its price (stonecutter and priest free,
shrine 7 stones, 1/2/3 farmers of one category 0/1/2 stones), exactly one play per turn, and the
forced shrine discard (only with three shrines in hand and fewer than 7 stones; the card leaves
the game)."""

from __future__ import annotations

import pytest
from scenario import (
    BANANAS,
    BF,
    CF,
    CHILIES,
    COL,
    DISCARD,
    FARMERS,
    PASS,
    PEANUTS,
    PLAY_PR,
    PLAY_SC,
    PLAY_SH,
    PR,
    RF,
    RICE,
    SC,
    SH,
    Game,
    counts,
    market,
)


def _shrines_in_game(sd: dict) -> int:
    """Shrine cards anywhere: hands, tableaus, market, deck."""
    total = sum(h[SH] for h in sd["hands"]) + sum(t[SH] for t in sd["tableaus"])
    total += sum(col.count(SH) for col in sd["market"]) + sd["deck"].count(SH)
    return total


def test_play_stonecutter_and_priest_are_free():
    """Phase 2a: a stonecutter or a priest goes from hand to tableau for 0 stones."""
    # every take reveals a priest or a shrine while nobody owns one: phase 4 changes nothing
    g = Game(2, prefix=market([SC, PR, PR, PR], [PR, SH, SH, SH], [SH, SH, PR, PR], [PR, PR, SH, SH]), starters=[0, 1])
    g.turn(FARMERS(PEANUTS), [COL(0)])  # seat 0 takes the stonecutter
    g.turn(FARMERS(RICE), [COL(1)])  # seat 1 takes the priest
    g.act(PASS)
    # seat 0 holds a banana farmer, a chili farmer and a stonecutter: one play of one kind each
    assert g.sd["hands"][0] == counts(sc=1, bf=1, cf=1)
    assert g.legal() == [PLAY_SC, FARMERS(BANANAS), FARMERS(CHILIES)]
    g.act(PLAY_SC)
    sd = g.sd
    assert sd["phase"] == "refill"
    assert sd["stones"] == [2, 3]
    assert sd["hands"][0] == counts(bf=1, cf=1)
    assert sd["tableaus"][0] == counts(sc=2, pf=1)
    g.act(COL(0))  # reveals a priest: nobody has one in the tableau yet
    g.act(PASS)
    assert g.sd["hands"][1] == counts(pr=1, bf=1, cf=1)
    assert g.legal() == [PLAY_PR, FARMERS(BANANAS), FARMERS(CHILIES)]
    g.act(PLAY_PR)
    sd = g.sd
    assert sd["stones"] == [2, 3]
    assert sd["hands"][1] == counts(bf=1, cf=1)
    assert sd["tableaus"][1] == counts(sc=1, pr=1, rf=1)


def test_play_farmers_cost_0_1_2():
    """Phase 2a: 1, 2 or 3 farmers of one category cost 0, 1 or 2 stones; no play beyond the stones."""
    cols = market([CF, CF, PR, PR], [BF, BF, PR, PR], [RF, RF, SH, SH], [PR, SH, SH, PR])
    g = Game(2, prefix=cols, starters=[0, 1])  # seat 0: P/B/C farmers, 2 stones; seat 1: R/B/C, 3 stones
    g.act(PASS, FARMERS(PEANUTS))  # 1 farmer: free
    assert g.sd["stones"] == [2, 3]
    g.act(COL(0))  # a chili farmer; reveals a chili farmer (no chili farmer in any tableau)
    g.turn(FARMERS(CHILIES), [COL(2)])  # seat 1 takes a rice farmer, reveals a rice farmer
    g.act(PASS)
    assert g.sd["hands"][0] == counts(bf=1, cf=2)
    assert g.legal() == [FARMERS(BANANAS), FARMERS(CHILIES, 1), FARMERS(CHILIES, 2)]
    g.act(FARMERS(CHILIES, 2))  # 2 farmers: 1 stone
    sd = g.sd
    assert sd["stones"] == [1, 3]
    assert sd["tableaus"][0] == counts(sc=1, pf=1, cf=2)
    assert sd["hands"][0] == counts(bf=1)
    g.act(COL(1), COL(1))  # two takes: both banana farmers; reveals a priest
    g.turn(FARMERS(BANANAS), [COL(2)])  # seat 1 takes its 2nd rice farmer; reveals a shrine
    g.act(PASS)
    # 3 banana farmers in hand but 1 stone: 3 farmers (2 stones) is not legal, 1 or 2 are
    assert g.sd["hands"][0] == counts(bf=3)
    assert g.legal() == [FARMERS(BANANAS, 1), FARMERS(BANANAS, 2)]
    with pytest.raises(ValueError):
        g.env.step(FARMERS(BANANAS, 3))
    g.act(FARMERS(BANANAS, 2))  # 1 stone -> 0
    assert g.sd["stones"] == [0, 3]
    g.act(COL(0), COL(0))  # reveals a priest
    g.act(PASS)
    assert g.sd["hands"][1] == counts(rf=3)
    assert g.legal() == [FARMERS(RICE, 1), FARMERS(RICE, 2), FARMERS(RICE, 3)]
    g.act(FARMERS(RICE, 3))  # 3 farmers: 2 stones
    sd = g.sd
    assert sd["stones"] == [0, 1]
    assert sd["tableaus"][1] == counts(sc=1, rf=3, bf=1, cf=1)
    assert sd["hands"][1] == counts()
    assert sd["phase"] == "refill"
    g.act(COL(3), COL(3), COL(3))  # three takes refill the hand to 3
    assert sum(g.sd["hands"][1]) == 3


# Shrines for seat 0 (column 0) and seat 3 (column 1); two stonecutter reveals (column 2) give
# every seat +1 stone twice (each seat owns exactly one stonecutter); every other reveal is a
# priest or a shrine while nobody owns one. The next three dealt columns start with PR, PR, SH.
SHRINE_COLUMNS = market([SH, SH, SH, PR], [SH, SH, SH, PR], [SC, SC, SC, PR], [PR, PR, SH, SH])
NEXT_COLUMNS = [PR, SC, SC, SC, PR, SC, SC, SC, SH, SC, SC, SC]


def _three_shrines_game() -> Game:
    """4 players, starter sets 0..3; after 3 rounds seats 0 and 3 hold three shrines each.
    Stones: 2,3,4,5 +1 (seat 1's reveal in round 1) +1 (seat 2's reveal in round 1) = 4,5,6,7."""
    g = Game(4, prefix=SHRINE_COLUMNS, rest=NEXT_COLUMNS, starters=[0, 1, 2, 3])
    # round 1
    g.turn(FARMERS(PEANUTS), [COL(0)])  # s0 takes SH, reveals SH
    g.turn(FARMERS(RICE), [COL(2)])  # s1 takes SC, reveals SC: +1 each
    g.turn(FARMERS(RICE), [COL(2)])  # s2 takes SC, reveals SC: +1 each
    g.turn(FARMERS(RICE), [COL(1)])  # s3 takes SH, reveals SH
    # round 2
    g.turn(FARMERS(BANANAS), [COL(0)])  # s0 takes SH
    g.turn(FARMERS(BANANAS), [COL(2)])  # s1 takes SC, reveals PR
    g.turn(FARMERS(PEANUTS), [COL(3)])  # s2 takes PR, reveals PR
    g.turn(FARMERS(PEANUTS), [COL(1)])  # s3 takes SH
    # round 3
    g.act(PASS)
    # seat 0: two shrines and a chili farmer: no discard (only with three shrines), no shrine (4 < 7)
    assert g.sd["hands"][0] == counts(sh=2, cf=1)
    assert g.legal() == [FARMERS(CHILIES)]
    g.act(FARMERS(CHILIES), COL(0))  # s0 takes its 3rd SH, reveals PR
    g.turn(FARMERS(CHILIES), [COL(3)])  # s1 takes PR, reveals SH
    g.turn(FARMERS(CHILIES), [COL(3)])  # s2 takes SH, reveals SH
    g.turn(FARMERS(BANANAS), [COL(1)])  # s3 takes its 3rd SH, reveals PR
    return g


def test_play_forced_shrine_discard():
    """Phase 2a: three shrines in hand and fewer than 7 stones: the only play is to discard one (out of the game)."""
    g = _three_shrines_game()
    sd = g.sd
    assert sd["to_move"] == 0 and sd["stones"] == [4, 5, 6, 7]
    assert sd["hands"][0] == counts(sh=3)
    assert _shrines_in_game(sd) == 9
    g.act(PASS)
    assert g.legal() == [DISCARD]
    with pytest.raises(ValueError):
        g.env.step(PLAY_SH)  # 4 < 7 stones
    g.act(DISCARD)
    sd = g.sd
    assert sd["hands"][0] == counts(sh=2)
    assert sd["tableaus"][0] == counts(sc=1, pf=1, bf=1, cf=1)  # nothing went to the tableau
    assert sd["stones"][0] == 4  # free
    assert sd["phase"] == "refill" and sd["to_move"] == 0
    assert sd["altar"] == []  # no offering phase
    assert _shrines_in_game(sd) == 8  # the discarded shrine left the game
    g.act(COL(0))  # refill: one take, the last PR of column 0
    assert g.sd["hands"][0] == counts(sh=2, pr=1)


def test_play_three_shrines_with_7_stones_no_discard():
    """Phase 2a: three shrines and 7 stones: the shrine must be played, the discard is illegal."""
    g = _three_shrines_game()
    # each take below empties a column; the new column's first card (PR, PR, SH) is scored: nobody owns one
    g.act(PASS, DISCARD, COL(0))  # seat 0
    g.turn(PLAY_SC, [COL(1)])  # seat 1 plays a stonecutter, takes the last PR of column 1
    g.turn(PLAY_SC, [COL(2)])  # seat 2 plays a stonecutter, takes the last PR of column 2
    sd = g.sd
    assert sd["to_move"] == 3 and sd["hands"][3] == counts(sh=3)
    assert sd["stones"][3] == 7
    g.act(PASS)
    assert g.legal() == [PLAY_SH]
    with pytest.raises(ValueError):
        g.env.step(DISCARD)


def test_play_shrine_costs_7():
    """Phase 2a: a shrine costs 7 stones and starts the offering phase (phase 2b)."""
    g = _three_shrines_game()
    g.act(PASS, DISCARD, COL(0))
    g.turn(PLAY_SC, [COL(1)])
    g.turn(PLAY_SC, [COL(2)])
    g.act(PASS, PLAY_SH)
    sd = g.sd
    assert sd["stones"][3] == 0  # 7 - 7
    assert sd["hands"][3] == counts(sh=2)
    assert sd["tableaus"][3] == counts(sc=1, sh=1, rf=1, pf=1, bf=1)
    assert sd["phase"] == "offer_own"
    assert sd["to_move"] == 0  # the seat left of seat 3 offers first
