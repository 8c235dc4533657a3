"""``bali train``'s training run (MaskablePPO or ``--trainer lean``) over the batched env.

``train(args)`` claims the output folder (``bali_env.training.options.claim_out``), builds the opponent
pool (``bali_env.training.pool``), the ``BaliSB3VecEnv`` and the model (``make_model``; a resumed run's from
its checkpoint, ``bali_env.training.checkpoints``), then runs one ``Session``: PPO learns, and after every
env step ``Session.on_step`` adds self-play snapshots, evaluates and checkpoints on schedule
(``bali_env.training.evaluate``), logs the learner's returns and checks the limits and the stop signal.
The run's counters are one ``RunProgress``, saved in every checkpoint. At the end the model is
evaluated once more, saved (``final.zip`` / ``final.pt``), exported (``final.npz``) and
``summary.json`` written.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from bali_env.files import write_text

from .checkpoints import CHECKPOINT, load_actor, load_checkpoint, restore_model, save_checkpoint, save_model
from .evaluate import evaluate_checkpoint
from .options import check_left, claim_out
from .pool import add_snapshot, build_pool, log_returns
from .progress import ProgressBar, StopOnSignals

OUT_NAME = "bali"  #: a run without ``--out`` writes to a new folder ``runs/bali-YYYYmmdd-HHMMSS``
COMMAND = "bali train"  #: how the run names itself in what it prints


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
    sb3-contrib's ``MaskablePPO`` (``.zip``) or ``bali_env.training.lean.LeanPPO`` (``.pt``)."""
    import torch

    net = [int(x) for x in args.net.split(",")]
    activation = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[args.activation]
    if args.trainer == "lean":
        from .lean import LeanPPO

        return LeanPPO(venv, lr=args.lr, n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.epochs,
                       gamma=args.gamma, ent_coef=args.ent_coef, net=net, activation=activation,
                       seed=args.seed, privileged_critic=args.privileged_critic,
                       critic_warmup=args.critic_warmup), ".pt"
    from sb3_contrib import MaskablePPO

    return MaskablePPO("MlpPolicy", venv, learning_rate=args.lr, n_steps=args.n_steps, batch_size=args.batch_size,
                       n_epochs=args.epochs, gamma=args.gamma, ent_coef=args.ent_coef, seed=args.seed, device="cpu",
                       verbose=0, policy_kwargs={"net_arch": net, "activation_fn": activation}), ".zip"


def learn(model: Any, args: argparse.Namespace, on_step: Any) -> None:
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


@dataclass
class RunProgress:
    """The counters of a run over all its sessions, saved in its checkpoint (as a dict, the
    checkpoint's ``progress``) and continued by ``--resume``."""

    due: dict[str, float]  #: env steps of the next self-play ``snapshot`` and the next ``eval``
    eval_rows: list[dict[str, Any]] = field(default_factory=list)  #: every evaluation (eval.csv)
    steps: int = 0  #: the learner's env steps
    elapsed: float = 0.0  #: wall seconds of the run, every session's
    loop_seconds: float = 0.0  #: seconds in the training loop (evaluations during it included)
    eval_seconds: float = 0.0  #: seconds of the evaluations during the training loop
    sessions: int = 0  #: sessions run, this one included
    interrupted: bool = False  #: whether the last session was stopped by a signal

    @classmethod
    def fresh(cls, args: argparse.Namespace) -> RunProgress:
        """The counters of a new run: the first snapshot and evaluation due after their intervals."""
        return cls(due={"snapshot": args.snapshot_every, "eval": args.eval_every,
                        "eval_seconds": 60 * getattr(args, "eval_minutes", 0.0)})

    @classmethod
    def from_dict(cls, saved: dict[str, Any]) -> RunProgress:
        """The counters a checkpoint saved (``as_dict``)."""
        return cls(**{f.name: saved[f.name] for f in fields(cls)})

    def as_dict(self) -> dict[str, Any]:
        """The counters as the checkpoint saves them."""
        return asdict(self)


