"""Train a Bali agent with MaskablePPO (sb3-contrib) on the batched Numba environment.

``python -m training.train --players 2 --minutes 30 --out runs/bali2p`` (or ``bali train ...``).

The learner plays one seat of every game (rotating over the seats); the other seats are
opponents drawn, per game, from a pool: ``random``, ``greedy`` and ``self`` (frozen copies of the
learner's past policies, a new snapshot every ``--snapshot-every`` steps, the oldest dropped past
``--pool-size``). ``--opponents random:1,greedy:3,self:1`` (the default) sets the weights. Every
``--eval-every`` steps the current policy is saved (``checkpoints/``) and evaluated against
random and greedy with the tournament code (``agents.tournament``); the win rates go to
``eval.csv``, TensorBoard (``tb/``) and ``learning_curve.png``. Training metrics go to
``progress.csv`` and TensorBoard. The run ends after ``--steps`` env steps or ``--minutes`` of
wall time, whichever comes first, then saves ``final.zip``, exports the policy as ``final.npz``
(plays without torch: ``make_agent("ppo:path=OUT/final.npz")``), evaluates it once more and
writes ``summary.json`` (``env_steps``, ``wall_seconds``, ``train_seconds`` without the
evaluations, ``env_steps_per_s`` = env_steps / train_seconds, the final evaluation).

Self-play snapshots are frozen NumPy copies of the policy (``agents.ppo_agent``): an opponent
move costs a NumPy forward pass, not a torch call. ``--trainer lean`` swaps MaskablePPO for the
lean PPO of ``training.lean`` (same network, losses and settings; saves ``.pt``); ``python -m
training.curve OUT`` evaluates every exported checkpoint against slower opponents (mcts)
afterwards.

Config (all flags; defaults in brackets): players [2], oracle/demon [off], steps [1e8],
minutes [0 = no limit], envs [512 games in the batched env], opponents [random:1,greedy:3,self:1],
pool-size [6], snapshot-every [100k], eval-every [1e6], eval-games [200], final-eval-games
[1000], eval-workers [1], seed [0], out [runs/bali], trainer [sb3], privileged-critic [off],
lr [3e-4], net [128,128], activation [relu], n-steps [64], batch-size [2048], epochs [2],
gamma [0.997], ent-coef [0.01], reward [win_loss; score: the margin over the others / 10],
torch-threads [2]. ``python -m training.throughput`` measures these defaults against the previous
configuration (64 games, n-steps 128, minibatch 2048, 4 epochs, 1 torch thread, 256x256 tanh)
in one run; the README gives the numbers.
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


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The training configuration from the command line (every flag checked: ``p.error`` names it)."""
    p = _parser()
    args = p.parse_args(argv)
    _validate(p, args)
    return args


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
    p.add_argument("--opponents", default="random:1,greedy:3,self:1", help="opponent kinds with weights")
    p.add_argument("--pool-size", type=int, default=6, help="frozen self-play snapshots kept")
    p.add_argument("--snapshot-every", type=float, default=1e5, help="env steps between self-play snapshots")
    p.add_argument("--eval-every", type=float, default=1e6,
                   help="env steps between checkpoints evaluated against random and greedy")
    p.add_argument("--eval-games", type=int, default=200, help="games per opponent at each evaluation")
    p.add_argument("--final-eval-games", type=int, default=1000, help="games per opponent at the end")
    p.add_argument("--eval-workers", type=int, default=1, help="worker processes of the evaluation tournaments")
    p.add_argument("--seed", type=int, default=0, help="seeds the deals, the opponents and the learner")
    p.add_argument("--out", type=Path, default=Path("runs/bali"), help="output folder")
    p.add_argument("--trainer", default="sb3", choices=("sb3", "lean"),
                   help="sb3-contrib MaskablePPO (default, saves .zip) or the lean PPO of training.lean (.pt)")
    p.add_argument("--privileged-critic", action="store_true",
                   help="lean trainer only: the critic also sees the hidden state (training.privileged); "
                        "the exported policy does not")
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
    return p


def _opponent_weights(text: str) -> dict[str, float]:
    """Parse ``random:1,greedy:3,self:1``; ValueError saying what is wrong."""
    weights: dict[str, float] = {}
    for item in text.split(","):
        kind, _, w = item.strip().partition(":")
        if kind not in ("random", "greedy", "self"):
            raise ValueError(f"unknown opponent kind {kind!r} in {text!r} (random, greedy, self)")
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
                "--n-steps": args.n_steps, "--batch-size": args.batch_size, "--epochs": args.epochs}
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
    try:
        args.weights = _opponent_weights(args.opponents)
    except ValueError as exc:
        p.error(f"--opponents: {exc}")
    out = args.out.resolve()
    probe = next((q for q in (out, *out.parents) if q.exists()), None)
    if probe is None or not probe.is_dir() or not os.access(probe, os.W_OK):
        p.error(f"--out {str(args.out)!r} is not writable ({probe} is not a writable folder)")
    if (out / "config.json").exists():
        p.error(f"--out {str(args.out)!r} already holds a training run (config.json); its logs would be "
                "overwritten: choose another folder or delete it")


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


