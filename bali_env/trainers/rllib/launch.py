"""Train a Bali agent with Ray RLlib: multi-agent PPO on RLlib's current API stack (RLModule,
Learner, EnvRunner), with action masking and self-play against frozen past policies.

``bali train --framework rllib --players 2 --minutes 10 --out runs/rllib2p``; ``--ray-address
HOST:PORT`` joins an existing Ray cluster instead of
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
the counters) and evaluates as usual, then the command exits with code 130 (a second signal quits
at once, 130 too); ``--resume OUT`` continues it with ``OUT/config.json`` (only ``--steps``,
``--minutes``, ``--eval-workers`` and ``--progress`` may change). Every evaluation saves the
checkpoint too. Without ``--out`` every run writes to a new folder ``runs/rllib-YYYYmmdd-HHMMSS``;
an ``--out`` is claimed exclusively, as ``bali train``'s (``bali_env.trainers.options``).

The modules: ``bali_env.trainers.rllib.multiagent_env`` (the env, the masked module, the self-play mapping, the
``PPOConfig``), ``bali_env.trainers.rllib.algorithm_loop`` (Ray, the loop, the checkpoint, the summary); this one
holds the command line (``parents``, ``add_arguments``, ``run_argv``; ``bali_env.trainers.ppo_selfplay.train`` hands
``--framework rllib`` over to it; the flags shared with ``bali train`` are in ``bali_env.trainers.options``).

Install: ``pip install torch==2.13.0 && pip install -e ".[rllib]"`` (the ``rllib`` extra lists
RLlib's dependencies itself, because ``ray[rllib]`` 2.60 pins ``gymnasium==1.2.2`` while RLlib
runs on the Gymnasium this project uses; see the README).
"""

from __future__ import annotations

import argparse

from bali_env import flags

from bali_env.trainers.entry import TrainingError, missing_modules, run_command
from bali_env.trainers.options import HELP_EPILOG, RESUMABLE, HelpFormatter, add_shared, check_positive, parse
from bali_env.trainers.options import parents as shared_parents
from bali_env.trainers.rllib.multiagent_env import (
    MAIN,
    build_config,
    frozen_id,
    make_env_class,
    make_module_class,
    module_arrays,
    seat_module,
    take_snapshot,
)
from bali_env.trainers.rllib.algorithm_loop import CHECKPOINT, OUT_NAME, export, train

__all__ = [  # what ``bali_env.trainers.rllib.launch`` offers; most of it lives in rllib_env and rllib_loop
    "CHECKPOINT", "MAIN", "RESUMABLE", "RLLIB_EXTRA", "TrainingError", "add_arguments", "build_config", "defaults",
    "export", "frozen_id", "make_env_class", "make_module_class", "missing_packages", "module_arrays", "parents",
    "parse_args", "run_argv", "seat_module", "take_snapshot", "train",
]

RLLIB_EXTRA = "pip install torch==2.13.0 && pip install -e '.[rllib]'"  #: what installs the packages
COMMAND = "rllib training"  #: how the command names itself in its error lines


def parents() -> list[argparse.ArgumentParser]:
    """The shared flags the RLlib trainer takes (``bali_env.flags``), as ``bali train``'s."""
    return shared_parents(OUT_NAME)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The RLlib trainer's own flags (the shared ones are ``parents``); ``bali train --framework
    rllib`` adds ``--framework`` to them."""
    p.formatter_class = HelpFormatter
    p.description = ("Train a Bali agent with RLlib's multi-agent PPO (action masking, self-play against frozen "
                     "snapshots); writes OUT/final.npz (play it as ppo:path=OUT/final.npz) and OUT/summary.json.")
    p.epilog = HELP_EPILOG.format(checkpoint=f"OUT/{CHECKPOINT}")

    def shared(flags: str, **helps: str) -> None:
        """Add the training flags named in ``flags``, with these helps (``pool_size="..."``) instead."""
        add_shared(p, flags, name=OUT_NAME, checkpoint=CHECKPOINT, helps={f"--{k.replace('_', '-')}": v
                                                                          for k, v in helps.items()})

    shared("--steps --minutes", steps="total env steps of the learning policy",
           minutes="wall-clock limit of the training (0: none); the final evaluation follows it")
    p.add_argument("--ray-address", default=None, help="HOST:PORT (or auto) of a Ray cluster to join; "
                   "default: start a local Ray instance")
    p.add_argument("--env-runners", type=int, default=1, help="Ray actors sampling games (0: sample in the driver)")
    p.add_argument("--envs-per-runner", type=int, default=64, help="games each env runner steps together")
    p.add_argument("--self-share", type=float, default=0.2,
                   help="probability that an opponent seat is played by the learning policy itself")
    shared("--pool-size --snapshot-every --eval-every --eval-games --final-eval-games --eval-workers",
           pool_size="frozen self-play snapshots (0: every seat learns)",
           eval_every="env steps between checkpoints evaluated against random and greedy (default: min(1e6, "
                      "--steps/5); 0: none before the final)",
           final_eval_games="games per opponent at the end (0: no final evaluation)")
    shared("--lr --net")
    p.add_argument("--batch-size", type=int, default=8000, help="env steps per PPO update (train batch)")
    p.add_argument("--minibatch-size", type=int, default=1000, help="SGD minibatch size")
    shared("--epochs --gamma --ent-coef --reward --resume", epochs="passes over each train batch")


def _parser() -> argparse.ArgumentParser:
    """The RLlib trainer's flags as a parser of their own (what ``parse_args`` reads a command line
    with: ``bali train --framework rllib``'s arguments, ``--framework`` left out)."""
    p = flags.Parser(prog="bali train --framework rllib", parents=parents())  # a bad flag: a one-line usage
    add_arguments(p)
    return p


def defaults() -> argparse.Namespace:
    """The default configuration (not validated: nothing is written)."""
    return _parser().parse_args([])


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The configuration from the command line, every flag checked (``p.error`` names it); with
    ``--resume OUT``, OUT/config.json's with only ``RESUMABLE`` changed."""
    return parse(_parser, argv, checkpoint=CHECKPOINT, check=_check)


def _check(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Check the RLlib trainer's own flags (after the shared ones); ``p.error`` names the flag."""
    check_positive(p, args, ("envs_per_runner", "minibatch_size"))
    for flag, value in (("--env-runners", args.env_runners), ("--pool-size", args.pool_size)):
        if value < 0:
            p.error(f"{flag} must be >= 0, got {value!r}")
    if not 0 <= args.self_share <= 1:
        p.error(f"--self-share must be in [0, 1], got {args.self_share!r}")
    if args.minibatch_size > args.batch_size:
        p.error(f"--minibatch-size ({args.minibatch_size}) must not exceed --batch-size ({args.batch_size})")


def missing_packages() -> list[str]:
    """The packages RLlib training needs that are not installed."""
    return missing_modules(["torch", "ray", "tree", "pandas", "ray.rllib"])


def run_argv(argv: list[str]) -> int:
    """``bali train --framework rllib ARGV`` (``ARGV`` without ``--framework``;
    ``bali_env.trainers.entry.run_command``): exit 2 with one line when a package is missing, a flag
    is bad or the cluster is unreachable (nothing written), 130 when interrupted, else 0."""
    return run_command(list(argv), name=COMMAND, parse=lambda a: parse_args(a), missing=lambda args: missing_packages(),
                       install=f"rllib extra: {RLLIB_EXTRA}", train=lambda args: train(args))