class Session:
    """One session of a run (a run resumed twice has three): the model, its env and pool, the
    run's ``RunProgress``, and this session's clocks, stop flag and count of logged returns."""

    def __init__(self, args: argparse.Namespace, model: Any, venv: Any, pool: Any, progress: RunProgress,
                 ext: str) -> None:
        self.args, self.model, self.venv, self.pool, self.progress, self.ext = args, model, venv, pool, progress, ext
        self.out: Path = args.out
        self.start = time.time() - progress.elapsed  # --minutes counts the whole run, earlier sessions included
        self.t0 = time.time()
        self.loop_before, self.eval_before = progress.loop_seconds, progress.eval_seconds
        self.eval_seconds = 0.0  #: time spent evaluating during learn() in this session
        self.seen = 0  #: episode returns already logged
        self.stop = StopOnSignals()  #: set by SIGTERM/SIGINT: finish the step, then save and evaluate as usual
        self.bar: ProgressBar | None = None

    def checkpoint(self, in_loop: bool = True) -> None:
        """Save what --resume needs (at every evaluation and when the run stops)."""
        p = self.progress
        p.steps, p.elapsed, p.interrupted = int(self.model.num_timesteps), time.time() - self.start, self.stop.now
        p.eval_seconds = self.eval_before + self.eval_seconds
        if in_loop:
            p.loop_seconds = self.loop_before + time.time() - self.t0
        save_checkpoint(self.out / CHECKPOINT, self.model, self.args, self.pool, self.venv, p.as_dict())

    def evaluate(self, step: int, games: int, tag: str) -> Path:
        """Save, export and evaluate the model as ``checkpoints/TAG``; returns the export's path."""
        t_eval = time.time()
        try:
            return evaluate_checkpoint(self.model, self.args, f"{tag}{self.ext}", step, games, self.progress.eval_rows,
                                       self.start)
        finally:
            self.eval_seconds += time.time() - t_eval

    def on_step(self, steps: int) -> bool:
        """After every env step: snapshots, periodic evaluation, the learner's returns, the time limit."""
        args, due = self.args, self.progress.due
        if steps >= due["snapshot"]:
            add_snapshot(self.pool, self.model.policy, args, steps)
            due["snapshot"] += args.snapshot_every
        every = 60 * getattr(args, "eval_minutes", 0.0)  # --eval-minutes: also on the clock
        on_time = every > 0 and time.time() - self.start >= due.get("eval_seconds", every)
        if steps >= due["eval"] or on_time:
            self.evaluate(steps, args.eval_games, f"step_{steps}")
            if steps >= due["eval"]:
                due["eval"] += args.eval_every
            if every > 0:
                due["eval_seconds"] = time.time() - self.start + every
            self.checkpoint()
        self.seen = log_returns(self.model.logger, self.venv, self.seen)
        if self.bar is not None:
            self.bar.advance(steps)
        return not self.stop.now and not (args.minutes > 0 and time.time() - self.start > args.minutes * 60)

    def run(self) -> dict[str, Any]:
        """Train until ``--steps``, ``--minutes`` or a stop signal, then evaluate, save and export
        the final model and write ``summary.json``; returns the summary."""
        from bali_env.agents.ppo import export_policy

        args, model, out, progress = self.args, self.model, self.out, self.progress
        self.bar = ProgressBar(args, self.start, int(model.num_timesteps))
        with self.stop:
            learn(model, args, self.on_step)
            self.bar.close()
            self.checkpoint()  # first of all: what --resume needs
            if self.stop.now:
                print(f"{COMMAND}: interrupted: saved {out / CHECKPOINT} (continue with bali train --resume "
                      f"{out}); now evaluating the model and writing summary.json (interrupt again to quit at once)",
                      file=sys.stderr, flush=True)
        train_seconds = progress.loop_seconds - progress.eval_seconds
        steps = model.num_timesteps
        final = evaluate_checkpoint(model, args, f"final{self.ext}", steps, args.final_eval_games, progress.eval_rows,
                                    self.start)
        save_model(model, out / f"final{self.ext}")
        export_policy(model.policy, out / "final.npz", num_players=args.players, env_steps=int(steps))
        self.checkpoint(in_loop=False)  # with the final evaluation's rows (a resumed run keeps them in eval.csv)
        summary = {
            "env_steps": steps,
            "wall_seconds": time.time() - self.start,
            "train_seconds": train_seconds,
            "env_steps_per_s": steps / max(train_seconds, 1e-9),
            "final": [r for r in progress.eval_rows if r["steps"] == steps],
            "model": str(out / f"final{self.ext}"),
            "policy": str(out / "final.npz"),
            "checkpoint": str(final),
            "interrupted": self.stop.now,
            "sessions": progress.sessions,
        }
        write_text(out / "summary.json", json.dumps(summary, indent=2))
        print(json.dumps(summary, indent=2))
        return summary


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Run the training described by ``args`` (or continue the one in ``args.resume``); returns the
    summary. TrainingError (nothing written) for a run that cannot start (its folder taken) or has
    nothing left to do."""
    import torch

    from bali_env import arena as _tournament  # noqa: F401  (loaded now: the evaluations use it later)

    from bali_env.versus.sb3 import BaliSB3VecEnv

    torch.set_num_threads(args.torch_threads)  # the env steps in this process too
    saved = load_checkpoint(args.out / CHECKPOINT, args) if args.resume is not None else None
    if saved is None:
        progress = RunProgress.fresh(args)
    else:
        progress = RunProgress.from_dict(saved["progress"])
        check_left(args, progress.steps, progress.elapsed)
    out = claim_out(args, OUT_NAME)  # config.json: a new run's, or a resumed run's new limits
    progress.sessions += 1
    (out / "checkpoints").mkdir(exist_ok=True)
    pool = build_pool(args, saved)
    venv = BaliSB3VecEnv(args.envs, pool, num_players=args.players, oracle=args.oracle, demon=args.demon,
                         seed=args.seed, reward=args.reward,
                         features=None if args.features == "none" else args.features)
    model, ext = make_model(args, venv)
    if saved:
        model = restore_model(model, args, venv, saved)
    elif args.init is not None:
        load_actor(model.policy, args.init, args.trainer)
    model.set_logger(make_logger(out))
    if not saved:
        add_snapshot(pool, model.policy, args, 0)
    return Session(args, model, venv, pool, progress, ext).run()
