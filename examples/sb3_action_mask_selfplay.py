"""PettingZoo's "SB3 action masking" tutorial pattern on Bali, adapted to Gymnasium 1.x.

``pip install -e ".[train]"`` (PyTorch's CPU build first, see the README), then
``python examples/sb3_action_mask_selfplay.py --steps 4096``.

PettingZoo's tutorial (Connect Four with MaskablePPO) wraps the AEC env so that one policy
plays every seat: ``step`` applies the action of the agent to move and returns the next agent's
observation, with the reward of the agent that just moved. Its wrapper subclasses
``pettingzoo.utils.BaseWrapper``; with Gymnasium 1.x, sb3-contrib's ``ActionMasker`` and SB3's
checks need a real ``gymnasium.Env``, so ``SelfPlayEnv`` below is one (spaces set in
``__init__``, ``reset`` returning ``(obs, info)``, ``step`` the five-tuple). One difference
matters for Bali: a game can end on any seat's move, and the tutorial credits only the mover
with the final reward. ``bali_env.versus.single.BaliSingleAgentEnv`` (one learner seat against fixed
opponents, its own terminal reward whoever ends the game) and ``bali train`` (the batched env)
are the project's own ways to train; this file shows the tutorial's pattern works unchanged.
"""

from __future__ import annotations

import argparse
from typing import Any

import gymnasium
import numpy as np

import bali_env


class SelfPlayEnv(gymnasium.Env):
    """The AEC env as one Gymnasium env in which the same policy plays every seat in turn."""

    metadata = {"render_modes": []}

    def __init__(self, num_players: int = 2) -> None:
        self.aec = bali_env.env(num_players=num_players)
        first = self.aec.possible_agents[0]
        self.observation_space = self.aec.observation_space(first)["observation"]
        self.action_space = self.aec.action_space(first)

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Deal a new game; the first seat's observation."""
        super().reset(seed=seed)
        self.aec.reset(seed=seed, options=options)
        return self.aec.observe(self.aec.agent_selection)["observation"], {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The mover's action; the next mover's observation and the mover's reward (the tutorial)."""
        mover = self.aec.agent_selection
        self.aec.step(int(action))
        done = all(self.aec.terminations.values())
        following = mover if done else self.aec.agent_selection
        reward = float(self.aec.unwrapped.rewards[mover]) if done else 0.0
        return self.aec.observe(following)["observation"], reward, done, False, {}

    def action_mask(self) -> np.ndarray:
        """The legal actions of the seat to move (bool [44])."""
        return self.aec.observe(self.aec.agent_selection)["action_mask"].astype(bool)


def train(steps: int = 4096, seed: int = 0, num_players: int = 2) -> Any:
    """MaskablePPO for ``steps`` steps on ``SelfPlayEnv`` (the tutorial's recipe); the model."""
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from sb3_contrib.common.wrappers import ActionMasker

    env = ActionMasker(SelfPlayEnv(num_players), lambda e: e.unwrapped.action_mask())
    env.reset(seed=seed)
    model = MaskablePPO(MaskableActorCriticPolicy, env, n_steps=512, batch_size=128, seed=seed, device="cpu",
                        verbose=0)
    model.learn(total_timesteps=steps)
    return model


def main() -> None:
    """Command line: ``--steps``, ``--players``, ``--seed``."""
    parser = argparse.ArgumentParser(description="PettingZoo's SB3 action-mask tutorial pattern on Bali.")
    parser.add_argument("--steps", type=int, default=4096, help="env steps to train")
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4), help="players per game")
    parser.add_argument("--seed", type=int, default=0, help="seeds the deals and the learner")
    args = parser.parse_args()
    model = train(args.steps, args.seed, args.players)
    print(f"trained {model.num_timesteps} steps")


if __name__ == "__main__":
    main()
