"""Train a Bali agent with Ray RLlib: multi-agent PPO on RLlib's current API stack (RLModule,
Learner, EnvRunner), with action masking and self-play against frozen past policies.

``python -m training.rllib --players 2 --minutes 10 --out runs/rllib2p`` (or ``bali train
--framework rllib ...``); ``--ray-address HOST:PORT`` joins an existing Ray cluster instead of
starting a local Ray instance, and ``--env-runners N`` samples on N Ray actors (0: in the driver).

What it trains:

- ``BaliMultiAgentEnv``: the ``bali_v0`` rules as RLlib's turn-based ``MultiAgentEnv``. Only the
  player to move gets an observation, ``{"observations": float32[OBS_DIM], "action_mask":
  float32[N_ACTIONS]}`` (the same floats and mask as the PettingZoo env); at the end every seat
  gets its terminal reward (+1 for a win, -1 otherwise; ``--reward score``: the score margin).
- ``MaskedPPOModule``: RLlib's default PPO torch module (an MLP actor and critic of ``--net``
  sizes) whose logits of illegal actions are set to the float minimum before sampling, in
  exploration, inference and training alike, so no illegal action is ever sampled.
- One shared policy, ``main``, for every seat: in each game one seat (drawn from the episode id)
  plays ``main``, and each other seat plays ``main`` too with probability ``--self-share`` or else
  one of ``--pool-size`` frozen snapshots ``frozen_K``. Every ``--snapshot-every`` env steps the
  oldest snapshot is overwritten with ``main``'s current weights (at the start all snapshots are
  untrained networks, i.e. near-random players). Only ``main`` learns, from every seat it plays.

Every ``--eval-every`` env steps, and at the end, ``main`` is exported in the format of the
built-in ``ppo`` agent (``OUT/checkpoints/step_N.npz``, ``OUT/final.npz``: ``make_agent
("ppo:path=OUT/final.npz")``, plays without torch or Ray) and evaluated against random and
greedy with the tournament code (``eval.csv``, ``learning_curve.png``). ``summary.json`` has the
fields of ``bali train``'s: ``env_steps`` (decisions of the learning policy ``main``, the analogue
of ``bali train``'s learner steps), ``wall_seconds``, ``train_seconds`` (evaluations excluded),
``env_steps_per_s`` = env_steps / train_seconds, and the final evaluation; ``all_decisions``
counts every seat's decisions, frozen snapshots included.

Interrupt and resume: the first SIGINT or SIGTERM ends the run after its current training
iteration, saves the algorithm (``OUT/rllib_checkpoint/``: every module's weights, the optimizer,
the counters) and evaluates as usual; ``--resume OUT`` continues it with ``OUT/config.json``
(only ``--steps``, ``--minutes``, ``--eval-workers`` and ``--progress`` may change). Every
evaluation saves the checkpoint too.

Install: ``pip install torch==2.13.0 && pip install -e ".[rllib]"`` (the ``rllib`` extra lists
RLlib's dependencies itself, because ``ray[rllib]`` 2.60 pins ``gymnasium==1.2.2`` while RLlib
runs on the Gymnasium this project uses; see the README).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from bali_env.files import write_text

from .train import TrainingError, _ProgressBar, _stop_on_signals, evaluate, plot_curve, write_csv

CHECKPOINT = "rllib_checkpoint"  #: the folder ``--resume`` continues from (in the run's folder)
RESUMABLE = ("steps", "minutes", "eval_workers", "progress")  #: what ``--resume`` may change
RLLIB_EXTRA = "pip install torch==2.13.0 && pip install -e '.[rllib]'"
MAIN = "main"  #: the learning policy's module id


def frozen_id(k: int) -> str:
    """The module id of frozen snapshot ``k``."""
    return f"frozen_{k}"


# ---------------------------------------------------------------------------- environment
def make_env_class() -> type:
    """``BaliMultiAgentEnv`` (built on first use, so importing this module needs no Ray)."""
    import gymnasium as gym
    from ray.rllib.env.multi_agent_env import MultiAgentEnv

    import bali_env
    from bali_env.engine import N_ACTIONS

    class BaliMultiAgentEnv(MultiAgentEnv):
        """Bali as RLlib's turn-based MultiAgentEnv over the ``bali_v0`` AEC env (one game).

        ``config``: ``num_players`` (2-4), ``oracle``, ``demon``, ``reward`` (``win_loss`` or
        ``score``). Observations: ``{"observations", "action_mask"}`` for the player to move
        only; at the end every seat's observation and terminal reward."""

        def __init__(self, config: dict[str, Any] | None = None) -> None:
            super().__init__()
            config = dict(config or {})
            self.game = bali_env.raw_env(num_players=int(config.get("num_players", 2)),
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


# ---------------------------------------------------------------------------- module
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
    head's) as float32 ``(weight, bias)`` pairs and export metadata for ``agents.ppo_agent``."""
    import torch

    from agents.ppo_agent import FORMAT, VERSION

    encoder = getattr(module.encoder, "actor_encoder", module.encoder)
    linears = [m for part in (encoder, module.pi) for m in part.modules() if isinstance(m, torch.nn.Linear)]
    activation = str(module.model_config.get("fcnet_activation", "relu")).lower()
    weights = [(m.weight.detach().cpu().numpy().astype(np.float32).copy(),
                m.bias.detach().cpu().numpy().astype(np.float32).copy()) for m in linears]
    info = {"format": FORMAT, "version": VERSION, "activation": activation, "layers": len(weights),
            "obs_dim": int(linears[0].in_features), "n_actions": int(linears[-1].out_features),
            "num_players": int(num_players), "trainer": "rllib", **meta}
    return weights, info


# ---------------------------------------------------------------------------- self-play
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


def _counts(result: dict[str, Any]) -> tuple[int, int]:
    """(decisions of ``main``, decisions of every seat) sampled so far, from a training result."""
    runners = result.get("env_runners", {})
    main = runners.get("num_module_steps_sampled_lifetime", {}).get(MAIN, 0)
    return int(main), int(runners.get("num_env_steps_sampled_lifetime", 0))


# ---------------------------------------------------------------------------- command line
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m training.rllib", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                                description="Train a Bali agent with RLlib's multi-agent PPO (action masking, "
                                            "self-play against frozen snapshots); writes OUT/final.npz (play it as "
                                            "ppo:path=OUT/final.npz) and OUT/summary.json.")
    p.add_argument("--players", type=int, default=2, choices=(2, 3, 4), help="players per game")
    p.add_argument("--oracle", action="store_true", help="play the Oracle variant")
    p.add_argument("--demon", action="store_true", help="play the Demon variant")
    p.add_argument("--steps", type=float, default=1e8, help="total env steps of the learning policy")
    p.add_argument("--minutes", type=float, default=0.0, help="wall-clock limit (0: none)")
    p.add_argument("--ray-address", default=None, help="HOST:PORT (or auto) of a Ray cluster to join; "
                   "default: start a local Ray instance")
    p.add_argument("--env-runners", type=int, default=1, help="Ray actors sampling games (0: sample in the driver)")
    p.add_argument("--envs-per-runner", type=int, default=64, help="games each env runner steps together")
    p.add_argument("--self-share", type=float, default=0.2,
                   help="probability that an opponent seat is played by the learning policy itself")
    p.add_argument("--pool-size", type=int, default=6, help="frozen self-play snapshots (0: every seat learns)")
    p.add_argument("--snapshot-every", type=float, default=1e5, help="env steps between self-play snapshots")
    p.add_argument("--eval-every", type=float, default=1e6, help="env steps between exported, evaluated checkpoints")
    p.add_argument("--eval-games", type=int, default=200, help="games per opponent at each evaluation")
    p.add_argument("--final-eval-games", type=int, default=1000, help="games per opponent at the end")
    p.add_argument("--eval-workers", type=int, default=1, help="tournament worker processes of the evaluations")
    p.add_argument("--seed", type=int, default=0, help="seed of RLlib (networks, sampling) and of the evaluations")
    p.add_argument("--out", type=Path, default=Path("runs/rllib"), help="output folder")
    p.add_argument("--lr", type=float, default=3e-4, help="Adam learning rate")
    p.add_argument("--net", default="128,128", help="hidden layer sizes of the actor and of the critic")
    p.add_argument("--batch-size", type=int, default=8000, help="env steps per PPO update (train batch)")
    p.add_argument("--minibatch-size", type=int, default=1000, help="SGD minibatch size")
    p.add_argument("--epochs", type=int, default=2, help="passes over each train batch")
    p.add_argument("--gamma", type=float, default=0.997, help="discount factor")
    p.add_argument("--ent-coef", type=float, default=0.01, help="entropy bonus coefficient")
    p.add_argument("--reward", choices=("win_loss", "score"), default="win_loss",
                   help="terminal reward: +1 win / -1 otherwise, or the score margin / 10")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True, help="show a progress bar")
    p.add_argument("--resume", type=Path, default=None, help="continue the run saved in this folder")
    return p


