"""docs/rules.md section 3, phase 4 (scoring): the four kinds (stonecutter stones, priest VP, shrine
stones-or-VP chosen in turn order from the active player, farmer: exactly one offering card per
owner in turn order from the active player), the majority bonus (strictly more than every other
player and at least 2; ties give none), and the farmer choice when the scored category is empty
(actions 40-43)."""

from __future__ import annotations

import pytest
from scenario import (
    BANANAS,
    CF,
    CHILIES,
    CHOOSE,
    COL,
    FARMERS,
    OWN,
    PASS,
    PEANUTS,
    PF,
    PLAY_PR,
    PLAY_SC,
    PLAY_SH,
    PR,
    RICE,
    SC,
    SH,
    STONES,
    SUPPLY,
    VP,
    Game,
    drain_chilies_game,
    market,
    whole_supply_empty_game,
)

# ----------------------------------------------------------------------------- stonecutters


def test_scoring_stonecutter_one_stone_each_majority_and_tie():
    """Phase 4 stonecutter: 1 stone per stonecutter; +1 for a strict majority of >= 2; a tie gives no bonus."""
    cols = market([SC, SC, SC, SC], [PR, PR, PR, PR], [PR, SC, SH, SH], [SH, SH, SH, SH])
    g = Game(3, prefix=cols, rest=[SC, SH, SH, SH], starters=[0, 1, 2])  # stones 2, 3, 4
    g.turn(FARMERS(PEANUTS), [COL(0)])  # s0 takes SC, reveals SC: 1 stonecutter each -> +1 each
    assert g.sd["stones"] == [3, 4, 5]
    g.turn(FARMERS(RICE), [COL(0)])  # s1 takes SC, reveals SC: +1 each (all tied at 1: no bonus)
    assert g.sd["stones"] == [4, 5, 6]
    g.turn(FARMERS(RICE), [COL(1)])  # s2 reveals PR: nobody owns a priest
    assert g.sd["stones"] == [4, 5, 6]
    # s0 plays its stonecutter (2 in the tableau) and takes the last SC of column 0: the new
    # column's first card, SC, is scored: s0 2 + 1 (2 > 1 and >= 2), s1 1, s2 1
    g.turn(PLAY_SC, [COL(0)])
    sd = g.sd
    assert [t[SC] for t in sd["tableaus"]] == [2, 1, 1]
    assert sd["stones"] == [4 + 3, 5 + 1, 6 + 1]
    # s1 plays its stonecutter (2 = s0's 2) and reveals SC: 2, 2, 1 and no bonus
    g.turn(PLAY_SC, [COL(2)])
    sd = g.sd
    assert [t[SC] for t in sd["tableaus"]] == [2, 2, 1]
    assert sd["stones"] == [7 + 2, 6 + 2, 7 + 1]
    assert sd["vp_tokens"] == [0, 0, 0]


# ----------------------------------------------------------------------------- priests


def test_scoring_priest_vp_majority_needs_two_and_tie():
    """Phase 4 priest: 1 VP per priest; a lone priest (1 > 0) gets no bonus; 2 vs 1 gets +1; 2 vs 2 none."""
    cols = market([PR, PR, PR, PR], [SH, SH, SH, SH], [SH, SH, SH, SH], [SH, SC, SC, SC])
    g = Game(3, prefix=cols, rest=[PR, PR, PR, SC], starters=[0, 1, 2])
    g.turn(FARMERS(PEANUTS), [COL(0)])  # s0 takes PR #1, reveals PR: nobody owns a priest
    g.turn(FARMERS(RICE), [COL(0)])  # s1 takes PR #2, reveals PR
    g.turn(FARMERS(RICE), [COL(1)])  # s2 reveals SH: nobody owns a shrine
    assert g.sd["vp_tokens"] == [0, 0, 0]
    g.turn(PLAY_PR, [COL(0)])  # s0: 1 priest; takes PR #3, reveals PR #4: s0 1 VP, no bonus (1 < 2)
    assert g.sd["vp_tokens"] == [1, 0, 0]
    g.turn(PLAY_PR, [COL(0)])  # s1: 1 priest; takes PR #4, column 0 re-dealt, first card PR: 1 each
    assert g.sd["vp_tokens"] == [2, 1, 0]
    g.turn(FARMERS(PEANUTS), [COL(1)])  # s2 reveals SH
    g.turn(PLAY_PR, [COL(0)])  # s0: 2 priests; reveals PR: s0 2 + 1 bonus, s1 1
    sd = g.sd
    assert [t[PR] for t in sd["tableaus"]] == [2, 1, 0]
    assert sd["vp_tokens"] == [2 + 3, 1 + 1, 0]
    g.turn(PLAY_PR, [COL(0)])  # s1: 2 priests; reveals PR: tie 2-2 -> 2 each, no bonus
    sd = g.sd
    assert [t[PR] for t in sd["tableaus"]] == [2, 2, 0]
    assert sd["vp_tokens"] == [5 + 2, 2 + 2, 0]
    assert sd["stones"] == [2, 3, 4]  # no stonecutter was scored


