"""Train a Bali agent with MaskablePPO (sb3-contrib) on the batched Numba environment.

``python -m training.train --players 2 --minutes 30 --out runs/bali2p`` (or ``bali train ...``).

The learner plays one seat of every game (rotating over the seats); the other seats are
opponents drawn, per game, from a pool: ``random``, ``greedy``, ``self`` (frozen copies of the
learner's past policies, a new snapshot every ``--snapshot-every`` steps, the oldest dropped past
``--pool-size``) and ``mcts`` (the search agent with ``--mcts-sims`` simulations per move: a
strong but slow opponent, 1-2 ms a move at 200 sims). ``--opponents random:1,greedy:3,self:1``
(the default) sets the weights. ``progress.csv`` logs the learner's mean return
(``train/learner_return``) and its return against each kind of opponent
(``train/return_vs_greedy``, ``train/return_vs_mcts``, ...). Every
``--eval-every`` steps the current policy is saved (``checkpoints/``) and evaluated against
random and greedy with the tournament code (``agents.tournament``); the win rates go to
``eval.csv``, TensorBoard (``OUT/tb/``) and ``learning_curve.png``. Training metrics go to
``progress.csv`` and TensorBoard. The run ends after ``--steps`` env steps or ``--minutes`` of
wall time, whichever comes first, then saves ``final.zip``, exports the policy as ``final.npz``
(plays without torch: ``make_agent("ppo:path=OUT/final.npz")``), evaluates it once more and
writes ``summary.json`` (``env_steps``, ``wall_seconds``, ``train_seconds`` without the
evaluations, ``env_steps_per_s`` = env_steps / train_seconds, the final evaluation).

Interrupt and resume: the first SIGINT or SIGTERM ends the run after its current step; it saves
``resume.pt`` at once (the model with its optimizer, the self-play pool, the games in flight, the
step counters and every random generator), then evaluates and writes ``summary.json`` as usual
(a second signal quits at once: ``resume.pt`` is already written). Every periodic evaluation
saves ``resume.pt`` too, so a killed run loses at most ``--eval-every`` steps. ``bali train
--resume OUT`` continues the run in OUT with its ``config.json``; only ``--steps`` and
``--minutes`` (totals over the whole run: a 30-minute run stopped after 10 goes on for 20),
``--eval-workers`` and ``--progress`` can change. ``progress.csv`` and ``eval.csv`` are appended
to, never truncated. A resumed run is the same run statistically, not bit for bit: it starts a
fresh PPO rollout, so the steps of the interrupted rollout (at most ``--envs`` x ``--n-steps``)
count but are not learned from.

The network reads the observation followed by the greedy heuristic's estimates of it
(``--features greedy-v1``, the default: ``agents.features``; ``none``: the observation alone);
the exported policy records the feature set, so ``ppo:path=OUT/final.npz`` computes the same
input. ``--init FILE.npz`` starts the actor from an exported policy (the same hidden sizes and
activation; a policy over the observation alone can start a run with features, whose input
weights then start at 0) and the critic fresh. ``--init OUT/final.zip`` (``final.pt`` with
``--trainer lean``) starts actor and critic from a model an earlier run saved (the same
``--net``, ``--features`` and activation; a fresh optimizer and pool, the new run's flags): how
the shipped policies went on from earlier runs with other opponents.

Self-play snapshots are frozen NumPy copies of the policy (``agents.ppo_agent``): an opponent
move costs a NumPy forward pass, not a torch call. ``--trainer lean`` swaps MaskablePPO for the
lean PPO of ``training.lean`` (same network, losses and settings; saves ``.pt``); ``python -m
training.curve OUT`` evaluates every exported checkpoint against slower opponents (mcts)
afterwards.

Config (all flags; defaults in brackets): players [2], oracle/demon [off], steps [1e8],
minutes [0 = no limit], envs [512 games in the batched env], opponents [random:1,greedy:3,self:1],
mcts-sims [200], pool-size [6], snapshot-every [100k], eval-every [1e6], eval-games [200], final-eval-games
[1000], eval-workers [1], seed [0], out [runs/bali], framework [sb3; rllib: ``training.rllib``
with its own flags], trainer [sb3], privileged-critic [off], init [none], features [greedy-v1],
lr [3e-4], net [128,128], activation [relu], n-steps [64], batch-size [2048], epochs [2],
gamma [0.997], ent-coef [0.01], reward [win_loss; score: the margin over the others / 10],
torch-threads [2], resume [none]. ``python -m training.throughput`` measures these defaults against the previous
configuration (64 games, n-steps 128, minibatch 2048, 4 epochs, 1 torch thread, 256x256 tanh,
no features) in one run; the README gives the numbers.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bali_env.files import replace_when_done, write_text


CHECKPOINT = "resume.pt"  #: the checkpoint ``--resume`` continues from (in the run's folder)
_CHECKPOINT_FORMAT = "bali-env/train-checkpoint"
OPPONENT_KINDS = ("random", "greedy", "self", "mcts")  #: what ``--opponents`` may weigh
RESUMABLE = ("steps", "minutes", "eval_workers", "progress")  #: what ``--resume`` may change
BEFORE_FLAGS = {"features": "none"}  #: flags added since runs were first saved: their value in an older run
FRAMEWORKS = ("sb3", "rllib")  #: ``--framework``: this module, or ``training.rllib``


class TrainingError(ValueError):
    """A run that cannot start as asked (``bali train`` prints it in one line, exit 2)."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The training configuration from the command line (every flag checked: ``p.error`` names it).
    With ``--resume OUT`` the configuration is OUT/config.json's, with only ``RESUMABLE`` changed."""
    p = _parser()
    args = p.parse_args(argv)
    if args.resume is not None:
        args = _resumed(p, args, _explicit(argv))
    _validate(p, args)
    return args


