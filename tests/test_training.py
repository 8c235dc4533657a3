"""The training stack: the Gymnasium single-agent view, the SB3 VecEnv over the batched env
(the learner's observations, masks and terminal rewards), and a short MaskablePPO run that
trains, saves, reloads and plays (no strength assertion)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

import bali_env
from bali_env.bots import make_agent
from bali_env.bots.random_agent import RandomAgent
from bali_env import engine as C
from bali_env.versus.single import BaliSingleAgentEnv


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
    from bali_env.versus.opponents import OpponentPool
    from bali_env.versus.sb3_vecenv import BaliSB3VecEnv

    pool = OpponentPool(seed=0)
    pool.add("random", RandomAgent(seed=2))
    venv = BaliSB3VecEnv(6, pool, num_players=3, seed=4)
    obs = venv.reset()
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(600):
        assert (venv.games.to_move == venv.learner_seat).all()
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
def test_short_lean_training_run_writes_what_sb3_writes(tmp_path):
    """The lean trainer: same files as MaskablePPO's run (its model as .pt), a policy that plays."""
    pytest.importorskip("stable_baselines3")
    from bali_env.trainers.ppo_selfplay.train import parse_args, train

    out = tmp_path / "lean"
    summary = train(parse_args([
        "--trainer", "lean", "--steps", "3000", "--envs", "8", "--n-steps", "64", "--batch-size", "256",
        "--net", "32,32", "--snapshot-every", "1000", "--eval-every", "2000", "--eval-games", "4",
        "--final-eval-games", "4", "--opponents", "random:1,self:1", "--out", str(out), "--no-progress",
    ]))
    assert summary["env_steps"] >= 3000 and summary["model"].endswith("final.pt")
    for name in ("final.pt", "final.npz", "eval.csv", "learning_curve.png", "progress.csv", "summary.json"):
        assert (out / name).exists(), name
    header = (out / "progress.csv").read_text().splitlines()[0].split(",")
    assert {"train/approx_kl", "train/value_loss", "train/learner_return", "time/total_timesteps"} <= set(header)
    agent = make_agent(f"ppo:path={out / 'final.npz'}", seed=0)
    obs, masks = _observations(2, 200)
    actions = agent.act_batch(obs, masks)
    assert (masks[np.arange(len(actions)), actions] == 1).all()


@pytest.mark.slow
@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_interrupted_training_still_saves_and_summarises(tmp_path, signame):
    """SIGINT or SIGTERM during bali train: the step finishes, then the checkpoint is saved, the
    model exported and evaluated, and summary.json says interrupted; exit code 130. A second run into
    the same --out is refused (its logs would be overwritten); ``--resume`` continues it: the step
    count goes on from where it stopped and progress.csv keeps every earlier row."""
    import os
    import signal
    import subprocess
    import sys
    import time

    pytest.importorskip("sb3_contrib")
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "bali_env.apps.cli", "train", "--steps", "1e7", "--envs", "8", "--n-steps", "32",
         "--batch-size", "128", "--net", "16", "--eval-every", "1e9", "--final-eval-games", "2",
         "--opponents", "random:1,self:1", "--out", str(out), "--no-progress"],
        cwd=os.path.dirname(os.path.dirname(__file__)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while not (out / "progress.csv").exists() or (out / "progress.csv").stat().st_size < 100:
        assert proc.poll() is None and time.time() < deadline, proc.communicate()[1][-2000:]
        time.sleep(0.5)
    proc.send_signal(getattr(signal, signame))
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err[-2000:]
    assert "interrupted" in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["env_steps"] > 0
    assert (out / "final.npz").exists() and (out / "final.zip").exists()
    assert (out / "resume.pt").exists() and "--resume" in err
    from bali_env.trainers.ppo_selfplay.train import parse_args

    with pytest.raises(SystemExit):
        parse_args(["--out", str(out)])
    logged = (out / "progress.csv").read_text().splitlines()
    stopped_at = summary["env_steps"]
    resumed = subprocess.run(
        [sys.executable, "-m", "bali_env.apps.cli", "train", "--resume", str(out), "--steps", str(stopped_at + 1000)],
        cwd=os.path.dirname(os.path.dirname(__file__)), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sessions"] == 2 and summary["interrupted"] is False
    assert stopped_at + 1000 <= summary["env_steps"] <= stopped_at + 1000 + 8 * 32
    rows = (out / "progress.csv").read_text().splitlines()
    col = rows[0].split(",").index("time/total_timesteps")
    steps = [int(r.split(",")[col]) for r in rows[1:]]
    assert len(rows) > len(logged) and steps == sorted(steps) and steps[len(logged) - 1] == stopped_at + 8 * 32


def test_score_reward_is_the_learners_margin_over_ten():
    """reward="score": a finished game pays the learner (own final score - mean of the others) / 10."""
    pytest.importorskip("stable_baselines3")
    from bali_env.versus.opponents import OpponentPool
    from bali_env.versus.sb3_vecenv import BaliSB3VecEnv

    pool = OpponentPool(seed=0)
    pool.add("random", RandomAgent(seed=0), 1.0)
    venv = BaliSB3VecEnv(6, pool, num_players=4, seed=0, reward="score")
    venv.reset()
    rng = np.random.default_rng(0)
    checked = 0
    while checked < 6:
        seats = venv.learner_seat.copy()
        venv.step_async(np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks()]))
        _, rewards, dones, _ = venv.step_wait()
        assert (rewards[~dones] == 0).all()
        for i in np.flatnonzero(dones):
            scores = venv.games.final_scores[i]
            me = scores[seats[i]]
            assert rewards[i] == pytest.approx((me - (scores.sum() - me) / 3) / 10, abs=1e-5)
            checked += 1


