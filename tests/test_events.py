"""The engine's public events (``bali_env.engine.events``): what each move did, in the rules'
terms, adds up to the change of the state; an oracle peek's card is no reward; and the events
are the same in two games that differ only in what one player hides."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from bali_env import engine as E
from bali_env.engine import events as EV
from bali_env.envs.bali_v0 import raw_env


def _random_steps(num_players: int, oracle: bool, seed: int):
    """(before, action, after) of every move of one random game."""
    env = raw_env(num_players=num_players, oracle=oracle, demon=seed % 2 == 0)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while not all(env.terminations.values()):
        before = env.state().copy()
        action = int(rng.choice(env.legal_actions()))
        env.step(action)
        yield before, action, env.state().copy()


@pytest.mark.parametrize("num_players, oracle, seed", [(2, False, 1), (3, True, 2), (4, True, 3), (4, False, 4)])
def test_events_add_up_to_the_change_of_the_state(num_players, oracle, seed):
    kinds = set()
    for before, action, after in _random_steps(num_players, oracle, seed):
        events = EV.move_events(before, action, after)
        kinds |= {e.kind for e in events}
        b, a = E.state_blocks(before), E.state_blocks(after)
        got = np.zeros((num_players, 2 + E.N_CATEGORIES), dtype=np.int64)
        for e in events:
            if e.kind == EV.RECEIVED:
                got[e.seat] += (e.stones, e.vp, *e.offerings)
            elif e.kind == EV.TAKE:
                assert e.column == action - E.A_REFILL and e.seat == int(before[E.S_TO_MOVE])
                assert e.card == int(b.market[e.column, b.col_pos[e.column]])
            elif e.kind == EV.DEALT:
                cards = a.market[e.column, a.col_pos[e.column]: a.col_len[e.column]].tolist()
                assert list(e.cards) == cards
                assert int(after[E.S_DECK_POS]) - int(before[E.S_DECK_POS]) == len(cards) + e.removed
        taken = np.zeros_like(got)
        if int(before[E.S_PHASE]) == E.PH_ORACLE and E.is_oracle_take(action):
            depth = action - E.A_ORACLE_TAKE
            taken[int(before[E.S_TO_MOVE]), 2 + int(b.altar[int(before[E.S_ALTAR_LEN]) - 1 - depth])] = 1
        change = np.column_stack([a.stones[:num_players] - b.stones[:num_players],
                                  a.vp_tokens[:num_players] - b.vp_tokens[:num_players],
                                  a.offerings[:num_players] - b.offerings[:num_players]]).astype(np.int64)
        scoring = any(e.kind in (EV.SCORING, EV.RECEIVED) for e in events) or \
            int(before[E.S_PHASE]) in (E.PH_SHRINE_REWARD, E.PH_FARMER_CHOICE)
        if scoring:  # every gain of a scoring step is told, the oracle's card aside
            np.testing.assert_array_equal(got, change - taken)
        else:
            assert not got.any()
    assert {EV.TAKE, EV.DEALT, EV.SCORING, EV.RECEIVED, EV.SCORED} <= kinds


def test_the_deck_running_out_ends_the_game_without_a_scoring():
    last = None
    for before, action, after in _random_steps(2, False, 5):
        last = EV.move_events(before, action, after)
    assert last is not None and last[-1].kind == EV.DECK_OUT
    assert EV.SCORING not in [e.kind for e in last]


def test_an_oracle_peek_is_no_reward():
    """In the Oracle variant a peek's taken card goes to the taker's offerings: never a receipt."""
    seen = 0
    for seed in range(6):
        for before, action, after in _random_steps(3, True, 10 + seed):
            if int(before[E.S_PHASE]) == E.PH_ORACLE and E.is_oracle_take(action):
                seen += 1
                mover = int(before[E.S_TO_MOVE])
                for e in EV.move_events(before, action, after):
                    if e.kind == EV.RECEIVED and e.seat == mover:  # a scoring that starts in the same step
                        b, a = E.state_blocks(before), E.state_blocks(after)
                        assert sum(e.offerings) == int(a.offerings[mover].sum() - b.offerings[mover].sum()) - 1
    assert seen > 0


def test_the_events_do_not_depend_on_what_a_player_hides():
    """Two copies of a game that differ only in seat 1's face-down offering: every later move
    legal in both gives the same events in both."""
    env = raw_env(num_players=2)
    for seed in range(60):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        while not all(env.terminations.values()):
            legal = env.legal_actions()
            if env.agent_selection == "player_1" and int(env.state()[E.S_PHASE]) == E.PH_OFFER_OWN and len(legal) >= 2:
                break
            env.step(int(rng.choice(legal)))
        else:
            continue
        a, b = copy.deepcopy(env), copy.deepcopy(env)
        a.step(legal[0])
        b.step(legal[1])
        told = 0
        while not all(a.terminations.values()) and not all(b.terminations.values()):
            both = sorted(set(a.legal_actions()) & set(b.legal_actions()))
            if not both:
                break
            action = int(rng.choice(both))
            sa, sb = a.state().copy(), b.state().copy()
            a.step(action)
            b.step(action)
            ea, eb = EV.move_events(sa, action, a.state()), EV.move_events(sb, action, b.state())
            assert ea == eb
            told += len(ea)
        assert told > 0
        return
    pytest.fail("no face-down offering with a choice found")