# ----------------------------------------------------------------------------- shrines


def _shrine_game() -> Game:
    """4 players (starter sets 0..3). Nine stonecutter reveals pay for one shrine each (T6-T9; see
    test_rules_offering._five_shrines_game for the same opening): after T9 stones 3, 4, 5, 6, one
    shrine in every tableau, no offering card left. Column 1 ends with a shrine; the column dealt
    after it is [SH, SH, SH, PR]."""
    cols = market([SH, SC, SC, SC], [SH, SC, SC, SH], [SH, SC, SC, PR], [SH, SH, SC, PR])
    g = Game(4, prefix=cols, rest=[SH, SH, SH, PR], starters=[0, 1, 2, 3])
    g.turn(FARMERS(PEANUTS), [COL(0)])
    g.turn(FARMERS(RICE), [COL(1)])
    g.turn(FARMERS(RICE), [COL(2)])
    g.turn(FARMERS(RICE), [COL(3)])
    g.turn(FARMERS(BANANAS), [COL(0)])
    for cat, col in ((RICE, 1), (PEANUTS, 2), (BANANAS, 3), (CHILIES, 0)):
        g.act(PASS, PLAY_SH, OWN(cat), OWN(cat), OWN(cat), OWN(cat), SUPPLY(CHILIES), COL(col))
    return g


def test_scoring_shrine_choice_in_turn_order_without_majority():
    """Phase 4 shrine: each owner chooses stones or VP (1 per shrine), in turn order from the active player."""
    g = _shrine_game()
    sd = g.sd
    assert sd["to_move"] == 1 and sd["stones"] == [3, 4, 5, 6] and sd["vp_tokens"] == [0] * 4
    assert [t[SH] for t in sd["tableaus"]] == [1, 1, 1, 1]
    g.act(PASS, FARMERS(BANANAS), COL(1))  # s1 takes SC, reveals SH
    order = []
    for choice in (STONES, STONES, VP, STONES):
        sd = g.sd
        assert sd["phase"] == "shrine_reward" and sd["scored_type"] == SH
        assert g.legal() == [STONES, VP]
        obs = g.observe(sd["to_move"])["observation"]
        assert obs[272 + SH] == 1.0 and obs[279] == pytest.approx(1 / 5) and obs[280] == 0.0
        order.append(sd["to_move"])
        g.act(choice)
    assert order == [1, 2, 3, 0]  # from the active seat 1, clockwise
    sd = g.sd
    assert sd["stones"] == [3 + 1, 4 + 1, 5 + 1, 6]
    assert sd["vp_tokens"] == [0, 0, 0, 1]
    assert sd["phase"] == "take_offering" and sd["active"] == 2


