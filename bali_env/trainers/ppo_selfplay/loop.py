"""``bali train``'s training run (MaskablePPO or ``--trainer lean``) over the batched env.

``train(args)`` claims the output folder (``bali_env.trainers.options.claim_out``), builds the
opponent pool (``pool.py``), the ``BaliSB3VecEnv`` and the model (``make_model``; a resumed run's
from its checkpoint, ``checkpoints.py``), then runs one ``Session``: PPO learns, and after every
env step ``Session.on_step`` adds self-play snapshots, evaluates and checkpoints on schedule
(``bali_env.trainers.evaluation.evaluate``), logs the learner's returns and checks the limits and
the stop signal.
The run's counters are one ``RunProgress``, saved in every checkpoint. Before training it
evaluates its starting policy (a fresh run) and says its plan; the bar's postfix shows the mean
return of the recent training games and the latest win rates. At the end the model is evaluated
once more (its own bar; ``--final-eval-games 0``: not), saved (``final.zip`` / ``final.pt``),
exported (``final.npz``) and ``summary.json`` written; the last lines say what was written, the
key figures and how to play the policy (``bali_env.trainers.console``). With ``--minutes`` the
final evaluation is part of the budget (``Session``).
"""

from __future__ import annotations

import csv
import json
import os
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from bali_env.files import write_text

from bali_env.trainers.ppo_selfplay.checkpoints import (
    CHECKPOINT,
    load_actor,
    load_checkpoint,
    restore_model,
    save_checkpoint,
    save_model,
)
from bali_env.trainers.evaluation.evaluate import eval_opponents, evaluate_checkpoint
from bali_env.trainers.options import AUTO_POINTS, check_left, claim_out, eval_interval
from bali_env.trainers.ppo_selfplay.pool import add_snapshot, build_pool, log_returns
from bali_env.trainers.ppo_selfplay.run_settings import TrainSettings
from bali_env.trainers.progress import ProgressBar, StopOnSignals, say
from bali_env.trainers.console import Budget, FinalEval, bar_postfix, end_lines, plan_line, short_of_budget, spent

OUT_NAME = "bali"  #: a run without ``--out`` writes to a new folder ``runs/bali-YYYYmmdd-HHMMSS``
COMMAND = "bali train"  #: how the run names itself in what it prints
FINAL_SHARE = 0.25  #: at most this share of ``--minutes`` is kept for the final evaluation
FINAL_SAVES = 2.0  #: seconds kept at the end of ``--minutes`` for the final saves, besides the final evaluation


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


def make_model(args: TrainSettings, venv: Any) -> tuple[Any, str]:
    """The PPO learner of ``args.trainer`` over ``venv`` and the extension its saves use:
    sb3-contrib's ``MaskablePPO`` (``.zip``) or ``bali_env.trainers.ppo_selfplay.lean.LeanPPO`` (``.pt``)."""
    import torch

    net = [int(x) for x in args.net.split(",")]
    activation = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[args.activation]
    if args.trainer == "lean":
        from bali_env.trainers.ppo_selfplay.lean import LeanPPO, PPOSettings

        ppo = PPOSettings(lr=args.lr, n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.epochs,
                          gamma=args.gamma, ent_coef=args.ent_coef)
        return LeanPPO(venv, ppo, net=net, activation=activation, seed=args.seed,
                       privileged_critic=args.privileged_critic, critic_warmup=args.critic_warmup), ".pt"
    from sb3_contrib import MaskablePPO

    model = MaskablePPO("MlpPolicy", venv, learning_rate=args.lr, n_steps=args.n_steps, batch_size=args.batch_size,
                        n_epochs=args.epochs, gamma=args.gamma, ent_coef=args.ent_coef, seed=args.seed, device="cpu",
                        verbose=0, policy_kwargs={"net_arch": net, "activation_fn": activation})
    model.set_logger(quiet_logger())  # until the run's own (make_logger): SB3's default makes a folder in /tmp
    return model, ".zip"


def quiet_logger() -> Any:
    """An SB3 logger that writes nowhere. A model that learns without a logger of its own gets
    SB3's default, which creates an empty folder ``SB3-<date-time>`` in the temporary directory
    on every ``learn``; the models this package builds carry this one until a run gives them its
    own (``make_logger``)."""
    from stable_baselines3.common.logger import Logger

    return Logger(folder=None, output_formats=[])