def defaults() -> argparse.Namespace:
    """The default configuration (not validated: nothing is written)."""
    return _parser().parse_args([])


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The configuration from the command line, every flag checked (``p.error`` names it); with
    ``--resume OUT``, OUT/config.json's with only ``RESUMABLE`` changed."""
    from .train import _explicit_in, _resumed_from

    p = _parser()
    args = p.parse_args(argv)
    if args.resume is not None:
        args = _resumed_from(p, args, _explicit_in(p, defaults(), argv), defaults(), RESUMABLE, CHECKPOINT)
    _validate(p, args)
    return args


def _validate(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    positive = {"--steps": args.steps, "--envs-per-runner": args.envs_per_runner,
                "--snapshot-every": args.snapshot_every, "--eval-every": args.eval_every,
                "--eval-games": args.eval_games, "--final-eval-games": args.final_eval_games,
                "--eval-workers": args.eval_workers, "--lr": args.lr, "--batch-size": args.batch_size,
                "--minibatch-size": args.minibatch_size, "--epochs": args.epochs}
    for flag, value in positive.items():
        if not value > 0 or value == float("inf"):
            p.error(f"{flag} must be positive, got {value!r}")
    for flag, value in (("--env-runners", args.env_runners), ("--pool-size", args.pool_size)):
        if value < 0:
            p.error(f"{flag} must be >= 0, got {value!r}")
    if not args.minutes >= 0 or args.minutes == float("inf"):
        p.error(f"--minutes must be >= 0 (0: no limit), got {args.minutes!r}")
    if not 0 < args.gamma <= 1:
        p.error(f"--gamma must be in (0, 1], got {args.gamma!r}")
    if not args.ent_coef >= 0:
        p.error(f"--ent-coef must be >= 0, got {args.ent_coef!r}")
    if not 0 <= args.self_share <= 1:
        p.error(f"--self-share must be in [0, 1], got {args.self_share!r}")
    if args.minibatch_size > args.batch_size:
        p.error(f"--minibatch-size ({args.minibatch_size}) must not exceed --batch-size ({args.batch_size})")
    try:
        sizes = [int(x) for x in args.net.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        p.error(f"--net must be positive layer sizes like 128,128, got {args.net!r}")
    out = args.out.resolve()
    probe = next((q for q in (out, *out.parents) if q.exists()), None)
    if probe is None or not probe.is_dir() or not os.access(probe, os.W_OK):
        p.error(f"--out {str(args.out)!r} is not writable ({probe} is not a writable folder)")
    if args.resume is None and (out / "config.json").exists():
        p.error(f"--out {str(args.out)!r} already holds a training run (config.json): continue it with "
                f"--resume {str(args.out)!r}, or choose another folder")


# ---------------------------------------------------------------------------- the run
def _start_ray(address: str | None, env_runners: int) -> bool:
    """Join the cluster at ``address`` (checked first: TrainingError in seconds when unreachable)
    or start a local Ray instance; True when this call started Ray."""
    import ray

    from agents.ray_backend import check_ray, init_ray
    from agents.tournament import TournamentError

    try:
        check_ray(address)
        if ray.is_initialized():
            return False
        init_ray(address, max(1, env_runners) + 1)
    except (TournamentError, RuntimeError) as exc:
        raise TrainingError(str(exc)) from None
    return True


def export(algo: Any, path: Path, args: argparse.Namespace, steps: int) -> Path:
    """Export ``main`` in the format of the built-in ``ppo`` agent."""
    from agents.ppo_agent import write_policy

    return write_policy(*module_arrays(algo.get_module(MAIN), args.players, env_steps=int(steps)), path)


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Run the configured RLlib training; writes the outputs (module docstring) and returns the
    summary. TrainingError (nothing written) for a run that cannot start or has nothing left."""
    import torch

    out: Path = args.out
    saved = _load_progress(args)
    started = _start_ray(args.ray_address, args.env_runners)
    try:
        torch.set_num_threads(1 if args.env_runners else 2)
        algo = build_config(args).build_algo()
        if saved is not None:
            algo.restore_from_path(str((out / CHECKPOINT).resolve()))
        out.mkdir(parents=True, exist_ok=True)
        (out / "checkpoints").mkdir(exist_ok=True)
        config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
        write_text(out / "config.json", json.dumps(config, indent=2))
        return _loop(algo, args, saved)
    finally:
        if started:
            import ray

            ray.shutdown()


def _load_progress(args: argparse.Namespace) -> dict[str, Any] | None:
    """The counters of a resumed run (TrainingError when it already reached its end), or None."""
    if args.resume is None:
        return None
    try:
        progress = json.loads((args.out / CHECKPOINT / "bali_progress.json").read_text())
    except (OSError, ValueError) as exc:
        raise TrainingError(f"--resume {str(args.out)!r}: unreadable checkpoint ({exc})") from None
    if progress["steps"] >= args.steps or (args.minutes > 0 and progress["elapsed"] >= args.minutes * 60):
        raise TrainingError(f"the run in {str(args.out)!r} already reached its end ({progress['steps']:,} steps, "
                            f"{progress['elapsed'] / 60:.1f} minutes): give a larger --steps or --minutes "
                            "(totals over the whole run) to train further")
    return progress


def _save(algo: Any, args: argparse.Namespace, progress: dict[str, Any]) -> None:
    """Save the algorithm and the counters to ``OUT/rllib_checkpoint`` (a new folder moved into place)."""
    import shutil

    final = args.out / CHECKPOINT
    tmp = args.out / (CHECKPOINT + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    algo.save_to_path(str(tmp.resolve()))
    write_text(tmp / "bali_progress.json", json.dumps(progress, indent=2))
    old = args.out / (CHECKPOINT + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        final.rename(old)
    tmp.rename(final)
    shutil.rmtree(old, ignore_errors=True)


def _loop(algo: Any, args: argparse.Namespace, saved: dict[str, Any] | None) -> dict[str, Any]:
    out: Path = args.out
    progress = saved or {"steps": 0, "decisions": 0, "elapsed": 0.0, "train_seconds": 0.0, "snapshots": 0,
                         "due": {"snapshot": args.snapshot_every, "eval": args.eval_every}, "eval_rows": [],
                         "sessions": 0, "iterations": 0}
    progress["sessions"] += 1
    rows: list[dict[str, Any]] = progress["eval_rows"]
    start = time.time() - progress["elapsed"]
    bar = _ProgressBar(args, start, progress["steps"])
    stop = {"now": False}

    def evaluate_now(name: str, games: int) -> None:
        policy = export(algo, out / name, args, progress["steps"])
        for i, opp in enumerate(("random", "greedy")):
            row = {"steps": progress["steps"], "minutes": (time.time() - start) / 60, "opponent": opp,
                   **evaluate(policy, opp, args, games, args.seed + 1000 * i + 7)}
            rows.append(row)
        write_csv(rows, out / "eval.csv")
        plot_curve(rows, out / "learning_curve.png", args.players, title=f"RLlib PPO on Bali, {args.players} players")

    with _stop_on_signals(stop):
        while not stop["now"]:
            if progress["steps"] >= args.steps or (args.minutes > 0 and time.time() - start >= args.minutes * 60):
                break
            t0 = time.time()
            result = algo.train()
            progress["train_seconds"] += time.time() - t0
            progress["iterations"] += 1
            progress["steps"], progress["decisions"] = _counts(result)
            progress["elapsed"] = time.time() - start
            bar.advance(progress["steps"])
            if progress["steps"] >= progress["due"]["snapshot"] and args.pool_size:
                take_snapshot(algo, progress["snapshots"] % args.pool_size)
                progress["snapshots"] += 1
                progress["due"]["snapshot"] += args.snapshot_every * math.ceil(
                    (progress["steps"] - progress["due"]["snapshot"] + 1) / args.snapshot_every)
            if progress["steps"] >= progress["due"]["eval"] and not stop["now"]:
                evaluate_now(f"checkpoints/step_{progress['steps']}.npz", args.eval_games)
                progress["due"]["eval"] += args.eval_every * math.ceil(
                    (progress["steps"] - progress["due"]["eval"] + 1) / args.eval_every)
                progress["elapsed"] = time.time() - start
                _save(algo, args, progress)
    bar.close()
    if stop["now"]:
        print(f"\ninterrupted: saved {out / CHECKPOINT} (continue with --resume {out}); now evaluating "
              "(interrupt again to quit at once)", file=sys.stderr)
    progress["elapsed"] = time.time() - start
    _save(algo, args, progress)
    evaluate_now("final.npz", args.final_eval_games)
    steps = progress["steps"]
    summary = {
        "framework": "rllib",
        "env_steps": steps,
        "all_decisions": progress["decisions"],
        "wall_seconds": time.time() - start,
        "train_seconds": progress["train_seconds"],
        "env_steps_per_s": steps / max(progress["train_seconds"], 1e-9),
        "final": [r for r in rows if r["steps"] == steps][-2:],
        "policy": str(out / "final.npz"),
        "checkpoint": str(out / CHECKPOINT),
        "iterations": progress["iterations"],
        "interrupted": stop["now"],
        "sessions": progress["sessions"],
    }
    _save(algo, args, progress)
    write_text(out / "summary.json", json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))
    return summary


def missing_packages() -> list[str]:
    """The packages RLlib training needs that are not installed."""
    import importlib.util

    missing = [name for name in ("torch", "ray", "tree", "pandas") if importlib.util.find_spec(name) is None]
    if "ray" not in missing and importlib.util.find_spec("ray.rllib") is None:
        missing.append("ray.rllib")
    return missing


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m training.rllib`` / ``bali train --framework rllib``: exit 2 with
    one line when a package is missing, a flag is bad or the cluster is unreachable."""
    args = parse_args(argv)
    missing = missing_packages()
    if missing:
        print(f"rllib training: error: {', '.join(missing)} not installed; install the rllib extra: {RLLIB_EXTRA}",
              file=sys.stderr)
        return 2
    try:
        train(args)
    except TrainingError as exc:
        print(f"rllib training: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
