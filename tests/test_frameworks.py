"""The examples for other RL frameworks run and respect the action mask: TorchRL
(``PettingZooWrapper``), Tianshou (``PettingZooEnv``, a masked DQN), PettingZoo's SB3
action-mask tutorial pattern and OpenSpiel's own bots and agents (``examples/``)."""

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
