"""RLlib training (``bali_env.trainers.rllib.launch``): the turn-based MultiAgentEnv plays the same game as the
PettingZoo env, the masked module never offers an illegal action, the exported policy plays like
the RLlib module, the self-play mapping, bad flags and an unreachable cluster fail at once, and a
short run is interrupted, resumed and summarised like ``bali train``'s."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import bali_env

pytest.importorskip("ray.rllib")
torch = pytest.importorskip("torch")

from bali_env.trainers.rllib import launch as rllib  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RLLIB = [sys.executable, "-m", "bali_env.apps.cli", "train", "--framework", "rllib"]  #: the RLlib trainer


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_multi_agent_env_plays_the_pettingzoo_game(num_players):
    """Same seed, same actions: the mover, its observation and mask, and the terminal rewards
    are the AEC env's; only the mover is observed until the end, when every seat is."""
    env = rllib.make_env_class()({"num_players": num_players, "oracle": num_players == 3})
    aec = bali_env.env(num_players=num_players, oracle=num_players == 3)
    obs, _ = env.reset(seed=11)
    aec.reset(seed=11)
    rng = np.random.default_rng(0)
    steps = 0
    while True:
        assert list(obs) == [aec.agent_selection]
        mover = aec.agent_selection
        expected = aec.observe(mover)
        np.testing.assert_array_equal(obs[mover]["observations"], expected["observation"])
        np.testing.assert_array_equal(obs[mover]["action_mask"], expected["action_mask"].astype(np.float32))
        action = int(rng.choice(np.flatnonzero(expected["action_mask"])))
        obs, rewards, terminated, truncated, _ = env.step({mover: action})
        aec.step(action)
        steps += 1
        assert not truncated["__all__"]
        if terminated["__all__"]:
            break
        assert rewards == {mover: 0.0}
    assert sorted(obs) == sorted(aec.possible_agents)
    assert rewards == {a: aec._cumulative_rewards[a] for a in aec.possible_agents}
    assert sorted(rewards.values())[-1] == 1.0 and steps > 20


def test_multi_agent_env_refuses_an_action_for_the_wrong_seat():
    env = rllib.make_env_class()({"num_players": 2})
    obs, _ = env.reset(seed=1)
    other = next(a for a in env.possible_agents if a not in obs)
    with pytest.raises(ValueError, match="is to move"):
        env.step({other: 0})


def _module(hidden: list[int]):
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    env = rllib.make_env_class()({"num_players": 2})
    torch.manual_seed(0)
    spec = RLModuleSpec(module_class=rllib.make_module_class(), observation_space=env.observation_spaces["player_0"],
                        action_space=env.action_spaces["player_0"],
                        model_config=DefaultModelConfig(fcnet_hiddens=hidden, fcnet_activation="relu",
                                                        vf_share_layers=False))
    return spec.build()


def _observations(count: int) -> tuple[np.ndarray, np.ndarray]:
    env = bali_env.env(num_players=2)
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    obs, masks = [], []
    while len(obs) < count:
        if env.terminations[env.agent_selection]:
            env.reset()
        o = env.observe(env.agent_selection)
        obs.append(o["observation"])
        masks.append(o["action_mask"])
        env.step(int(rng.choice(np.flatnonzero(o["action_mask"]))))
    return np.array(obs), np.array(masks)


def test_masked_module_and_its_export_choose_the_same_legal_actions(tmp_path):
    """The module's logits of illegal actions are the float minimum in every forward pass; the
    exported .npz (played by the built-in ppo agent, no torch) gives the module's legal logits and
    its greedy actions on the same observations."""
    from bali_env.bots import make_agent
    from bali_env.bots.ppo import ExportedPolicy, write_policy

    module = _module([32, 16])
    obs, masks = _observations(300)
    batch = {"obs": {"observations": torch.tensor(obs), "action_mask": torch.tensor(masks, dtype=torch.float32)}}
    with torch.no_grad():
        outs = [module.forward_inference(dict(batch, obs=dict(batch["obs"])))["action_dist_inputs"].numpy(),
                module.forward_exploration(dict(batch, obs=dict(batch["obs"])))["action_dist_inputs"].numpy(),
                module.forward_train(dict(batch, obs=dict(batch["obs"])))["action_dist_inputs"].numpy()]
    for logits in outs:
        assert (logits[masks == 0] < -1e38).all()
        assert (masks[np.arange(len(obs)), logits.argmax(axis=1)] == 1).all()
    path = write_policy(*rllib.module_arrays(module, 2, env_steps=0), tmp_path / "p.npz")
    exported = ExportedPolicy(path).logits(obs)
    legal = masks == 1
    np.testing.assert_allclose(exported[legal], outs[0][legal], rtol=1e-5, atol=1e-5)
    agent = make_agent(f"ppo:path={path}")
    np.testing.assert_array_equal(agent.act_batch(obs, masks), outs[0].argmax(axis=1))
    assert ExportedPolicy(path).meta["trainer"] == "rllib"


