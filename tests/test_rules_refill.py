"""docs/rules.md section 3, phase 3 (refill the hand) and the scored type of phase 4: each take is the
first takeable card of a column, several takes may come from one column, an emptied column is
re-dealt at once from the deck (4 cards, set-up order) and may be taken from in the same turn;
the scored type is the first takeable card of the column of the last take (the new column's first
card when that take emptied the column)."""

from __future__ import annotations

import pytest
from scenario import (
    BANANAS,
    CF,
    CHILIES,
    COL,
    FARMERS,
    PASS,
    PEANUTS,
    PF,
    PLAY_PR,
    PR,
    RF,
    RICE,
    SC,
    SH,
    Game,
    counts,
    market,
)

# Game A: seat 0's second turn takes from columns 0 and 2; column 0 then shows a peanut farmer
# (seat 0 owns one), column 2 a stonecutter (every seat owns one).
COLS_A = market([CF, CF, PF, PR], [PR, SH, SH, SH], [PR, SC, SH, SH], [SH, PR, PR, PR])


def _game_a() -> Game:
    g = Game(2, prefix=COLS_A, starters=[0, 1])  # seat 0: P/B/C farmers, 2 stones; seat 1: R/B/C, 3
    g.turn(FARMERS(PEANUTS), [COL(0)])  # s0 takes CF; reveals CF: nobody owns a chili farmer
    g.turn(FARMERS(RICE), [COL(1)])  # s1 takes PR; reveals SH: nobody owns a shrine
    g.act(PASS, FARMERS(CHILIES, 2))  # s0: 2 chili farmers, 1 stone (2 -> 1), two takes to make
    return g


def test_refill_take_is_first_takeable_card():
    """Phase 3: a take moves the first takeable card of the chosen column into the hand."""
    g = _game_a()
    assert g.sd["market"][0] == [CF, PF, PR]
    assert g.sd["hands"][0] == counts(bf=1)
    g.act(COL(0))
    sd = g.sd
    assert sd["hands"][0] == counts(bf=1, cf=1)
    assert sd["market"][0] == [PF, PR]
    assert sd["phase"] == "refill" and sd["to_move"] == 0  # one more take owed


def test_scored_type_is_column_of_last_take_stonecutter():
    """Phase 4: only the first card of the last take's column is scored (stonecutter here, not the peanut farmer)."""
    g = _game_a()
    g.act(COL(0), COL(2))  # column 0 now shows PF, column 2 (last take) shows SC
    sd = g.sd
    assert sd["market"][0] == [PF, PR] and sd["market"][2] == [SC, SH, SH]
    # stonecutter scoring: 1 stone each (one stonecutter each, no majority); no peanut card
    assert sd["stones"] == [1 + 1, 3 + 1]
    assert sd["offerings"] == [[1, 1, 1, 1], [1, 1, 1, 1]]
    assert sd["supply"] == [23, 23, 23, 23]
    assert sd["phase"] == "take_offering" and sd["active"] == 1


def test_scored_type_is_column_of_last_take_farmer():
    """Phase 4: same position, other take order: the peanut farmer is scored, not the stonecutter."""
    g = _game_a()
    g.act(COL(2), COL(0))
    sd = g.sd
    # peanut farmer scoring: seat 0 owns 1 peanut farmer -> 1 peanut card; seat 1 owns none
    assert sd["offerings"] == [[1, 2, 1, 1], [1, 1, 1, 1]]
    assert sd["supply"] == [23, 22, 23, 23]
    assert sd["stones"] == [1, 3]  # no stonecutter scoring


# Game R: seat 1 collects 3 rice farmers from column 0, then takes 3 cards in one turn;
# seat 0 takes from column 1 (harmless reveals). The new columns: [SC, PF, SH, SH], [SC, PR, PR, PR].
COLS_R = market([RF, RF, PR, PR], [PR, SH, SH, SH], [SH, SH, SC, SC], [SC, SC, PR, PR])
NEXT_R = [SC, PF, SH, SH, SC, PR, PR, PR]


