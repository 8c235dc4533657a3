"""The search agent: ``MCTSAgent`` decides from the observation alone (it plays on states the
engine's ``determinize`` samples from it: tests/test_determinize.py), deterministically, and
refuses an observation no game gives."""

from __future__ import annotations

import numpy as np
import pytest

import bali_env
from bali_env.bots.mcts import MCTSAgent
from bali_env.bots.random_agent import RandomAgent
from bali_env import engine as E
from bali_env.envs.api_check import CONFIGURATIONS, config_id
from scenario import face_down_twins, play_checked


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


@pytest.mark.slow
def test_mcts_does_not_see_hidden_information():
    """Two games that differ only in hidden information (another player's face-down offering)
    look the same to the searcher, and it searches them identically (same visit counts)."""
    twins = face_down_twins(3)
    assert twins is not None, "no face-down offering with two choices found"
    a_env, b_env, watcher = twins
    assert a_env.state_dict() != b_env.state_dict()
    oa, ob = a_env.observe(watcher), b_env.observe(watcher)
    np.testing.assert_array_equal(oa["observation"], ob["observation"])
    ca = MCTSAgent(seed=3, sims=300).search(oa["observation"])
    cb = MCTSAgent(seed=3, sims=300).search(ob["observation"])
    np.testing.assert_array_equal(ca, cb)
    assert ca.sum() == 300


def test_mcts_plays_legal_moves_deterministically():
    """Given the seed and simulation budget, the same game is played twice; every move is legal."""
    def play(seed):
        return play_checked([MCTSAgent(seed=1, sims=100), RandomAgent(seed=2)], seed, num_players=2, oracle=True,
                            demon=True)

    assert play(5) == play(5)


@pytest.mark.slow
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


def test_mcts_refuses_an_observation_no_game_gives():
    """An observation whose counts do not add up (``check_observation``), or a mask that no
    sampled state gives back, is a ValueError before any search; a real position is searched."""
    env = bali_env.raw_env(num_players=3, oracle=True)
    env.reset(seed=2)
    o = env.observe(env.agent_selection)
    agent = MCTSAgent(seed=0, sims=5)
    assert agent.search(o["observation"], o["action_mask"]).sum() == 5
    deck = o["observation"].copy()
    deck[E.O_DECK] += 1 / E.X_DECK  # one more card in the deck than its cards by id
    with pytest.raises(ValueError, match="deck"):
        agent.search(deck, o["action_mask"])
    wrong_mask = o["action_mask"].copy()
    wrong_mask[np.flatnonzero(wrong_mask == 0)[0]] = 1
    with pytest.raises(ValueError, match="no consistent game state"):
        agent.search(o["observation"], wrong_mask)
