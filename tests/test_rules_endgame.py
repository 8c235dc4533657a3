"""docs/rules.md sections 3 (end-of-game ruling) and 4: the game ends at once when a column must be
dealt and the deck holds fewer than 4 cards (the turn stops, no phase 4), the altar valuation
(every example of section 4), the final score (the rulebook's worked 22-point example), the
winner and its tie-breaks (score, then shrines, then stones, then a shared win), the rewards and
the end-of-game infos; both on the scoring kernels and through real games played to the end."""

from __future__ import annotations

import numpy as np
import pytest
from scenario import (
    BANANAS,
    BF,
    CF,
    CHILIES,
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
    RF,
    RICE,
    SC,
    SH,
    SUPPLY,
    Game,
    deck_with,
)

import bali_env
from bali_env import engine as C

# ============================================================================= altar valuation


@pytest.mark.parametrize(
    "counts, values",
    [
        ([5, 4, 4, 3], [3, 2, 2, 1]),  # docs/rules.md 4 examples
        ([5, 4, 3, 2], [3, 2, 1, 0]),
        ([3, 3, 3, 2], [3, 3, 3, 2]),
        ([4, 4, 0, 0], [3, 3, 0, 0]),
        ([2, 2, 2, 2], [3, 3, 3, 3]),  # all equal and non-zero
        ([7, 7, 7, 7], [3, 3, 3, 3]),
        # the rulebook's altar example by category id: rice 3, peanuts 4, bananas 4, chilies 5
        ([3, 4, 4, 5], [1, 2, 2, 3]),
        ([2, 5, 3, 4], [0, 3, 1, 2]),  # same as 5,4,3,2 in another order
        ([0, 4, 0, 4], [0, 3, 0, 3]),  # 4,4,0,0 in another order
        ([4, 4, 2, 2], [3, 3, 2, 2]),  # rulebook: "2 x 2 tied categories score 3 or 2"
        ([3, 0, 0, 0], [3, 0, 0, 0]),  # an absent category is worth 0
        ([1, 2, 3, 0], [1, 2, 3, 0]),
        ([0, 0, 0, 0], [0, 0, 0, 0]),
    ],
)
def test_altar_values_examples(counts, values):
    """Section 4: value = 3 - (distinct counts above), >= 0; absent category 0."""
    out = np.zeros(4, dtype=np.int64)
    C.altar_values(np.array(counts, dtype=np.int64), out)
    assert list(out) == values


# ============================================================================= final score (kernel)


def _fresh_state(n: int) -> np.ndarray:
    """A freshly dealt raw state of an n-player game (a copy; only used for the pure kernels)."""
    e = bali_env.raw_env(num_players=n)
    e.reset(seed=0)
    return e._state.copy()


def _set_altar(s: np.ndarray, counts: list[int]) -> None:
    cards = [c for c in range(4) for _ in range(counts[c])]
    s[C.S_ALTAR : C.S_ALTAR + len(cards)] = cards  # bottom first; the order does not matter here
    s[C.S_ALTAR_LEN] = len(cards)


def _set_seat(s, seat, *, vp=0, shrines=0, stones=0, offerings=(0, 0, 0, 0)) -> None:
    s[C.S_VP + seat] = vp
    s[C.S_TABLEAUS + seat * C.N_CARD_TYPES + C.SHRINE] = shrines
    s[C.S_STONES + seat] = stones
    s[C.S_OFFERINGS + seat * 4 : C.S_OFFERINGS + seat * 4 + 4] = offerings


@pytest.mark.parametrize("stones, expected", [(5, 22), (7, 22), (9, 22), (4, 21), (10, 23), (0, 21)])
def test_final_score_worked_example_22(stones, expected):
    """Section 4: 2 cards worth 3, 3 worth 2, 3 worth 1, 2 VP, 1 shrine, 5-9 stones = 6+6+3+2+4+1 = 22."""
    s = _fresh_state(2)
    # altar: chilies 5 (worth 3), bananas 4 (2), peanuts 3 (1), rice 2 (0)
    _set_altar(s, [2, 3, 4, 5])
    # 2 chilies x 3 + 3 bananas x 2 + 3 peanuts x 1 + 2 rice x 0
    _set_seat(s, 0, vp=2, shrines=1, stones=stones, offerings=(2, 3, 3, 2))
    _set_seat(s, 1, vp=0, shrines=0, stones=0, offerings=(0, 0, 0, 0))
    out = np.zeros(4, dtype=np.int64)
    C.final_scores(s, out)
    assert out[0] == expected
    assert out[1] == 0