def _game_r() -> Game:
    g = Game(2, prefix=COLS_R, rest=NEXT_R, starters=[0, 1])
    g.turn(FARMERS(PEANUTS), [COL(1)])  # T1 s0 takes PR, reveals SH
    g.turn(FARMERS(BANANAS), [COL(0)])  # T2 s1 takes RF, reveals RF (no rice farmer in a tableau)
    g.turn(FARMERS(BANANAS), [COL(1)])  # T3 s0 takes SH, reveals SH
    g.turn(FARMERS(CHILIES), [COL(0)])  # T4 s1 takes RF, reveals PR (nobody owns a priest)
    g.turn(FARMERS(CHILIES), [COL(1)])  # T5 s0 takes SH, reveals SH
    return g


def test_refill_several_takes_and_redeal_taken_same_turn():
    """Phase 3: several takes from one column; the emptied column is re-dealt at once (4 cards) and taken from."""
    g = _game_r()
    sd = g.sd
    assert sd["hands"][1] == counts(rf=3) and sd["stones"] == [2, 3]
    assert sd["market"][0] == [PR, PR]
    assert len(sd["deck"]) == 34
    g.act(PASS, FARMERS(RICE, 3))  # 2 stones: 3 -> 1; three takes owed
    g.act(COL(0))
    assert g.sd["market"][0] == [PR]
    g.act(COL(0))  # empties column 0: deck cards 17-20 are dealt into it at once
    sd = g.sd
    assert sd["market"][0] == [SC, PF, SH, SH]
    assert len(sd["deck"]) == 30
    assert sd["deck"][:4] == [SC, PR, PR, PR]
    assert sd["hands"][1] == counts(pr=2)
    assert sd["phase"] == "refill" and sd["to_move"] == 1
    g.act(COL(0))  # the new column's first card, in the same turn
    sd = g.sd
    assert sd["hands"][1] == counts(sc=1, pr=2)
    assert sd["market"][0] == [PF, SH, SH]
    # scored: PF (first card of column 0 after the last take): seat 0 owns a peanut farmer
    assert sd["offerings"][0] == [1, 2, 1, 1] and sd["offerings"][1] == [1, 1, 1, 1]
    assert sd["supply"] == [23, 22, 23, 23]
    assert sd["stones"] == [2, 1]
    assert sd["active"] == 0 and sd["phase"] == "take_offering"


def test_scored_type_new_column_when_last_take_empties_column():
    """Phase 4: when the last take empties its column, the new column's first card is scored."""
    g = _game_r()
    g.act(PASS, FARMERS(RICE, 3), COL(0), COL(0), COL(0))  # T6 as above: stones 2, 1
    assert g.sd["market"][1] == [SH]
    g.act(PASS, PLAY_PR, COL(1))  # T7 s0 takes the last card of column 1: new column [SC, PR, PR, PR]
    sd = g.sd
    assert sd["market"][1] == [SC, PR, PR, PR]
    # the stonecutter (new first card) is scored: +1 stone each; a priest was not scored
    assert sd["stones"] == [2 + 1, 1 + 1]
    assert sd["vp_tokens"] == [0, 0]
    assert sd["hands"][0] == counts(sh=3)
    assert sd["active"] == 1


def test_refill_hand_must_reach_three():
    """Phase 3: takes go on until the hand holds 3 cards; only non-empty columns can be chosen."""
    g = _game_r()
    g.act(PASS, FARMERS(RICE, 3))
    assert g.legal() == [COL(0), COL(1), COL(2), COL(3)]
    for k in range(3):
        assert g.sd["phase"] == "refill" and sum(g.sd["hands"][1]) == k
        g.act(COL(3))
    assert sum(g.sd["hands"][1]) == 3
    assert g.sd["phase"] == "take_offering" and g.sd["active"] == 0
    # column 3 [SC, SC, PR, PR] gave SC, SC, PR; PR left on top: priest scoring, nobody owns one
    assert g.sd["hands"][1] == counts(sc=2, pr=1)
    assert g.sd["vp_tokens"] == [0, 0]


@pytest.mark.parametrize("col", [0, 1, 2, 3])
def test_refill_each_column_choice(col):
    """Phase 3: any of the four columns may be chosen (no demon)."""
    g = Game(2, prefix=COLS_R, rest=NEXT_R, starters=[0, 1])
    first = g.sd["market"][col][0]
    g.act(PASS, FARMERS(PEANUTS), COL(col))
    assert g.sd["hands"][0] == [int(k == first) + int(k in (5, 6)) for k in range(7)]
    assert g.sd["market"][col] == COLS_R[4 * col + 1 : 4 * col + 4]
