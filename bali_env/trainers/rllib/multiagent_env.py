"""What ``bali_env.trainers.rllib.launch`` trains, on RLlib's current API stack: the game as a turn-based
``MultiAgentEnv`` (``make_env_class``), PPO's torch module with illegal actions masked out
(``make_module_class``), its export for the built-in ``ppo`` agent (``module_arrays``), the
self-play mapping of seats to the learning policy ``main`` and its frozen snapshots
(``seat_module``, ``take_snapshot``) and the ``PPOConfig`` of a run (``build_config``). Ray and
RLlib are imported on first use, so importing this module needs neither.
"""

from __future__ import annotations

import argparse
import zlib
from typing import Any

import numpy as np

MAIN = "main"  #: the learning policy's module id


def frozen_id(k: int) -> str:
    """The module id of frozen snapshot ``k``."""
    return f"frozen_{k}"


def make_env_class() -> type:
    """``BaliMultiAgentEnv`` (built on first use, so importing this module needs no Ray)."""
    import gymnasium as gym
    from ray.rllib.env.multi_agent_env import MultiAgentEnv

    from bali_env.engine import N_ACTIONS
    from bali_env.envs.bali_v0 import raw_env

    class BaliMultiAgentEnv(MultiAgentEnv):
        """Bali as RLlib's turn-based MultiAgentEnv over the ``bali_v0`` AEC env (one game).

        ``config``: ``num_players`` (2-4), ``oracle``, ``demon``, ``reward`` (``win_loss`` or
        ``score``). Observations: ``{"observations", "action_mask"}`` for the player to move
        only; at the end every seat's observation and terminal reward."""

        def __init__(self, config: dict[str, Any] | None = None) -> None:
            super().__init__()
            config = dict(config or {})
            self.game = raw_env(num_players=int(config.get("num_players", 2)),
                                         oracle=bool(config.get("oracle", False)),
                                         demon=bool(config.get("demon", False)),
                                         reward=str(config.get("reward", "win_loss")))
            self.agents = self.possible_agents = list(self.game.possible_agents)
            inner = self.game.observation_space(self.agents[0])["observation"]
            space = gym.spaces.Dict({"observations": inner,
                                     "action_mask": gym.spaces.Box(0.0, 1.0, (N_ACTIONS,), np.float32)})
            self.observation_spaces = {a: space for a in self.agents}
            self.action_spaces = {a: gym.spaces.Discrete(N_ACTIONS) for a in self.agents}

        def _obs(self, agent: str) -> dict[str, np.ndarray]:
            o = self.game.observe(agent)
            return {"observations": o["observation"], "action_mask": o["action_mask"].astype(np.float32)}

        def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
            """Deal a new game (``seed`` restarts the deal stream); the mover's observation."""
            self.game.reset(seed=seed, options=options)
            return {self.game.agent_selection: self._obs(self.game.agent_selection)}, {}

        def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
            """Apply the mover's action; the next mover's observation, or everybody's at the end."""
            agent = self.game.agent_selection
            if agent not in action_dict:
                raise ValueError(f"{agent} is to move, got actions for {sorted(action_dict)}")
            self.game.step(int(action_dict[agent]))
            if all(self.game.terminations.values()):
                obs = {a: self._obs(a) for a in self.agents}
                rewards = {a: float(self.game.rewards[a]) for a in self.agents}
                return obs, rewards, {"__all__": True}, {"__all__": False}, {}
            nxt = self.game.agent_selection
            return {nxt: self._obs(nxt)}, {agent: 0.0}, {"__all__": False}, {"__all__": False}, {}

    return BaliMultiAgentEnv


