"""Train a Bali agent with MaskablePPO (sb3-contrib) on the batched Numba environment.

``bali train --players 2 --minutes 30 --out runs/bali2p``: this module holds the command's flags
(``parents``, ``add_arguments``: ``bali_env.apps.cli`` builds the ``bali`` parser from them) and its
run (``run``, ``run_argv``); ``parse_args`` reads a ``bali train`` command line into the configuration.
Without ``--out`` every run writes to a new folder ``runs/bali-YYYYmmdd-HHMMSS`` (``-2``, ``-3``,
... when two start in the same second), named on stderr; an ``--out`` is claimed exclusively (of
two runs started into the same new folder, one stops with one line, exit 2, having written
nothing), and an ``--out`` holding a run follows the rule of every output folder
(``bali_env.files.check_out_folder``): continued with ``--resume OUT`` or replaced with
``--overwrite``, never silently. Every flag is checked before anything is printed or written (a
bad one: exit 2).

The learner plays one seat of every game (rotating over the seats); the other seats are
opponents drawn, per game, from a pool: ``random``, ``greedy``, ``self`` (frozen copies of the
learner's past policies, a new snapshot every ``--snapshot-every`` steps, the oldest dropped past
``--pool-size``) and ``mcts`` (the search agent with ``--mcts-sims`` simulations per move: a
strong but slow opponent, 1-2 ms a move at 200 sims). ``--opponents random:1,greedy:3,self:1``
(the default) sets the weights. ``progress.csv`` logs the learner's mean return
(``train/learner_return``) and its return against each kind of opponent
(``train/return_vs_greedy``, ``train/return_vs_mcts``, ...). A fresh run first evaluates its
starting policy; then every ``--eval-every`` steps (by default min(1e6, ``--steps``/5), and with
``--minutes`` every fifth of the training time too; 0: never) the current policy is saved
(``checkpoints/``) and evaluated against random and greedy with the tournament code
(``bali_env.arena``), each evaluation under a bar of its own; the win rates go to ``eval.csv``,
TensorBoard (``OUT/tb/``) and ``learning_curve.png``. Training metrics go to ``progress.csv`` and
TensorBoard; the training bar shows the recent mean return and the latest win rates. The run
ends after ``--steps`` env steps or ``--minutes`` of wall time, whichever comes first
(``--minutes`` is the whole run's, the final evaluation included: training stops in time for it),
then saves ``final.zip``, exports the policy as ``final.npz`` (plays without torch:
``make_agent("ppo:path=OUT/final.npz")``), evaluates it once more (``--final-eval-games``; 0:
not) and writes ``summary.json`` (``env_steps``, ``wall_seconds``, ``train_seconds`` without the
evaluations, ``env_steps_per_s`` = env_steps / train_seconds, the final evaluation and its
``final_eval_seconds``); its last lines say what it wrote, the key figures, and the ``bali
tournament`` command that plays the policy.

Interrupt and resume: the first SIGINT or SIGTERM ends the run after its current step; it saves
``resume.pt`` at once (the model with its optimizer, the self-play pool, the games in flight, the
step counters and every random generator), then evaluates and writes ``summary.json`` as usual,
and the command exits with code 130, the shell's code for an interrupt (a second signal quits at
once, exit 130 too: ``resume.pt`` is already written). Every periodic evaluation
saves ``resume.pt`` too, so a killed run loses at most ``--eval-every`` steps. ``bali train
--resume OUT`` continues the run in OUT with its ``config.json``; only ``--steps`` and
``--minutes`` (totals over the whole run: a 30-minute run stopped after 10 goes on for 20),
``--eval-workers`` and ``--progress`` can change. ``progress.csv`` and ``eval.csv`` are appended
to, never truncated. A resumed run is the same run statistically, not bit for bit: it starts a
fresh PPO rollout, so the steps of the interrupted rollout (at most ``--envs`` x ``--n-steps``)
count but are not learned from.

The network reads the observation followed by the greedy heuristic's estimates of it
(``--features greedy-v1``, the default: ``bali_env.bots.features``; ``none``: the observation alone);
the exported policy records the feature set, so ``ppo:path=OUT/final.npz`` computes the same
input. ``--init FILE.npz`` starts the actor from an exported policy (the same hidden sizes and
activation; a policy over the observation alone can start a run with features, whose input
weights then start at 0) and the critic fresh. ``--init OUT/final.zip`` (``final.pt`` with
``--trainer lean``) starts actor and critic from a model an earlier run saved (the same
``--features`` and activation; a fresh optimizer and pool, the new run's flags): how the shipped
policies went on from earlier runs with other opponents. Either may start a wider ``--net`` (as
many layers, none narrower): the extra units start with zero weights out, so the grown network
plays exactly like the file (``bali_env.trainers.ppo_selfplay.checkpoints.grow_state``).

Self-play snapshots are frozen NumPy copies of the policy (``bali_env.bots.ppo``): an opponent
move costs a NumPy forward pass, not a torch call. ``--trainer lean`` swaps MaskablePPO for the
lean PPO of ``bali_env.trainers.ppo_selfplay.lean`` (same network, losses and settings; saves ``.pt``); ``python -m
bali_env.trainers.evaluation.curve OUT`` evaluates every exported checkpoint against slower opponents (mcts)
afterwards.

Config (all flags; defaults in brackets): players [2], oracle/demon [off], steps [1e8],
minutes [0 = no limit], envs [512 games in the batched env], opponents [random:1,greedy:3,self:1],
mcts-sims [200], pool-size [6], snapshot-every [100k], eval-every [min(1e6, steps/5)], eval-games [200],
final-eval-games [1000], eval-workers [1], seed [0], out [a new runs/bali-DATE-TIME], framework [sb3; rllib:
``bali_env.trainers.rllib.launch`` with its own flags], trainer [sb3], privileged-critic [off], critic-warmup [0],
init [none], features [greedy-v1], lr [3e-4], net [128,128], activation [relu], n-steps [64], batch-size [2048],
epochs [2], gamma [0.997], ent-coef [0.01], reward [win_loss; score: the margin over the others / 10],
torch-threads [2], resume [none]. ``python -m benchmarks.throughput`` measures these defaults against the previous
configuration (64 games, n-steps 128, minibatch 2048, 4 epochs, 1 torch thread, 256x256 tanh,
no features) in one run; the README gives the numbers.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from bali_env.flags import Parser

from bali_env.trainers.ppo_selfplay.checkpoints import (
    CHECKPOINT,
    init_problem,
    load_actor,
    load_checkpoint,
    save_checkpoint,
    save_model,
    saved_policy,
)
from bali_env.trainers.entry import TrainingError, missing_modules, run_command
from bali_env.trainers.evaluation.evaluate import evaluate, evaluate_checkpoint, plot_curve, write_csv
from bali_env.trainers.ppo_selfplay.loop import COMMAND, OUT_NAME, make_logger, make_model, train
from bali_env.trainers.options import HELP_EPILOG, RESUMABLE, HelpFormatter, add_shared, check_positive, parse
from bali_env.trainers.options import parents as shared_parents
from bali_env.trainers.ppo_selfplay.pool import OPPONENT_KINDS, log_returns, opponent_kinds, opponent_weights
from bali_env.trainers.ppo_selfplay.run_settings import DEFAULTS, TrainSettings

__all__ = [  # what ``bali_env.trainers.ppo_selfplay.train`` offers; most of it lives in the modules its package maps
    "BEFORE_FLAGS", "CHECKPOINT", "DEFAULTS", "FRAMEWORKS", "OPPONENT_KINDS", "RESUMABLE", "TRAIN_EXTRA",
    "TrainSettings", "TrainingError",
    "add_arguments", "defaults", "evaluate", "evaluate_checkpoint", "framework", "init_problem", "load_actor",
    "load_checkpoint", "log_returns", "make_logger", "make_model", "missing_packages", "opponent_kinds", "parents",
    "parse_args", "plot_curve", "run", "run_argv", "save_checkpoint", "save_model", "saved_policy", "train",
    "write_csv",
]

BEFORE_FLAGS = {"features": "none"}  #: flags added since runs were first saved: their value in an older run
FRAMEWORKS = ("sb3", "rllib")  #: ``--framework``: this module, or ``bali_env.trainers.rllib.launch``
TRAIN_EXTRA = "train extra: pip install torch==2.13.0 && pip install -e '.[train]'"  #: what installs the packages


def parse_args(argv: list[str] | None = None) -> TrainSettings:
    """The training settings of ``bali train ARGV``, made once every flag is checked (``p.error``
    names a bad one). With ``--resume OUT`` they are OUT/config.json's, with only ``RESUMABLE`` changed."""
    return TrainSettings.from_namespace(parse(_parser, argv, checkpoint=CHECKPOINT, check=_check,
                                              before=BEFORE_FLAGS))