def _explicit(argv: list[str] | None) -> set[str]:
    """The options given on the command line (not left at their defaults)."""
    return _explicit_in(_parser(), defaults(), argv)


def _explicit_in(p: argparse.ArgumentParser, default: argparse.Namespace, argv: list[str] | None) -> set[str]:
    """The options of parser ``p`` given in ``argv`` (not left at ``default``'s values)."""
    unset = object()
    p.set_defaults(**dict.fromkeys(vars(default), unset))
    return {key for key, value in vars(p.parse_args(argv)).items() if value is not unset}


def _resumed(p: argparse.ArgumentParser, args: argparse.Namespace, given: set[str]) -> argparse.Namespace:
    """The configuration of the run saved in ``args.resume`` with the given ``RESUMABLE`` flags."""
    return _resumed_from(p, args, given, defaults(), RESUMABLE, CHECKPOINT, BEFORE_FLAGS)


def _resumed_from(p: argparse.ArgumentParser, args: argparse.Namespace, given: set[str], default: argparse.Namespace,
                  resumable: tuple[str, ...], checkpoint: str,
                  before: dict[str, Any] | None = None) -> argparse.Namespace:
    """``default`` updated with the config.json of the run in ``args.resume`` and the given
    ``resumable`` flags; ``p.error`` for another flag, a missing config or a missing ``checkpoint``.
    ``before``: the values of flags added since, for a config.json written without them."""
    folder: Path = args.resume
    fixed = sorted(given - {"resume", *resumable})
    if fixed:
        p.error(f"--resume continues the run in {str(folder)!r} with its config.json: "
                f"{', '.join('--' + k.replace('_', '-') for k in fixed)} cannot change "
                f"(only {', '.join('--' + k.replace('_', '-') for k in resumable)} can)")
    try:
        config = json.loads((folder / "config.json").read_text())
        if not isinstance(config, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as exc:
        p.error(f"--resume {str(folder)!r}: no readable config.json of a training run ({exc})")
    if not (folder / checkpoint).exists():
        p.error(f"--resume {str(folder)!r}: no {checkpoint} in it (a run saves one at every evaluation "
                "and when it stops)")
    resumed = default
    for key, value in (before or {}).items():
        if key not in config:
            config[key] = value
    for key, value in config.items():
        if hasattr(resumed, key) and key not in ("out", "resume", *given):
            setattr(resumed, key, value)
    for key in given & set(resumable):
        setattr(resumed, key, getattr(args, key))
    resumed.out = resumed.resume = folder
    return resumed


def defaults() -> argparse.Namespace:
    """``bali train``'s default configuration (not validated: nothing is written)."""
    return _parser().parse_args([])


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bali train", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                                description="Train a Bali agent with PPO (MaskablePPO by default), self-play "
                                            "included; writes OUT/final.npz (play it as ppo:path=OUT/final.npz) "
                                            "and OUT/summary.json.")
    p.add_argument("--players", type=int, default=2, choices=(2, 3, 4), help="players per game")
    p.add_argument("--oracle", action="store_true", help="play the Oracle variant")
    p.add_argument("--demon", action="store_true", help="play the Demon variant")
    p.add_argument("--steps", type=float, default=1e8, help="total learner env steps")
    p.add_argument("--minutes", type=float, default=0.0, help="wall-clock limit (0: none)")
    p.add_argument("--envs", type=int, default=512, help="games stepped together in the batched env")
    p.add_argument("--opponents", default="random:1,greedy:3,self:1",
                   help="opponent kinds with weights: random, greedy, self (past snapshots), mcts")
    p.add_argument("--mcts-sims", type=int, default=200, help="simulations per move of the mcts opponents")
    p.add_argument("--pool-size", type=int, default=6, help="frozen self-play snapshots kept")
    p.add_argument("--snapshot-every", type=float, default=1e5, help="env steps between self-play snapshots")
    p.add_argument("--eval-every", type=float, default=1e6,
                   help="env steps between checkpoints evaluated against random and greedy")
    p.add_argument("--eval-games", type=int, default=200, help="games per opponent at each evaluation")
    p.add_argument("--final-eval-games", type=int, default=1000, help="games per opponent at the end")
    p.add_argument("--eval-workers", type=int, default=1, help="worker processes of the evaluation tournaments")
    p.add_argument("--seed", type=int, default=0, help="seeds the deals, the opponents and the learner")
    p.add_argument("--out", type=Path, default=Path("runs/bali"), help="output folder")
    p.add_argument("--framework", default="sb3", choices=FRAMEWORKS,
                   help="sb3: this trainer; rllib: Ray RLlib's multi-agent PPO, with its own flags "
                        "(python -m training.rllib --help; needs the rllib extra)")
    p.add_argument("--trainer", default="sb3", choices=("sb3", "lean"),
                   help="sb3-contrib MaskablePPO (default, saves .zip) or the lean PPO of training.lean (.pt)")
    p.add_argument("--privileged-critic", action="store_true",
                   help="lean trainer only: the critic also sees the hidden state (training.privileged); "
                        "the exported policy does not")
    p.add_argument("--init", type=Path, default=None, metavar="FILE",
                   help="start from an exported policy FILE.npz (the actor; the critic starts fresh) or from "
                        "a run's saved model (OUT/final.zip, or final.pt with --trainer lean: actor and critic); "
                        "same --net, --activation and --features")
    p.add_argument("--features", default="greedy-v1", choices=("greedy-v1", "none"),
                   help="what the network reads besides the observation: the heuristic's estimates "
                        "(agents.features) or nothing")
    p.add_argument("--lr", type=float, default=3e-4, help="Adam learning rate")
    p.add_argument("--net", default="128,128", help="hidden layer sizes (actor and critic each)")
    p.add_argument("--activation", default="relu", choices=("relu", "tanh"), help="hidden layer activation")
    p.add_argument("--n-steps", type=int, default=64, help="steps per env per PPO rollout")
    p.add_argument("--batch-size", type=int, default=2048, help="PPO minibatch size")
    p.add_argument("--epochs", type=int, default=2, help="PPO epochs per rollout")
    p.add_argument("--gamma", type=float, default=0.997, help="discount factor, in (0, 1]")
    p.add_argument("--ent-coef", type=float, default=0.01, help="entropy bonus coefficient")
    p.add_argument("--reward", default="win_loss", choices=("win_loss", "score"),
                   help="terminal reward: +1 win / -1 otherwise, or the score margin (own final score minus the "
                        "mean of the others) / 10, denser with more players")
    p.add_argument("--torch-threads", type=int, default=2,
                   help="PyTorch threads (the env steps between PPO updates, so both cores go to the update)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True, help="progress bar")
    p.add_argument("--resume", type=Path, default=None, metavar="OUT",
                   help=f"continue the run saved in OUT (its config.json and {CHECKPOINT}); only --steps and "
                        "--minutes (totals over the whole run), --eval-workers and --progress can change")
    return p


def _opponent_weights(text: str) -> dict[str, float]:
    """Parse ``random:1,greedy:3,self:1``; ValueError saying what is wrong."""
    weights: dict[str, float] = {}
    for item in text.split(","):
        kind, _, w = item.strip().partition(":")
        if kind not in OPPONENT_KINDS:
            raise ValueError(f"unknown opponent kind {kind!r} in {text!r} ({', '.join(OPPONENT_KINDS)})")
        try:
            weight = float(w or 1)
        except ValueError:
            raise ValueError(f"opponent weight {w!r} of {kind!r} is not a number") from None
        if not weight >= 0 or weight == float("inf"):
            raise ValueError(f"opponent weight of {kind!r} must be >= 0, got {w!r}")
        weights[kind] = weight
    if sum(weights.values()) <= 0:
        raise ValueError(f"at least one opponent kind needs a positive weight, got {text!r}")
    return weights


def _validate(p: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Check every flag before anything starts; ``p.error`` (exit 2, nothing written) names the flag."""
    positive = {"--steps": args.steps, "--envs": args.envs, "--pool-size": args.pool_size,
                "--snapshot-every": args.snapshot_every, "--eval-every": args.eval_every,
                "--eval-games": args.eval_games, "--final-eval-games": args.final_eval_games,
                "--eval-workers": args.eval_workers, "--torch-threads": args.torch_threads, "--lr": args.lr,
                "--n-steps": args.n_steps, "--batch-size": args.batch_size, "--epochs": args.epochs,
                "--mcts-sims": args.mcts_sims}
    for flag, value in positive.items():
        if not value > 0 or value == float("inf"):
            p.error(f"{flag} must be positive, got {value!r}")
    if not args.minutes >= 0 or args.minutes == float("inf"):
        p.error(f"--minutes must be >= 0 (0: no limit), got {args.minutes!r}")
    if args.privileged_critic and args.trainer != "lean":
        p.error("--privileged-critic needs --trainer lean")
    if not 0 < args.gamma <= 1:
        p.error(f"--gamma must be in (0, 1], got {args.gamma!r}")
    if not args.ent_coef >= 0:
        p.error(f"--ent-coef must be >= 0, got {args.ent_coef!r}")
    try:
        sizes = [int(x) for x in args.net.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:
        p.error(f"--net must be positive layer sizes like 256,256, got {args.net!r}")
    if args.init is not None and args.resume is None:
        problem = init_problem(args)
        if problem:
            p.error(f"--init {str(args.init)!r}: {problem}")
    try:
        args.weights = _opponent_weights(args.opponents)
    except ValueError as exc:
        p.error(f"--opponents: {exc}")
    out = args.out.resolve()
    probe = next((q for q in (out, *out.parents) if q.exists()), None)
    if probe is None or not probe.is_dir() or not os.access(probe, os.W_OK):
        p.error(f"--out {str(args.out)!r} is not writable ({probe} is not a writable folder)")
    if args.resume is None and (out / "config.json").exists():
        p.error(f"--out {str(args.out)!r} already holds a training run (config.json): continue it with "
                f"--resume {str(args.out)!r}, or choose another folder")


def evaluate(policy_path: Path, opponent: str, args: argparse.Namespace, games: int, seed: int) -> dict[str, Any]:
    """Win rate of an exported policy (``.npz``, played by the ``ppo`` agent) against ``opponent``
    (an agent spec) over ``games`` seat-rotated games."""
    from agents.tournament import run_tournament

    lineup = [f"ppo:path={policy_path}"] + [opponent] * (args.players - 1)
    res = run_tournament(lineup, num_players=args.players, games=games, seed=seed, workers=args.eval_workers,
                         oracle=args.oracle, demon=args.demon, out_dir=None, progress=False)
    learner = res.participants[0]
    low, high = learner["win_rate_ci95"]
    return {"win_rate": learner["win_rate"], "ci_low": low, "ci_high": high, "games": learner["games"],
            "mean_score": learner["mean_score"]}


def save_model(model: Any, path: Path) -> None:
    """Save either trainer's model to ``path`` through a temporary file moved into place."""
    with replace_when_done(path) as tmp, open(tmp, "wb") as f:
        model.save(f)


def write_csv(rows: list[dict[str, Any]], path: Path) -> None:
    """Write ``rows`` as CSV to a temporary file, then move it into place."""
    with replace_when_done(path) as tmp, open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def plot_curve(rows: list[dict[str, Any]], path: Path, players: int, title: str | None = None) -> None:
    """Learning curve: evaluation win rate (with 95% CI) against each opponent vs env steps
    (written to a temporary file, then moved into place)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    colors = ("tab:blue", "tab:red", "tab:green", "tab:purple", "tab:orange", "tab:brown")
    for opp, color in zip(dict.fromkeys(r["opponent"] for r in rows), colors, strict=False):
        pts = [r for r in rows if r["opponent"] == opp]
        if not pts:
            continue
        x = [r["steps"] for r in pts]
        ax.plot(x, [r["win_rate"] for r in pts], "o-", color=color, label=f"vs {opp}")
        ax.fill_between(x, [r["ci_low"] for r in pts], [r["ci_high"] for r in pts], color=color, alpha=0.15)
    ax.axhline(1 / players, color="gray", ls=":", label=f"chance ({1 / players:.0%})")
    ax.set_ylim(0, 1)
    ax.set_xlabel("learner env steps")
    ax.set_ylabel("win rate (95% CI)")
    ax.set_title(title or f"MaskablePPO on Bali, {players} players")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    with replace_when_done(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)


class _ProgressBar:
    """A tqdm bar over the run: env steps, or minutes when ``--minutes`` ends the run first (so
    the ETA is the run's, not that of ``--steps``' 1e8)."""

    def __init__(self, args: argparse.Namespace, start: float, steps: int = 0) -> None:
        from tqdm.auto import tqdm

        self.by_time = args.minutes > 0
        self.start = start
        total = args.minutes * 60 if self.by_time else int(args.steps)
        initial = min(time.time() - start, total) if self.by_time else steps  # a resumed run goes on
        self.bar = tqdm(total=total, initial=initial, unit="s" if self.by_time else "step", disable=not args.progress,
                        desc="training", smoothing=0.05, bar_format=None if not self.by_time else
                        "{desc}: {percentage:3.0f}%|{bar}| {n:.0f}/{total:.0f} s [{elapsed}<{remaining}{postfix}]")
        self.last = 0.0

    def advance(self, steps: int) -> None:
        """Move the bar to ``steps`` env steps (or the elapsed time), at most 4 times a second."""
        now = time.time()
        if now - self.last < 0.25:
            return
        self.last = now
        done = min(now - self.start, self.bar.total) if self.by_time else steps
        self.bar.update(done - self.bar.n)
        self.bar.set_postfix_str(f"{steps:,} steps", refresh=False)

    def close(self) -> None:
        """Close the bar."""
        self.bar.close()


class _stop_on_signals:
    """Within the block, the first SIGINT or SIGTERM sets ``stop["now"]`` (the training loop ends
    after its current step and the run is saved as usual); a second one interrupts at once."""

    def __init__(self, stop: dict[str, bool]) -> None:
        self.stop = stop
        self.previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: Any) -> None:
        if self.stop["now"]:
            raise KeyboardInterrupt
        self.stop["now"] = True

    def __enter__(self) -> _stop_on_signals:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self.previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        import signal

        for sig, handler in self.previous.items():
            signal.signal(sig, handler)


def _learn(model: Any, args: argparse.Namespace, on_step: Any) -> None:
    """Run ``model.learn`` (either trainer) up to ``--steps`` in all (a resumed model goes on from
    its step count), calling ``on_step(env steps)`` after every env step; it returns False to stop."""
    if args.trainer == "lean":
        model.learn(int(args.steps), on_step)
        return
    from stable_baselines3.common.callbacks import BaseCallback

    class Loop(BaseCallback):
        def _on_step(self) -> bool:
            return on_step(self.num_timesteps)

    model.learn(total_timesteps=int(args.steps) - model.num_timesteps, callback=Loop(), progress_bar=False,
                reset_num_timesteps=args.resume is None)


def save_checkpoint(path: Path, model: Any, args: argparse.Namespace, pool: Any, venv: Any,
                    progress: dict[str, Any]) -> None:
    """Write everything ``--resume`` needs to ``path`` (one file, moved into place when complete):
    the model with its optimizer, the self-play pool, the games in flight, the random generators
    (torch's, the pool's, every opponent's, the deals') and ``progress`` (counters, evaluations)."""
    import io

    import torch

    if args.trainer == "lean":
        saved_model: Any = model.checkpoint()
    else:
        buffer = io.BytesIO()
        model.save(buffer)  # the zip holds the optimizer and the step count
        saved_model = buffer.getvalue()
    state = {"format": _CHECKPOINT_FORMAT, "version": 1, "trainer": args.trainer, "model": saved_model,
             "pool": pool.checkpoint(), "games": venv.checkpoint(), "torch_rng": torch.get_rng_state(),
             "progress": progress}
    with replace_when_done(path) as tmp:
        torch.save(state, tmp)


def load_checkpoint(path: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The checkpoint ``save_checkpoint`` wrote; TrainingError saying what is wrong."""
    import torch

    try:
        state = torch.load(path, weights_only=False)  # our own file, written by save_checkpoint
    except Exception as exc:  # noqa: BLE001 - any unreadable file gets the same one-line answer
        raise TrainingError(f"{path} is not a readable training checkpoint ({type(exc).__name__}: {exc})") from None
    if not isinstance(state, dict) or state.get("format") != _CHECKPOINT_FORMAT or state.get("version") != 1:
        raise TrainingError(f"{path} is not a bali-env training checkpoint (version 1)")
    if state["trainer"] != args.trainer:
        raise TrainingError(f"{path} was saved by --trainer {state['trainer']}, config.json says {args.trainer}")
    return state


def _restore(model: Any, args: argparse.Namespace, venv: Any, saved: dict[str, Any]) -> Any:
    """The model of a resumed run over ``venv`` (whose games are put back first)."""
    import io

    import torch

    venv.restore(saved["games"])
    if args.trainer == "lean":
        model.restore(saved["model"])
    else:
        from sb3_contrib import MaskablePPO

        model = MaskablePPO.load(io.BytesIO(saved["model"]), env=venv, device="cpu")
        model._last_obs = venv.observations()  # go on with the games in flight (no reset)
        model._last_episode_starts = np.ones(venv.num_envs, dtype=bool)
    torch.set_rng_state(saved["torch_rng"])
    return model


def log_returns(logger: Any, venv: Any, seen: int) -> int:
    """Log the learner's returns of the games ``venv`` finished since the first ``seen``: their
    mean, and their mean against each kind of opponent. Returns the new count seen."""
    returns = venv.episode_returns[seen:]
    if returns:
        logger.record_mean("train/learner_return", float(np.mean(returns)))
        by_kind: dict[str, list[float]] = {}
        for ret, names in zip(returns, venv.episode_opponents[seen:], strict=True):
            by_kind.setdefault(opponent_kinds(names), []).append(ret)
        for kind, rets in by_kind.items():
            logger.record_mean(f"train/return_vs_{kind}", float(np.mean(rets)))
    return len(venv.episode_returns)


def opponent_kinds(names: str) -> str:
    """The kinds of a game's opponents as logged (``train/return_vs_KIND``): ``self@1024,greedy``
    gives ``greedy+self``, ``mcts:sims=200`` gives ``mcts``."""
    return "+".join(sorted({n.split("@")[0].split(":")[0] for n in names.split(",")}))


def init_problem(args: argparse.Namespace) -> str | None:
    """Why ``--init`` cannot start this run (None when it can): not a valid export or saved model of
    this run's trainer, or other hidden sizes, activation or input than ``--net``, ``--activation``
    and ``--features``. An export that reads the observation alone may start a network that also
    reads features; a saved model must fit exactly (its critic too; a saved model does not record
    its activation, so that one is the caller's to match)."""
    from agents.features import feature_count
    from agents.ppo_agent import ExportedPolicy
    from bali_env.engine import N_ACTIONS, OBS_DIM

    sizes = [int(x) for x in args.net.split(",")]
    inputs = OBS_DIM + feature_count(None if args.features == "none" else args.features)
    wanted = list(zip([*sizes, N_ACTIONS], [inputs, *sizes], strict=True))
    if args.init.suffix != ".npz":
        try:
            state = saved_policy(args.init, args.trainer)
        except Exception as exc:  # noqa: BLE001 - whatever the loaders raise on a foreign file
            return f"not an exported policy (.npz) nor a model saved by --trainer {args.trainer} ({exc})"
        if args.privileged_critic:
            return "a saved model cannot start a run with --privileged-critic (give its exported .npz)"
        hidden = wanted[:-1]
        for prefix in ("mlp_extractor.policy_net.", "mlp_extractor.value_net."):  # actor, critic: same sizes
            have = [tuple(v.shape) for k, v in state.items() if k.startswith(prefix) and k.endswith(".weight")]
            if have != hidden:
                return f"its network (layers {have}) does not fit this run's ({hidden}): give its --net and --features"
        heads = [tuple(getattr(state.get(k), "shape", ())) for k in ("action_net.weight", "value_net.weight")]
        if heads != [wanted[-1], (1, sizes[-1])]:
            return f"its output layers do not fit this run's (--net {args.net})"
        return None
    try:
        exported = ExportedPolicy(args.init)
    except ValueError as exc:
        return str(exc)
    shapes = [tuple(w.shape) for w, _ in exported.arrays()[0]]
    if exported.features is not None and shapes[0][1] != inputs:
        return f"it reads the {exported.features} features; this run reads the observation alone (--features none)"
    fits = len(shapes) == len(wanted) and all(
        a[0] == b[0] and (a[1] == b[1] or (i == 0 and a[1] == OBS_DIM))
        for i, (a, b) in enumerate(zip(shapes, wanted, strict=True)))
    if not fits or exported.meta["activation"] != args.activation:
        return (f"its actor ({exported.meta['activation']}, layers {shapes}) does not fit this run's "
                f"({args.activation}, layers {wanted}): give the --net and --activation it was trained with")
    return None


def saved_policy(path: Path, trainer: str) -> dict[str, Any]:
    """The policy's ``state_dict`` (actor and critic) in a model ``bali train`` saved: an SB3 ``.zip``
    (``--trainer sb3``) or the lean trainer's ``.pt``."""
    import torch

    if trainer == "sb3":
        from stable_baselines3.common.save_util import load_from_zip_file

        _, params, _ = load_from_zip_file(path, device="cpu", print_system_info=False)
        if not params or "policy" not in params:
            raise ValueError("no policy in it")
        return params["policy"]
    state = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(state, dict):
        raise ValueError("no state dict in it")
    return state


def load_actor(policy: Any, path: Path, trainer: str = "sb3") -> None:
    """Start ``policy`` (either trainer's: ``mlp_extractor.policy_net`` and ``action_net``) from
    ``path`` (``--init``, checked by ``init_problem``). An exported policy (``.npz``) sets the actor
    only: input weights of features the file does not read start at 0, so the first policy plays
    exactly like the file, and the critic starts fresh. A saved model sets actor and critic."""
    import torch

    from agents.ppo_agent import ExportedPolicy

    if Path(path).suffix != ".npz":
        policy.load_state_dict(saved_policy(path, trainer))
        return
    layers = [m for m in policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)] + [policy.action_net]
    with torch.no_grad():
        for layer, (w, b) in zip(layers, ExportedPolicy(path).arrays()[0], strict=True):
            layer.weight.zero_()
            layer.weight[:, : w.shape[1]] = torch.from_numpy(w)
            layer.bias.copy_(torch.from_numpy(b))


def make_logger(out: Path) -> Any:
    """SB3's logger for a run in ``out``: ``progress.csv`` (appended to when it exists: a resumed
    run keeps every earlier row) and TensorBoard event files in ``out/tb``."""
    from stable_baselines3.common.logger import CSVOutputFormat, Logger, make_output_format

    class AppendingCSV(CSVOutputFormat):
        def __init__(self, path: Path) -> None:
            self.keys: list[str] = []
            self.separator, self.quotechar = ",", '"'
            if path.is_file() and path.stat().st_size:
                with open(path, newline="") as f:
                    self.keys = next(csv.reader(f), [])
                self.file = open(path, "r+")  # noqa: SIM115 - SB3 closes it
                tail = self.file.seek(0, os.SEEK_END)
                if tail and not path.read_bytes().endswith(b"\n"):
                    self.file.write("\n")  # a row cut short by a kill
            else:
                self.file = open(path, "w+")  # noqa: SIM115

    return Logger(str(out), [AppendingCSV(out / "progress.csv"), make_output_format("tensorboard", str(out / "tb"))])


def make_model(args: argparse.Namespace, venv: Any) -> tuple[Any, str]:
    """The PPO learner of ``args.trainer`` over ``venv`` and the extension its saves use:
    sb3-contrib's ``MaskablePPO`` (``.zip``) or ``training.lean.LeanPPO`` (``.pt``)."""
    import torch

    net = [int(x) for x in args.net.split(",")]
    activation = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[args.activation]
    if args.trainer == "lean":
        from .lean import LeanPPO

        return LeanPPO(venv, lr=args.lr, n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.epochs,
                       gamma=args.gamma, ent_coef=args.ent_coef, net=net, activation=activation,
                       seed=args.seed, privileged_critic=args.privileged_critic), ".pt"
    from sb3_contrib import MaskablePPO

    return MaskablePPO("MlpPolicy", venv, learning_rate=args.lr, n_steps=args.n_steps, batch_size=args.batch_size,
                       n_epochs=args.epochs, gamma=args.gamma, ent_coef=args.ent_coef, seed=args.seed, device="cpu",
                       verbose=0, policy_kwargs={"net_arch": net, "activation_fn": activation}), ".zip"


def _progress(args: argparse.Namespace, saved: dict[str, Any] | None) -> dict[str, Any]:
    """The counters of the run: fresh, or a resumed run's (TrainingError when it has nothing left)."""
    if saved is None:
        return {"due": {"snapshot": args.snapshot_every, "eval": args.eval_every}, "eval_rows": [], "steps": 0,
                "elapsed": 0.0, "loop_seconds": 0.0, "eval_seconds": 0.0, "sessions": 0, "interrupted": False}
    progress = saved["progress"]
    if progress["steps"] >= args.steps or (args.minutes > 0 and progress["elapsed"] >= args.minutes * 60):
        raise TrainingError(f"the run in {str(args.out)!r} already reached its end ({progress['steps']:,} steps, "
                            f"{progress['elapsed'] / 60:.1f} minutes): give a larger --steps or --minutes "
                            "(totals over the whole run) to train further")
    return progress


def _pool(args: argparse.Namespace, saved: dict[str, Any] | None) -> Any:
    """The opponent pool: random and greedy as weighted (self-play snapshots join during the run),
    or a resumed run's pool as it was saved."""
    from agents import make_agent

    from .vec_env import OpponentPool

    if saved is not None:
        return OpponentPool.from_checkpoint(saved["pool"])
    pool = OpponentPool(seed=args.seed)
    for kind in ("random", "greedy", "mcts"):
        if args.weights.get(kind, 0) > 0:
            spec = f"mcts:sims={args.mcts_sims}" if kind == "mcts" else kind  # the pool rebuilds it by name
            pool.add(spec, make_agent(spec, seed=args.seed + len(pool)), args.weights[kind])
    return pool


def evaluate_checkpoint(model: Any, args: argparse.Namespace, name: str, step: int, games: int,
                        eval_rows: list[dict[str, Any]], start: float) -> Path:
    """Save the model as ``checkpoints/NAME``, export its policy next to it (``.npz``), play it
    against random and greedy, append the rows to ``eval_rows`` and rewrite ``eval.csv`` and the
    learning curve. Returns the exported policy's path."""
    from agents.ppo_agent import export_policy

    out: Path = args.out
    save_model(model, out / "checkpoints" / name)
    path = export_policy(model.policy, (out / "checkpoints" / name).with_suffix(".npz"), num_players=args.players,
                         env_steps=int(step))
    for opp in ("random", "greedy"):
        r = evaluate(path, opp, args, games, seed=10_000 + step % 997)
        row = {"steps": step, "minutes": (time.time() - start) / 60, "opponent": opp, **r}
        eval_rows.append(row)
        model.logger.record(f"eval/win_rate_vs_{opp}", r["win_rate"])
        print(f"[{row['minutes']:5.1f} min, {step:>9,} steps] vs {opp}: win {r['win_rate']:.1%} "
              f"[{r['ci_low']:.1%}, {r['ci_high']:.1%}] over {r['games']} games", flush=True)
    write_csv(eval_rows, out / "eval.csv")
    plot_curve(eval_rows, out / "learning_curve.png", args.players)
    return path


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Run the training described by ``args`` (or continue the one in ``args.resume``); returns the
    summary. TrainingError (nothing written) for a run that cannot start or has nothing left to do."""
    import torch

    from agents import tournament as _tournament  # noqa: F401  (loaded now: the evaluations use it later)
    from agents.ppo_agent import export_policy

    from .vec_env import BaliSB3VecEnv, make_policy_opponent

    torch.set_num_threads(args.torch_threads)  # the env steps in this process too
    out: Path = args.out
    saved = load_checkpoint(out / CHECKPOINT, args) if args.resume is not None else None
    progress = _progress(args, saved)
    progress["sessions"] += 1
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    write_text(out / "config.json", json.dumps(config, indent=2))  # a resumed run: its new limits

    pool = _pool(args, saved)
    venv = BaliSB3VecEnv(args.envs, pool, num_players=args.players, oracle=args.oracle, demon=args.demon,
                         seed=args.seed, reward=args.reward,
                         features=None if args.features == "none" else args.features)
    model, ext = make_model(args, venv)
    if saved:
        model = _restore(model, args, venv, saved)
    elif args.init is not None:
        load_actor(model.policy, args.init, args.trainer)
    model.set_logger(make_logger(out))
    self_weight = args.weights.get("self", 0)

    def snapshot(step: int) -> None:
        if self_weight <= 0:
            return
        if sum(n.startswith("self@") for n in pool.names) >= args.pool_size:
            pool.remove_oldest("self@")
        opponent = make_policy_opponent(model.policy, seed=args.seed + step)
        pool.add(f"self@{step}", opponent, self_weight / args.pool_size)

    if not saved:
        snapshot(0)
    eval_rows: list[dict[str, Any]] = progress["eval_rows"]
    due = progress["due"]
    start = time.time() - progress["elapsed"]  # --minutes counts the whole run, earlier sessions included
    t0 = time.time()
    loop_before, eval_before = progress["loop_seconds"], progress["eval_seconds"]
    eval_seconds = [0.0]  # time spent evaluating during learn() in this session

    def checkpoint(in_loop: bool = True) -> None:
        """Save what --resume needs (at every evaluation and when the run stops)."""
        progress.update(steps=int(model.num_timesteps), elapsed=time.time() - start, interrupted=stop["now"],
                        eval_seconds=eval_before + eval_seconds[0])
        if in_loop:
            progress["loop_seconds"] = loop_before + time.time() - t0
        save_checkpoint(out / CHECKPOINT, model, args, pool, venv, progress)

    def run_eval(step: int, games: int, tag: str) -> Path:
        t_eval = time.time()
        try:
            return evaluate_checkpoint(model, args, f"{tag}{ext}", step, games, eval_rows, start)
        finally:
            eval_seconds[0] += time.time() - t_eval

    seen = [0]  # episode returns already logged

    def on_step(steps: int) -> bool:
        """After every env step: snapshots, periodic evaluation, the learner's returns, the time limit."""
        if steps >= due["snapshot"]:
            snapshot(steps)
            due["snapshot"] += args.snapshot_every
        if steps >= due["eval"]:
            run_eval(steps, args.eval_games, f"step_{steps}")
            due["eval"] += args.eval_every
            checkpoint()
        seen[0] = log_returns(model.logger, venv, seen[0])
        bar.advance(steps)
        return not stop["now"] and not (args.minutes > 0 and time.time() - start > args.minutes * 60)

    stop = {"now": False}  # set by SIGTERM/SIGINT: finish the step, then save and evaluate as usual
    bar = _ProgressBar(args, start, int(model.num_timesteps))
    with _stop_on_signals(stop):
        _learn(model, args, on_step)
        bar.close()
        checkpoint()  # first of all: what --resume needs
        if stop["now"]:
            print(f"bali train: interrupted: saved {out / CHECKPOINT} (continue with bali train --resume "
                  f"{out}); now evaluating the model and writing summary.json (interrupt again to quit at once)",
                  file=sys.stderr, flush=True)
    train_seconds = progress["loop_seconds"] - progress["eval_seconds"]
    steps = model.num_timesteps
    final = evaluate_checkpoint(model, args, f"final{ext}", steps, args.final_eval_games, eval_rows, start)
    save_model(model, out / f"final{ext}")
    export_policy(model.policy, out / "final.npz", num_players=args.players, env_steps=int(steps))
    checkpoint(in_loop=False)  # with the final evaluation's rows (a resumed run keeps them in eval.csv)
    summary = {
        "env_steps": steps,
        "wall_seconds": time.time() - start,
        "train_seconds": train_seconds,
        "env_steps_per_s": steps / max(train_seconds, 1e-9),
        "final": [r for r in eval_rows if r["steps"] == steps],
        "model": str(out / f"final{ext}"),
        "policy": str(out / "final.npz"),
        "checkpoint": str(final),
        "interrupted": stop["now"],
        "sessions": progress["sessions"],
    }
    write_text(out / "summary.json", json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))
    return summary


def missing_packages(trainer: str) -> list[str]:
    """The training packages ``trainer`` needs that are not installed."""
    import importlib.util

    needed = ["torch", "stable_baselines3"] + (["sb3_contrib"] if trainer == "sb3" else [])
    return [name for name in needed if importlib.util.find_spec(name) is None]


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``bali train`` / ``python -m training.train``: exit 2 with one line when the
    train extra is missing or a flag is bad (nothing written). ``--framework rllib`` hands the
    other flags to ``training.rllib``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--framework", default="sb3")
    known, rest = pre.parse_known_args(argv)
    if known.framework == "rllib":
        from .rllib import main as rllib_main

        return rllib_main(rest)
    args = parse_args(argv)
    missing = missing_packages(args.trainer)
    if missing:
        print(f"bali train: error: {', '.join(missing)} not installed; install the train extra: "
              "pip install torch==2.13.0 && pip install -e '.[train]'", file=sys.stderr)
        return 2
    try:
        train(args)
    except TrainingError as exc:
        print(f"bali train: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