def test_seat_mapping_gives_main_one_seat_and_the_pool_the_rest():
    class Episode:
        def __init__(self, i: int) -> None:
            self.id_ = f"episode-{i}"

    for players in (2, 3, 4):
        seen: set[str] = set()
        for i in range(300):
            ep = Episode(i)
            modules = [rllib.seat_module(f"player_{s}", ep, players=players, pool_size=3, self_share=0.25)
                       for s in range(players)]
            assert modules == [rllib.seat_module(f"player_{s}", ep, players=players, pool_size=3, self_share=0.25)
                               for s in range(players)]  # the same answer every time it is asked
            assert rllib.MAIN in modules
            seen.update(modules)
            only_self = [rllib.seat_module(f"player_{s}", ep, players=players, pool_size=3, self_share=1.0)
                         for s in range(players)]
            assert only_self == [rllib.MAIN] * players
            no_self = [rllib.seat_module(f"player_{s}", ep, players=players, pool_size=3, self_share=0.0)
                       for s in range(players)]
            assert no_self.count(rllib.MAIN) == 1
        assert seen == {rllib.MAIN, "frozen_0", "frozen_1", "frozen_2"}


@pytest.mark.parametrize("flags, named", [
    (["--steps", "0"], "--steps"), (["--minutes", "-1"], "--minutes"), (["--gamma", "1.5"], "--gamma"),
    (["--self-share", "2"], "--self-share"), (["--env-runners", "-1"], "--env-runners"),
    (["--net", "64,x"], "--net"), (["--batch-size", "100", "--minibatch-size", "200"], "--minibatch-size"),
    (["--players", "5"], "--players"), (["--pool-size", "-1"], "--pool-size"),
])
def test_rllib_flags_are_validated_before_anything_starts(flags, named, tmp_path, capsys):
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as exc:
        rllib.parse_args([*flags, "--out", str(out)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err
    assert not out.exists()


def test_bali_train_framework_rllib_hands_over_and_an_unreachable_cluster_fails_fast(tmp_path, capsys):
    """``bali train --framework rllib`` reaches bali_env.trainers.rllib.launch (its flags, its errors); a cluster
    address nobody listens on is one line, exit 2, within seconds, nothing written."""
    from bali_env.apps.cli import main as cli_main

    out = tmp_path / "run"
    with pytest.raises(SystemExit) as exc:
        cli_main(["train", "--framework", "rllib", "--self-share", "3", "--out", str(out)])
    assert exc.value.code == 2 and "--self-share" in capsys.readouterr().err
    t0 = time.time()
    assert cli_main(["train", "--framework", "rllib", "--ray-address", "127.0.0.1:9", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert time.time() - t0 < 15
    assert "cannot reach the Ray cluster at 127.0.0.1:9" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
    with pytest.raises(SystemExit):
        cli_main(["train", "--framework", "tensorflow", "--out", str(out)])
    assert "--framework" in capsys.readouterr().err


@pytest.mark.slow
def test_rllib_run_is_interrupted_resumed_and_summarised(tmp_path):
    """A short RLlib run on a local Ray instance: SIGINT after its first checkpoint ends it with
    a summary (``interrupted``) and exit code 130, ``--resume`` goes on from the saved step count to ``--steps``,
    eval.csv keeps the first session's rows, and final.npz plays in a tournament without torch."""
    out = tmp_path / "run"
    small = ["--env-runners", "1", "--envs-per-runner", "8", "--batch-size", "1000", "--minibatch-size", "250",
             "--net", "32,32", "--eval-every", "1000", "--eval-games", "4", "--final-eval-games", "4",
             "--snapshot-every", "1000", "--pool-size", "2", "--no-progress"]
    proc = subprocess.Popen([*RLLIB, "--steps", "1e9", *small, "--out", str(out)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while not (out / rllib.CHECKPOINT / "bali_progress.json").exists():
        assert proc.poll() is None and time.time() < deadline, proc.communicate()[1][-3000:]
        time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err[-3000:]  # an interrupt's exit code, after the clean stop
    assert "--resume" in err
    first = json.loads((out / "summary.json").read_text())
    assert first["interrupted"] is True and first["framework"] == "rllib" and first["sessions"] == 1
    for key in ("env_steps", "wall_seconds", "train_seconds", "env_steps_per_s"):
        assert first[key] > 0
    assert first["all_decisions"] > first["env_steps"]  # the opponents' seats are counted there only
    assert [r["opponent"] for r in first["final"]] == ["random", "greedy"]
    rows_before = (out / "eval.csv").read_text().splitlines()
    target = first["env_steps"] + 2000
    done = subprocess.run([*RLLIB, "--resume", str(out), "--steps", str(target),
                           "--no-progress"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    second = json.loads((out / "summary.json").read_text())
    assert second["interrupted"] is False and second["sessions"] == 2
    assert target <= second["env_steps"] < target + 1500
    rows_after = (out / "eval.csv").read_text().splitlines()
    assert rows_after[: len(rows_before)] == rows_before and len(rows_after) > len(rows_before)
    again = subprocess.run([*RLLIB, "--resume", str(out), "--steps", str(target)],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and "already reached its end" in again.stderr
    code = ("import sys; from bali_env.arena import run_tournament; "
            f"r = run_tournament(['ppo:path={out / 'final.npz'}', 'random'], num_players=2, games=4, seed=1, "
            "workers=1, progress=False, out_dir=None); "
            "assert 'torch' not in sys.modules and 'ray' not in sys.modules; print(r.participants[0]['games'])")
    played = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert played.returncode == 0 and played.stdout.strip() == "4", played.stderr[-2000:]