def defaults() -> TrainSettings:
    """``bali train``'s default settings (``DEFAULTS``; nothing checked against the disk)."""
    return DEFAULTS


def _parser() -> argparse.ArgumentParser:
    """``bali train``'s flags as a parser of their own (what ``parse_args`` reads a command line with)."""
    p = Parser(prog=COMMAND, parents=parents())  # a bad flag: a one-line usage, then the error
    add_arguments(p)
    return p


def framework(argv: Sequence[str]) -> str:
    """The trainer ``bali train ARGV`` asks for (``--framework``, sb3 by default), read before the
    command line is parsed: RLlib's trainer has flags of its own."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--framework", default="sb3")
    return pre.parse_known_args(list(argv))[0].framework


def parents(framework: str = "sb3") -> list[argparse.ArgumentParser]:
    """The shared flags ``bali train`` takes (``bali_env.flags``: ``--players``, ``--oracle``,
    ``--demon``, ``--seed``, ``--out``, ``--progress``); ``framework`` names the default folder."""
    if framework == "rllib":
        from bali_env.trainers.rllib.launch import parents as rllib_parents

        return rllib_parents()
    return shared_parents(OUT_NAME, players=DEFAULTS.players, seed=DEFAULTS.seed)


def _add_framework(p: argparse.ArgumentParser, choices: tuple[str, ...], default: str | None, help: str) -> None:
    """``--framework``: the trainer (this module's, or RLlib's with its own flags)."""
    p.add_argument("--framework", default=default, choices=choices, help=help)


def add_arguments(p: argparse.ArgumentParser, framework: str = "sb3") -> None:
    """``bali train``'s own flags (the shared ones are ``parents``): the sb3 trainer's, or with
    ``framework`` rllib RLlib's (``bali_env.trainers.rllib.launch.add_arguments``) and ``--framework rllib``."""
    if framework == "rllib":
        from bali_env.trainers.rllib.launch import add_arguments as rllib_arguments

        rllib_arguments(p)
        _add_framework(p, ("rllib",), None, "rllib: this trainer (bali train --framework rllib)")
        return
    p.formatter_class = HelpFormatter
    p.description = ("Train a Bali agent with PPO (MaskablePPO by default), self-play included; writes "
                     "OUT/final.npz (play it as ppo:path=OUT/final.npz) and OUT/summary.json.")
    p.epilog = HELP_EPILOG.format(checkpoint=f"OUT/{CHECKPOINT}")

    default = DEFAULTS.parser_defaults()  # the defaults, declared once (the record's)

    def shared(flags: str) -> None:
        """Add the training flags named in ``flags`` (``bali_env.trainers.options.SHARED``)."""
        add_shared(p, flags, name=OUT_NAME, checkpoint=CHECKPOINT, defaults=default)

    shared("--steps --minutes")
    p.add_argument("--envs", type=int, default=default["envs"], help="games stepped together in the batched env")
    p.add_argument("--opponents", default=default["opponents"],
                   help="opponents with weights, SPEC:WEIGHT,...: any agent spec (random, greedy, mcts, "
                        "mcts:sims=400, ppo, ppo:path=FILE.npz, mybot.py:MyBot, 'cmd:PROGRAM ARGS') or self "
                        "(past snapshots of the learner)")
    p.add_argument("--mcts-sims", type=int, default=default["mcts_sims"],
                   help="simulations per move of the mcts opponents")
    p.add_argument("--eval-opponents", nargs="+", default=default["eval_opponents"], metavar="SPEC",
                   help="the agents every checkpoint is evaluated against (any agent spec)")
    p.add_argument("--eval-minutes", type=float, default=default["eval_minutes"],
                   help="also evaluate every this many minutes of the run (0: as --eval-every says)")
    shared("--pool-size --snapshot-every --eval-every --eval-games --final-eval-games --eval-workers")
    _add_framework(p, FRAMEWORKS, default["framework"], "sb3: this trainer; rllib: Ray RLlib's multi-agent PPO, "
                   "with its own flags (bali train --framework rllib --help; needs the rllib extra)")
    p.add_argument("--trainer", default=default["trainer"], choices=("sb3", "lean"),
                   help="sb3-contrib MaskablePPO (default, saves .zip) or the lean PPO of "
                        "bali_env.trainers.ppo_selfplay.lean (.pt)")
    p.add_argument("--privileged-critic", action="store_true",
                   help="lean trainer only: the critic also sees the hidden state "
                        "(bali_env.trainers.ppo_selfplay.privileged); "
                        "the exported policy does not")
    p.add_argument("--critic-warmup", type=float, default=default["critic_warmup"], metavar="STEPS",
                   help="lean trainer only: the actor stays frozen (only the critic learns) until the run has "
                        "played this many env steps; for a fresh critic under a trained actor (--init FILE.npz)")
    p.add_argument("--init", type=Path, default=default["init"], metavar="FILE",
                   help="start from an exported policy FILE.npz (the actor; the critic starts fresh) or from "
                        "a run's saved model (OUT/final.zip, or final.pt with --trainer lean: actor and critic); "
                        "same --activation and --features; --net as deep, each layer as wide or wider (the extra "
                        "units start with zero weights out)")
    p.add_argument("--features", default=default["features"], choices=("greedy-v1", "none"),
                   help="what the network reads besides the observation: the heuristic's estimates "
                        "(bali_env.bots.features) or nothing")
    shared("--lr --net")
    p.add_argument("--activation", default=default["activation"], choices=("relu", "tanh"),
                   help="hidden layer activation")
    p.add_argument("--n-steps", type=int, default=default["n_steps"], help="steps per env per PPO rollout")
    p.add_argument("--batch-size", type=int, default=default["batch_size"], help="PPO minibatch size")
    shared("--epochs --gamma --ent-coef --reward")
    p.add_argument("--torch-threads", type=int, default=default["torch_threads"],
                   help="PyTorch threads (the env steps between PPO updates, so both cores go to the update)")
    shared("--resume")