def learn(model: Any, args: TrainSettings, on_step: Any) -> None:
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
    eval_rate: float = 0.0  #: seconds per game of the latest evaluation (0: none yet): the final one's estimate

    @classmethod
    def fresh(cls, args: TrainSettings) -> RunProgress:
        """The counters of a new run: the first snapshot and evaluation due after their intervals."""
        return cls(due={"snapshot": args.snapshot_every, "eval": eval_interval(args),
                        "eval_seconds": 60 * getattr(args, "eval_minutes", 0.0)})

    @classmethod
    def from_dict(cls, saved: dict[str, Any]) -> RunProgress:
        """The counters a checkpoint saved (``as_dict``; a field added since takes its default)."""
        return cls(**{f.name: saved[f.name] for f in fields(cls) if f.name in saved})

    def as_dict(self) -> dict[str, Any]:
        """The counters as the checkpoint saves them."""
        return asdict(self)


class Session:
    """One session of a run (a run resumed twice has three): the model, its env and pool, the
    run's ``RunProgress``, and this session's clocks, stop flag and count of logged returns.

    With ``--minutes`` the budget is the whole run's, the final evaluation included: training
    stops when the time left is what the final evaluation is estimated to take (``reserve``:
    seconds per game of the latest evaluation, times its games: an overestimate when the final
    one is larger, whose games cost less each). A fresh run therefore evaluates its starting
    policy first (the learning curve's first point, and the first timing)."""

    def __init__(self, args: TrainSettings, model: Any, venv: Any, pool: Any, progress: RunProgress,
                 ext: str, begun: float | None = None) -> None:
        self.args, self.model, self.venv, self.pool, self.progress, self.ext = args, model, venv, pool, progress, ext
        self.out: Path = args.out
        # --minutes counts the whole run from when this session began (``begun``: before the model
        # was built), earlier sessions included
        self.start = (time.time() if begun is None else begun) - progress.elapsed
        self.t0 = time.time()
        self.loop_before, self.eval_before = progress.loop_seconds, progress.eval_seconds
        self.eval_seconds = 0.0  #: time spent evaluating during learn() in this session
        self.seen = 0  #: episode returns already logged
        self.stop = StopOnSignals()  #: set by SIGTERM/SIGINT: finish the step, then save and evaluate as usual
        self.bar: ProgressBar | None = None
        self.every = 0.0  #: seconds between evaluations by the clock (0: none; ``clock_schedule``)

    def checkpoint(self, in_loop: bool = True) -> None:
        """Save what --resume needs (at every evaluation and when the run stops)."""
        p = self.progress
        p.steps, p.elapsed, p.interrupted = int(self.model.num_timesteps), time.time() - self.start, self.stop.now
        p.eval_seconds = self.eval_before + self.eval_seconds
        if in_loop:
            p.loop_seconds = self.loop_before + time.time() - self.t0
        save_checkpoint(self.out / CHECKPOINT, self.model, self.args, self.pool, self.venv, p.as_dict())

    def evaluate(self, step: int, games: int, tag: str, label: str) -> Path:
        """Save, export and evaluate the model as ``checkpoints/TAG`` (a bar named ``label``);
        returns the export's path."""
        t_eval = time.time()
        try:
            path, rate = evaluate_checkpoint(self.model, self.args, f"{tag}{self.ext}", step, games,
                                             self.progress.eval_rows, self.start, label)
            if rate > 0:
                self.progress.eval_rate = rate
            return path
        finally:
            self.eval_seconds += time.time() - t_eval

    def final_seconds(self) -> float:
        """The final evaluation's estimated seconds (from the latest evaluation's speed; a larger
        evaluation plays its games in larger batches, so this errs on the long side)."""
        return self.progress.eval_rate * self.args.final_eval_games * len(eval_opponents(self.args))

    def reserve(self) -> float:
        """Seconds of ``--minutes`` kept at the end for the final evaluation and the last saves; at
        most a quarter of it: training always gets the rest (the plan says when the run will then
        take longer)."""
        if not self.args.minutes > 0 or not self.args.final_eval_games:
            return 0.0
        return min(self.final_seconds() + FINAL_SAVES, self.args.minutes * 60 * FINAL_SHARE)

    def train_until(self) -> float:
        """Seconds after the run's start at which training stops (``--minutes``; inf without)."""
        return self.args.minutes * 60 - self.reserve() if self.args.minutes > 0 else float("inf")

    def bar_total(self) -> float:
        """The training bar's total under ``--minutes``: the seconds after the run's start at which
        training stops (``train_until``; now, when that moment has passed). The plan says it too."""
        return max(self.train_until(), time.time() - self.start)

    def first_evaluation(self) -> bool:
        """Whether to evaluate before training: a fresh run that evaluates at all (its curve's first
        point), or one with a final evaluation to fit into ``--minutes`` and no timing yet."""
        args, p = self.args, self.progress
        timing = args.minutes > 0 and args.final_eval_games > 0 and not p.eval_rate
        on_the_way = eval_interval(args) < float("inf") or self.every > 0 or args.final_eval_games > 0
        return timing or (on_the_way and p.steps == 0 and not p.eval_rows)

    def clock_schedule(self) -> None:
        """Evaluations by the clock: every ``--eval-minutes``, or without ``--eval-every`` under
        ``--minutes`` every fifth of the training time left (the first due then), or less often
        when an evaluation takes more than a quarter of that."""
        args = self.args
        if getattr(args, "eval_minutes", 0.0) > 0:
            self.every = 60 * args.eval_minutes
        elif args.eval_every is None and args.minutes > 0:
            elapsed = time.time() - self.start
            # at most a fifth of the training time goes to these evaluations (a busy machine, a short run)
            takes = self.progress.eval_rate * args.eval_games * len(eval_opponents(args))
            self.every = max(max(self.train_until() - elapsed, 0.0) / AUTO_POINTS, 4 * takes)
            self.progress.due["eval_seconds"] = elapsed + self.every

    def describe(self) -> str:
        """The bar's postfix: steps, the learner's recent mean return, the latest win rates."""
        return bar_postfix(int(self.model.num_timesteps), self.venv.episode_returns, self.progress.eval_rows)

    def on_step(self, steps: int) -> bool:
        """After every env step: snapshots, periodic evaluation, the learner's returns, the time limit."""
        args, due = self.args, self.progress.due
        if steps >= due["snapshot"]:
            add_snapshot(self.pool, self.model.policy, args, steps)
            due["snapshot"] += args.snapshot_every
        elapsed, until = time.time() - self.start, self.train_until()
        if self.stop.now or elapsed > until:
            return False  # the run ends here: the final evaluation follows, none on the way now
        on_time = self.every > 0 and elapsed >= due.get("eval_seconds", self.every)
        # an evaluation that would not end before training does (or at its last steps) is left to the final one
        fits = elapsed + self.progress.eval_rate * args.eval_games * len(eval_opponents(args)) < until \
            and steps < args.steps
        if (steps >= due["eval"] or on_time) and fits:
            self.evaluate(steps, args.eval_games, f"step_{steps}", f"evaluating at {steps:,} steps")
            while steps >= due["eval"]:
                due["eval"] += eval_interval(args)
            if self.every > 0:
                due["eval_seconds"] = time.time() - self.start + self.every
            self.checkpoint()
            until = self.train_until()
            if self.bar is not None:
                self.bar.set_total(until)
        self.seen = log_returns(self.model.logger, self.venv, self.seen)
        if self.bar is not None:
            self.bar.advance(steps, self.describe)
        return not self.stop.now and time.time() - self.start <= until

    def announce(self) -> None:
        """Say the plan before training (stderr): the budget, the evaluations, the final one."""
        args = self.args
        final = self.final_seconds() if self.progress.eval_rate else None
        elapsed = time.time() - self.start
        left = max(self.train_until() - elapsed, 0.0)
        budget = Budget(args.minutes, args.steps, left, self.bar_total() if args.minutes > 0 else None)
        say(f"{COMMAND}: " + plan_line(budget, FinalEval(args.final_eval_games, eval_opponents(args), final),
                                       eval_seconds=self.every, eval_steps=eval_interval(args)), err=True)
        warning = short_of_budget(args.minutes, final or 0.0) or spent(args.minutes, elapsed, left)
        if warning:
            say(f"{COMMAND}: {warning}", err=True)

    def run(self) -> dict[str, Any]:
        """Train until ``--steps``, ``--minutes`` or a stop signal, then evaluate, save and export
        the final model and write ``summary.json``; returns the summary."""
        from bali_env.bots.ppo import export_policy

        args, model, out, progress = self.args, self.model, self.out, self.progress
        with self.stop:
            self.clock_schedule()
            if self.first_evaluation():
                steps = int(model.num_timesteps)
                self.evaluate(steps, args.eval_games, f"step_{steps}", "evaluating the starting policy")
                self.clock_schedule()  # a fifth of the training time left now
            self.announce()
            self.bar = ProgressBar(args, self.start, int(model.num_timesteps),
                                   total=self.bar_total() if args.minutes > 0 else None)
            if not self.stop.now:
                learn(model, args, self.on_step)
            self.bar.close()
            self.checkpoint()  # first of all: what --resume needs
            if self.stop.now:
                say(f"{COMMAND}: interrupted: saved {out / CHECKPOINT} (continue with bali train --resume "
                    f"{out}); now evaluating the model and writing summary.json (interrupt again to quit at once)",
                    err=True)
        train_seconds = progress.loop_seconds - progress.eval_seconds
        steps = model.num_timesteps
        before, t_final = len(progress.eval_rows), time.time()
        final, _ = evaluate_checkpoint(model, args, f"final{self.ext}", steps, args.final_eval_games,
                                       progress.eval_rows, self.start, "final evaluation")
        final_seconds = time.time() - t_final
        save_model(model, out / f"final{self.ext}")
        export_policy(model.policy, out / "final.npz", num_players=args.players, env_steps=int(steps))
        self.checkpoint(in_loop=False)  # with the final evaluation's rows (a resumed run keeps them in eval.csv)
        summary = {
            "env_steps": steps,
            "wall_seconds": time.time() - self.start,
            "train_seconds": train_seconds,
            "env_steps_per_s": steps / max(train_seconds, 1e-9),
            "final": progress.eval_rows[before:],
            "final_eval_seconds": final_seconds,
            "model": str(out / f"final{self.ext}"),
            "policy": str(out / "final.npz"),
            "checkpoint": str(final),
            "interrupted": self.stop.now,
            "sessions": progress.sessions,
        }
        write_text(out / "summary.json", json.dumps(summary, indent=2))
        for line in end_lines(summary, out, players=args.players, returns=self.venv.episode_returns,
                              files=("final.npz", f"final{self.ext}", "learning_curve.png", "eval.csv", "summary.json",
                                     "progress.csv", "checkpoints/", "tb/"),
                              resume=f"bali train --resume {out}"):
            say(line)
        return summary