def make_module_class() -> type:
    """``MaskedPPOModule``: RLlib's PPO torch module with illegal actions masked out."""
    import torch
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
    from ray.rllib.core.columns import Columns
    from ray.rllib.utils.torch_utils import FLOAT_MIN

    class MaskedPPOModule(DefaultPPOTorchRLModule):
        """PPO's MLP actor-critic over ``obs["observations"]``; the logits of actions with
        ``obs["action_mask"] == 0`` are set to the float minimum (never sampled)."""

        def __init__(self, *, observation_space: Any = None, **kwargs: Any) -> None:
            self.observation_space_with_mask = observation_space
            super().__init__(observation_space=observation_space["observations"], **kwargs)

        def setup(self) -> None:
            """Build the networks on the inner observation space, then expose the Dict one."""
            super().setup()
            self.observation_space = self.observation_space_with_mask

        @staticmethod
        def _split(batch: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
            obs = batch[Columns.OBS]
            if not isinstance(obs, dict):
                raise ValueError("MaskedPPOModule needs observations {'observations', 'action_mask'}")
            return obs["action_mask"], {**batch, Columns.OBS: obs["observations"]}

        @staticmethod
        def _mask(out: dict[str, Any], mask: Any) -> dict[str, Any]:
            out[Columns.ACTION_DIST_INPUTS] = torch.where(mask > 0, out[Columns.ACTION_DIST_INPUTS],
                                                          torch.full_like(mask, FLOAT_MIN))
            return out

        def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            mask, inner = self._split(batch)
            return self._mask(super()._forward_inference(inner, **kwargs), mask)

        def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            mask, inner = self._split(batch)
            return self._mask(super()._forward_exploration(inner, **kwargs), mask)

        def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
            mask, inner = self._split(batch)
            return self._mask(super()._forward_train(inner, **kwargs), mask)

        def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
            """The critic's values (the mask is not an input of the critic)."""
            if isinstance(batch[Columns.OBS], dict):
                batch = self._split(batch)[1]
            return super().compute_values(batch, embeddings)

    return MaskedPPOModule


def module_arrays(module: Any, num_players: int, **meta: Any) -> tuple[list[tuple[np.ndarray, np.ndarray]],
                                                                      dict[str, Any]]:
    """The actor of a ``MaskedPPOModule`` (its actor encoder's Linear layers, then the policy
    head's) as float32 ``(weight, bias)`` pairs and export metadata for ``bali_env.bots.ppo``."""
    import torch

    from bali_env.bots.ppo import FORMAT, VERSION

    encoder = getattr(module.encoder, "actor_encoder", module.encoder)
    linears = [m for part in (encoder, module.pi) for m in part.modules() if isinstance(m, torch.nn.Linear)]
    activation = str(module.model_config.get("fcnet_activation", "relu")).lower()
    weights = [(m.weight.detach().cpu().numpy().astype(np.float32).copy(),
                m.bias.detach().cpu().numpy().astype(np.float32).copy()) for m in linears]
    info = {"format": FORMAT, "version": VERSION, "activation": activation, "layers": len(weights),
            "obs_dim": int(linears[0].in_features), "n_actions": int(linears[-1].out_features),
            "num_players": int(num_players), "trainer": "rllib", **meta}
    return weights, info


def seat_module(agent_id: str, episode: Any, players: int = 2, pool_size: int = 6, self_share: float = 0.2,
                **kwargs: Any) -> str:
    """Which module plays ``agent_id`` in ``episode``: one seat per game (from a hash of the
    episode id) is ``main``; every other seat is ``main`` with probability ``self_share``, else
    one of the ``pool_size`` frozen snapshots (the same hash, so all seats agree)."""
    seat = int(str(agent_id).rsplit("_", 1)[1])
    key = zlib.crc32(str(episode.id_).encode())
    if seat == key % players:
        return MAIN
    draw = zlib.crc32(f"{episode.id_}/{seat}".encode())
    if pool_size == 0 or (draw % 10_000) < self_share * 10_000:
        return MAIN
    return frozen_id((draw // 10_000) % pool_size)


def build_config(args: argparse.Namespace) -> Any:
    """The ``PPOConfig`` of a run (environment, self-play mapping, masked modules, PPO settings)."""
    import functools

    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    module = make_module_class()
    model = DefaultModelConfig(fcnet_hiddens=[int(x) for x in args.net.split(",")], fcnet_activation="relu",
                               vf_share_layers=False)
    modules = [MAIN] + [frozen_id(k) for k in range(args.pool_size)]
    mapping = functools.partial(seat_module, players=args.players, pool_size=args.pool_size,
                                self_share=args.self_share)
    return (
        PPOConfig()
        .environment(make_env_class(), env_config={"num_players": args.players, "oracle": args.oracle,
                                                   "demon": args.demon, "reward": args.reward},
                     disable_env_checking=True)  # its checker steps random (illegal) actions
        .env_runners(num_env_runners=args.env_runners, num_envs_per_env_runner=args.envs_per_runner,
                     num_cpus_per_env_runner=1)
        .learners(num_learners=0)
        .training(lr=args.lr, gamma=args.gamma, entropy_coeff=args.ent_coef, num_epochs=args.epochs,
                  train_batch_size_per_learner=args.batch_size, minibatch_size=args.minibatch_size)
        .multi_agent(policies=set(modules), policy_mapping_fn=mapping, policies_to_train=[MAIN])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            m: RLModuleSpec(module_class=module, model_config=model) for m in modules}))
        .debugging(seed=args.seed, log_level="ERROR")
        .reporting(metrics_num_episodes_for_smoothing=100)
    )


def take_snapshot(algo: Any, slot: int) -> None:
    """Overwrite frozen snapshot ``slot`` with ``main``'s current weights (learner and runners)."""
    state = algo.get_module(MAIN).get_state()
    algo.set_state({"learner_group": {"learner": {"rl_module": {frozen_id(slot): state}}}})
