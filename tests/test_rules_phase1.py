"""docs/rules.md section 3, phase 1 (take an offering card, optional): the price max(0, 5 - f) with f
farmers of that category in the tableau, passing, no take without enough stones, and no take from
an empty supply category."""

from __future__ import annotations

import pytest
from scenario import (
    BANANAS,
    CF,
    CHOOSE,
    CHILIES,
    COL,
    FARMERS,
    PASS,
    PEANUTS,
    PLAY_PR,
    PR,
    RF,
    RICE,
    SH,
    TAKE,
    Game,
    drain_chilies_game,
    market,
    whole_supply_empty_game,
)

# Every take in these games reveals a priest or a shrine while nobody owns one: phase 4 changes nothing.
HARMLESS_4P = market(
    [RF, PR, PR, PR],
    [SH, SH, SH, SH],
    [PR, PR, SH, SH],
    [SH, PR, PR, PR],
)


def test_phase1_cost_5_without_farmers_and_not_enough_stones():
    """Phase 1: with no farmer of the category the price is 5; with fewer stones the take is illegal."""
    g = Game(4, prefix=HARMLESS_4P, starters=[0, 1, 2, 3])
    # seat 0 has 2 stones and no farmer in its tableau: every category costs 5 > 2 -> pass only
    assert g.legal() == [PASS]
    before = g.sd
    with pytest.raises(ValueError):
        g.env.step(TAKE(RICE))
    assert g.sd == before  # an illegal action changes nothing
    g.turn(FARMERS(CHILIES), [COL(1)])
    # seat 1 (3 stones) and seat 2 (4 stones): 5 > stones -> pass only
    assert g.legal() == [PASS]
    g.turn(FARMERS(CHILIES), [COL(1)])
    assert g.legal() == [PASS]
    g.turn(FARMERS(PEANUTS), [COL(0)])
    # seat 3 has 5 stones: every category costs exactly 5 -> all four are legal
    assert g.sd["to_move"] == 3 and g.sd["stones"][3] == 5
    assert g.legal() == [0, 1, 2, 3, PASS]
    g.act(TAKE(RICE))
    sd = g.sd
    assert sd["stones"] == [2, 3, 4, 0]  # 5 - 5
    assert sd["offerings"][3] == [2, 1, 1, 1]
    assert sd["supply"] == [20, 21, 21, 21]  # 25 - 4 = 21, one rice taken
    assert sd["phase"] == "play" and sd["to_move"] == 3


def test_phase1_pass_changes_nothing():
    """Phase 1: passing takes no card and costs nothing; the turn goes on to phase 2a."""
    g = Game(4, prefix=HARMLESS_4P, starters=[0, 1, 2, 3])
    g.turn(FARMERS(CHILIES), [COL(1)]).turn(FARMERS(CHILIES), [COL(1)]).turn(FARMERS(PEANUTS), [COL(0)])
    before = g.sd
    g.act(PASS)  # seat 3 could take (5 stones) but passes
    sd = g.sd
    assert sd["phase"] == "play" and sd["to_move"] == 3
    assert sd["stones"] == before["stones"] == [2, 3, 4, 5]
    assert sd["offerings"] == before["offerings"]
    assert sd["supply"] == before["supply"] == [21] * 4


def test_phase1_cost_lower_with_farmers():
    """Phase 1: the price is 5 - f (1 farmer: 4, 2 farmers: 3), counted before this turn's phase 2."""
    g = Game(4, prefix=HARMLESS_4P, starters=[0, 1, 2, 3])
    # round 1: seats 0/1 play their chili farmer, seat 2 its peanut farmer and takes the rice farmer
    g.turn(FARMERS(CHILIES), [COL(1)])  # reveals a shrine: nobody owns one
    g.turn(FARMERS(CHILIES), [COL(1)])
    g.turn(FARMERS(PEANUTS), [COL(0)])  # seat 2 hand: rice, chili starter farmers + the rice farmer
    g.turn(FARMERS(BANANAS), [COL(1)], offering=TAKE(RICE))  # seat 3: rice for 5 stones
    # round 2
    assert g.legal() == [PASS]  # seat 0: chili costs 4 > 2 stones
    g.turn(FARMERS(PEANUTS), [COL(2)])
    assert g.legal() == [PASS]  # seat 1: chili costs 4 > 3 stones
    g.turn(FARMERS(BANANAS), [COL(2)])
    # seat 2: 4 stones, 1 peanut farmer -> peanuts cost 4 (legal), every other category 5 (not)
    assert g.sd["stones"][2] == 4
    assert g.legal() == [TAKE(PEANUTS), PASS]
    g.act(PASS, FARMERS(RICE, 2))  # 2 rice farmers cost 1 stone: 4 -> 3
    assert g.sd["stones"][2] == 3
    g.act(COL(3), COL(3))  # two takes (hand 1 -> 3); the last reveals a priest
    assert g.legal() == [PASS]  # seat 3: 0 stones
    g.turn(FARMERS(PEANUTS), [COL(0)])
    # round 3
    g.turn(FARMERS(BANANAS), [COL(0)])  # seat 0
    g.turn(FARMERS(RICE), [COL(2)])  # seat 1
    # seat 2: 3 stones, 2 rice farmers -> rice costs 5 - 2 = 3 (legal), peanuts 5 - 1 = 4 (not)
    sd = g.sd
    assert sd["to_move"] == 2 and sd["stones"] == [2, 3, 3, 0]
    assert sd["tableaus"][2][RF] == 2
    assert g.legal() == [TAKE(RICE), PASS]
    g.act(TAKE(RICE))
    sd = g.sd
    assert sd["stones"][2] == 0  # 3 - 3
    assert sd["offerings"][2] == [2, 1, 1, 1]
    assert sd["supply"] == [19, 21, 21, 21]  # seat 3 took one rice before, seat 2 now


