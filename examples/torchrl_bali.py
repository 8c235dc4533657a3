"""TorchRL on Bali: ``PettingZooWrapper`` over ``bali_env.env()`` with the action mask, and a
masked policy that plays whole games.

``pip install -e ".[torchrl]"`` (PyTorch's CPU build first, see the README), then
``python examples/torchrl_bali.py --players 3 --games 2``.

TorchRL groups the agents (one group per seat for a turn-based game) and writes, for every
seat at every step, ``(seat, "observation", "observation")`` (the 293 floats), ``(seat,
"action_mask")`` (the legal actions; all True for the seats not to move) and ``(seat, "mask")``
(True for the seat to move). ``make_policy`` builds one MLP shared by every seat and, per seat,
a ``ProbabilisticActor`` with TorchRL's ``MaskedCategorical``, so the sampled action is always
legal; only the moving seat's action is applied. This is the starting point for TorchRL's
multi-agent losses (``MAPPO``/``IPPO`` tutorials); ``bali train`` is the fast trainer.
"""

from __future__ import annotations

import argparse
from typing import Any

import torch

import bali_env


def make_env(num_players: int = 2, seed: int = 0) -> Any:
    """``bali_env.env(num_players)`` as a TorchRL env with action masks (one group per seat)."""
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    return PettingZooWrapper(env=bali_env.env(num_players=num_players), use_mask=True, categorical_actions=True,
                             seed=seed, done_on_any=False)


def make_policy(env: Any, hidden: int = 64) -> Any:
    """A masked stochastic policy for every seat of ``env``, sharing one MLP."""
    from tensordict.nn import TensorDictModule, TensorDictSequential
    from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor

    groups = list(env.group_map)
    net = MLP(in_features=bali_env.engine.OBS_DIM, out_features=bali_env.engine.N_ACTIONS, num_cells=[hidden, hidden])
    actors = []
    for g in groups:
        logits = TensorDictModule(net, in_keys=[(g, "observation", "observation")], out_keys=[(g, "logits")])
        actors.append(ProbabilisticActor(
            module=logits, in_keys={"logits": (g, "logits"), "mask": (g, "action_mask")}, out_keys=[(g, "action")],
            distribution_class=MaskedCategorical, return_log_prob=True, log_prob_key=(g, "log_prob")))
    return TensorDictSequential(*actors)


def play(num_players: int = 2, games: int = 1, seed: int = 0) -> list[Any]:
    """Play ``games`` whole games with an untrained masked policy; return their rollouts."""
    torch.manual_seed(seed)
    env = make_env(num_players, seed)
    policy = make_policy(env)
    rollouts = []
    for _ in range(games):
        with torch.no_grad():
            rollouts.append(env.rollout(max_steps=2000, policy=policy, break_when_any_done=True))
    return rollouts


def main() -> None:
    """Command line: ``--players``, ``--games``, ``--seed``."""
    parser = argparse.ArgumentParser(description="A masked TorchRL policy plays Bali through PettingZooWrapper.")
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4), help="players per game")
    parser.add_argument("--games", type=int, default=1, help="games to play")
    parser.add_argument("--seed", type=int, default=0, help="seeds torch and the deal")
    args = parser.parse_args()
    for i, r in enumerate(play(args.players, args.games, args.seed)):
        final = r[-1]["next"]
        seats = [g for g in r["next"].keys() if g.startswith("player_")]  # noqa: SIM118 - a TensorDict iterates rows
        rewards = [float(final[g]["reward"].sum()) for g in seats]
        print(f"game {i}: {r.batch_size[0]} steps, final rewards {rewards}")


if __name__ == "__main__":
    main()