def test_lean_ppo_rollout_and_advantages_match_sb3():
    """LeanPPO samples legal actions only, stores their log-probabilities under the masked
    softmax, and computes SB3's GAE advantages and returns on the same rollout."""
    pytest.importorskip("stable_baselines3")
    import torch
    from stable_baselines3.common.buffers import RolloutBuffer

    from bali_env.trainers.ppo_selfplay.lean import LeanPPO, PPOSettings
    from bali_env.versus.opponents import OpponentPool
    from bali_env.versus.sb3_vecenv import BaliSB3VecEnv

    pool = OpponentPool(seed=0)
    pool.add("random", RandomAgent(seed=0), 1.0)
    venv = BaliSB3VecEnv(6, pool, num_players=2, seed=0)
    ppo = PPOSettings(lr=3e-4, n_steps=80, batch_size=64, n_epochs=1, gamma=0.99, ent_coef=0.0)
    model = LeanPPO(venv, ppo, net=[16], activation=torch.nn.ReLU, seed=0)
    assert model.collect(lambda _: True)
    assert model._masks.gather(2, model._actions[..., None]).all()  # only legal actions
    logp, _ = model.policy(model._obs[3], model._masks[3])
    assert torch.allclose(logp.gather(1, model._actions[3, :, None]).squeeze(1), model._logp[3], atol=1e-5)
    assert model._dones.sum() > 0  # some game ended within the rollout
    adv, returns = model._advantages()
    buf = RolloutBuffer(80, venv.observation_space, venv.action_space, gamma=0.99, gae_lambda=0.95, n_envs=6)
    buf.rewards[:] = model._rewards.numpy()
    buf.values[:] = model._values.numpy()
    buf.episode_starts[1:] = model._dones[:-1].numpy()
    with torch.no_grad():
        _, last = model.policy(torch.from_numpy(model._last_obs), torch.from_numpy(venv.action_masks()))
    buf.compute_returns_and_advantage(last, model._dones[-1].numpy())
    assert np.allclose(adv.numpy(), buf.advantages, atol=1e-5)
    assert np.allclose(returns.numpy(), buf.returns, atol=1e-5)
    metrics = model.update()
    assert set(metrics) >= {"approx_kl", "clip_fraction", "value_loss", "entropy_loss", "explained_variance"}


def test_lean_critic_warmup_freezes_the_actor_until_its_step_count(capsys):
    """``critic_warmup``: while the run has played at most that many env steps an update changes the
    critic only (the actor's weights stay bit for bit); the first update after it changes both, and
    ``bali train`` refuses the flag without ``--trainer lean`` or below 0."""
    pytest.importorskip("stable_baselines3")
    import torch

    from bali_env.trainers.ppo_selfplay.lean import LeanPPO, PPOSettings
    from bali_env.trainers.ppo_selfplay.train import parse_args
    from bali_env.versus.opponents import OpponentPool
    from bali_env.versus.sb3_vecenv import BaliSB3VecEnv

    pool = OpponentPool(seed=0)
    pool.add("random", RandomAgent(seed=0), 1.0)
    venv = BaliSB3VecEnv(4, pool, num_players=2, seed=0)
    ppo = PPOSettings(lr=1e-3, n_steps=16, batch_size=32, n_epochs=1, gamma=0.99, ent_coef=0.01)
    model = LeanPPO(venv, ppo, net=[16], activation=torch.nn.ReLU, seed=0, critic_warmup=128)

    def weights() -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        actor = [w.detach().clone() for w in model._actor()]
        critic = [w.detach().clone() for w in [*model.policy.mlp_extractor.value_net.parameters(),
                                                 *model.policy.value_net.parameters()]]
        return actor, critic

    for step in (64, 128, 192):  # 4 games x 16 moves a rollout
        actor, critic = weights()
        assert model.collect(lambda _: True) and model.num_timesteps == step
        metrics = model.update()
        after_actor, after_critic = weights()
        moved = [not torch.equal(a, b) for a, b in zip(actor, after_actor, strict=True)]
        assert metrics["actor_frozen"] == float(step <= 128)
        assert any(moved) == (step > 128), step
        assert all(not torch.equal(a, b) for a, b in zip(critic, after_critic, strict=True))
        assert all(w.requires_grad for w in model.policy.parameters())
    for bad, message in ((["--critic-warmup", "1e6"], "needs --trainer lean"),
                         (["--trainer", "lean", "--critic-warmup", "-1"], "--critic-warmup must be")):
        with pytest.raises(SystemExit):
            parse_args(bad)
        assert message in capsys.readouterr().err


