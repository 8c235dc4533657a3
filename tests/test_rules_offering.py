"""docs/rules.md section 3, phase 2b (the offering phase after a shrine): the order (the other players
from the active player's left, clockwise, face up; then the active player's own card face down;
then a supply card face up), players without offering cards skipped, the supply card also when
the active player had no card, the altar stack order (state_dict ``altar`` is top first) and who
knows each altar card (``altar_known_by`` and observation slots 248-253)."""

from __future__ import annotations

import pytest
from scenario import (
    BANANAS,
    CHILIES,
    COL,
    FARMERS,
    OWN,
    PASS,
    PEANUTS,
    PLAY_SH,
    PR,
    RICE,
    SC,
    SH,
    SUPPLY,
    TAKE,
    Game,
    market,
    whole_supply_empty_game,
)

ALL4 = [0, 1, 2, 3]


def _seat3_shrine_game() -> Game:
    """4 players (starter sets 0..3). Round 1: two stonecutter reveals (+1 stone to every seat each,
    each seat owns one stonecutter): stones 4, 5, 6, 7; seat 3 takes a shrine. Every other reveal is
    a priest or a shrine while nobody owns one. Round 2: seats 0-2 play farmers; seat 3 is to move."""
    cols = market([PR, SC, SC, PR], [PR, PR, SH, SH], [SH, PR, PR, SH], [SH, SH, SH, PR])
    g = Game(4, prefix=cols, starters=ALL4)
    g.turn(FARMERS(PEANUTS), [COL(0)])  # s0 takes PR, reveals SC
    g.turn(FARMERS(RICE), [COL(0)])  # s1 takes SC, reveals SC
    g.turn(FARMERS(RICE), [COL(1)])  # s2 takes PR, reveals PR
    g.turn(FARMERS(RICE), [COL(2)])  # s3 takes SH, reveals PR
    g.turn(FARMERS(BANANAS), [COL(1)])  # s0 takes PR, reveals SH
    g.turn(FARMERS(BANANAS), [COL(3)])  # s1 takes SH, reveals SH
    g.turn(FARMERS(PEANUTS), [COL(3)])  # s2 takes SH, reveals SH
    return g


def test_offering_order_face_up_then_face_down_then_supply():
    """Phase 2b: seats a+1, a+2, ... (clockwise, wrapping) face up, then a face down, then a supply card."""
    g = _seat3_shrine_game()
    sd = g.sd
    assert sd["to_move"] == 3 and sd["stones"] == [4, 5, 6, 7]
    g.act(PASS, PLAY_SH)  # 7 -> 0 stones
    # seat 3 is active: seat 0 (its left, wrapping around) offers first
    sd = g.sd
    assert sd["phase"] == "offer_own" and sd["active"] == 3 and sd["to_move"] == 0
    assert g.legal() == [OWN(RICE), OWN(PEANUTS), OWN(BANANAS), OWN(CHILIES)]
    assert g.observe(0)["observation"][2] == 1.0  # decision "offer_face_up"
    g.act(OWN(RICE))
    assert g.sd["to_move"] == 1 and g.sd["phase"] == "offer_own"
    g.act(OWN(PEANUTS))
    assert g.sd["to_move"] == 2 and g.sd["phase"] == "offer_own"
    g.act(OWN(RICE))
    sd = g.sd
    assert sd["to_move"] == 3 and sd["phase"] == "offer_own"  # the active player's own card, face down
    assert g.observe(3)["observation"][3] == 1.0  # decision "offer_face_down"
    assert sd["altar"] == [RICE, PEANUTS, RICE]  # top first: seat 2's card on top
    g.act(OWN(BANANAS))
    sd = g.sd
    assert sd["phase"] == "offer_supply" and sd["to_move"] == 3
    assert g.legal() == [SUPPLY(RICE), SUPPLY(PEANUTS), SUPPLY(BANANAS), SUPPLY(CHILIES)]
    g.act(SUPPLY(CHILIES))
    sd = g.sd
    assert sd["phase"] == "refill" and sd["to_move"] == 3
    # the stack, top first: supply chili, seat 3 bananas (face down), seat 2 rice, seat 1 peanuts, seat 0 rice
    assert sd["altar"] == [CHILIES, BANANAS, RICE, PEANUTS, RICE]
    assert sd["offerings"] == [[0, 1, 1, 1], [1, 0, 1, 1], [0, 1, 1, 1], [1, 1, 0, 1]]
    assert sd["supply"] == [21, 21, 21, 20]
    assert sd["stones"] == [4, 5, 6, 0]