def test_final_score_parts():
    """Section 4: VP tokens + 4 per shrine + 1 per full 5 stones + offering values, per seat."""
    s = _fresh_state(3)
    _set_altar(s, [4, 4, 0, 0])  # rice 3, peanuts 3, bananas 0, chilies 0
    _set_seat(s, 0, vp=7, shrines=0, stones=14, offerings=(0, 0, 5, 5))  # 7 + 0 + 2 + 0 = 9
    _set_seat(s, 1, vp=0, shrines=3, stones=15, offerings=(1, 2, 0, 0))  # 0 + 12 + 3 + 9 = 24
    _set_seat(s, 2, vp=1, shrines=0, stones=4, offerings=(0, 0, 0, 0))  # 1
    out = np.zeros(4, dtype=np.int64)
    C.final_scores(s, out)
    assert list(out[:3]) == [9, 24, 1]


# ============================================================================= winners (kernel)


def _winners_of(s: np.ndarray) -> list[int]:
    C.end_game(s)
    assert s[C.S_PHASE] == C.PH_GAME_OVER
    mask = int(s[C.S_WINNERS])
    return [q for q in range(int(s[C.S_NUM_PLAYERS])) if mask >> q & 1]


def _decided_by(s: np.ndarray) -> str:
    """What decided the winner of the finished state ``s`` (``contract.final_result``)."""
    from bali_env.engine.contract import final_result

    return final_result(s)["decided_by"]


def test_winner_highest_score_first():
    """Section 4: the highest score wins, whatever the shrines and stones."""
    s = _fresh_state(3)
    _set_altar(s, [0, 0, 0, 0])  # offering cards worth 0
    _set_seat(s, 0, vp=13, shrines=0, stones=0)  # 13
    _set_seat(s, 1, vp=0, shrines=3, stones=4)  # 12, more shrines and stones
    _set_seat(s, 2, vp=8, shrines=1, stones=4)  # 12
    assert _winners_of(s) == [0]
    assert list(s[C.S_SCORES : C.S_SCORES + 3]) == [13, 12, 12]
    assert _decided_by(s) == "score"


def test_winner_tie_most_shrines():
    """Section 4: equal scores: the most shrines wins (even with fewer stones)."""
    s = _fresh_state(3)
    _set_altar(s, [0, 0, 0, 0])
    _set_seat(s, 0, vp=11, shrines=0, stones=9)  # 11 + 1 = 12, 0 shrines, 9 stones
    _set_seat(s, 1, vp=4, shrines=2, stones=0)  # 4 + 8 = 12, 2 shrines, 0 stones
    _set_seat(s, 2, vp=8, shrines=1, stones=0)  # 12, 1 shrine
    assert _winners_of(s) == [1]
    assert _decided_by(s) == "shrines"


def test_winner_tie_then_most_stones():
    """Section 4: equal scores and shrines: the most stones wins."""
    s = _fresh_state(4)
    _set_altar(s, [0, 0, 0, 0])
    _set_seat(s, 0, vp=6, shrines=1, stones=5)  # 6 + 4 + 1 = 11
    _set_seat(s, 1, vp=6, shrines=1, stones=9)  # 11, 9 stones
    _set_seat(s, 2, vp=6, shrines=1, stones=8)  # 11
    _set_seat(s, 3, vp=10, shrines=0, stones=9)  # 11, fewer shrines
    assert _winners_of(s) == [1]
    assert _decided_by(s) == "stones"


def test_winner_tie_everything_shared():
    """Section 4: equal score, shrines and stones: the tied players share the win."""
    s = _fresh_state(4)
    _set_altar(s, [1, 1, 0, 0])  # rice 3, peanuts 3
    _set_seat(s, 0, vp=2, shrines=1, stones=7, offerings=(1, 0, 0, 3))  # 2 + 4 + 1 + 3 = 10
    _set_seat(s, 1, vp=3, shrines=1, stones=7, offerings=(0, 0, 4, 0))  # 3 + 4 + 1 + 0 = 8
    _set_seat(s, 2, vp=0, shrines=1, stones=7, offerings=(0, 2, 0, 0))  # 0 + 4 + 1 + 6 = 11
    _set_seat(s, 3, vp=3, shrines=1, stones=7, offerings=(1, 0, 0, 0))  # 3 + 4 + 1 + 3 = 11
    assert _winners_of(s) == [2, 3]
    assert list(s[C.S_SCORES : C.S_SCORES + 4]) == [10, 8, 11, 11]
    assert _decided_by(s) == "shared"