def train(args: TrainSettings) -> dict[str, Any]:
    """Run the training described by ``args`` (or continue the one in ``args.resume``); returns the
    summary. TrainingError (nothing written) for a run that cannot start (its folder taken) or has
    nothing left to do. ``--minutes`` counts from here (the packages' import and the model's
    building included)."""
    begun = time.time()
    import torch

    from bali_env import arena as _tournament  # noqa: F401  (loaded now: the evaluations use it later)

    from bali_env.versus.sb3_vecenv import BaliSB3VecEnv

    torch.set_num_threads(args.torch_threads)  # the env steps in this process too
    saved = load_checkpoint(args.out / CHECKPOINT, args) if args.resume is not None else None
    if saved is None:
        progress = RunProgress.fresh(args)
    else:
        progress = RunProgress.from_dict(saved["progress"])
        check_left(args, progress.steps, progress.elapsed)
    args = args.with_out(claim_out(args, OUT_NAME))  # config.json: a new run's, or a resumed run's new limits
    out: Path = args.out
    progress.sessions += 1
    (out / "checkpoints").mkdir(exist_ok=True)
    pool = build_pool(args, saved)
    venv = BaliSB3VecEnv(args.envs, pool, **args.game.as_dict(), seed=args.seed, reward=args.reward,
                         features=None if args.features == "none" else args.features)
    model, ext = make_model(args, venv)
    if saved:
        model = restore_model(model, args, venv, saved)
    elif args.init is not None:
        load_actor(model.policy, args.init, args.trainer)
    model.set_logger(make_logger(out))
    if not saved:
        add_snapshot(pool, model.policy, args, 0)
    return Session(args, model, venv, pool, progress, ext, begun).run()