@pytest.mark.slow
def test_short_training_run_saves_reloads_and_plays(tmp_path):
    """A few thousand MaskablePPO steps with self-play: checkpoints, eval CSV, curve, final model
    that loads as an agent and plays a legal game."""
    pytest.importorskip("sb3_contrib")
    from bali_env.trainers.ppo_selfplay.train import parse_args, train

    out = tmp_path / "run"
    summary = train(parse_args([
        "--steps", "3000", "--envs", "8", "--n-steps", "64", "--batch-size", "256", "--net", "32,32",
        "--snapshot-every", "1000", "--eval-every", "2000", "--eval-games", "4", "--final-eval-games", "4",
        "--opponents", "random:1,greedy:1,self:1", "--out", str(out), "--no-progress",
    ]))
    assert summary["env_steps"] >= 3000
    for name in ("final.zip", "final.npz", "eval.csv", "learning_curve.png", "progress.csv", "summary.json"):
        assert (out / name).exists(), name
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk["env_steps"] == summary["env_steps"]
    assert 0 < on_disk["train_seconds"] <= on_disk["wall_seconds"]
    assert on_disk["env_steps_per_s"] == pytest.approx(on_disk["env_steps"] / on_disk["train_seconds"])
    assert {r["opponent"] for r in on_disk["final"]} == {"random", "greedy"}
    with open(out / "progress.csv", newline="") as f:
        logged = next(csv.reader(f))  # the learner's return, and per opponent kind
    assert {"train/learner_return", "train/return_vs_random", "train/return_vs_greedy"} <= set(logged)
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
    # every evaluation exported its checkpoint; bali_env.trainers.evaluation.curve replays them against any opponent
    from bali_env.trainers.evaluation.curve import checkpoints
    from bali_env.trainers.evaluation.curve import main as curve_main

    points = checkpoints(out)
    assert [steps for steps, _ in points] == sorted(steps for steps, _ in points)
    assert len(points) >= 2 and points[-1][0] == summary["env_steps"]
    assert curve_main([str(out), "--opponents", "random", "greedy", "--games", "2", "--workers", "1"]) == 0
    rows = (out / "curve.csv").read_text().splitlines()
    assert len(rows) == 1 + 2 * len(points)
    assert (out / "curve.png").stat().st_size > 0
    # a run that went on from another policy: that policy is the first point, steps count from its own
    start = points[0][1]
    assert curve_main([str(out), "--opponents", "random", "--games", "2", "--workers", "1", "--start", str(start)]) == 0
    steps = [int(line.split(",")[0]) for line in (out / "curve.csv").read_text().splitlines()[1:]]
    assert steps == [points[0][0]] + [points[0][0] + s for s, _ in points]


@pytest.mark.slow
def test_a_timed_run_takes_its_minutes_shows_learning_and_says_how_to_play(tmp_path, capsys):
    """``bali train --minutes M``: the whole run, the final evaluation included, takes M minutes
    (before: the final evaluation's games came after them: 65 s more in a 2-minute run); the bar
    shows the learner's return and the latest win rates (before: seconds and steps); the run
    evaluates several times (before: once, a learning curve of one dot); the final evaluation has
    a bar of its own; the last lines say what was written and how to play it (before: summary.json
    printed raw)."""
    import time

    pytest.importorskip("sb3_contrib")
    from bali_env.trainers.ppo_selfplay.train import run_argv

    out = tmp_path / "run"
    t0 = time.time()
    assert run_argv(["--minutes", "0.75", "--envs", "16", "--n-steps", "32", "--batch-size", "256", "--net", "16",
                     "--eval-games", "100", "--final-eval-games", "1000", "--opponents", "random:1",
                     "--out", str(out)]) == 0
    wall = time.time() - t0
    captured = capsys.readouterr()
    summary = json.loads((out / "summary.json").read_text())
    over = summary["wall_seconds"] - 45  # the final evaluation's estimate may miss by a little on a busy machine
    assert over <= 0.5 * summary.get("final_eval_seconds", 0) + 2, (over, captured.err[-2000:])
    assert wall <= summary["wall_seconds"] + 3
    assert "then the final evaluation (1,000 games against each of random and greedy" in captured.err
    assert "return " in captured.err and "% vs greedy" in captured.err  # the training bar's postfix
    assert "final evaluation: 2000/2000 games" in captured.err
    with open(out / "eval.csv", newline="") as f:
        steps = {int(row["steps"]) for row in csv.DictReader(f)}
    assert len(steps) >= 3 and min(steps) == 0  # the starting policy, on the way, the final one
    lines = captured.out.strip().splitlines()
    assert not any(line.startswith("{") for line in lines)
    assert lines[-4].startswith(f"wrote: {out} (final.npz, final.zip, learning_curve.png, eval.csv, summary.json")
    assert lines[-2].startswith("the final policy won ") and "(1,000 games each" in lines[-2]
    assert lines[-1] == f"play it: bali tournament --agents ppo:path={out / 'final.npz'} greedy --players 2 --games 400"
    assert len(summary["final"]) == 2