def _check(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Check ``bali train``'s own flags (after the shared ones); ``p.error`` names the flag. Sets
    ``args.weights`` (``--opponents`` parsed)."""
    check_positive(p, args, ("envs", "pool_size", "torch_threads", "n_steps", "mcts_sims"))
    _check_lean_only(p, args)
    if args.init is not None and args.resume is None:
        problem = init_problem(args)
        if problem:
            p.error(f"--init {str(args.init)!r}: {problem}")
    try:
        args.weights = opponent_weights(args.opponents)
    except ValueError as exc:
        p.error(f"--opponents: {exc}")
    if not args.eval_minutes >= 0 or args.eval_minutes == float("inf"):
        p.error(f"--eval-minutes must be a number of minutes >= 0, got {args.eval_minutes}")
    _check_eval_opponents(p, args)


def _check_lean_only(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--privileged-critic`` and ``--critic-warmup`` (in range) only with ``--trainer lean``."""
    if args.privileged_critic and args.trainer != "lean":
        p.error("--privileged-critic needs --trainer lean")
    if not 0 <= args.critic_warmup < float("inf"):
        p.error(f"--critic-warmup must be a number of env steps >= 0, got {args.critic_warmup}")
    if args.critic_warmup and args.trainer != "lean":
        p.error("--critic-warmup needs --trainer lean")


def _check_eval_opponents(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every ``--eval-opponents`` spec makes an agent that plays ``--players``."""
    from bali_env.bots import make_agent

    for spec in args.eval_opponents:
        try:
            agent = make_agent(spec, seed=0)
            check = getattr(agent, "check_players", None)
            if callable(check):
                check(args.players)
            agent.close()
        except Exception as exc:  # noqa: BLE001 - unknown kind, missing file, a policy for other counts
            p.error(f"--eval-opponents {spec!r}: " + " ".join(str(exc).split()))


def missing_packages(trainer: str) -> list[str]:
    """The training packages ``trainer`` needs that are not installed."""
    return missing_modules(["torch", "stable_baselines3"] + (["sb3_contrib"] if trainer == "sb3" else []))


def run(args: argparse.Namespace) -> int:
    """``bali train`` from ``bali``'s parser: ``run_argv`` of the command's arguments as given
    (``args.argv``), which ``--resume`` needs to tell the flags given from the defaults."""
    return run_argv(args.argv)


def run_argv(argv: list[str]) -> int:
    """``bali train ARGV`` (``bali_env.trainers.entry.run_command``): exit 2 with one line when the
    train extra is missing, a flag is bad or the run cannot start (nothing written), 130 when
    interrupted, else 0. ``--framework rllib`` hands the other flags to ``bali_env.trainers.rllib.launch``."""
    argv = list(argv)
    if framework(argv) == "rllib":
        from bali_env.trainers.rllib.launch import run_argv as rllib_run

        pre = argparse.ArgumentParser(add_help=False)
        pre.add_argument("--framework")
        return rllib_run(pre.parse_known_args(argv)[1])
    return run_command(argv, name=COMMAND, parse=lambda a: parse_args(a), install=TRAIN_EXTRA,
                       missing=lambda args: missing_packages(args.trainer), train=lambda args: train(args))
