"""docs/rules.md section 2 (set-up): starter hands and tableaus, starting stones, offering cards,
supply counts, the market dealt from the deck order, the Oracle altar and the demon's column."""

from __future__ import annotations

import pytest
from scenario import BF, CF, CHILIES, COL, FARMERS, OR, PASS, PF, PR, RF, SC, SH, Game, deck_with, market, starter_hand

import bali_env

MARKET = market(
    [SC, PR, SH, RF],
    [PF, BF, CF, SC],
    [PR, PR, SH, SH],
    [SC, SC, RF, PF],
)


def test_setup_starter_sets_hands_and_tableaus():
    """Set-up 2: starter set k = 1 stonecutter in the tableau + farmers of the 3 other categories in hand."""
    g = Game(4, prefix=MARKET, starters=[2, 0, 3, 1])
    sd = g.sd
    # set 2 lacks bananas: rice, peanut, chili farmers (ids 3, 4, 6)
    assert sd["hands"][0] == [0, 0, 0, 1, 1, 0, 1]
    # set 0 lacks rice: peanut, banana, chili farmers
    assert sd["hands"][1] == [0, 0, 0, 0, 1, 1, 1]
    # set 3 lacks chilies: rice, peanut, banana farmers
    assert sd["hands"][2] == [0, 0, 0, 1, 1, 1, 0]
    # set 1 lacks peanuts: rice, banana, chili farmers
    assert sd["hands"][3] == [0, 0, 0, 1, 0, 1, 1]
    assert sd["hands"] == [starter_hand(2), starter_hand(0), starter_hand(3), starter_hand(1)]
    # every tableau holds exactly the starter stonecutter
    assert sd["tableaus"] == [[1, 0, 0, 0, 0, 0, 0]] * 4
    assert sd["starter_sets"] == [2, 0, 3, 1]


@pytest.mark.parametrize("n", [2, 3, 4])
def test_setup_stones_offerings_supply(n):
    """Set-up 3 and 5: stones 2/3/4/5 by seat, 1 offering card per category each, supply 25 - n per category."""
    g = Game(n, prefix=MARKET, starters=list(range(n)))
    sd = g.sd
    assert sd["num_players"] == n
    assert sd["stones"] == [2, 3, 4, 5][:n]
    assert sd["vp_tokens"] == [0] * n
    assert sd["offerings"] == [[1, 1, 1, 1]] * n
    assert sd["supply"] == [25 - n] * 4  # 23 / 22 / 21
    assert sd["altar"] == []
    assert sd["phase"] == "take_offering"
    assert sd["active"] == 0 and sd["to_move"] == 0
    assert g.env.agent_selection == "player_0"
    assert sd["scores"] is None and sd["winners"] is None
    assert sd["demon"] is None


def test_setup_market_columns_follow_deck_order():
    """Set-up 4: column 0 gets deck cards 1-4, column 1 cards 5-8, ...; first dealt = first takeable."""
    g = Game(3, prefix=MARKET, starters=[0, 1, 2])
    sd = g.sd
    assert sd["market"] == [
        [SC, PR, SH, RF],
        [PF, BF, CF, SC],
        [PR, PR, SH, SH],
        [SC, SC, RF, PF],
    ]
    # the 34 undealt cards stay in order, top first
    assert sd["deck"] == g.deck[16:]
    assert len(sd["deck"]) == 34
    # the market is public: player 1 sees column 1, slot 0 = peanut farmer (card 4) at 127 + 28*1 + 7*0 + 4
    obs = g.observe(1)["observation"]
    assert obs[127 + 28 * 1 + 0 + PF] == 1.0
    assert obs[127 + 28 * 3 + 7 * 3 + PF] == 1.0  # column 3, slot 3 (taken last): peanut farmer


def test_setup_first_take_is_first_dealt_card():
    """Set-up 4: the first card dealt into a column is the first one taken."""
    g = Game(2, prefix=MARKET, starters=[0, 1])
    # seat 0 (hand: peanut, banana, chili farmers) passes, plays its chili farmer, takes column 2
    g.act(PASS, FARMERS(CHILIES), COL(2))
    sd = g.sd
    assert sd["hands"][0] == [0, 1, 0, 0, 1, 1, 0]  # the priest, first card of column 2
    assert sd["market"][2] == [PR, SH, SH]


def test_setup_oracle_altar_from_option_and_supply():
    """Set-up 6: Oracle altar = 4 face-down cards (one per category) taken from the supply (25 - n - 1 left)."""
    g = Game(3, prefix=MARKET, starters=[0, 1, 2], oracle=True, altar=[2, 0, 3, 1])
    sd = g.sd
    assert sd["variants"] == {"oracle": True, "demon": False}
    assert sd["altar"] == [2, 0, 3, 1]  # top first, as given
    assert sd["altar_known_by"] == [[], [], [], []]  # nobody knows the order
    assert sd["supply"] == [25 - 3 - 1] * 4
    assert sd["offerings"] == [[1, 1, 1, 1]] * 3
    assert len(sd["deck"]) == 58 - 16
    assert sd["deck"].count(OR) == 8
    assert all(OR not in col for col in sd["market"])
    # observation: 4 altar cards, none known (slot 248 = size/10, 249-252 known by category, 253 unknown)
    obs = g.observe(0)["observation"]
    assert obs[248] == pytest.approx(0.4)
    assert list(obs[249:253]) == [0.0] * 4
    assert obs[253] == pytest.approx(0.4)


@pytest.mark.parametrize("seed", range(10))
def test_setup_oracle_random_market_never_holds_oracle(seed):
    """Set-up 6: the oracles join the deck after the market is dealt (random deals)."""
    e = bali_env.raw_env(num_players=4, oracle=True)
    e.reset(seed=seed)
    sd = e.state_dict()
    assert all(OR not in col for col in sd["market"])
    assert sd["deck"].count(OR) == 8 and len(sd["deck"]) == 42
    assert sorted(sd["altar"]) == [0, 1, 2, 3]
    assert sd["supply"] == [20] * 4


def test_setup_demon_on_column_0():
    """Set-up 7: with the Demon variant the demon stands on column 0."""
    g = Game(2, prefix=MARKET, starters=[0, 1], demon=True)
    sd = g.sd
    assert sd["variants"] == {"oracle": False, "demon": True}
    assert sd["demon"] == 0
    obs = g.observe(0)["observation"]
    assert list(obs[239:243]) == [1.0, 0.0, 0.0, 0.0]


def test_setup_deck_helper_builds_valid_decks():
    """The scenario helper completes a prefix into the exact deck multiset (sanity check of the tests)."""
    d = deck_with([SH, SH, SH])
    assert len(d) == 50 and d[:3] == [SH, SH, SH] and d.count(SH) == 9 and d.count(SC) == 12
    d = deck_with([], oracle=True)
    assert len(d) == 58 and d.count(OR) == 8 and OR not in d[:16]
