"""The training stack: the Gymnasium single-agent view, the SB3 VecEnv over the batched env
(the learner's observations, masks and terminal rewards), and a short MaskablePPO run that
trains, saves, reloads and plays (no strength assertion)."""

from __future__ import annotations

import numpy as np
import pytest

import bali_env
from agents import make_agent
from agents.random_agent import RandomAgent
from bali_env import core as C
from bali_env.single import BaliSingleAgentEnv


def test_single_agent_env_passes_gymnasium_checker():
    """gymnasium's env checker accepts the single-agent view (it steps unmasked random actions, so
    illegal ones end the episode here instead of raising)."""
    from gymnasium.utils.env_checker import check_env

    check_env(BaliSingleAgentEnv(RandomAgent(seed=0), num_players=2, illegal_action="terminate"),
              skip_render_check=True)
    env = BaliSingleAgentEnv(RandomAgent(seed=0), num_players=2, illegal_action="terminate")
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, done, _, info = env.step(illegal)
    assert done and reward == -1.0 and info.get("illegal_action")


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_single_agent_env_gives_the_learner_its_own_terminal_reward(num_players):
    """Every step returns the learner's own observation; the final reward is the learner's
    (+1 only if it is among the winners), also when an opponent made the last move."""
    env = BaliSingleAgentEnv([RandomAgent(seed=1)], num_players=num_players, learner_seat="rotate")
    rng = np.random.default_rng(0)
    last_movers = set()  # whether the learner made the game's last move, per episode
    for episode in range(60):
        if episode >= 6 and last_movers == {True, False}:
            break
        obs, info = env.reset(seed=episode)
        assert info["learner_seat"] == episode % num_players
        done, total = False, 0.0
        while not done:
            sd = env.state_dict()
            assert sd["to_move"] == info["learner_seat"]
            view = bali_env.decode_observation(obs)
            assert view.hands[0].tolist() == sd["hands"][info["learner_seat"]]
            mask = env.action_masks()
            obs, reward, done, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            total += reward
            if not done:
                assert reward == 0.0
        sd = env.state_dict()
        last_movers.add(sd["active"] == info["learner_seat"])
        assert total == (1.0 if info["learner_seat"] in sd["winners"] else -1.0)
        assert info["final_scores"] == sd["scores"]
    assert last_movers == {True, False}  # both the learner and an opponent ended some game


@pytest.mark.slow
def test_sb3_vec_env_steps_the_learner_seat_only():
    """Each returned row is the learner's observation; dones carry the learner's ±1."""
    pytest.importorskip("stable_baselines3")
    from training.vec_env import BaliSB3VecEnv, OpponentPool

    pool = OpponentPool(seed=0)
    pool.add("random", RandomAgent(seed=2))
    venv = BaliSB3VecEnv(6, pool, num_players=3, seed=4)
    obs = venv.reset()
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(600):
        assert (venv.venv.to_move == venv.learner_seat).all()
        masks = np.stack(venv.env_method("action_masks"))
        assert masks.shape == (6, C.N_ACTIONS) and masks.any(axis=1).all()
        venv.step_async(np.argmax(masks * rng.random(masks.shape), axis=1))
        obs, rewards, dones, infos = venv.step_wait()
        assert obs.shape == (6, C.OBS_DIM)
        assert set(np.unique(rewards[dones])) <= {-1.0, 1.0} and not rewards[~dones].any()
        ended += int(dones.sum())
    assert ended > 0 and len(venv.episode_returns) == ended
    assert set(venv.learner_seat.tolist()) <= {0, 1, 2}


@pytest.mark.slow
def test_short_training_run_saves_reloads_and_plays(tmp_path):
    """A few thousand MaskablePPO steps with self-play: checkpoints, eval CSV, curve, final model
    that loads as an agent and plays a legal game."""
    pytest.importorskip("sb3_contrib")
    from training.train import parse_args, train

    out = tmp_path / "run"
    summary = train(parse_args([
        "--steps", "3000", "--envs", "8", "--n-steps", "64", "--batch-size", "256", "--net", "32,32",
        "--snapshot-every", "1000", "--eval-every", "2000", "--eval-games", "4", "--final-eval-games", "4",
        "--opponents", "random:1,greedy:1,self:1", "--out", str(out), "--no-progress",
    ]))
    assert summary["steps"] >= 3000
    for name in ("final.zip", "eval.csv", "learning_curve.png", "progress.csv", "summary.json"):
        assert (out / name).exists(), name
    agent = make_agent(f"sb3:{out / 'final.zip'}", seed=0)
    env = bali_env.raw_env(num_players=2)
    env.reset(seed=0)
    opponent = RandomAgent(seed=0)
    while not all(env.terminations.values()):
        o = env.observe(env.agent_selection)
        player = agent if env.agent_selection == "player_0" else opponent
        a = player.act(o["observation"], o["action_mask"])
        assert o["action_mask"][a] == 1
        env.step(a)
    assert env.state_dict()["phase"] == "game_over"