def test_offering_face_down_card_known_only_by_its_placer():
    """Phase 2b: face-up cards are known by all, the face-down card only by the active player."""
    g = _seat3_shrine_game()
    g.act(PASS, PLAY_SH, OWN(RICE), OWN(PEANUTS), OWN(RICE), OWN(BANANAS), SUPPLY(CHILIES))
    sd = g.sd
    assert sd["altar"] == [CHILIES, BANANAS, RICE, PEANUTS, RICE]
    assert sd["altar_known_by"] == [ALL4, [3], ALL4, ALL4, ALL4]
    # observation: 248 size/10, 249-252 known cards by category /10, 253 unknown /10,
    # 254 + 4d + c the known category at depth d (0 = top)
    for seat in (0, 1, 2):
        obs = g.observe(seat)["observation"]
        assert obs[248] == pytest.approx(0.5)
        assert list(obs[249:253]) == pytest.approx([0.2, 0.1, 0.0, 0.1])  # rice 2, peanuts 1, chilies 1
        assert obs[253] == pytest.approx(0.1)  # the face-down bananas
        assert list(obs[254:258]) == [0, 0, 0, 1]  # depth 0: chilies
        assert list(obs[258:262]) == [0, 0, 0, 0]  # depth 1: unknown to them
        assert list(obs[262:266]) == [1, 0, 0, 0]  # depth 2: rice
        assert list(obs[266:270]) == [0, 1, 0, 0]  # depth 3: peanuts
    obs = g.observe(3)["observation"]
    assert list(obs[249:253]) == pytest.approx([0.2, 0.1, 0.1, 0.1])
    assert obs[253] == 0.0
    assert list(obs[258:262]) == [0, 0, 1, 0]  # seat 3 knows its own face-down bananas


def _five_shrines_game() -> Game:
    """4 players (starter sets 0..3); nine stonecutter reveals pay for five shrines. Hand-derived
    stones (every seat owns exactly one stonecutter, so a SC reveal gives +1 to each seat):
    T1-T3 reveal SC, T4 reveals SH (nobody owns one): 5,6,7,8; T5 reveals SC: 6,7,8,9;
    T6 s1 shrine (7 -> 0), reveal SC: 7,1,9,10; T7 s2 shrine, SC: 8,2,3,11; T8 s3 shrine, SC:
    9,3,4,5; T9 s0 shrine, SC: 3,4,5,6. After these four offering phases every seat has given
    one card in each of them: 4 - 4 = 0 offering cards each. T10 s1 takes rice for 4 (one rice
    farmer), reveals SC: 4,1,6,7; T11 s2 reveals PR (nobody owns one). Seat 3 is to move, 7 stones,
    a shrine in hand."""
    cols = market([SH, SC, SC, SC], [SH, SC, SC, SC], [SH, SC, SC, PR], [SH, SH, SC, PR])
    g = Game(4, prefix=cols, starters=ALL4)
    g.turn(FARMERS(PEANUTS), [COL(0)])  # T1
    g.turn(FARMERS(RICE), [COL(1)])  # T2
    g.turn(FARMERS(RICE), [COL(2)])  # T3
    g.turn(FARMERS(RICE), [COL(3)])  # T4
    g.turn(FARMERS(BANANAS), [COL(0)])  # T5
    # T6-T9: one shrine each (seats 1, 2, 3, 0); every seat offers rice, then peanuts, bananas,
    # chilies; the active seat adds a chili from the supply
    for cat, col in ((RICE, 1), (PEANUTS, 2), (BANANAS, 3), (CHILIES, 0)):
        g.act(PASS, PLAY_SH, OWN(cat), OWN(cat), OWN(cat), OWN(cat), SUPPLY(CHILIES), COL(col))
    g.turn(FARMERS(BANANAS), [COL(1)], offering=TAKE(RICE))  # T10
    g.turn(FARMERS(PEANUTS), [COL(2)])  # T11
    return g


