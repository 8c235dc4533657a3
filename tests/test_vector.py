"""The batched environment and the rollout kernel: identical games to the AEC env for the same
seed, options and actions (every configuration), autoreset, rewards, errors that change nothing."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import bali_env
from bali_env import engine as C
from bali_env.envs.batched import PARALLEL_MIN_ENVS, BaliVectorEnv, rollout

CONFIGS = list(itertools.product((2, 3, 4), (False, True), (False, True)))


def _policy_stream(seed: int) -> np.ndarray:
    """The rollout kernel's policy stream for a fresh game dealt from stream ``seed``: the same
    stream after its first draw (the deal seed)."""
    stream = np.array([seed], dtype=np.uint64)
    C.next_deal_seed(stream)
    return stream


def _play_aec(env, seed: int, stream: np.ndarray, reset_seed: bool = True) -> tuple[list[dict], list[int]]:
    """Play one AEC game with the rollout kernel's random policy; return state dicts and actions."""
    env.reset(seed=seed) if reset_seed else env.reset()
    states, actions = [env.state_dict()], []
    while not all(env.terminations.values()):
        mask = env.observe(env.agent_selection)["action_mask"]
        a = int(C.random_legal_action(stream, mask))
        env.step(a)
        actions.append(a)
        states.append(env.state_dict())
    return states, actions


@pytest.mark.parametrize("num_players,oracle,demon", CONFIGS)
def test_rollout_kernel_plays_the_aec_game(num_players, oracle, demon):
    """rollout(seed=s) game i == AEC reset(seed=s+i) played with the same random policy stream."""
    res = rollout(6, num_players=num_players, oracle=oracle, demon=demon, seed=1000)
    env = bali_env.raw_env(num_players=num_players, oracle=oracle, demon=demon)
    for i in range(6):
        states, actions = _play_aec(env, 1000 + i, _policy_stream(1000 + i))
        assert res["steps"][i] == len(actions)
        assert res["scores"][i].tolist() == states[-1]["scores"]
        assert np.flatnonzero(res["winners"][i]).tolist() == states[-1]["winners"]


@pytest.mark.parametrize("num_players,oracle,demon", CONFIGS)
def test_batched_env_plays_the_aec_games(num_players, oracle, demon):
    """BaliVectorEnv(seed=s) game i: the same observations, masks, states, rewards and final scores
    as AEC reset(seed=s+i) and then reset() without a seed, step by step, across autoresets."""
    n = 3
    venv = BaliVectorEnv(n, num_players=num_players, oracle=oracle, demon=demon, seed=77)
    obs, info = venv.reset()
    envs = [bali_env.raw_env(num_players=num_players, oracle=oracle, demon=demon) for _ in range(n)]
    for i, e in enumerate(envs):
        e.reset(seed=77 + i)
    policy = [np.array([9 + i], dtype=np.uint64) for i in range(n)]
    episodes = np.zeros(n, dtype=int)
    for _ in range(400):
        actions = np.zeros(n, dtype=np.int64)
        for i, e in enumerate(envs):
            agent = e.agent_selection
            o = e.observe(agent)
            assert int(info["to_move"][i]) == e.agent_name_mapping[agent]
            np.testing.assert_array_equal(obs[i], o["observation"])
            np.testing.assert_array_equal(info["action_mask"][i], o["action_mask"])
            assert venv.state_dict(i) == e.state_dict()
            actions[i] = C.random_legal_action(policy[i], o["action_mask"])
        obs, rewards, terminated, truncated, info = venv.step(actions)
        assert not truncated.any()
        for i, e in enumerate(envs):
            e.step(int(actions[i]))
            if all(e.terminations.values()):
                assert terminated[i]
                assert rewards[i].tolist() == [e.rewards[a] for a in e.possible_agents]
                assert info["final_scores"][i].tolist() == e.infos[e.possible_agents[0]]["final_scores"]
                assert np.flatnonzero(info["winners"][i]).tolist() == e.infos[e.possible_agents[0]]["winners"]
                e.reset()  # the next game of the stream, as the batched env's autoreset deals
                episodes[i] += 1
            else:
                assert not terminated[i]
                assert not rewards[i].any()
    assert episodes.min() >= 2  # the comparison crossed at least two autoresets per game


@pytest.mark.slow
def test_parallel_kernel_matches_serial_kernel():
    """Above PARALLEL_MIN_ENVS the prange kernel is used; it gives the very same games."""
    n = PARALLEL_MIN_ENVS
    a, b = BaliVectorEnv(n, seed=5), BaliVectorEnv(n, seed=5)
    a.reset()
    b.reset()
    rng = np.random.default_rng(0)
    for _ in range(300):
        actions = np.argmax(a.action_masks * rng.random((n, C.N_ACTIONS)), axis=1)
        a.step(actions)
        C.batch_step_serial(b.states, actions, b._streams, b._deal, False, b.buffers)
        np.testing.assert_array_equal(a.states, b.states)
        np.testing.assert_array_equal(a.obs, b.obs)
        np.testing.assert_array_equal(a.rewards, b.rewards)