def plot_curve(rows: list[dict[str, Any]], path: Path, players: int) -> None:
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
    ax.set_title(f"MaskablePPO on Bali, {players} players")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    with replace_when_done(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)


class _ProgressBar:
    """A tqdm bar over the run: env steps, or minutes when ``--minutes`` ends the run first (so
    the ETA is the run's, not that of ``--steps``' 1e8)."""

    def __init__(self, args: argparse.Namespace, start: float) -> None:
        from tqdm.auto import tqdm

        self.by_time = args.minutes > 0
        self.start = start
        total = args.minutes * 60 if self.by_time else int(args.steps)
        self.bar = tqdm(total=total, unit="s" if self.by_time else "step", disable=not args.progress,
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
    """Run ``model.learn`` (either trainer) up to ``--steps``, calling ``on_step(env steps)`` after
    every env step; it returns False to stop."""
    if args.trainer == "lean":
        model.learn(int(args.steps), on_step)
        return
    from stable_baselines3.common.callbacks import BaseCallback

    class Loop(BaseCallback):
        def _on_step(self) -> bool:
            return on_step(self.num_timesteps)

    model.learn(total_timesteps=int(args.steps), callback=Loop(), progress_bar=False)


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


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Run the training described by ``args``; returns the final evaluation."""
    import torch
    from stable_baselines3.common.logger import configure

    from agents import make_agent
    from agents import tournament as _tournament  # noqa: F401  (loaded now: the evaluations use it later)
    from agents.ppo_agent import export_policy

    from .vec_env import BaliSB3VecEnv, OpponentPool, make_policy_opponent

    torch.set_num_threads(args.torch_threads)  # the env steps in this process too
    out: Path = args.out
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    write_text(out / "config.json", json.dumps(config, indent=2))

    pool = OpponentPool(seed=args.seed)
    for kind in ("random", "greedy"):
        if args.weights.get(kind, 0) > 0:
            pool.add(kind, make_agent(kind, seed=args.seed + len(pool)), args.weights[kind])
    venv = BaliSB3VecEnv(args.envs, pool, num_players=args.players, oracle=args.oracle, demon=args.demon,
                         seed=args.seed, reward=args.reward)
    model, ext = make_model(args, venv)
    model.set_logger(configure(str(out), ["csv", "tensorboard"]))
    self_weight = args.weights.get("self", 0)

    def snapshot(step: int) -> None:
        if self_weight <= 0:
            return
        if sum(n.startswith("self@") for n in pool.names) >= args.pool_size:
            pool.remove_oldest("self@")
        opponent = make_policy_opponent(model.policy, seed=args.seed + step)
        pool.add(f"self@{step}", opponent, self_weight / args.pool_size)

    snapshot(0)
    eval_rows: list[dict[str, Any]] = []
    start = time.time()

    eval_seconds = [0.0]  # time spent evaluating during learn(), excluded from train_seconds

    def run_eval(step: int, games: int, tag: str) -> Path:
        t_eval = time.time()
        try:
            return _run_eval(step, games, tag)
        finally:
            eval_seconds[0] += time.time() - t_eval

    def _run_eval(step: int, games: int, tag: str) -> Path:
        save_model(model, out / "checkpoints" / f"{tag}{ext}")
        path = export_policy(model.policy, out / "checkpoints" / f"{tag}.npz", num_players=args.players,
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

    due = {"snapshot": args.snapshot_every, "eval": args.eval_every, "seen": 0}

    def on_step(steps: int) -> bool:
        """After every env step: snapshots, periodic evaluation, the learner's returns, the time limit."""
        if steps >= due["snapshot"]:
            snapshot(steps)
            due["snapshot"] += args.snapshot_every
        if steps >= due["eval"]:
            run_eval(steps, args.eval_games, f"step_{steps}")
            due["eval"] += args.eval_every
        returns = venv.episode_returns[due["seen"]:]
        if returns:
            model.logger.record_mean("train/learner_return", float(np.mean(returns)))
            due["seen"] = len(venv.episode_returns)
        bar.advance(steps)
        return not stop["now"] and not (args.minutes > 0 and time.time() - start > args.minutes * 60)

    stop = {"now": False}  # set by SIGTERM/SIGINT: finish the step, then save and evaluate as usual
    bar = _ProgressBar(args, start)
    t0 = time.time()
    with _stop_on_signals(stop):
        _learn(model, args, on_step)
    bar.close()
    if stop["now"]:
        print("bali train: interrupted: saving the model, evaluating it and writing summary.json "
              "(interrupt again to quit at once)", file=sys.stderr, flush=True)
    wall_seconds = time.time() - t0
    train_seconds = wall_seconds - eval_seconds[0]
    steps = model.num_timesteps
    final = run_eval(steps, args.final_eval_games, "final")
    save_model(model, out / f"final{ext}")
    export_policy(model.policy, out / "final.npz", num_players=args.players, env_steps=int(steps))
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
    train extra is missing or a flag is bad (nothing written)."""
    args = parse_args(argv)
    missing = missing_packages(args.trainer)
    if missing:
        print(f"bali train: error: {', '.join(missing)} not installed; install the train extra: "
              "pip install torch==2.13.0 && pip install -e '.[train]'", file=sys.stderr)
        return 2
    train(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