# ============================================================================= full games
#
# Two players (seat 0: starter set 0 = peanut/banana/chili farmers, 2 stones; seat 1: set 1 =
# rice/banana/chili, 3 stones). Every take of the game is from column 0, so the "stream" of
# cards dealt into column 0 (its first 4, then 8 new columns of 4 = 36 cards) is taken in order,
# one card per turn: turn t (1..36) takes stream[t-1] and scores stream[t]; turn 36 (seat 1)
# takes stream[35], column 0 must be re-dealt with 2 cards in the deck: the game ends. Columns
# 1-3 (never touched) and the 2 last deck cards hold all 9 shrines and 5 priests.
#
# Each seat's 18 takes (taken[0..17]) are played first-in first-out: its k-th turn (k = 0..17)
# plays a starter farmer for k < 3, else taken[k-3]; taken[15..17] stay in hand. Stonecutters
# are taken at k in J = {0, 1, 2, 6, 7, 8} by BOTH seats, so both play their stonecutters on the
# same round (k = 3, 4, 5, 9, 10, 11) and no stonecutter is ever scored while the counts differ
# (seat 1's taken[j] is scored right after seat 0's turn j, which plays taken[j-3], and
# j - 3 is never in J). So every stonecutter scoring gives both seats the same stones, never a
# majority bonus (equal counts). Stonecutters in the stream: positions 2j (seat 0) and 2j + 1
# (seat 1) for j in J; position 0 is the first market card, never scored. Scored at
# positions 1-5 with 1 stonecutter each: +5; at positions 12-17 (after 3 stonecutters played by
# each): 4 each: +24. Total +29 each: seat 0 2 + 29 = 31, seat 1 3 + 29 = 32.
# Farmers: seat 0 takes peanut/chili farmers, seat 1 rice/banana farmers (at most 3 cards per
# farmer scoring, 5 farmers per category: the supply of 23 never runs out). No priest or
# shrine is ever played (in the first two games): no VP, and an empty altar.

J = (0, 1, 2, 6, 7, 8)
OUTSIDE = [SH] * 9 + [PR] * 5  # columns 1-3 (12 cards) + the 2 undealt cards


def _taken(farmers: list[int], tail: list[int]) -> list[int]:
    """A seat's 18 takes: SC at the indices in J, the 9 farmers in order at the other indices
    below 15, then tail = taken[15..17] (the cards left in hand at the end)."""
    assert len(farmers) == 9 and len(tail) == 3
    f = iter(farmers)
    return [SC if k in J else next(f) for k in range(15)] + list(tail)


def _deck(t0: list[int], t1: list[int], outside: list[int] = OUTSIDE) -> list[int]:
    stream = [card for k in range(18) for card in (t0[k], t1[k])]
    assert len(stream) == 36
    deck = stream[:4] + outside[:12] + stream[4:] + outside[12:]
    assert deck_with(deck) == deck  # exactly the deck's multiset
    return deck


def _action(card: int) -> int:
    return {
        SC: PLAY_SC, PR: PLAY_PR, RF: FARMERS(RICE), PF: FARMERS(PEANUTS), BF: FARMERS(BANANAS), CF: FARMERS(CHILIES)
    }[card]


S0_FARMERS = [PF, CF, PF, CF, PF, CF, PF, CF, PF]  # 5 peanut + 4 chili farmers; the 5th chili is in the tail
S1_FARMERS = [RF, BF, RF, BF, RF, BF, RF, BF, RF]  # 5 rice + 4 banana farmers
STARTERS = {0: [PF, BF, CF], 1: [RF, BF, CF]}


def _play_rounds(g: Game, t0: list[int], t1: list[int], last: int, first: int = 1) -> None:
    """Play global turns first..last first-in first-out (see above), each: pass, play, take column 0."""
    taken = {0: t0, 1: t1}
    for t in range(first, last + 1):
        seat, k = (t - 1) % 2, (t - 1) // 2
        card = STARTERS[seat][k] if k < 3 else taken[seat][k - 3]
        g.act(PASS, _action(card), COL(0))


def _game_1() -> tuple[Game, list[int], list[int]]:
    t0 = _taken(S0_FARMERS, [PR, PR, CF])
    t1 = _taken(S1_FARMERS, [PR, PR, BF])
    g = Game(2, deck=_deck(t0, t1), starters=[0, 1])
    return g, t0, t1


def test_full_game_stones_checkpoints():
    """Full game 1: the hand-derived stones after the early and late stonecutter scorings."""
    g, t0, t1 = _game_1()
    _play_rounds(g, t0, t1, 5)
    assert g.sd["stones"] == [2 + 5, 3 + 5]  # positions 1-5 scored, 1 stonecutter each
    _play_rounds(g, t0, t1, 17, first=6)
    sd = g.sd
    assert [t[SC] for t in sd["tableaus"]] == [4, 4]
    assert sd["stones"] == [7 + 24, 8 + 24]
    assert len(sd["deck"]) == 34 - 4 * 4  # column 0 re-dealt after takes 4, 8, 12 and 16


