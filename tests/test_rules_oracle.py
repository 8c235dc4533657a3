"""docs/rules.md section 3 (phase 3), Oracle variant: oracle cards in a newly dealt column leave the
game, an all-oracle column is replaced by a fresh deal, each dealt group holding an oracle owes
one peek (two for an all-oracle group whose replacement holds one too), a peek shows the top 4
altar cards (fewer when the altar is smaller) and the active player takes one into their own
offering cards (actions 33-36, depth 0 = top) or none (37), the peeks come before the next take,
and the other players forget the categories of the peeked window when a card is taken."""

from __future__ import annotations

import pytest
from scenario import (
    BANANAS,
    BF,
    CF,
    CHILIES,
    COL,
    FARMERS,
    OR,
    ORACLE_NONE,
    OWN,
    PASS,
    PEANUTS,
    PEEK,
    PLAY_SH,
    PR,
    RICE,
    SC,
    SH,
    SUPPLY,
    Game,
    autoplay,
    counts,
    market,
)

ALTAR = [BANANAS, RICE, CHILIES, PEANUTS]  # the starting altar, top first

# 2 players (seat 0: P/B/C farmers, 2 stones; seat 1: R/B/C farmers, 3 stones). Column 0 is
# emptied by seat 1's first take of T4 while a second take is still owed.
COLS_2P = market([CF, SH, SH, SH], [PR, PR, SH, SH], [BF, PR, PR, PR], [SH, SH, SH, PR])


def _to_t4_first_take(rest) -> Game:
    g = Game(2, prefix=COLS_2P, rest=rest, starters=[0, 1], oracle=True, altar=ALTAR)
    g.turn(FARMERS(PEANUTS), [COL(0)])  # T1 s0 takes CF, reveals SH (nobody owns a shrine)
    g.turn(FARMERS(RICE), [COL(2)])  # T2 s1 takes BF, reveals PR (nobody owns a priest)
    g.turn(FARMERS(CHILIES, 2), [COL(0), COL(0)])  # T3 s0 (1 stone): takes SH, SH; column 0 = [SH]
    g.act(PASS, FARMERS(BANANAS, 2))  # T4 s1 (3 -> 2 stones): two takes owed
    assert g.sd["market"][0] == [SH]
    g.act(COL(0))  # empties column 0: the next deck group is dealt
    return g


def test_oracle_removed_from_new_column_one_peek_before_next_take():
    """Oracle: oracles in a new column leave the game; the group owes 1 peek, decided before the next take."""
    g = _to_t4_first_take(rest=[OR, SC, OR, PR])
    sd = g.sd
    assert sd["market"][0] == [SC, PR]  # the two oracles removed, order kept
    assert len(sd["deck"]) == 42 - 4
    assert sd["deck"].count(OR) == 8 - 2
    assert sd["hands"][1] == counts(sh=1, cf=1)  # one take done, one still owed
    assert sd["phase"] == "oracle" and sd["to_move"] == 1
    assert sd["peeks_owed"] == 1 and sd["oracle_window"] == 4
    assert g.legal() == [PEEK(0), PEEK(1), PEEK(2), PEEK(3), ORACLE_NONE]
    # the peeker sees the whole window (254 + 4 * depth + category); the other player does not
    obs = g.observe(1)["observation"]
    assert obs[6] == 1.0  # decision "oracle"
    assert obs[270] == pytest.approx(1 / 4) and obs[271] == pytest.approx(1.0)
    assert [int(obs[254 + 4 * d + c]) for d in range(4) for c in range(4)] == [
        0, 0, 1, 0,  # depth 0: bananas
        1, 0, 0, 0,  # depth 1: rice
        0, 0, 0, 1,  # depth 2: chilies
        0, 1, 0, 0,  # depth 3: peanuts
    ]  # fmt: skip
    assert list(g.observe(0)["observation"][254:270]) == [0.0] * 16
    assert sd["altar_known_by"] == [[1], [1], [1], [1]]
    g.act(PEEK(1))  # takes the rice card at depth 1
    sd = g.sd
    assert sd["offerings"][1] == [2, 1, 1, 1]
    assert sd["altar"] == [BANANAS, CHILIES, PEANUTS]  # the others back in the same order
    assert sd["altar_known_by"] == [[1], [1], [1]]
    assert sd["supply"] == [22, 22, 22, 22]  # 25 - 2 - 1, untouched by the peek
    # seat 0 only knows that one card came: seat 1 has 1..2 of each category, 5 in all
    assert sd["offerings_known_min"][1] == [1, 1, 1, 1]
    assert sd["offerings_known_max"][1] == [2, 2, 2, 2]
    # back to the owed take, from the new column
    assert sd["phase"] == "refill" and sd["to_move"] == 1 and sd["peeks_owed"] == 0
    g.act(COL(0))  # takes SC; column 0 shows PR: priest scoring, nobody owns one
    sd = g.sd
    assert sd["hands"][1] == counts(sc=1, sh=1, cf=1)
    assert sd["active"] == 0 and sd["stones"] == [1, 2] and sd["vp_tokens"] == [0, 0]


