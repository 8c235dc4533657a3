"""decode_observation turns every observation back into the true public counts (checked against
state_dict() from each seat's point of view over random games, all configurations)."""

from __future__ import annotations

import numpy as np
import pytest

import bali_env
from bali_env import engine as E
from bali_env.envs.api_check import CONFIGURATIONS, config_id


@pytest.mark.parametrize("config", CONFIGURATIONS, ids=config_id)
def test_decode_matches_state(config):
    """Every decoded count equals the true public value; own offerings exact; bounds hold."""
    n, oracle, demon = config
    env = bali_env.raw_env(num_players=n, oracle=oracle, demon=demon)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    checked = 0
    while True:
        sd = env.state_dict()
        for p, agent in enumerate(env.possible_agents):
            v = bali_env.decode_observation(env.observe(agent)["observation"])
            seats = [(p + r) % n for r in range(n)]
            assert v.num_players == n and v.oracle == oracle and v.demon == demon
            assert v.hands.tolist() == [sd["hands"][q] for q in seats]
            assert v.tableaus.tolist() == [sd["tableaus"][q] for q in seats]
            assert v.stones.tolist() == [sd["stones"][q] for q in seats]
            assert v.vp_tokens.tolist() == [sd["vp_tokens"][q] for q in seats]
            assert v.own_offerings.tolist() == sd["offerings"][p]
            assert v.offerings_total.tolist() == [sum(sd["offerings"][q]) for q in seats]
            for r, q in enumerate(seats):
                assert (v.offerings_min[r] <= np.array(sd["offerings"][q])).all()
                assert (np.array(sd["offerings"][q]) <= v.offerings_max[r]).all()
            assert v.supply.tolist() == sd["supply"]
            assert v.deck_size == len(sd["deck"])
            assert v.deck_cards.tolist() == np.bincount(sd["deck"], minlength=8).tolist()
            assert [list(c) for c in v.market] == sd["market"]
            assert v.demon_column == (sd["demon"] if demon else -1)
            assert v.altar_size == len(sd["altar"])
            assert v.altar_known.sum() + v.altar_unknown == len(sd["altar"])
            assert v.active == (sd["active"] - p) % n
            assert v.to_move == (-1 if sd["to_move"] is None else (sd["to_move"] - p) % n)
            assert v.peeks_owed == sd["peeks_owed"] and v.oracle_window == sd["oracle_window"]
            assert v.last_take_column == (-1 if sd["last_take_column"] is None else sd["last_take_column"])
            checked += 1
        if sd["phase"] == "game_over":
            break
        env.step(int(rng.choice(env.legal_actions())))
    assert checked > 100


def test_decode_rejects_a_wrong_shape():
    """A vector of the wrong length is a ValueError."""
    with pytest.raises(ValueError):
        bali_env.decode_observation(np.zeros(10, dtype=np.float32))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_the_engine_readers_decode_the_player_count_and_the_farmer_choice(n):
    """``obs_num_players`` reads the player count of every observation (the one reader
    ``decode_observation`` uses); ``farmer_choice_category`` gives the category of actions 40-43
    and -1 for every other action."""
    env = bali_env.raw_env(num_players=n)
    env.reset(seed=n)
    for agent in env.possible_agents:
        obs = env.observe(agent)["observation"]
        assert E.obs_num_players(obs) == n == bali_env.decode_observation(obs).num_players
    categories = [E.farmer_choice_category(a) for a in range(E.N_ACTIONS)]
    assert categories == [-1] * E.A_FARMER_CHOICE + list(range(E.N_CATEGORIES))
    assert [E.farmer_choice_category.py_func(a) for a in range(E.N_ACTIONS)] == categories
    assert E.ACTION_NAMES[E.A_FARMER_CHOICE + 2] == "farmer reward: take bananas"