def test_full_game_offerings_from_farmer_scoring():
    """Full game 1: every farmer scoring of the game, hand-derived, gives these offering cards."""
    # Farmer cards are scored at stream positions 6..35 (seat 0's at even positions, seat 1's at
    # odd ones); the farmers in each tableau at that moment follow from the play order:
    # peanuts (only seat 0 owns; 1 from turn 1, +1 at turns 13, 17, 27, 31): scored at 6, 10
    #   (1 farmer: +1 each), 20, 24 (3: +1 +1 bonus), 28 (4: +2): seat 0 gets 8 -> 9 cards
    # rice (only seat 1; 1 from turn 2, +1 at turns 14, 18, 28, 32): scored at 7, 11 (+1), 21, 25,
    #   29 (+2): seat 1 gets 8 -> 9
    # chilies (both own 1 from turns 5/6; seat 0 +1 at turns 15, 25, 29, 33): scored at 8 (1-1:
    #   +1 each), 18, 22, 26, 34 (seat 0 2+ vs 1: +2, seat 1 +1): seat 0 10, seat 1 6
    # bananas (both own 1 from turns 3/4; seat 1 +1 at turns 16, 26, 30, 34): scored at 9 (+1
    #   each), 19, 23, 27, 35 (seat 1 +2, seat 0 +1): seat 0 6, seat 1 10
    g, t0, t1 = _game_1()
    _play_rounds(g, t0, t1, 35)
    sd = g.sd
    assert sd["offerings"] == [[1, 9, 6, 10], [9, 1, 10, 6]]
    assert sd["supply"] == [23 - 8, 23 - 8, 23 - 14, 23 - 14]
    assert sd["tableaus"] == [[7, 0, 0, 0, 6, 1, 5], [7, 0, 0, 5, 0, 5, 1]]


def test_full_game_end_when_deck_too_short_no_phase4_and_stones_tiebreak():
    """End: the take that needs a deal with < 4 cards in the deck ends the game at once; scores
    6 - 6, shrines 0 - 0, stones 31 - 32: seat 1 wins; rewards +1 / -1."""
    g, t0, t1 = _game_1()
    _play_rounds(g, t0, t1, 35)
    g.act(PASS, _action(t1[14]))  # turn 36: seat 1 plays, one take owed
    before = g.sd
    assert before["phase"] == "refill" and before["to_move"] == 1
    assert len(before["deck"]) == 2  # fewer than 4
    assert before["market"][0] == [t1[17]]  # the last card of column 0
    assert before["stones"] == [31, 32]
    assert before["vp_tokens"] == [0, 0] and before["altar"] == []
    assert all(r == 0 for r in g.env.rewards.values())
    g.act(COL(0))
    sd = g.sd
    assert sd["phase"] == "game_over" and sd["to_move"] is None and sd["active"] == 1
    assert g.legal() == []
    assert sd["market"][0] == [] and len(sd["deck"]) == 2  # nothing dealt
    assert sd["market"][1:] == before["market"][1:]
    # the take itself happened; no phase 4: nothing else changed
    assert sum(sd["hands"][1]) == 3
    for key in ("stones", "vp_tokens", "offerings", "supply", "tableaus", "altar"):
        assert sd[key] == before[key], key
    # empty altar: every offering card is worth 0; score = stones // 5 = 6 and 6
    assert sd["scores"] == [6, 6]
    assert sd["winners"] == [1]  # tie on score and shrines (0, 0), 32 stones > 31
    assert g.env.rewards == {"player_0": -1.0, "player_1": 1.0}
    assert g.env._cumulative_rewards == {"player_0": -1.0, "player_1": 1.0}
    assert all(g.env.terminations.values())
    for agent in ("player_0", "player_1"):
        info = g.env.infos[agent]
        assert info["final_scores"] == [6, 6]
        assert info["winners"] == [1]
        assert info["decided_by"] == "stones"
        assert info["altar_counts"] == [0, 0, 0, 0] and info["altar_values"] == [0, 0, 0, 0]
        assert [row["total"] for row in info["score_breakdown"]] == [6, 6]
        assert [row["stones"] for row in info["score_breakdown"]] == [6, 6]
        assert [row["shrines"] for row in info["score_breakdown"]] == [0, 0]
    assert list(g.observe(0)["action_mask"]) == [0] * 44
    assert g.observe(1)["observation"][9] == 1.0  # decision "game_over"