def test_oracle_all_oracle_column_replaced_two_peeks_smaller_window():
    """Oracle: an all-oracle group is replaced; with an oracle in the replacement 2 peeks are owed;
    after one card is taken the altar holds 3 and the second window is 3 cards; 37 takes none."""
    g = _to_t4_first_take(rest=[OR, OR, OR, OR, SC, OR, PR, PR])
    sd = g.sd
    assert sd["market"][0] == [SC, PR, PR]
    assert len(sd["deck"]) == 42 - 8
    assert sd["deck"].count(OR) == 8 - 5
    assert sd["phase"] == "oracle" and sd["peeks_owed"] == 2 and sd["oracle_window"] == 4
    assert g.observe(1)["observation"][270] == pytest.approx(2 / 4)  # peeks owed, this one included
    g.act(PEEK(0))  # bananas
    sd = g.sd
    assert sd["altar"] == [RICE, CHILIES, PEANUTS]
    assert sd["offerings"][1] == [1, 1, 2, 1]
    assert sd["phase"] == "oracle" and sd["peeks_owed"] == 1 and sd["oracle_window"] == 3
    assert g.legal() == [PEEK(0), PEEK(1), PEEK(2), ORACLE_NONE]
    obs = g.observe(1)["observation"]
    assert obs[271] == pytest.approx(3 / 4)
    assert [int(obs[254 + 4 * d + c]) for d in range(4) for c in range(4)] == [
        1, 0, 0, 0,
        0, 0, 0, 1,
        0, 1, 0, 0,
        0, 0, 0, 0,  # no 4th card
    ]  # fmt: skip
    with pytest.raises(ValueError):
        g.env.step(PEEK(3))
    g.act(ORACLE_NONE)
    sd = g.sd
    assert sd["altar"] == [RICE, CHILIES, PEANUTS]
    assert sd["offerings"][1] == [1, 1, 2, 1]
    assert sd["phase"] == "refill" and sd["to_move"] == 1 and sd["peeks_owed"] == 0


def test_oracle_all_oracle_column_replaced_without_oracle_one_peek():
    """Oracle: an all-oracle group replaced by a group without oracle owes exactly 1 peek."""
    g = _to_t4_first_take(rest=[OR, OR, OR, OR, SC, PR, PR, SH])
    sd = g.sd
    assert sd["market"][0] == [SC, PR, PR, SH]
    assert len(sd["deck"]) == 42 - 8 and sd["deck"].count(OR) == 4
    assert sd["phase"] == "oracle" and sd["peeks_owed"] == 1
    g.act(ORACLE_NONE)
    sd = g.sd
    assert sd["altar"] == ALTAR and sd["offerings"][1] == [1, 1, 1, 1]
    assert sd["phase"] == "refill" and sd["peeks_owed"] == 0


# 4 players: seat 3 builds a shrine (as in test_rules_offering), then its refill take empties
# column 0 and the new group holds an oracle.
COLS_4P = market([PR, SC, SC, PR], [PR, PR, SH, SH], [SH, PR, PR, SH], [SH, SH, SH, PR])
ALL4 = [0, 1, 2, 3]