def test_scoring_shrine_majority_and_tie():
    """Phase 4 shrine: 2 shrines vs 1 get 2 + 1 of the chosen reward; 2 vs 2 get 2 each, no bonus."""
    g = _shrine_game()
    g.act(PASS, FARMERS(BANANAS), COL(1), STONES, STONES, VP, STONES)  # T10: 4, 5, 6, 6 stones; s3 1 VP
    # T11: s2 takes the last card of column 1 (a shrine); the new column's first card, SH, is scored
    g.act(PASS, FARMERS(PEANUTS), COL(1), STONES, STONES, STONES, STONES)
    sd = g.sd
    assert sd["stones"] == [5, 6, 7, 7] and sd["vp_tokens"] == [0, 0, 0, 1]
    # T12: s3 plays its 2nd shrine (7 -> 0); nobody has an offering card: only the supply card
    g.act(PASS, PLAY_SH)
    assert g.sd["phase"] == "offer_supply" and g.sd["to_move"] == 3
    g.act(SUPPLY(RICE), COL(1))  # takes SH, reveals SH: s3 has 2 shrines, the others 1 -> bonus
    sd = g.sd
    assert sd["phase"] == "shrine_reward" and sd["to_move"] == 3
    obs = g.observe(3)["observation"]
    assert obs[279] == pytest.approx(3 / 5) and obs[280] == 1.0  # 2 shrines + 1 bonus
    g.act(VP)  # s3: 3 VP
    assert g.sd["to_move"] == 0
    assert g.observe(0)["observation"][279] == pytest.approx(1 / 5)
    g.act(STONES, STONES, STONES)
    sd = g.sd
    assert sd["vp_tokens"] == [0, 0, 0, 1 + 3]
    assert sd["stones"] == [6, 7, 8, 0]
    # T13, T14: s0 and s1 reveal priests (nobody owns one)
    g.turn(FARMERS(CHILIES), [COL(2)])
    g.turn(FARMERS(CHILIES), [COL(3)])
    # T15: s2 plays its 2nd shrine (8 -> 1), only a supply card is offered; takes SH, reveals SH
    g.act(PASS, PLAY_SH, SUPPLY(RICE), COL(1))
    sd = g.sd
    assert [t[SH] for t in sd["tableaus"]] == [1, 1, 2, 2]
    assert sd["phase"] == "shrine_reward" and sd["to_move"] == 2
    assert g.observe(2)["observation"][279] == pytest.approx(2 / 5)  # tie at 2: no bonus
    assert g.observe(2)["observation"][280] == 0.0
    g.act(VP, VP, VP, VP)  # s2, s3, s0, s1
    sd = g.sd
    assert sd["vp_tokens"] == [0 + 1, 0 + 1, 0 + 2, 4 + 2]
    assert sd["stones"] == [6, 7, 1, 0]
    assert sd["active"] == 3


# ----------------------------------------------------------------------------- farmers


def test_scoring_farmer_one_card_per_owner_majority_and_tie():
    """Phase 4 farmer: 1 card per owner (not per farmer); a lone farmer gets no bonus; 2 vs 1 +1; 2 vs 2 none."""
    cols = market([CF, CF, CF, CF], [SH, SH, SH, SH], [PR, PR, PR, PR], [SH, SH, SH, SH])
    g = Game(3, prefix=cols, rest=[CF, PR, PR, PR], starters=[0, 1, 2])  # all start with a chili farmer in hand
    # T1 s0 plays its chili farmer, takes CF #1, reveals CF #2: s0 (1 farmer) gets 1, no bonus (1 < 2)
    g.turn(FARMERS(CHILIES), [COL(0)])
    sd = g.sd
    assert [o[CHILIES] for o in sd["offerings"]] == [2, 1, 1]
    assert sd["supply"] == [22, 22, 22, 21]
    # T2 s1 plays its chili farmer, takes CF #2, reveals CF #3: s1 and s0 one each (s2 owns none)
    g.turn(FARMERS(CHILIES), [COL(0)])
    assert [o[CHILIES] for o in g.sd["offerings"]] == [3, 2, 1]
    g.turn(FARMERS(RICE), [COL(1)])  # T3 s2 reveals SH: nobody owns one
    # T4 s0 plays CF #1 (2 chili farmers), takes CF #3, reveals CF #4: s0 1 + 1 bonus (2 > 1), s1 1
    g.turn(FARMERS(CHILIES), [COL(0)])
    assert [g.sd["tableaus"][q][CF] for q in range(3)] == [2, 1, 0]
    assert [o[CHILIES] for o in g.sd["offerings"]] == [5, 3, 1]
    # T5 s1 plays CF #2 (2 farmers), takes CF #4 (column 0 re-dealt: CF #5 first): tie 2-2, 1 each
    g.turn(FARMERS(CHILIES), [COL(0)])
    sd = g.sd
    assert [sd["tableaus"][q][CF] for q in range(3)] == [2, 2, 0]
    assert [o[CHILIES] for o in sd["offerings"]] == [6, 4, 1]
    assert sd["supply"] == [22, 22, 22, 22 - 1 - 2 - 3 - 2]
    assert sd["offerings"][0][:3] == [1, 1, 1] and sd["offerings"][1][:3] == [1, 1, 1]


