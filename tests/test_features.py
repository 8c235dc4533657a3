"""The policy input features (bali_env/bots/features.py): they are the greedy heuristic's own estimates
of the observation (its choice is always among the marked best actions, its scores give the
score features), row by row independent of the batch, zero at the end of a game, and bad input
is refused with a message."""

from __future__ import annotations

import numpy as np
import pytest

import bali_env
from bali_env.bots.features import (
    F_BEST,
    F_LEAD,
    F_NOW_VALUES,
    F_SCORES,
    F_SHARE,
    FEATURE_SETS,
    N_FEATURES,
    WORST,
    default_params,
    feature_count,
    features_for_input,
    policy_input,
)
from bali_env.bots.greedy import GreedyAgent
from bali_env.bots.greedy.decide import greedy_scores
from bali_env.bots.greedy.slots import new_workspace
from bali_env.bots.random_agent import RandomAgent
from bali_env.envs.api_check import CONFIGURATIONS
from bali_env.engine import N_ACTIONS, OBS_DIM


@pytest.fixture(scope="module")
def positions() -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the player to move in one game of every configuration (greedy on
    seat 0 against random players), the final observation of each game included."""
    observations, masks = [], []
    for i, (n, oracle, demon) in enumerate(CONFIGURATIONS):
        env = bali_env.raw_env(num_players=n, oracle=oracle, demon=demon)
        env.reset(seed=500 + i)
        greedy, rand = GreedyAgent(seed=i), RandomAgent(seed=i)
        while not all(env.terminations.values()):
            agent = env.agent_selection
            o = env.observe(agent)
            observations.append(o["observation"])
            masks.append(o["action_mask"])
            player = greedy if agent == "player_0" else rand
            env.step(int(player.act_batch(o["observation"][None], o["action_mask"][None])[0]))
        o = env.observe("player_0")
        observations.append(o["observation"])
        masks.append(o["action_mask"])
    return np.array(observations, dtype=np.float32), np.array(masks, dtype=np.int8)


def test_features_are_the_heuristics_scores_and_choice(positions):
    """Row by row: the score features are the heuristic's scores less the best legal one (/5,
    clipped), the best set holds exactly the top-scoring actions, so greedy's own choice is in it."""
    obs, masks = positions
    x = policy_input(obs, masks, "greedy-v1")
    assert x.shape == (len(obs), OBS_DIM + N_FEATURES) and x.dtype == np.float32
    assert np.array_equal(x[:, :OBS_DIM], obs) and np.isfinite(x).all()
    f = x[:, OBS_DIM:]
    v, w, scores, _ = new_workspace()
    params = default_params()
    choices = GreedyAgent(seed=0).act_batch(obs, masks)
    checked = 0
    for i in range(len(obs)):
        legal = masks[i].astype(bool)
        if not legal.any():  # the end of the game: nothing to decide, all zeros
            assert not f[i].any()
            continue
        greedy_scores(obs[i], masks[i], params, v, w, scores)
        best = scores[legal].max()
        want = np.where(legal, np.maximum(WORST, (scores - best) / 5.0), WORST)
        assert np.allclose(f[i, F_SCORES:F_SCORES + N_ACTIONS], want, atol=1e-5)
        assert np.array_equal(f[i, F_BEST:F_BEST + N_ACTIONS] == 1, legal & (scores >= best - 1e-9))
        assert f[i, F_BEST + choices[i]] == 1
        checked += 1
    assert checked > 1000
    # the context block is the heuristic's: shares of what is still to come add up to 1
    live = masks.any(axis=1)
    assert np.allclose(f[live, F_SHARE:F_SHARE + 7].sum(axis=1), 1.0, atol=1e-5)
    assert (f[live, F_NOW_VALUES:F_NOW_VALUES + 4] >= 0).all() and (f[live, F_NOW_VALUES:F_NOW_VALUES + 4] <= 3).all()
    assert f[live, F_LEAD].std() > 0


def test_features_of_a_row_do_not_depend_on_the_batch(positions):
    """The same row gives the same features alone, in a batch, and in another order."""
    obs, masks = positions
    rows = np.random.default_rng(0).permutation(len(obs))[:200]
    batch = policy_input(obs[rows], masks[rows], "greedy-v1")
    for k in (0, 7, 199):
        i = rows[k]
        assert np.array_equal(policy_input(obs[i:i + 1], masks[i:i + 1], "greedy-v1")[0], batch[k])
    assert np.array_equal(policy_input(obs, masks, "greedy-v1")[rows], batch)
    # the env's own buffers skip the argument check: same numbers, bool masks too
    assert np.array_equal(policy_input(obs[rows], masks[rows].astype(bool), "greedy-v1", checked=True), batch)


def test_feature_sets_and_bad_input_are_named():
    """Known sets and sizes; an unknown set, a size that fits no set and bad shapes are ValueErrors."""
    assert FEATURE_SETS == ("greedy-v1",)
    assert feature_count(None) == 0 and feature_count("greedy-v1") == N_FEATURES
    assert features_for_input(OBS_DIM) is None and features_for_input(OBS_DIM + N_FEATURES) == "greedy-v1"
    with pytest.raises(ValueError, match="unknown policy feature set 'magic'"):
        feature_count("magic")
    with pytest.raises(ValueError, match="network input of 300"):
        features_for_input(300)
    obs = np.zeros((2, OBS_DIM), np.float32)
    assert policy_input(obs, None, None) is not None and policy_input(obs, None, None).shape == (2, OBS_DIM)
    with pytest.raises(ValueError, match="observations must be"):
        policy_input(np.zeros((2, OBS_DIM - 1), np.float32), np.zeros((2, N_ACTIONS), np.int8), "greedy-v1")
    with pytest.raises(ValueError, match="action_masks must be"):
        policy_input(obs, np.zeros((3, N_ACTIONS), np.int8), "greedy-v1")


def test_features_interpreted_are_the_compiled_ones(positions, tmp_path):
    """With Numba's JIT off (how a short first tournament plays) the features are bit for bit
    the compiled kernel's, so an interpreted ``ppo`` plays the compiled one's moves."""
    import os
    import subprocess
    import sys

    obs, masks = positions
    rows = np.arange(0, len(obs), 7)
    np.savez(tmp_path / "in.npz", obs=obs[rows], masks=masks[rows])
    script = ("import sys, numpy as np\nfrom bali_env.bots.features import policy_input\n"
              "d = np.load(sys.argv[1])\nnp.save(sys.argv[2], policy_input(d['obs'], d['masks'], 'greedy-v1'))\n")
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "in.npz"), str(tmp_path / "out.npy")], env=env,
                   check=True, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert np.array_equal(np.load(tmp_path / "out.npy"), policy_input(obs[rows], masks[rows], "greedy-v1"))