def test_full_game_end_turn_stops_mid_refill_shared_win():
    """End: the game ends on the first of two owed takes (the hand stays at 2); scores, shrines and
    stones all equal (6, 0, 31): both seats win, +1 each."""
    t0 = _taken(S0_FARMERS, [PR, PR, CF])
    # seat 1 keeps 2 banana farmers for its last turn (taken[14], taken[15]) and 2 priests
    t1 = _taken([RF, BF, RF, BF, RF, BF, RF, RF, BF], [BF, PR, PR])
    g = Game(2, deck=_deck(t0, t1), starters=[0, 1])
    _play_rounds(g, t0, t1, 35)
    assert g.sd["stones"] == [31, 32]
    assert g.sd["hands"][1] == [0, 1, 0, 0, 0, 2, 0]
    g.act(PASS, FARMERS(BANANAS, 2))  # 1 stone: 32 -> 31; two takes owed
    assert g.sd["stones"] == [31, 31]
    g.act(COL(0))  # column 0 empties, 2 cards in the deck: the game ends, 1 take never made
    sd = g.sd
    assert sd["phase"] == "game_over"
    assert sd["hands"][1] == [0, 2, 0, 0, 0, 0, 0]  # 2 priests: the turn stopped
    assert sd["scores"] == [6, 6]
    assert sd["winners"] == [0, 1]
    assert g.env.rewards == {"player_0": 1.0, "player_1": 1.0}
    assert g.env.infos["player_0"]["winners"] == [0, 1]
    assert g.env.infos["player_0"]["decided_by"] == "shared"


def test_full_game_end_with_altar_values():
    """End: a game with one offering phase; the altar (rice 2, peanuts 1) is valued 3, 2, 0, 0 in the final score."""
    # seat 0 takes a shrine at taken[15] and plays it on its last turn (31 stones)
    t0 = _taken(S0_FARMERS, [SH, PR, CF])
    t1 = _taken(S1_FARMERS, [PR, PR, BF])
    outside = [SH] * 8 + [PR] * 6
    g = Game(2, deck=_deck(t0, t1, outside), starters=[0, 1])
    _play_rounds(g, t0, t1, 34)
    assert g.sd["stones"] == [31, 32]
    assert g.sd["hands"][0] == [0, 1, 1, 0, 1, 0, 0]  # taken[14..16]: peanut farmer, shrine, priest
    # turn 35: seat 0 plays the shrine (31 -> 24); seat 1 offers rice face up, seat 0 peanuts face
    # down, then a rice card from the supply
    g.act(PASS, PLAY_SH, OWN(RICE), OWN(PEANUTS), SUPPLY(RICE), COL(0))
    sd = g.sd
    assert sd["altar"] == [RICE, PEANUTS, RICE]
    assert sd["stones"] == [24, 32]
    g.act(PASS, _action(t1[14]), COL(0))  # turn 36 ends the game
    sd = g.sd
    assert sd["phase"] == "game_over"
    # offering cards, hand-derived in test_full_game_offerings_from_farmer_scoring: seat 0
    # [1, 9, 6, 10] minus the peanut card it offered, seat 1 [9, 1, 10, 6] minus the rice card it
    # offered (turn 35 plays the shrine instead of a peanut farmer: no farmer scoring changes)
    assert sd["offerings"] == [[1, 8, 6, 10], [8, 1, 10, 6]]
    assert sd["supply"] == [23 - 8 - 1, 23 - 8, 23 - 14, 23 - 14]
    # altar counts: rice 2, peanuts 1, bananas 0, chilies 0 -> values 3, 2, 0, 0
    # seat 0: 0 VP + 4 (1 shrine) + 24 // 5 = 4 + rice 1 x 3 + peanuts 8 x 2 = 27
    # seat 1: 0 VP + 0 + 32 // 5 = 6 + rice 8 x 3 + peanuts 1 x 2 = 32
    assert sd["scores"] == [27, 32]
    assert sd["winners"] == [1]
    assert g.env.rewards == {"player_0": -1.0, "player_1": 1.0}
    breakdown = g.env.infos["player_0"]["score_breakdown"]
    assert breakdown[0] == {
        "vp_tokens": 0,
        "shrines": 4,
        "stones": 4,
        "offerings": {"rice": 3, "peanuts": 16, "bananas": 0, "chilies": 0},
        "total": 27,
    }
    assert breakdown[1]["offerings"] == {"rice": 24, "peanuts": 2, "bananas": 0, "chilies": 0}
    assert breakdown[1]["total"] == 32