@pytest.mark.slow
def test_final_eval_games_0_switches_every_evaluation_off(tmp_path, capsys):
    """``--eval-every 0 --final-eval-games 0``: no evaluation at all (before: refused, so a run
    always ended with 2 x 1,000 games); the policy is still saved and exported."""
    pytest.importorskip("sb3_contrib")
    from bali_env.trainers.ppo_selfplay.train import run_argv

    out = tmp_path / "run"
    assert run_argv(["--steps", "256", "--envs", "4", "--n-steps", "64", "--batch-size", "128", "--net", "8",
                     "--eval-every", "0", "--final-eval-games", "0", "--opponents", "random:1", "--out", str(out),
                     "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "games against" not in captured.out and not (out / "eval.csv").exists()
    assert (out / "final.npz").exists() and json.loads((out / "summary.json").read_text())["final"] == []
    assert "no final evaluation (--final-eval-games 0)" in captured.out


def test_curve_refuses_a_folder_that_is_not_a_run(tmp_path, capsys):
    """bali_env.trainers.evaluation.curve names what is wrong before playing anything."""
    from bali_env.trainers.evaluation.curve import main as curve_main

    with pytest.raises(SystemExit) as exc:
        curve_main([str(tmp_path)])
    assert exc.value.code == 2
    assert "not a bali train run" in capsys.readouterr().err


def test_self_play_snapshot_is_a_frozen_numpy_copy():
    """A self-play opponent plays the policy's most probable legal action by the NumPy forward
    pass, and later updates of the learner do not change it."""
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO

    from bali_env.versus.opponents import OpponentPool, make_policy_opponent
    from bali_env.versus.sb3_vecenv import BaliSB3VecEnv

    pool = OpponentPool(seed=0)
    pool.add("random", RandomAgent(seed=0), 1.0)
    model = MaskablePPO("MlpPolicy", BaliSB3VecEnv(2, pool, num_players=2, seed=0), seed=0, device="cpu",
                        n_steps=8, batch_size=16, policy_kwargs={"net_arch": [32, 32]})
    obs, masks = _observations(2, 300)
    snap = make_policy_opponent(model.policy, seed=0, deterministic=True)
    want, _ = model.predict(obs, action_masks=masks.astype(bool), deterministic=True)
    got = snap.act_batch(obs, masks)
    assert (got == np.asarray(want)).mean() >= 0.99
    with torch.no_grad():
        for param in model.policy.parameters():
            param.add_(1.0)
    assert (snap.act_batch(obs, masks) == got).all()
    sampler = make_policy_opponent(model.policy, seed=3)
    a, b = sampler.act_batch(obs, masks), make_policy_opponent(model.policy, seed=3).act_batch(obs, masks)
    assert (a == b).all() and (masks[np.arange(len(a)), a] == 1).all()


def test_opponent_pool_and_games_in_flight_survive_a_checkpoint():
    """What --resume restores: the pool (names, weights, frozen snapshot weights, every generator)
    and the games in flight (states, deal streams, seats): the restored copy plays on exactly like
    the original, move for move; a checkpoint for other games is refused before any kernel runs."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from bali_env.versus.opponents import OpponentPool, make_policy_opponent
    from bali_env.versus.sb3_vecenv import BaliSB3VecEnv

    def pool_and_env() -> tuple[OpponentPool, BaliSB3VecEnv]:
        pool = OpponentPool(seed=5)
        pool.add("random", make_agent("random", seed=1), 1.0)
        pool.add("greedy", make_agent("greedy", seed=2), 2.0)
        return pool, BaliSB3VecEnv(6, pool, num_players=3, seed=9)

    pool, venv = pool_and_env()
    model = MaskablePPO("MlpPolicy", venv, seed=0, device="cpu", n_steps=8, batch_size=16,
                        policy_kwargs={"net_arch": [16]})
    pool.add("self@0", make_policy_opponent(model.policy, seed=4), 1.5)
    venv.reset()
    learner = RandomAgent(seed=7)
    for _ in range(25):  # games end and new ones are dealt from the streams meanwhile
        venv.step(learner.act_batch(venv.games.obs, venv.games.action_masks))
    saved_pool, saved_games = pool.checkpoint(), venv.checkpoint()

    pool2 = OpponentPool.from_checkpoint(saved_pool)
    assert pool2.names == ["random", "greedy", "self@0"] and pool2.weights == [1.0, 2.0, 1.5]
    venv2 = BaliSB3VecEnv(6, pool2, num_players=3, seed=123)  # the seed no longer matters
    venv2.restore(saved_games)
    twin = RandomAgent(seed=8)
    learner.seed(8)
    for _ in range(60):
        a = learner.act_batch(venv.games.obs, venv.games.action_masks)
        assert (twin.act_batch(venv2.games.obs, venv2.games.action_masks) == a).all()
        o1, r1, d1, _ = venv.step(a)
        o2, r2, d2, _ = venv2.step(a)
        assert (o1 == o2).all() and (r1 == r2).all() and (d1 == d2).all()
    assert (venv.games.states == venv2.games.states).all() and venv.episode_returns[-len(venv2.episode_returns):] == \
        venv2.episode_returns and len(venv2.episode_returns) > 0

    other = BaliSB3VecEnv(4, OpponentPool.from_checkpoint(saved_pool), num_players=3)
    with pytest.raises(ValueError, match="--envs"):
        other.restore(saved_games)
    broken = dict(saved_games)
    broken["games.states"] = saved_games["games.states"].copy()
    broken["games.states"][0, :] = 9999
    with pytest.raises(ValueError, match="states"):
        venv2.restore(broken)


@pytest.mark.slow
@pytest.mark.parametrize("trainer", ["sb3", "lean"])
def test_training_resumes_from_its_checkpoint(tmp_path, trainer):
    """bali train --resume OUT: the model goes on with its weights, optimizer and step count; the
    logs are appended (every row of the first session kept, steps increasing); --minutes and
    --steps are totals; other flags cannot change; a run at its end says so (nothing written)."""
    pytest.importorskip("sb3_contrib")
    import torch

    from bali_env.trainers.ppo_selfplay.train import CHECKPOINT, TrainingError, parse_args, train

    out = tmp_path / "run"
    first = train(parse_args([
        "--trainer", trainer, "--steps", "1500", "--envs", "8", "--n-steps", "64", "--batch-size", "256",
        "--net", "32,32", "--snapshot-every", "500", "--eval-every", "1000", "--eval-games", "2",
        "--final-eval-games", "2", "--opponents", "random:1,greedy:1,self:1", "--out", str(out), "--no-progress",
    ]))
    assert first["env_steps"] == 1536 and first["sessions"] == 1
    saved = torch.load(out / CHECKPOINT, weights_only=False)
    assert saved["progress"]["steps"] == 1536
    assert [e["name"] for e in saved["pool"]["entries"]][:2] == ["random", "greedy"]
    assert sum(e["name"].startswith("self@") for e in saved["pool"]["entries"]) == 4  # at 0, 500, 1000, 1500
    progress_before = (out / "progress.csv").read_text().splitlines()
    eval_before = (out / "eval.csv").read_text().splitlines()

    with pytest.raises(SystemExit):
        parse_args(["--resume", str(out), "--envs", "16"])
    with pytest.raises(TrainingError, match="already reached"):
        train(parse_args(["--resume", str(out)]))  # config.json says --steps 1500
    assert (out / "progress.csv").read_text().splitlines() == progress_before

    second = train(parse_args(["--resume", str(out), "--steps", "3000"]))
    assert second["env_steps"] == 3072 and second["sessions"] == 2
    assert json.loads((out / "config.json").read_text())["steps"] == 3000
    rows = (out / "progress.csv").read_text().splitlines()
    header = rows[0].split(",")
    col = header.index("time/total_timesteps")
    steps = [int(r.split(",")[col]) for r in rows[1:]]
    assert steps == [512, 1024, 1536, 2048, 2560, 3072]
    evals = (out / "eval.csv").read_text().splitlines()
    # at 2000 and at the end (the one due at 3000 falls on the last steps: the final evaluation stands for it)
    assert evals[: len(eval_before)] == eval_before and len(evals) == len(eval_before) + 4
    assert [int(line.split(",")[0]) for line in eval_before[1:]] == [0, 0, 1000, 1000, 1536, 1536]


def test_privileged_features_are_the_true_state_from_the_learners_chair():
    """The critic's features: true offerings by relative seat, altar counts and values, and the
    score of every relative seat if the game ended now (contract.score_breakdown)."""
    from bali_env.engine.contract import final_result, score_breakdown
    from bali_env.envs.batched import BaliVectorEnv
    from bali_env.trainers.ppo_selfplay.privileged import N_PRIVILEGED, privileged_features

    venv = BaliVectorEnv(12, num_players=3, oracle=True, seed=5)
    venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(40):
        venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks]))
    seats = rng.integers(0, 3, size=12)
    out = np.zeros((12, N_PRIVILEGED), dtype=np.float32)
    privileged_features(venv.states, seats, out)
    for i in range(12):
        s, me = venv.states[i], int(seats[i])
        v = C.state_blocks(s)
        result = final_result(s)
        totals = [row["total"] for row in score_breakdown(s)]
        for r in range(3):
            q = (me + r) % 3
            assert np.allclose(out[i, 4 * r : 4 * r + 4], v.offerings[q] / 10)
            assert out[i, 24 + r] == pytest.approx(totals[q] / 100)
        assert np.allclose(out[i, 16:20], np.array(result["altar_counts"]) / 10)
        assert np.allclose(out[i, 20:24], np.array(result["altar_values"]) / 3)
        assert (out[i, 12:16] == 0).all() and out[i, 27] == 0  # no fourth seat


def _observations(n_players: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the player to move along random games."""
    env = bali_env.raw_env(num_players=n_players)
    rng = np.random.default_rng(n_players)
    obs, masks = [], []
    game = 0
    while len(obs) < count:
        env.reset(seed=game)
        game += 1
        while not all(env.terminations.values()) and len(obs) < count:
            o = env.observe(env.agent_selection)
            obs.append(o["observation"])
            masks.append(o["action_mask"])
            env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    return np.array(obs), np.array(masks)


@pytest.mark.parametrize("features", [None, "greedy-v1"])
def test_exported_policy_plays_like_the_sb3_policy(tmp_path, features):
    """The NumPy forward pass of an exported policy (with or without the heuristic's input
    features) gives the SB3 policy's actions (deterministic) on the same observations, without
    torch at play time; a bad file is refused."""
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO

    from bali_env.bots.features import feature_count, policy_input
    from bali_env.engine import OBS_DIM
    from bali_env.bots.ppo import ExportedPolicy, PPOAgent, export_policy
    from bali_env.bots.sb3 import SB3Agent
    from bali_env.versus.opponents import OpponentPool
    from bali_env.versus.sb3_vecenv import BaliSB3VecEnv

    torch.manual_seed(0)
    pool = OpponentPool(seed=0)
    pool.add("random", RandomAgent(seed=0), 1.0)
    venv = BaliSB3VecEnv(4, pool, num_players=2, seed=0, features=features)
    assert venv.reset().shape == (4, OBS_DIM + feature_count(features))
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=32, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [32, 32]})
    path = export_policy(model.policy, tmp_path / "p.npz", num_players=2)
    assert ExportedPolicy(path).features == features
    obs, masks = _observations(2, 600)
    inputs = policy_input(obs, masks, features)
    want, _ = model.predict(inputs, action_masks=masks.astype(bool), deterministic=True)
    agent = make_agent(f"ppo:path={path}", seed=0)
    got = agent.act_batch(obs, masks)
    assert (masks[np.arange(len(got)), got] == 1).all()
    assert (SB3Agent(model=model).act_batch(obs, masks) == np.asarray(want)).all()
    with torch.no_grad():
        dist = model.policy.get_distribution(torch.as_tensor(inputs))
        torch_logits = dist.distribution.logits.numpy()
    np_logits = ExportedPolicy(path).logits(obs, masks)
    assert np.allclose(np_logits - np_logits.max(1, keepdims=True), torch_logits - torch_logits.max(1, keepdims=True),
                       atol=1e-4)
    assert (got == np.asarray(want)).mean() >= 0.99  # argmax ties within float error may differ
    assert agent.act(obs[0], masks[0]) == got[0]
    sampler = PPOAgent(seed=1, path=path, deterministic=False)
    sampled = sampler.act_batch(obs, masks)
    assert (masks[np.arange(len(sampled)), sampled] == 1).all()
    # refused: not an export, another observation size, no file
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a policy file"):
        PPOAgent(path=tmp_path / "bad.npz")
    data = dict(np.load(path))
    meta = json.loads(str(data["meta"][0]))  # the metadata is JSON
    assert meta["features"] == features
    dim = OBS_DIM + feature_count(features)
    data["meta"] = np.array([json.dumps(dict(meta, obs_dim=290))])
    np.savez(tmp_path / "other.npz", **data)
    with pytest.raises(ValueError, match="inputs of 290"):
        PPOAgent(path=tmp_path / "other.npz")
    # a feature set this bali-env does not know, or not the one trained for
    data["meta"] = np.array([json.dumps(dict(meta, features="psychic-v9"))])
    np.savez(tmp_path / "unknown.npz", **data)
    with pytest.raises(ValueError, match="unknown policy feature set 'psychic-v9'"):
        PPOAgent(path=tmp_path / "unknown.npz")
    other = None if features else "greedy-v1"
    data["meta"] = np.array([json.dumps(dict(meta, features=other))])
    np.savez(tmp_path / "mismatch.npz", **data)
    with pytest.raises(ValueError, match=f"inputs of {dim}"):
        PPOAgent(path=tmp_path / "mismatch.npz")
    if features:
        with pytest.raises(ValueError, match="needs action_masks"):
            ExportedPolicy(path).logits(obs)
    with pytest.raises(ValueError, match="no exported policy"):
        make_agent(f"ppo:path={tmp_path / 'missing.npz'}")