def test_phase1_cost_0_with_5_or_more_farmers():
    """Phase 1: with 5 (or 6) farmers of the category the card is free, even with 0 stones."""
    pre = market([CF, CF, CF, CF], [PR, PR, PR, PR], [SH, SH, SH, SH], [PR, PR, PR, PR]) + [CF, SH, SH, SH]
    g = Game(2, prefix=pre, starters=[0, 1])  # seat 0: peanut/banana/chili farmers, 2 stones
    g.turn(FARMERS(PEANUTS), [COL(0)])  # takes a chili farmer; reveals one (seat 0 owns none yet)
    g.turn(FARMERS(RICE), [COL(1)])
    g.turn(FARMERS(CHILIES, 2), [COL(0), COL(0)])  # 2 farmers: 1 stone (2 -> 1); chili farmers 2
    g.turn(FARMERS(BANANAS), [COL(1)])
    # 2 more chili farmers: 1 stone (1 -> 0), 4 in the tableau; the 2nd take is the 5th deck chili farmer
    g.turn(FARMERS(CHILIES, 2), [COL(0), COL(0)])
    g.turn(FARMERS(CHILIES), [COL(2)])
    assert g.sd["stones"][0] == 0 and g.sd["tableaus"][0][CF] == 4
    assert g.legal() == [PASS]  # 5 - 4 = 1 > 0 stones
    g.turn(FARMERS(CHILIES), [COL(2)])  # 5 chili farmers
    g.turn(PLAY_PR, [COL(2)])
    sd = g.sd
    assert sd["stones"][0] == 0 and sd["tableaus"][0][CF] == 5
    chilies_before, supply_before = sd["offerings"][0][CHILIES], sd["supply"][CHILIES]
    assert g.legal() == [TAKE(CHILIES), PASS]  # max(0, 5 - 5) = 0 <= 0 stones
    g.act(TAKE(CHILIES))
    sd = g.sd
    assert sd["stones"][0] == 0
    assert sd["offerings"][0][CHILIES] == chilies_before + 1
    assert sd["supply"][CHILIES] == supply_before - 1
    g.act(FARMERS(CHILIES), COL(3))  # the 6th chili farmer (starter + 5 from the deck)
    g.turn(PLAY_PR, [COL(3)])
    sd = g.sd
    assert sd["tableaus"][0][CF] == 6 and sd["stones"][0] == 0
    assert g.legal() == [TAKE(CHILIES), PASS]  # max(0, 5 - 6) = 0
    g.act(TAKE(CHILIES))
    assert g.sd["stones"][0] == 0
    assert g.sd["offerings"][0][CHILIES] == chilies_before + 2


def test_phase1_empty_category_cannot_be_taken():
    """Phase 1: a category whose supply is empty cannot be taken, whatever the stones."""
    g = drain_chilies_game()
    g.act(CHOOSE(RICE), CHOOSE(BANANAS))  # the two farmer choices end seat 2's turn
    sd = g.sd
    assert sd["supply"][CHILIES] == 0
    assert sd["to_move"] == 3 and sd["phase"] == "take_offering"
    # seat 3: 6 stones; rice and peanuts cost 4 (one farmer each), bananas 5, chilies would cost 5
    assert sd["stones"][3] == 6
    assert g.legal() == [TAKE(RICE), TAKE(PEANUTS), TAKE(BANANAS), PASS]
    with pytest.raises(ValueError):
        g.env.step(TAKE(CHILIES))
    assert g.sd == sd


def test_phase1_whole_supply_empty_only_pass():
    """Phase 1: with every category empty only passing is legal (seat 1 has 7 stones)."""
    g = whole_supply_empty_game()  # see scenario.py
    g.act(COL(0))  # seat 0's last take; seat 1's turn begins
    sd = g.sd
    assert sd["supply"] == [0, 0, 0, 0]
    assert sd["to_move"] == 1 and sd["phase"] == "take_offering" and sd["stones"][1] == 7
    assert g.legal() == [PASS]