def _peek_after_offering() -> Game:
    g = Game(4, prefix=COLS_4P, rest=[OR, SC, PR, PR], starters=ALL4, oracle=True, altar=ALTAR)
    g.turn(FARMERS(PEANUTS), [COL(0)])  # s0 takes PR, reveals SC: +1 stone each
    g.turn(FARMERS(RICE), [COL(0)])  # s1 takes SC, reveals SC: +1 each -> 4, 5, 6, 7
    g.turn(FARMERS(RICE), [COL(1)])
    g.turn(FARMERS(RICE), [COL(2)])  # s3 takes SH
    g.turn(FARMERS(BANANAS), [COL(1)])
    g.turn(FARMERS(BANANAS), [COL(3)])
    g.turn(FARMERS(PEANUTS), [COL(0)])  # s2 takes SC, reveals PR; column 0 = [PR]
    g.act(PASS, PLAY_SH, OWN(RICE), OWN(PEANUTS), OWN(RICE), OWN(BANANAS), SUPPLY(CHILIES))
    sd = g.sd
    assert sd["altar"] == [CHILIES, BANANAS, RICE, PEANUTS, RICE] + ALTAR
    assert sd["altar_known_by"] == [ALL4, [3], ALL4, ALL4, ALL4, [], [], [], []]
    obs = g.observe(0)["observation"]
    assert list(obs[249:254]) == pytest.approx([0.2, 0.1, 0.0, 0.1, 0.5])
    g.act(COL(0))  # the last PR of column 0: new group [OR, SC, PR, PR] -> one peek
    sd = g.sd
    assert sd["phase"] == "oracle" and sd["to_move"] == 3 and sd["oracle_window"] == 4
    assert sd["market"][0] == [SC, PR, PR]
    return g


def test_oracle_take_makes_others_forget_the_window():
    """Oracle: after a take, the others forget the categories of the rest of the peeked window (not below it)."""
    g = _peek_after_offering()
    g.act(PEEK(0))  # seat 3 takes the chili supply card
    sd = g.sd
    assert sd["offerings"][3] == [1, 1, 0, 2]  # after its face-down bananas and this chili
    assert sd["altar"] == [BANANAS, RICE, PEANUTS, RICE] + ALTAR
    # the rest of the window (seat 3's bananas, seat 2's rice, seat 1's peanuts): only seat 3 knows;
    # seat 0's rice lay below the window: still known by all; the starting cards: by nobody
    assert sd["altar_known_by"] == [[3], [3], [3], ALL4, [], [], [], []]
    obs = g.observe(0)["observation"]
    assert obs[248] == pytest.approx(0.8)
    assert list(obs[249:254]) == pytest.approx([0.1, 0.0, 0.0, 0.0, 0.7])
    obs = g.observe(3)["observation"]
    assert list(obs[249:254]) == pytest.approx([0.2, 0.1, 0.1, 0.0, 0.4])
    # phase 4 follows (hand full): column 0 shows SC: +1 stone each
    assert sd["stones"] == [5, 6, 7, 1] and sd["active"] == 0


def test_oracle_take_none_forgets_nothing():
    """Oracle: taking none (37) leaves the altar and everybody's knowledge as it was (the peeker learns the window)."""
    g = _peek_after_offering()
    g.act(ORACLE_NONE)
    sd = g.sd
    assert sd["altar"] == [CHILIES, BANANAS, RICE, PEANUTS, RICE] + ALTAR
    assert sd["altar_known_by"] == [ALL4, [3], ALL4, ALL4, ALL4, [], [], [], []]
    assert sd["offerings"][3] == [1, 1, 0, 1]
    assert sd["stones"] == [5, 6, 7, 1]


# ----------------------------------------------------------------------------- whole games
# These two games are driven to a late position by scenario.autoplay (a fixed simple policy);
# only the transition at the end is checked, with numbers that follow from the deck alone.