def test_scoring_farmer_empty_category_choice_in_turn_order():
    """Phase 4 farmer: when the scored category is empty at a player's turn, that player takes any
    non-empty category (40-43); owners are served from the active player on; the bonus comes last."""
    g = drain_chilies_game()  # see scenario.drain_chilies_game for the hand-derived trace
    sd = g.sd
    # T11 (active seat 2) scored the chili farmer with 2 chilies left: s2 took one, s0 the last
    assert sd["active"] == 2 and sd["scored_type"] == CF
    assert sd["supply"] == [21, 21, 21, 0]
    assert [o[CHILIES] for o in sd["offerings"]] == [10, 6, 7, 2]
    assert sd["stones"] == [1, 1, 1, 6]
    assert sd["phase"] == "farmer_choice" and sd["to_move"] == 1
    assert g.legal() == [CHOOSE(RICE), CHOOSE(PEANUTS), CHOOSE(BANANAS)]  # not the empty chilies
    obs = g.observe(1)["observation"]
    assert obs[8] == 1.0  # decision "farmer_choice"
    assert obs[272 + CF] == 1.0 and obs[279] == pytest.approx(1 / 5) and obs[280] == 0.0
    g.act(CHOOSE(RICE))
    sd = g.sd
    assert sd["offerings"][1] == [2, 1, 1, 6]
    assert sd["supply"] == [20, 21, 21, 0]
    # then s0's majority bonus card (2 chili farmers vs 1, 1, 0), also from an empty category
    assert sd["phase"] == "farmer_choice" and sd["to_move"] == 0
    assert g.observe(0)["observation"][280] == 1.0
    assert g.legal() == [CHOOSE(RICE), CHOOSE(PEANUTS), CHOOSE(BANANAS)]
    g.act(CHOOSE(BANANAS))
    sd = g.sd
    assert sd["offerings"][0] == [1, 1, 2, 10]
    assert sd["supply"] == [20, 21, 20, 0]
    assert sd["offerings"][2] == [1, 1, 1, 7] and sd["offerings"][3] == [1, 1, 1, 2]
    assert sd["phase"] == "take_offering" and sd["active"] == 3 and sd["to_move"] == 3
    # every chili card is accounted for: 4 starting cards + 21 from the supply
    assert sum(o[CHILIES] for o in sd["offerings"]) == 25


def test_scoring_farmer_whole_supply_empty_gives_nothing():
    """Phase 4 farmer: with the whole supply empty the owners get nothing and nobody is asked to choose."""
    g = whole_supply_empty_game()  # see scenario.py: a replayed deal reaching an empty supply
    before = g.sd
    assert before["supply"] == [0, 0, 0, 0]
    assert before["phase"] == "refill" and before["active"] == 0 and sum(before["hands"][0]) == 2
    assert before["market"][0] == [SC, PF]
    assert [t[PF] for t in before["tableaus"]] == [2, 1, 1, 2]  # every seat owns peanut farmers
    g.act(COL(0))  # the last take: the peanut farmer is scored
    sd = g.sd
    assert sd["decisions"] == before["decisions"] + 1  # no farmer_choice decision
    assert sd["offerings"] == before["offerings"]
    assert sd["supply"] == [0, 0, 0, 0]
    assert sd["stones"] == before["stones"] and sd["vp_tokens"] == before["vp_tokens"]
    assert sd["phase"] == "take_offering" and sd["active"] == 1
