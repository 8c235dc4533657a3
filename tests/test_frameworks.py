"""The examples for other RL frameworks run and respect the action mask: TorchRL
(``PettingZooWrapper``), Tianshou (``PettingZooEnv``, a masked DQN), PettingZoo's SB3
action-mask tutorial pattern and OpenSpiel's own bots and agents (``examples/``); PufferLib's
vectorization and trainer on ``bali_env.versus.puffer_env`` (its env, masked policy and CPU
stand-in for the compiled advantage kernel)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("num_players", [2, 4])
def test_torchrl_masked_policy_plays_whole_legal_games(num_players):
    """Every move the TorchRL policy makes for the seat to move is legal by that seat's mask, and
    the rollout ends with the game (one winner's +1 among the rewards)."""
    pytest.importorskip("torchrl")
    example = _example("torchrl_bali")
    (rollout,) = example.play(num_players=num_players, games=1, seed=3)
    seats = [f"player_{q}" for q in range(num_players)]
    steps = rollout.batch_size[0]
    assert steps > 50
    for t in range(steps):
        movers = [g for g in seats if bool(rollout[g]["mask"][t].all())]
        assert len(movers) == 1
        g = movers[0]
        action = int(rollout[g]["action"][t].item())
        assert bool(rollout[g]["action_mask"][t].reshape(-1)[action])
    final = rollout[-1]["next"]
    assert bool(final["done"].all())
    rewards = [float(final[g]["reward"].sum()) for g in seats]
    assert max(rewards) == 1.0 and min(rewards) == -1.0


@pytest.mark.slow
def test_tianshou_masked_dqn_trains_against_random():
    """A few hundred steps of Tianshou's masked DQN against its masked random player run (an
    illegal action would raise in the env) and report returns in [-1, 1]."""
    pytest.importorskip("tianshou")
    example = _example("tianshou_bali")
    out = example.train(steps=500, seat=1, seed=0, test_games=4)
    assert out["steps"] == 500
    assert -1.0 <= out["return_before"] <= 1.0 and -1.0 <= out["return_after"] <= 1.0


def test_sb3_tutorial_pattern_plays_and_trains():
    """The tutorial's self-play env: masked random moves reach the end with the mover's +/-1;
    MaskablePPO trains on it and predicts legal actions."""
    pytest.importorskip("sb3_contrib")
    example = _example("sb3_action_mask_selfplay")
    env = example.SelfPlayEnv(num_players=3)
    obs, _ = env.reset(seed=2)
    rng = np.random.default_rng(0)
    done, steps = False, 0
    while not done:
        mask = env.action_mask()
        obs, reward, done, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert obs.shape == (env.observation_space.shape[0],) and not truncated
        steps += 1
    assert reward in (1.0, -1.0) and steps > 50
    model = example.train(steps=512, seed=0)
    obs, _ = env.reset(seed=5)
    for _ in range(20):
        action, _ = model.predict(obs, action_masks=env.action_mask(), deterministic=True)
        assert env.action_mask()[int(action)]
        obs, *_ = env.step(int(action))


def test_openspiel_example_runs_its_bots_and_agents():
    """OpenSpiel's ISMCTS bot and its DQN agent (through ``rl_environment``) play whole games of
    ``python_bali``; every win count is one a game can give (0, 0.5 or 1 per game)."""
    pytest.importorskip("pyspiel")
    pytest.importorskip("torch")
    example = _example("openspiel_bali")
    wins = example.ismcts_against_random(games=2, sims=3, seed=1)
    assert 0 <= wins <= 2 and (2 * wins) == int(2 * wins)
    wins = example.dqn_against_random(episodes=4, games=2, seed=1)
    assert 0 <= wins <= 2 and (2 * wins) == int(2 * wins)
    lo, hi = example.wilson(30, 40)
    assert lo < 0.75 < hi


# ------------------------------------------------------------------ PufferLib (bali_env.versus.puffer_env)
def _legal_random(rng: np.random.Generator, obs: np.ndarray) -> np.ndarray:
    """A uniform random legal action per row of PufferLib observations (the mask ends each row)."""
    masks = obs[:, -44:] > 0.5
    return np.argmax(rng.random(masks.shape) * masks, axis=1).astype(np.int32)


def _puffer_rollout(vecenv, seed: int, steps: int) -> list[tuple[np.ndarray, ...]]:
    """Observations, rewards and terminals (copies) of ``steps`` random legal steps after ``reset(seed)``."""
    obs, _ = vecenv.reset(seed=seed)
    rng, out = np.random.default_rng(seed), [(obs.copy(),)]
    for _ in range(steps):
        obs, rewards, terminals, _, _ = vecenv.step(_legal_random(rng, obs))
        out.append((obs.copy(), rewards.copy(), terminals.copy()))
    return out


def test_pufferlib_serial_vectorizes_the_env_in_its_own_buffers():
    """``pufferlib.vector.make(..., backend="Serial")`` over two BaliPufferEnvs: float32 [8, 337]
    observations ending in a mask with a legal action in every row, the sub-envs writing into
    slices of Serial's buffers, different deals in the two, games that end with +1/-1."""
    pytest.importorskip("pufferlib")
    import pufferlib.vector

    from bali_env.versus.puffer_env import OBS_SIZE, BaliPufferEnv

    vecenv = pufferlib.vector.make(BaliPufferEnv, env_kwargs={"num_envs": 4}, backend="Serial", num_envs=2, seed=3)
    obs, infos = vecenv.reset(seed=3)
    assert obs.shape == (8, OBS_SIZE) and obs.dtype == np.float32 and OBS_SIZE == 293 + 44
    assert vecenv.single_action_space.n == 44 and vecenv.num_agents == 8
    first, second = vecenv.envs
    assert np.shares_memory(first.observations, vecenv.observations)
    assert np.shares_memory(second.rewards, vecenv.rewards)
    assert not np.array_equal(obs[:4, :293], obs[4:, :293])  # seeds 3 and 4 deal other games
    rng, ended = np.random.default_rng(0), []
    for _ in range(300):
        assert (obs[:, 293:] > 0.5).any(axis=1).all()
        obs, rewards, terminals, truncations, infos = vecenv.step(_legal_random(rng, obs))
        assert rewards.dtype == np.float32 and terminals.dtype == np.bool_ and not truncations.any()
        ended += rewards[terminals].tolist()
        assert (rewards[~terminals] == 0).all()
    assert ended and set(ended) <= {1.0, -1.0}
    vecenv.close()


@pytest.mark.slow
def test_pufferlib_multiprocessing_steps_the_same_games_as_serial():
    """Two Multiprocessing workers (shared memory) and Serial, same seed and actions: the same
    observations, rewards and terminals at every step."""
    pytest.importorskip("pufferlib")
    import pufferlib.vector

    from bali_env.versus.puffer_env import BaliPufferEnv

    runs = []
    for backend, extra in (("Serial", {}), ("Multiprocessing", {"num_workers": 2, "overwork": True})):
        vecenv = pufferlib.vector.make(BaliPufferEnv, env_kwargs={"num_envs": 4}, backend=backend, num_envs=2, seed=7,
                                       **extra)
        try:
            runs.append(_puffer_rollout(vecenv, 7, 150))
        finally:
            vecenv.close()
    serial, workers = runs
    assert any(t.any() for _, _, t in serial[1:])  # games ended on the way
    for a, b in zip(serial, workers, strict=True):
        assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_puffer_env_mask_illegal_action_and_results():
    """The mask at the end of the observation is the learner's legal actions; an illegal action
    ends that game with -1 (``illegal_action`` in the info) and the slot shows the next game's
    first observation, whose mask has a legal action."""
    pytest.importorskip("pufferlib")
    from bali_env.versus.puffer_env import BaliPufferEnv

    env = BaliPufferEnv(4, seed=11)
    obs, infos = env.reset()
    assert infos == [] and np.array_equal(obs[:, 293:] > 0.5, env.gym.action_masks())
    actions = _legal_random(np.random.default_rng(1), obs)
    illegal = int(np.flatnonzero(obs[2, 293:] < 0.5)[0])
    actions[2] = illegal
    obs, rewards, terminals, _, infos = env.step(actions)
    assert terminals[2] and rewards[2] == -1.0
    row = list(np.flatnonzero(terminals)).index(2)
    assert infos[0]["illegal_action"][row] == 1.0 and infos[0]["win"][row] == 0.0
    assert infos[0]["episode_return"][row] == -1.0
    assert np.array_equal(obs[:, 293:] > 0.5, env.gym.action_masks()) and (obs[:, 293:] > 0.5).any(axis=1).all()
    assert env.episode_returns[-1] == -1.0


def test_puffer_env_same_seed_same_games():
    """The same seed gives the same steps, another seed other games; ``reset(seed=s)`` deals what
    the Gymnasium vector env deals from ``s * num_envs``; a seedless first reset uses the
    constructor's seed."""
    pytest.importorskip("pufferlib")
    from gymnasium.vector import AutoresetMode

    from bali_env.versus.puffer_env import BaliPufferEnv
    from bali_env.versus.vector import BaliGymVectorEnv

    a, b = _puffer_rollout(BaliPufferEnv(6), 5, 60), _puffer_rollout(BaliPufferEnv(6), 5, 60)
    for x, y in zip(a, b, strict=True):
        assert all(np.array_equal(p, q) for p, q in zip(x, y, strict=True))
    assert not np.array_equal(a[0][0], _puffer_rollout(BaliPufferEnv(6), 6, 0)[0][0])
    gym_obs, _ = BaliGymVectorEnv(6, autoreset_mode=AutoresetMode.SAME_STEP).reset(seed=5 * 6)
    assert np.array_equal(a[0][0][:, :293], gym_obs)
    first, _ = BaliPufferEnv(6, seed=5).reset()
    assert np.array_equal(first, a[0][0])


def test_puffer_env_and_policy_refuse_bad_arguments():
    """TypeError or ValueError naming the argument, before anything runs."""
    pytest.importorskip("pufferlib")
    from bali_env.versus.puffer_env import BaliPufferEnv, BaliPufferPolicy, make_trainer, puffer_config

    with pytest.raises(TypeError, match="num_envs"):
        BaliPufferEnv("4")
    with pytest.raises(ValueError, match="num_envs"):
        BaliPufferEnv(0)
    with pytest.raises(TypeError, match="seed"):
        BaliPufferEnv(2, seed="1")
    with pytest.raises(ValueError, match="opponents|agent"):
        BaliPufferEnv(2, opponents="nobody")
    with pytest.raises(ValueError, match="num_players"):
        BaliPufferEnv(2, num_players=5)
    with pytest.raises(ValueError, match="buf lacks"):
        BaliPufferEnv(2, buf={"observations": np.zeros((2, 337), np.float32)})
    good = BaliPufferEnv(2)
    buf = {name: getattr(good, name) for name in ("rewards", "terminals", "truncations", "teacher_actions", "masks",
                                                  "actions")}
    with pytest.raises(ValueError, match=r"buf\['observations'\]"):
        BaliPufferEnv(2, buf={**buf, "observations": np.zeros((2, 293), np.float32)})
    with pytest.raises(RuntimeError, match="reset"):
        good.step(np.zeros(2, np.int32))
    good.reset()
    with pytest.raises(ValueError, match="actions"):
        good.step(np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="env"):
        BaliPufferPolicy(type("E", (), {"single_observation_space": good.gym.single_observation_space,
                                        "single_action_space": good.single_action_space})())
    with pytest.raises(TypeError, match="hidden"):
        BaliPufferPolicy(hidden=128)
    with pytest.raises(ValueError, match="hidden"):
        BaliPufferPolicy(hidden=(128, 0))
    with pytest.raises(ValueError, match="learning_rat"):
        puffer_config(learning_rat=1e-3)
    with pytest.raises(TypeError, match="config"):
        make_trainer([("seed", 0)], good, BaliPufferPolicy(good))


def test_puffer_policy_masks_illegal_actions():
    """``BaliPufferPolicy``'s logits of illegal actions are ILLEGAL_LOGIT; PufferLib's own
    ``sample_logits`` and the policy's ``act`` (greedy and sampled) choose legal actions only."""
    pytest.importorskip("pufferlib")
    import pufferlib.pytorch
    import torch

    from bali_env.versus.puffer_env import ILLEGAL_LOGIT, BaliPufferEnv, BaliPufferPolicy

    env = BaliPufferEnv(64, seed=2)
    obs, _ = env.reset()
    for _ in range(5):  # positions with several legal actions
        obs, *_ = env.step(_legal_random(np.random.default_rng(0), obs))
    torch.manual_seed(0)
    policy = BaliPufferPolicy(env)
    legal = obs[:, 293:] > 0.5
    assert (legal.sum(axis=1) > 1).any()
    with torch.no_grad():
        logits, values = policy.forward_eval(torch.as_tensor(obs))
    assert logits.shape == (64, 44) and values.shape == (64, 1)
    assert (logits.numpy()[~legal] == ILLEGAL_LOGIT).all() and (logits.numpy()[legal] > -1e3).all()
    rows = np.arange(64)
    for _ in range(20):
        action, logprob, _ = pufferlib.pytorch.sample_logits(logits)
        assert legal[rows, action.numpy()].all() and torch.isfinite(logprob).all()
    assert legal[rows, policy.act(obs)].all() and legal[rows, policy.act(obs, greedy=False)].all()


def _advantage_by_the_c_loop(values, rewards, dones, importance, gamma, lam, rho_clip, c_clip, advantages):
    """PufferLib's C++ CPU kernel (extensions/pufferlib.cpp) transcribed element by element, in float32."""
    f32 = np.float32
    v, r, d, imp, adv = (t.numpy().copy() for t in (values, rewards, dones, importance, advantages))
    for row in range(v.shape[0]):
        last = f32(0)
        for t in range(v.shape[1] - 2, -1, -1):
            nextnonterminal = f32(1.0) - d[row, t + 1]
            rho_t, c_t = np.fmin(imp[row, t], f32(rho_clip)), np.fmin(imp[row, t], f32(c_clip))
            delta = rho_t * (r[row, t + 1] + f32(gamma) * v[row, t + 1] * nextnonterminal - v[row, t])
            last = delta + f32(gamma) * f32(lam) * c_t * last * nextnonterminal
            adv[row, t] = last
    return adv


@pytest.mark.parametrize("shape, gamma, lam, rho_clip, c_clip", [((7, 16), 0.99, 0.95, 1.0, 1.0),
                                                                 ((3, 64), 0.997, 0.9, 0.8, 1.2),
                                                                 ((5, 1), 0.9, 0.5, 1.0, 1.0)])
def test_the_advantage_kernel_is_pufferlibs_loop(shape, gamma, lam, rho_clip, c_clip):
    """``puff_advantage`` equals the C++ loop transcribed (float32, bit for bit) on random tensors
    with game ends and importance weights around the clips, leaves the last column alone, and is
    the operator PuffeRL calls, ``torch.ops.pufferlib.compute_puff_advantage`` (PufferLib's own
    kernel where its ``_C`` loads: the same to float32 rounding)."""
    pytest.importorskip("pufferlib")
    import torch

    from bali_env.versus.puffer_env import install_advantage_kernel, puff_advantage

    install_advantage_kernel()
    g = torch.Generator().manual_seed(sum(shape))
    values, rewards = torch.randn(shape, generator=g), torch.randn(shape, generator=g)
    dones = (torch.rand(shape, generator=g) < 0.2).float()
    importance = 2 * torch.rand(shape, generator=g)
    sentinel = torch.full(shape, 7.0)
    expected = _advantage_by_the_c_loop(values, rewards, dones, importance, gamma, lam, rho_clip, c_clip, sentinel)
    ours, op = sentinel.clone(), sentinel.clone()
    puff_advantage(values, rewards, dones, importance, ours, gamma, lam, rho_clip, c_clip)
    assert np.array_equal(ours.numpy(), expected) and (ours[:, -1] == 7.0).all()
    torch.ops.pufferlib.compute_puff_advantage(values, rewards, dones, importance, op, gamma, lam, rho_clip, c_clip)
    torch.testing.assert_close(op, torch.as_tensor(expected), rtol=1e-6, atol=1e-6)
    if shape[1] > 1:
        assert not np.array_equal(expected[:, :-1], sentinel.numpy()[:, :-1])
    with pytest.raises(ValueError, match="dones"):
        puff_advantage(values, rewards, dones.double(), importance, ours, gamma, lam, rho_clip, c_clip)


def test_the_stand_in_replaces_only_a_missing_c_module(monkeypatch):
    """Where ``pufferlib._C`` imports, ``install_advantage_kernel`` changes nothing; where it
    does not, a marked stand-in takes its place in ``sys.modules`` and the operator has a CPU kernel."""
    pytest.importorskip("pufferlib")
    import sys
    import types

    import pufferlib
    import torch

    from bali_env.versus import puffer_env

    monkeypatch.setattr(pufferlib, "_C", None, raising=False)
    real = types.ModuleType("pufferlib._C")
    monkeypatch.setitem(sys.modules, "pufferlib._C", real)
    monkeypatch.setattr(puffer_env, "_register_advantage_op", lambda: pytest.fail("registered beside a real _C"))
    assert puffer_env.install_advantage_kernel() == "pufferlib._C"
    assert sys.modules["pufferlib._C"] is real
    monkeypatch.undo()

    monkeypatch.setattr(pufferlib, "_C", None, raising=False)
    monkeypatch.setitem(sys.modules, "pufferlib._C", None)  # the import fails, as without libcudart
    assert puffer_env.install_advantage_kernel() == "stand-in"
    stand_in = sys.modules["pufferlib._C"]
    assert stand_in is not None and getattr(stand_in, "BALI_ENV_STAND_IN", False)
    assert puffer_env.install_advantage_kernel() == "stand-in"  # once is enough
    assert torch._C._dispatch_has_kernel_for_dispatch_key("pufferlib::compute_puff_advantage", "CPU")


@pytest.mark.slow
def test_load_pufferl_leaves_the_process_as_it_was():
    """Importing PuffeRL through ``load_pufferl`` (in a fresh interpreter) leaves the warning
    filters, the Ctrl+C handler and ``sys.excepthook`` as they were; ``pufferlib.pufferl``'s own
    import changes all three."""
    pytest.importorskip("pufferlib")
    import subprocess
    import sys

    code = ("import signal, sys, warnings\n"
            "from bali_env.versus.puffer_env import load_pufferl\n"
            "state = lambda: (signal.getsignal(signal.SIGINT), sys.excepthook, list(warnings.filters))\n"
            "before = state()\n"
            "module = load_pufferl() if sys.argv[1] == 'ours' else __import__('pufferlib.pufferl').pufferl\n"
            "after = state()\n"
            "assert hasattr(module, 'PuffeRL')\n"
            "print([before[k] == after[k] for k in range(3)])\n")
    for how, expected in (("ours", "[True, True, True]"), ("plain", "[False, False, False]")):
        if how == "plain":  # the plain import needs the stand-in too
            code = code.replace("__import__('pufferlib.pufferl')", "(__import__('bali_env.versus.puffer_env')"
                                ".versus.puffer_env.install_advantage_kernel(), __import__('pufferlib.pufferl'))[1]")
        run = subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        assert run.stdout.strip().splitlines()[-1] == expected


@pytest.mark.slow  # a fresh interpreter importing torch and pufferlib: about 3 s
def test_the_env_keeps_pytorchs_thread_count():
    """In a fresh interpreter, ``torch.set_num_threads(1)`` then a first ``BaliPufferEnv``: still
    one thread, though starting Numba's pool (which the env does) resets the shared OpenMP
    runtime's count to the cores'."""
    pytest.importorskip("pufferlib")
    import subprocess
    import sys

    code = ("import torch\n"
            "torch.set_num_threads(1)\n"
            "torch.nn.init.orthogonal_(torch.empty(8, 8))\n"
            "from bali_env.versus.puffer_env import BaliPufferEnv\n"
            "BaliPufferEnv(2).reset()\n"
            "print(torch.get_num_threads())\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split()[-1] == "1"


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:Unable to enable fault handler")  # PuffeRL.train's torch.distributed wrapper
def test_pufferlib_example_trains_and_evaluates(tmp_path, capsys):
    """``examples/pufferlib_bali.py`` with a tiny budget: PuffeRL trains (its steps counted), the
    policy is evaluated before and after, and the JSON says so with Wilson intervals."""
    pytest.importorskip("pufferlib")
    import json

    example = _example("pufferlib_bali")
    out = tmp_path / "puffer.json"
    result = example.main(["--steps", "4096", "--games", "16", "--envs", "32", "--out", str(out)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(result))
    assert result["training"]["steps"] >= 4096 and result["training"]["steps_per_s"] > 0
    assert list(result["runs"]) == ["untrained", "PuffeRL"]  # what benchmarks.figures reads from a kept run
    for r in result["runs"].values():
        assert r["games"] == 16 and 0 <= r["wins"] <= 16
        assert r["interval"][0] <= r["win_rate"] <= r["interval"][1]
    printed = capsys.readouterr().out
    assert "trained policy against random" in printed and "PuffeRL:" in printed


def test_the_pufferlib_way_is_timed_or_skipped(monkeypatch):
    """``bali_env.speed.ways``: the PufferLib env's learner steps per second, and a clean skip
    that names pufferlib where it is not installed."""
    import sys

    from bali_env.speed import ways

    monkeypatch.setattr(ways, "WAYS", {"pufferlib": ways.WAYS["pufferlib"]})
    if importlib.util.find_spec("pufferlib") is not None:
        assert ways.bench_ways(0.2)["pufferlib"]["per_s"] > 0
    monkeypatch.setitem(sys.modules, "pufferlib", None)
    monkeypatch.delitem(sys.modules, "bali_env.versus.puffer_env", raising=False)
    assert ways.bench_ways(0.2) == {"pufferlib": {"unit": "learner steps/s", "skipped": "pufferlib is not installed"}}
