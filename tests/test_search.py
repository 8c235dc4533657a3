"""Information sets and the search agent: ``core.determinize`` samples states consistent with an
observation (and only with it), and ``MCTSAgent`` decides from the observation alone."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import bali_env
from agents.mcts import MCTSAgent
from agents.random_agent import RandomAgent
from bali_env import core as C
from bali_env.api_check import CONFIGURATIONS, config_id


def _positions(config, seed, every=3):
    """(env copy, seat) pairs along a random game, every few steps."""
    n, oracle, demon = config
    env = bali_env.raw_env(num_players=n, oracle=oracle, demon=demon)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    step = 0
    while not all(env.terminations.values()):
        if step % every == 0:
            yield env
        env.step(int(rng.choice(env.legal_actions())))
        step += 1


@pytest.mark.parametrize("config", CONFIGURATIONS, ids=config_id)
def test_determinize_reproduces_the_observation(config):
    """Every sample, observed from seat 0, gives back the observation and mask exactly; its hidden
    parts respect the public bounds and the conservation of cards."""
    s = np.zeros(C.STATE_SIZE, dtype=np.int16)
    obs2 = np.zeros(C.OBS_DIM, dtype=np.float32)
    mask2 = np.zeros(C.N_ACTIONS, dtype=np.int8)
    stream = np.array([7], dtype=np.uint64)
    checked = 0
    for env in _positions(config, seed=11):
        for p, agent in enumerate(env.possible_agents):
            o = env.observe(agent)
            C.determinize(o["observation"], stream, s)
            C.observe(s, 0, obs2, mask2)
            np.testing.assert_array_equal(obs2, o["observation"])
            np.testing.assert_array_equal(mask2, o["action_mask"])
            sd = bali_env.state_dict(s)
            n = sd["num_players"]
            for q in range(n):
                assert all(lo <= v <= hi for lo, v, hi in
                           zip(sd["offerings_known_min"][q], sd["offerings"][q], sd["offerings_known_max"][q],
                               strict=True))
            for c in range(4):  # 25 offering cards per category: supply + every player + altar
                assert sd["supply"][c] + sum(sd["offerings"][q][c] for q in range(n)) + sd["altar"].count(c) == 25
            true = env.state_dict()
            assert sorted(sd["deck"]) == sorted(true["deck"])
            assert sd["offerings"][0] == true["offerings"][p]
            checked += 1
    assert checked > 50


def test_determinize_samples_the_hidden_parts():
    """Different samples of one observation differ in the deck order (it is not copied from the truth)."""
    env = bali_env.raw_env(num_players=3, oracle=True)
    env.reset(seed=4)
    o = env.observe(env.agent_selection)["observation"]
    stream = np.array([1], dtype=np.uint64)
    decks = set()
    s = np.zeros(C.STATE_SIZE, dtype=np.int16)
    for _ in range(20):
        C.determinize(o, stream, s)
        decks.add(tuple(bali_env.state_dict(s)["deck"]))
    assert len(decks) == 20
    truth = tuple(env.state_dict()["deck"])
    assert truth not in decks  # sampled, not copied from the true (hidden) order
    assert all(sorted(d) == sorted(truth) for d in decks)  # but from the public composition


@pytest.mark.slow
def test_mcts_does_not_see_hidden_information():
    """Two games that differ only in hidden information (another player's face-down offering)
    look the same to the searcher, and it searches them identically (same visit counts)."""
    rng = np.random.default_rng(0)
    for seed in range(200):
        env = bali_env.raw_env(num_players=3)
        env.reset(seed=seed)
        while not all(env.terminations.values()):
            sd = env.state_dict()
            legal = env.legal_actions()
            hidden = [a for a in legal if 21 <= a <= 24]
            if sd["phase"] == "offer_own" and sd["to_move"] == sd["active"] and len(hidden) >= 2:
                a_env, b_env = copy.deepcopy(env), copy.deepcopy(env)
                a_env.step(hidden[0])
                b_env.step(hidden[1])
                assert a_env.state_dict() != b_env.state_dict()
                watcher = env.possible_agents[(sd["active"] + 1) % 3]
                oa, ob = a_env.observe(watcher), b_env.observe(watcher)
                np.testing.assert_array_equal(oa["observation"], ob["observation"])
                ca = MCTSAgent(seed=3, sims=300).search(oa["observation"])
                cb = MCTSAgent(seed=3, sims=300).search(ob["observation"])
                np.testing.assert_array_equal(ca, cb)
                assert ca.sum() == 300
                return
            env.step(int(rng.choice(legal)))
    pytest.fail("no face-down offering with two choices found")


def test_mcts_plays_legal_moves_deterministically():
    """Given the seed and simulation budget, the same game is played twice; every move is legal."""
    def play(seed):
        env = bali_env.raw_env(num_players=2, oracle=True, demon=True)
        env.reset(seed=seed)
        agents = [MCTSAgent(seed=1, sims=100), RandomAgent(seed=2)]
        actions = []
        while not all(env.terminations.values()):
            o = env.observe(env.agent_selection)
            a = agents[env.agent_name_mapping[env.agent_selection]].act(o["observation"], o["action_mask"])
            assert o["action_mask"][a] == 1
            env.step(a)
            actions.append(a)
        return actions, env.state_dict()["scores"]

    assert play(5) == play(5)


def test_mcts_beats_random():
    """A small fixed-seed match: 300 simulations per move win at least 9 of 10 two-player games
    against the random agent (seats alternate)."""
    wins = 0.0
    for g in range(10):
        env = bali_env.raw_env(num_players=2)
        env.reset(seed=100 + g)
        mcts_seat = g % 2
        agents = {mcts_seat: MCTSAgent(seed=g, sims=300), 1 - mcts_seat: RandomAgent(seed=g)}
        while not all(env.terminations.values()):
            o = env.observe(env.agent_selection)
            env.step(agents[env.agent_name_mapping[env.agent_selection]].act(o["observation"], o["action_mask"]))
        winners = env.infos["player_0"]["winners"]
        wins += (mcts_seat in winners) / len(winners)
    assert wins >= 9


@pytest.mark.parametrize("config", CONFIGURATIONS, ids=config_id)
def test_batched_search_chooses_what_one_search_per_row_chooses(config):
    """``act_batch_keyed`` searches the rows in parallel (``ismcts_choose_batch``): row i's choice
    is exactly ``seed(keys[i])`` then ``act`` (forced moves included), whatever else is in the
    batch and whatever the thread count; bad keys are refused."""
    import numba

    obs, masks = [], []
    for env in _positions(config, seed=11, every=2):
        o = env.observe(env.agent_selection)
        obs.append(o["observation"])
        masks.append(o["action_mask"])
    obs, masks = np.array(obs), np.array(masks)
    keys = (np.arange(len(obs), dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) ^ np.uint64(12345)
    agent = MCTSAgent(seed=0, sims=40)
    batched = agent.act_batch_keyed(obs, masks, keys)
    one_by_one = []
    for o, m, k in zip(obs, masks, keys, strict=True):
        agent.seed(int(k))
        one_by_one.append(agent.act(o, m))
    assert (batched == one_by_one).all() and (masks.sum(axis=1) > 1).sum() > 10
    assert (masks[np.arange(len(obs)), batched] == 1).all()
    half = np.arange(len(obs))[1::2]
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        assert (agent.act_batch_keyed(obs[half], masks[half], keys[half]) == batched[half]).all()
    finally:
        numba.set_num_threads(before)
    with pytest.raises(ValueError, match="keys"):
        agent.act_batch_keyed(obs, masks, keys[:-1])
    with pytest.raises(ValueError, match="keys"):
        agent.act_batch_keyed(obs, masks, keys.astype(np.float64))
    twin = MCTSAgent(seed=3, sims=40)
    assert (MCTSAgent(seed=3, sims=40).act_batch(obs, masks) == twin.act_batch(obs, masks)).all()


def test_mcts_budget_must_be_positive():
    """No budget is a clear error."""
    with pytest.raises(ValueError):
        MCTSAgent(sims=0, seconds=0)