def test_shipped_ppo_policy_for_a_missing_player_count_is_a_clear_error(monkeypatch, tmp_path):
    """make_agent("ppo") picks the shipped file for the game's player count, or says none exists."""
    import bali_env.bots.ppo as P

    monkeypatch.setattr(P, "POLICY_DIR", tmp_path)
    agent = make_agent("ppo", seed=0)
    obs, masks = _observations(3, 2)
    with pytest.raises(ValueError, match="no shipped policy for 3 players"):
        agent.act(obs[0], masks[0])


@pytest.mark.parametrize("num_players", [2, pytest.param(3, marks=pytest.mark.slow),
                                         pytest.param(4, marks=pytest.mark.slow)])
def test_shipped_ppo_policies_play_without_torch(num_players):
    """The shipped policies are valid exports for their player count (3 players: the 4-player
    file, cut to three seats) and play legal moves by the NumPy forward pass: torch is not
    imported for it."""
    import subprocess
    import sys

    import bali_env.bots.ppo as P

    path = P.shipped_policy(num_players)
    if not path.is_file():
        pytest.skip(f"no policy shipped for {num_players} players")
    policy = P.ExportedPolicy(path).for_players(num_players)
    assert policy.meta["num_players"] == num_players and path.stat().st_size < 3_000_000
    obs, masks = _observations(num_players, 300)
    actions = make_agent("ppo", seed=0).act_batch(obs, masks)
    assert (masks[np.arange(len(actions)), actions] == 1).all()
    code = ("import sys, numpy as np, bali_env; from bali_env.bots import make_agent; e = bali_env.env(num_players="
            f"{num_players}); e.reset(seed=0); o = e.observe(e.agent_selection); "
            "a = make_agent('ppo').act(o['observation'], o['action_mask']); assert o['action_mask'][a] == 1; "
            "assert 'torch' not in sys.modules, 'torch was imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(("flags", "named"), [
    (["--envs", "0"], "--envs"), (["--steps", "-5"], "--steps"), (["--minutes", "-1"], "--minutes"),
    (["--gamma", "0"], "--gamma"), (["--gamma", "1.5"], "--gamma"), (["--opponents", "random:x"], "--opponents"),
    (["--opponents", "wizard:1"], "--opponents"), (["--opponents", "random:0"], "--opponents"),
    (["--net", "256,abc"], "--net"), (["--batch-size", "0"], "--batch-size"), (["--lr", "nan"], "--lr"),
    (["--mcts-sims", "0"], "--mcts-sims"), (["--opponents", "mcts:-1"], "--opponents"),
])
def test_train_flags_are_validated_before_anything_starts(flags, named, tmp_path, capsys):
    """A bad flag: exit 2 with a message naming it, and nothing written."""
    from bali_env.trainers.ppo_selfplay.train import parse_args

    out = tmp_path / "run"
    with pytest.raises(SystemExit) as exc:
        parse_args([*flags, "--out", str(out)])
    assert exc.value.code == 2
    assert named in capsys.readouterr().err
    assert not out.exists()