def test_offering_skips_players_without_cards_and_supply_card_still_placed():
    """Phase 2b: a seat with no offering cards is skipped (nothing replaces it); the active player
    without a card of its own still puts a supply card on the altar."""
    g = _five_shrines_game()
    sd = g.sd
    assert sd["to_move"] == 3 and sd["stones"] == [4, 1, 6, 7]
    assert sd["offerings"] == [[0, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
    assert len(sd["altar"]) == 20  # 4 phases x (4 own cards + 1 supply card)
    assert sd["supply"] == [20, 21, 21, 17]
    g.act(PASS, PLAY_SH)
    # seat 0 has no card: skipped; seat 1 offers its only card
    sd = g.sd
    assert sd["phase"] == "offer_own" and sd["to_move"] == 1
    assert g.legal() == [OWN(RICE)]
    g.act(OWN(RICE))
    # seat 2 skipped, seat 3 (active) has no card of its own: straight to the supply card
    sd = g.sd
    assert sd["phase"] == "offer_supply" and sd["to_move"] == 3
    assert len(sd["altar"]) == 21
    g.act(SUPPLY(RICE))
    sd = g.sd
    assert sd["phase"] == "refill" and sd["to_move"] == 3
    assert sd["supply"] == [19, 21, 21, 17]
    assert sd["offerings"] == [[0, 0, 0, 0]] * 4
    # the whole stack, top first: the last phase (supply rice, seat 1 rice), then each earlier phase
    # from the top: its supply chili, the active seat's face-down card, the 3 face-up cards
    assert sd["altar"] == [0, 0] + [3, 3, 3, 3, 3] + [3, 2, 2, 2, 2] + [3, 1, 1, 1, 1] + [3, 0, 0, 0, 0]
    # the face-down cards: seat 0's chilies (T9), seat 3's bananas (T8), seat 2's peanuts (T7), seat 1's rice (T6)
    known = sd["altar_known_by"]
    assert [known[i] for i in (3, 8, 13, 18)] == [[0], [3], [2], [1]]
    assert all(known[i] == ALL4 for i in range(22) if i not in (3, 8, 13, 18))
    # seat 0 does not know 3 of the 22 cards: seat 1's rice, seat 2's peanuts, seat 3's bananas
    obs = g.observe(0)["observation"]
    assert obs[248] == pytest.approx(2.2)
    assert list(obs[249:253]) == pytest.approx([0.5, 0.3, 0.3, 0.8])
    assert obs[253] == pytest.approx(0.3)


def test_offering_supply_card_skipped_when_whole_supply_empty():
    """Phase 2b: the supply card is skipped only when the whole supply is empty (then phase 3 follows)."""
    g = whole_supply_empty_game()  # see scenario.py
    g.act(COL(0))  # seat 0's last take; seat 1: 7 stones, 2 shrines in hand
    g.act(PASS, PLAY_SH)
    for seat in (2, 3, 0):  # the others, face up, from seat 2
        assert g.sd["phase"] == "offer_own" and g.sd["to_move"] == seat
        g.act(OWN(RICE))
    assert g.sd["to_move"] == 1
    g.act(OWN(RICE))  # face down
    sd = g.sd
    assert sd["supply"] == [0, 0, 0, 0]
    assert sd["phase"] == "refill" and sd["to_move"] == 1  # no supply card: nothing to take
    assert sd["altar"] == [RICE] * 4
    assert sd["altar_known_by"] == [[1], ALL4, ALL4, ALL4]
    assert sd["stones"][1] == 0
