"""Tianshou on Bali: a masked DQN learner against a masked random player, through ``PettingZooEnv``.

``pip install -e ".[tianshou]"`` (PyTorch's CPU build first, see the README), then
``python examples/tianshou_bali.py --steps 3000``.

Tianshou's ``PettingZooEnv`` wraps ``bali_env.env()`` and hands each policy a batch with ``obs``
(the 293 floats), ``mask`` (the legal actions) and ``agent_id``; Tianshou's DQN and its random
masked player only pick legal actions (the mask is applied to the Q-values). The learner takes
seat ``--seat`` of a 2-player game; ``train`` returns the mean learner return of the test games
(+1 win, -1 otherwise) before and after training. A few thousand steps show the loop works; they
do not make a strong player (``bali train`` trains on the batched env, much faster).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import torch

import bali_env


def make_env() -> Any:
    """``bali_env.env(num_players=2)`` as Tianshou's ``PettingZooEnv``, without the end-of-game
    ``info`` (final scores, score breakdown): Tianshou's replay buffer needs the same info keys
    at every step, and fills the missing ones with NaN, which its trainer then refuses."""
    from tianshou.env.pettingzoo_env import PettingZooEnv

    class BaliPettingZooEnv(PettingZooEnv):
        def step(self, action: Any) -> tuple:
            obs, rew, term, trunc, _ = super().step(action)
            return obs, rew, term, trunc, {}

    return BaliPettingZooEnv(bali_env.env(num_players=2))


def train(steps: int = 3000, seat: int = 0, seed: int = 0, test_games: int = 20) -> dict[str, float]:
    """Train a masked DQN for ``steps`` env steps against the masked random player; return the
    learner's mean test return before and after, and the steps collected."""
    from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net

    np.random.seed(seed)
    torch.manual_seed(seed)
    env = make_env()
    obs_space = env.observation_space["observation"]
    net = Net(state_shape=obs_space.shape, action_shape=env.action_space.n, hidden_sizes=[128, 128])
    learner = DQN(policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1,
                                                  eps_inference=0.0),
                  optim=AdamOptimizerFactory(lr=1e-3), n_step_return_horizon=3, gamma=0.99, target_update_freq=200)
    random_player = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    seats = [learner, random_player] if seat == 0 else [random_player, learner]
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=seats, env=env)
    training_envs = DummyVectorEnv([make_env for _ in range(4)])
    test_envs = DummyVectorEnv([make_env for _ in range(4)])
    training_envs.seed(seed)
    test_envs.seed(seed + 1000)
    training = Collector[CollectStats](algorithm, training_envs, VectorReplayBuffer(20_000, 4), exploration_noise=True)
    test = Collector[CollectStats](algorithm, test_envs, exploration_noise=False)

    def learner_return() -> float:
        stats = test.collect(n_episode=test_games, reset_before_collect=True)
        return float(np.mean(stats.returns[:, seat]))

    before = learner_return()
    training.reset()
    algorithm.run_training(OffPolicyTrainerParams(
        training_collector=training, test_collector=None, max_epochs=1, epoch_num_steps=steps,
        collection_step_num_env_steps=40, batch_size=64, update_step_num_gradient_steps_per_sample=0.25,
        multi_agent_return_reduction=lambda rews: rews[:, seat], verbose=False, show_progress=False))
    return {"return_before": before, "return_after": learner_return(), "steps": float(steps)}


def main() -> None:
    """Command line: ``--steps``, ``--seat``, ``--seed``."""
    parser = argparse.ArgumentParser(description="Tianshou masked DQN on Bali (2 players) against a random player.")
    parser.add_argument("--steps", type=int, default=3000, help="env steps to train")
    parser.add_argument("--seat", type=int, default=0, choices=(0, 1), help="the learner's seat")
    parser.add_argument("--seed", type=int, default=0, help="seeds torch, numpy and the envs")
    args = parser.parse_args()
    print(train(args.steps, args.seat, args.seed))


if __name__ == "__main__":
    main()