def _round_robin_base() -> list[int]:
    """The 50 base cards in a mixed fixed order: one of each card id in turn while available."""
    left = {0: 12, 1: 9, 2: 9, 3: 5, 4: 5, 5: 5, 6: 5}
    out = []
    while any(left.values()):
        for card in range(7):
            if left[card]:
                out.append(card)
                left[card] -= 1
    return out


def test_oracle_game_end_during_deal_cancels_owed_peek():
    """Oracle + end: an all-oracle group leaves the game, its replacement cannot be dealt (2 cards
    left): the game ends at once and the peek the group owed is cancelled."""
    base = _round_robin_base()
    mid = iter(base[16:48])
    stream = []
    for k in range(9):  # 9 groups of 4: an oracle first in groups 1, 3, 5, 7
        stream += [OR, next(mid), next(mid), next(mid)] if k % 2 else [next(mid) for _ in range(4)]
    deck = base[:16] + stream + [OR, OR, OR, OR] + base[48:]
    g = Game(2, deck=deck, starters=[0, 1], oracle=True, altar=ALTAR)
    autoplay(g, lambda g: g.phase == "refill" and len(g.sd["deck"]) == 6 and len(g.sd["market"][0]) == 1)
    before = g.sd
    assert before["deck"] == [OR, OR, OR, OR] + base[48:]
    g.act(COL(0))
    sd = g.sd
    assert sd["phase"] == "game_over" and sd["to_move"] is None
    assert sd["peeks_owed"] == 0 and sd["oracle_window"] == 0
    assert sd["deck"] == base[48:]  # the 4 oracles were dealt and removed; 2 cards never dealt
    assert sd["market"][0] == []
    # no phase 4 and no peek: only the take itself changed the table
    a = before["active"]
    assert sd["active"] == a and sum(sd["hands"][a]) == sum(before["hands"][a]) + 1
    for key in ("altar", "offerings", "stones", "vp_tokens", "supply", "tableaus"):
        assert sd[key] == before[key], key
    assert sd["scores"] is not None and sd["winners"]


def test_oracle_peek_with_empty_altar_does_nothing():
    """Oracle: once the altar is empty (4 peeks took its 4 cards), a group with an oracle owes no decision."""
    base = _round_robin_base()
    rest = iter(base[16:])
    stream = []
    for _ in range(8):  # 8 groups, each an oracle and 3 cards
        stream += [OR, next(rest), next(rest), next(rest)]
    deck = base[:16] + stream + list(rest)
    g = Game(2, deck=deck, starters=[0, 1], oracle=True, altar=ALTAR)
    # every peek takes the top card; no shrine is played: 4 peeks empty the altar
    autoplay(
        g,
        lambda g: g.phase == "refill" and g.sd["deck"].count(OR) == 4 and len(g.sd["market"][0]) == 1,
        oracle_action=PEEK(0),
    )
    before = g.sd
    assert before["altar"] == []
    assert [t[SH] for t in before["tableaus"]] == [0, 0]  # no shrine was played: nothing was offered
    # every offering card is in a supply or in front of a player: the 4 altar cards were taken
    assert sum(map(sum, before["offerings"])) + sum(before["supply"]) == 100
    assert before["active"] == 1 and sum(before["hands"][1]) == 2  # its last take
    assert [t[SC] for t in before["tableaus"]] == [2, 2]
    g.act(COL(0))  # empties column 0: the 5th group [OR, SC, PR, SH] is dealt
    sd = g.sd
    assert sd["deck"].count(OR) == 3
    assert deck[32:36] == [OR, SC, PR, SH]
    assert sd["market"][0] == [SC, PR, SH]
    # no oracle decision: the take was the only decision; phase 4 scored the stonecutter
    # (2 each, a tie: no bonus) and the turn passed
    assert sd["decisions"] == before["decisions"] + 1
    assert sd["peeks_owed"] == 0 and sd["oracle_window"] == 0
    assert sd["altar"] == [] and sd["offerings"] == before["offerings"]
    assert sd["stones"] == [before["stones"][0] + 2, before["stones"][1] + 2]
    assert sd["phase"] == "take_offering" and sd["active"] == 0