@pytest.mark.slow
def test_rollout_from_states_continues_the_given_positions():
    """rollout(states=...) plays copies of mid-game states to the end and leaves the input alone."""
    venv = BaliVectorEnv(4, num_players=3, seed=3)
    venv.reset()
    rng = np.random.default_rng(1)
    for _ in range(30):
        venv.step(np.argmax(venv.action_masks * rng.random((4, C.N_ACTIONS)), axis=1))
    before = venv.states.copy()
    res = rollout(states=venv.states, seed=11)
    np.testing.assert_array_equal(venv.states, before)
    mask = np.zeros(C.N_ACTIONS, dtype=np.int8)
    for i in range(4):
        s = before[i].copy()  # continue the same position step by step with the public kernels
        stream = np.array([11 + i], dtype=np.uint64)
        steps = 0
        while s[C.S_PHASE] != C.PH_GAME_OVER:
            C.legal_mask(s, mask)
            C.apply_action(s, C.random_legal_action(stream, mask))
            steps += 1
        assert res["steps"][i] == steps
        assert res["scores"][i].tolist() == bali_env.state_dict(s)["scores"]


def test_score_reward_mode():
    """reward="score": own final score minus the mean of the others, summing to zero."""
    venv = BaliVectorEnv(8, num_players=3, seed=1, reward="score")
    venv.reset()
    rng = np.random.default_rng(2)
    seen = 0
    for _ in range(600):
        _, rewards, terminated, _, info = venv.step(np.argmax(venv.action_masks * rng.random((8, C.N_ACTIONS)), axis=1))
        for i in np.flatnonzero(terminated):
            scores = info["final_scores"][i]
            expected = [scores[q] - (scores.sum() - scores[q]) / 2 for q in range(3)]
            np.testing.assert_allclose(rewards[i], expected)
            seen += 1
    assert seen > 0


def test_illegal_batch_action_changes_nothing():
    """One illegal action in the batch: ValueError naming the game, and no game stepped."""
    venv = BaliVectorEnv(5, seed=2)
    venv.reset()
    actions = np.argmax(venv.action_masks, axis=1)
    illegal = int(np.flatnonzero(venv.action_masks[3] == 0)[0])
    actions[3] = illegal
    before = venv.states.copy()
    with pytest.raises(ValueError, match=f"illegal action {illegal} in game 3"):
        venv.step(actions)
    np.testing.assert_array_equal(venv.states, before)
    with pytest.raises(ValueError, match="out of range"):
        venv.step(np.full(5, 44))
    with pytest.raises(ValueError, match="shape"):
        venv.step(np.zeros(4, dtype=np.int64))
    with pytest.raises(TypeError):
        venv.step(np.zeros(5, dtype=np.float64))
    np.testing.assert_array_equal(venv.states, before)


def test_batched_env_rejects_bad_construction_and_options():
    """Bad constructor arguments and reset options raise ValueError."""
    with pytest.raises(ValueError):
        BaliVectorEnv(0)
    with pytest.raises(ValueError):
        BaliVectorEnv(2, num_players=5)
    venv = BaliVectorEnv(2, seed=0)
    with pytest.raises(RuntimeError):
        venv.step(np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="altar"):
        venv.reset(options={"altar": [0, 1, 2, 3]})


def test_reset_options_apply_to_every_game():
    """Options given to reset() deal every game (and every autoreset) from the same deck."""
    deck = [0] * 12 + [1] * 9 + [2] * 9 + [3] * 5 + [4] * 5 + [5] * 5 + [6] * 5
    venv = BaliVectorEnv(3, num_players=2, seed=0)
    venv.reset(options={"deck": deck, "starter_sets": [2, 0]})
    for i in range(3):
        sd = venv.state_dict(i)
        assert sd["market"] == [[0, 0, 0, 0]] * 3 + [[1, 1, 1, 1]]
        assert sd["starter_sets"] == [2, 0]


def test_state_is_at_most_one_kilobyte():
    """The per-game state row fits the 1 KB budget of the batched env."""
    assert BaliVectorEnv(1).state_bytes_per_game <= 1024


def test_minus_one_leaves_a_game_unchanged():
    """Action -1 skips a game for this step: its state, observation and mask stay; the others move."""
    venv = BaliVectorEnv(3, seed=8)
    venv.reset()
    before = venv.states.copy()
    obs_before = venv.obs.copy()
    actions = np.argmax(venv.action_masks, axis=1)
    actions[1] = -1
    _, rewards, terminated, _, _ = venv.step(actions)
    np.testing.assert_array_equal(venv.states[1], before[1])
    np.testing.assert_array_equal(venv.obs[1], obs_before[1])
    assert not rewards[1].any() and not terminated[1]
    assert not np.array_equal(venv.states[0], before[0]) and not np.array_equal(venv.states[2], before[2])
    with pytest.raises(ValueError, match="out of range"):
        venv.step(np.array([-2, 4, 4]))


@pytest.mark.parametrize("num_players", [2, 4])
def test_a_finished_game_keeps_its_last_position(num_players):
    """After a game ends (and is dealt anew at once), ``final_states`` holds its last state:
    ``final_observation(i, seat)`` is exactly what the AEC env shows that seat at the end of the
    same game."""
    v = BaliVectorEnv(1, num_players=num_players, seed=21)
    v.reset()
    aec = bali_env.raw_env(num_players=num_players)
    aec.reset(seed=21)
    rng = np.random.default_rng(3)
    while True:
        action = int(rng.choice(np.flatnonzero(v.action_masks[0])))
        aec.step(action)
        _, _, term, _, _ = v.step(np.array([action]))
        if term[0]:
            break
    assert all(aec.terminations.values())
    for q in range(num_players):
        obs, mask = v.final_observation(0, q)
        np.testing.assert_array_equal(obs, aec.observe(f"player_{q}")["observation"])
        assert not mask.any()
    np.testing.assert_array_equal(v.final_states[0], aec.state())
    assert not np.array_equal(v.states[0], v.final_states[0])  # the slot holds the next game
    assert v.num_actions == 44 and v.observation_shape == (C.OBS_DIM,)