def test_train_out_must_be_writable(tmp_path, capsys):
    """An --out below a file (or an unwritable folder) is refused up front."""
    from bali_env.trainers.ppo_selfplay.train import parse_args

    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(SystemExit):
        parse_args(["--out", str(blocker / "run")])
    assert "--out" in capsys.readouterr().err
    args = parse_args(["--out", str(tmp_path / "ok"), "--opponents", "greedy:2,self:1"])
    assert args.weights == {"greedy": 2.0, "self": 1.0}


@pytest.mark.parametrize("flags", [["--steps", "0"], ["--opponents", "self:x"], ["--opponents", "nobody"]])
def test_throughput_flags_are_validated(flags, capsys):
    """python -m benchmarks.throughput refuses bad flags before measuring anything."""
    from benchmarks.throughput import main

    with pytest.raises(SystemExit) as exc:
        main(flags)
    assert exc.value.code == 2
    assert flags[0] in capsys.readouterr().err


def test_resume_refuses_a_folder_without_a_usable_checkpoint(tmp_path, capsys):
    """--resume needs config.json and a readable resume.pt; each problem is one line, exit 2,
    before anything is written."""
    pytest.importorskip("torch")
    from bali_env.trainers.ppo_selfplay.train import run_argv as main

    out = tmp_path / "run"
    out.mkdir()
    with pytest.raises(SystemExit):
        main(["--resume", str(out)])
    assert "no readable config.json" in capsys.readouterr().err
    (out / "config.json").write_text(json.dumps({"players": 2, "steps": 1e6, "trainer": "sb3"}))
    with pytest.raises(SystemExit):
        main(["--resume", str(out)])
    assert "no resume.pt" in capsys.readouterr().err
    (out / "resume.pt").write_bytes(b"not a checkpoint")
    assert main(["--resume", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not a readable training checkpoint" in err[0]
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "resume.pt"]


def test_init_starts_the_actor_from_an_exported_policy(tmp_path, capsys):
    """``--init FILE``: the new actor plays exactly like the file, also when the run adds the
    heuristic's features (their input weights start at 0); a file that does not fit the run's
    network is refused before anything is written."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from bali_env.bots.ppo import ExportedPolicy, export_policy
    from bali_env.trainers.ppo_selfplay.train import load_actor, make_model, parse_args
    from bali_env.trainers.ppo_selfplay.train import run_argv as main
    from bali_env.versus.opponents import OpponentPool
    from bali_env.versus.sb3_vecenv import BaliSB3VecEnv

    pool = OpponentPool(seed=0)
    pool.add("random", RandomAgent(seed=0), 1.0)
    import torch

    old = MaskablePPO("MlpPolicy", BaliSB3VecEnv(2, pool, num_players=2, seed=0), seed=1, device="cpu",
                      policy_kwargs={"net_arch": [16, 16], "activation_fn": torch.nn.ReLU})
    path = export_policy(old.policy, tmp_path / "old.npz", num_players=2)
    obs, masks = _observations(2, 300)
    want = ExportedPolicy(path).logits(obs)
    for features in ("greedy-v1", "none"):
        args = parse_args(["--init", str(path), "--net", "16,16", "--features", features, "--out", str(tmp_path / "r")])
        venv = BaliSB3VecEnv(2, pool, num_players=2, seed=0, features=None if features == "none" else features)
        model, _ = make_model(args, venv)
        load_actor(model.policy, args.init)
        got = ExportedPolicy.from_sb3(model.policy).logits(obs, masks)
        assert np.allclose(got, want, atol=1e-5)
    refused = ((["--net", "8,8"], "does not fit"), (["--net", "16,16,16"], "does not fit"),
               (["--net", "16,16", "--activation", "tanh"], "does not fit"),
               (["--net", "16,16", "--init", str(tmp_path / "none.npz")], "no exported policy"))
    for flags, named in refused:
        out = tmp_path / "refused"
        with pytest.raises(SystemExit) as exc:
            main(["--init", str(path), *flags, "--out", str(out)])
        assert exc.value.code == 2 and named in capsys.readouterr().err and not out.exists()


def test_init_from_a_saved_model_restores_actor_and_critic(tmp_path, capsys):
    """``--init OUT/final.zip`` (a model ``bali train`` saved) starts the run with the same actor
    and critic, weight for weight; one that does not fit the run, or a file that is no model, is
    refused before anything is written."""
    pytest.importorskip("sb3_contrib")
    import torch

    from bali_env.trainers.ppo_selfplay.train import load_actor, make_model, parse_args
    from bali_env.trainers.ppo_selfplay.train import run_argv as main
    from bali_env.versus.opponents import OpponentPool
    from bali_env.versus.sb3_vecenv import BaliSB3VecEnv

    pool = OpponentPool(seed=0)
    pool.add("random", RandomAgent(seed=0), 1.0)
    args = parse_args(["--net", "16,16", "--out", str(tmp_path / "a")])
    old, _ = make_model(args, BaliSB3VecEnv(2, pool, num_players=2, seed=0, features="greedy-v1"))
    old.save(tmp_path / "old.zip")
    args = parse_args(["--init", str(tmp_path / "old.zip"), "--net", "16,16", "--seed", "7",
                       "--out", str(tmp_path / "r")])
    model, _ = make_model(args, BaliSB3VecEnv(2, pool, num_players=2, seed=0, features="greedy-v1"))
    fresh = {k: v.clone() for k, v in model.policy.state_dict().items()}
    load_actor(model.policy, args.init, args.trainer)
    want, got = old.policy.state_dict(), model.policy.state_dict()
    assert sorted(want) == sorted(got) and any("value_net" in k for k in got)
    assert all(torch.equal(want[k], got[k]) for k in want)
    assert not all(torch.equal(fresh[k], got[k]) for k in fresh)  # the load changed something
    (tmp_path / "junk.zip").write_bytes(b"not a model")
    refused = ((["--net", "8,16"], "does not fit"), (["--net", "16"], "does not fit"),
               (["--net", "16,16", "--features", "none"], "does not fit"),
               (["--net", "16,16", "--init", str(tmp_path / "junk.zip")], "nor a model saved by --trainer sb3"),
               (["--net", "16,16", "--trainer", "lean"], "nor a model saved by --trainer lean"))
    for flags, named in refused:
        out = tmp_path / "refused"
        with pytest.raises(SystemExit) as exc:
            main(["--init", str(tmp_path / "old.zip"), *flags, "--out", str(out)])
        assert exc.value.code == 2 and named in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize("source", ["npz", "zip"])
def test_init_grows_a_narrower_network_into_a_wider_one(tmp_path, source):
    """``--init`` with wider ``--net`` layers than the file's: the wider actor plays exactly like
    the file (a saved model's critic values the same too), its extra units start with fresh weights
    in and zero weights out, and one PPO update changes the weights out of them (they learn)."""
    pytest.importorskip("sb3_contrib")
    import torch

    from bali_env.bots.ppo import ExportedPolicy, export_policy
    from bali_env.trainers.ppo_selfplay.train import init_problem, load_actor, make_model, parse_args
    from bali_env.versus.opponents import OpponentPool
    from bali_env.versus.sb3_vecenv import BaliSB3VecEnv

    pool = OpponentPool(seed=0)
    pool.add("random", RandomAgent(seed=0), 1.0)
    venv = BaliSB3VecEnv(2, pool, num_players=2, seed=0, features="greedy-v1")
    old, _ = make_model(parse_args(["--net", "16,8", "--seed", "3", "--out", str(tmp_path / "a")]), venv)
    path = tmp_path / f"old.{source}"
    if source == "npz":
        export_policy(old.policy, path, num_players=2, features="greedy-v1")
    else:
        old.save(path)
    args = parse_args(["--init", str(path), "--net", "24,12", "--n-steps", "8", "--batch-size", "16",
                       "--out", str(tmp_path / "r")])
    assert init_problem(args) is None
    model, _ = make_model(args, BaliSB3VecEnv(2, pool, num_players=2, seed=0, features="greedy-v1"))
    load_actor(model.policy, args.init, args.trainer)
    obs, masks = _observations(2, 300)
    want = ExportedPolicy.from_sb3(old.policy).logits(obs, masks)
    grown = ExportedPolicy.from_sb3(model.policy)
    assert np.allclose(grown.logits(obs, masks), want, atol=1e-5)
    x = grown.input(obs, masks)
    state = model.policy.state_dict()
    hidden = state["mlp_extractor.policy_net.0.weight"]
    assert hidden.shape == (24, x.shape[1]) and torch.count_nonzero(hidden[16:]) > 0  # fresh weights in
    assert torch.count_nonzero(state["mlp_extractor.policy_net.2.weight"][:8, 16:]) == 0  # zero weights out
    assert torch.count_nonzero(state["action_net.weight"][:, 8:]) == 0
    if source == "zip":
        with torch.no_grad():
            t = torch.from_numpy(x)
            assert torch.allclose(model.policy.predict_values(t), old.policy.predict_values(t), atol=1e-5)
    model.learn(total_timesteps=16)
    assert torch.count_nonzero(model.policy.state_dict()["action_net.weight"][:, 8:]) > 0


def test_mcts_opponents_join_the_pool_and_survive_a_checkpoint():
    """``--opponents greedy:1,mcts:2 --mcts-sims N`` puts ``mcts:sims=N`` in the pool with its
    weight; the pool's checkpoint rebuilds it with its search stream, so it plays on the same."""
    from bali_env.trainers.ppo_selfplay.pool import OpponentPool, build_pool
    from bali_env.trainers.ppo_selfplay.train import parse_args

    args = parse_args(["--opponents", "greedy:1,mcts:2", "--mcts-sims", "30", "--seed", "4"])
    pool = build_pool(args)
    assert pool.names == ["greedy", "mcts:sims=30"] and pool.weights == [1.0, 2.0]
    mcts = pool.agents[1]
    assert mcts.sims == 30
    obs, masks = _observations(2, 40)
    obs, masks = obs[masks.sum(axis=1) > 1][:6], masks[masks.sum(axis=1) > 1][:6]
    mcts.act_batch(obs[:2], masks[:2])  # the stream moves on
    twin = OpponentPool.from_checkpoint(pool.checkpoint()).agents[1]
    assert twin.sims == 30
    assert (twin.act_batch(obs, masks) == mcts.act_batch(obs, masks)).all()
    assert (twin._stream == mcts._stream).all()


def test_a_model_the_package_builds_leaves_no_sb3_folder_in_the_temporary_directory(tmp_path, monkeypatch):
    """``make_model``'s MaskablePPO learns without a run's logger and writes nothing: SB3's default
    logger made an empty ``SB3-<date-time>`` folder in the temporary directory at every ``learn``
    (one per test that trained such a model)."""
    pytest.importorskip("sb3_contrib")
    import tempfile

    from bali_env.trainers.ppo_selfplay.train import make_model, parse_args
    from bali_env.versus.opponents import OpponentPool
    from bali_env.versus.sb3_vecenv import BaliSB3VecEnv

    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    monkeypatch.delenv("SB3_LOGDIR", raising=False)
    pool = OpponentPool(seed=0)
    pool.add("random", RandomAgent(seed=0), 1.0)
    args = parse_args(["--net", "8", "--n-steps", "8", "--batch-size", "16", "--features", "none",
                       "--out", str(tmp_path / "run")])
    model, _ = make_model(args, BaliSB3VecEnv(2, pool, num_players=2, seed=0))
    model.learn(total_timesteps=16)
    assert model.num_timesteps >= 16
    assert list(temporary.glob("SB3-*")) == []  # (torch may leave its own cache folder there)
