"""``bali_env.trainers.rllib.launch``'s run: Ray (``start_ray``), the training loop (``RllibSession``), the
checkpoint ``--resume`` continues from (``OUT/rllib_checkpoint/``: RLlib's own save of the
algorithm plus ``bali_progress.json``, the run's ``RllibProgress``), and the evaluations and
``summary.json`` (the fields of ``bali train``'s, ``bali_env.trainers.evaluation.evaluate``)."""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from bali_env.files import write_text

from bali_env.trainers.entry import TrainingError
from bali_env.trainers.evaluation.evaluate import EvalRound, evaluate_all, plot_curve, write_csv
from bali_env.trainers.options import check_left, claim_out, eval_interval
from bali_env.trainers.progress import ProgressBar, StopOnSignals, say
from bali_env.trainers.console import bar_postfix, end_lines
from bali_env.trainers.rllib.multiagent_env import MAIN, build_config, module_arrays, take_snapshot

CHECKPOINT = "rllib_checkpoint"  #: the folder ``--resume`` continues from (in the run's folder)
PROGRESS_FILE = "bali_progress.json"  #: the run's counters, in the checkpoint folder
OUT_NAME = "rllib"  #: a run without ``--out`` writes to a new folder ``runs/rllib-YYYYmmdd-HHMMSS``


@dataclass
class RllibProgress:
    """The counters of an RLlib run over all its sessions (``bali_progress.json``)."""

    steps: int = 0  #: decisions of the learning policy ``main``
    decisions: int = 0  #: decisions of every seat, frozen snapshots included
    elapsed: float = 0.0  #: wall seconds of the run, every session's
    train_seconds: float = 0.0  #: seconds in ``algo.train()`` (evaluations excluded)
    snapshots: int = 0  #: snapshots taken (the next overwrites slot ``snapshots % --pool-size``)
    due: dict[str, float] = field(default_factory=dict)  #: env steps of the next ``snapshot`` and ``eval``
    eval_rows: list[dict[str, Any]] = field(default_factory=list)  #: every evaluation (eval.csv)
    sessions: int = 0  #: sessions run, this one included
    iterations: int = 0  #: training iterations (``algo.train()`` calls)

    @classmethod
    def fresh(cls, args: argparse.Namespace) -> RllibProgress:
        """The counters of a new run: the first snapshot and evaluation due after their intervals."""
        return cls(due={"snapshot": args.snapshot_every, "eval": eval_interval(args)})

    @classmethod
    def load(cls, args: argparse.Namespace) -> RllibProgress:
        """The counters of the run in ``args.out`` (TrainingError when unreadable or at its end)."""
        try:
            saved = json.loads((args.out / CHECKPOINT / PROGRESS_FILE).read_text())
            progress = cls(**{f.name: saved[f.name] for f in fields(cls)})
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise TrainingError(f"--resume {str(args.out)!r}: unreadable checkpoint ({exc})") from None
        check_left(args, progress.steps, progress.elapsed)
        return progress


def start_ray(address: str | None, env_runners: int) -> bool:
    """Join the cluster at ``address`` (checked first: TrainingError in seconds when unreachable)
    or start a local Ray instance; True when this call started Ray."""
    import ray

    from bali_env.arena.ray_backend import check_ray, init_ray
    from bali_env.arena import TournamentError

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
    from bali_env.bots.ppo import write_policy

    return write_policy(*module_arrays(algo.get_module(MAIN), args.players, env_steps=int(steps)), path)


def train(args: argparse.Namespace) -> dict[str, Any]:
    """Run the configured RLlib training; writes the outputs (``bali_env.trainers.rllib.launch``'s docstring) and
    returns the summary. TrainingError (nothing written) for a run that cannot start (Ray
    unreachable, its folder taken) or has nothing left."""
    import torch

    progress = RllibProgress.load(args) if args.resume is not None else RllibProgress.fresh(args)
    started = start_ray(args.ray_address, args.env_runners)
    try:
        torch.set_num_threads(1 if args.env_runners else 2)
        algo = build_config(args).build_algo()
        if args.resume is not None:
            algo.restore_from_path(str((args.out / CHECKPOINT).resolve()))
        out = claim_out(args, OUT_NAME)  # config.json: a new run's, or a resumed run's new limits
        (out / "checkpoints").mkdir(exist_ok=True)
        return RllibSession(algo, args, progress).run()
    finally:
        if started:
            import ray

            ray.shutdown()


def save(algo: Any, args: argparse.Namespace, progress: RllibProgress) -> None:
    """Save the algorithm and the counters to ``OUT/rllib_checkpoint`` (a new folder moved into place)."""
    import shutil

    final = args.out / CHECKPOINT
    tmp = args.out / (CHECKPOINT + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    algo.save_to_path(str(tmp.resolve()))
    write_text(tmp / PROGRESS_FILE, json.dumps(asdict(progress), indent=2))
    old = args.out / (CHECKPOINT + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        final.rename(old)
    tmp.rename(final)
    shutil.rmtree(old, ignore_errors=True)


def _counts(result: dict[str, Any]) -> tuple[int, int]:
    """(decisions of ``main``, decisions of every seat) sampled so far, from a training result."""
    runners = result.get("env_runners", {})
    main = runners.get("num_module_steps_sampled_lifetime", {}).get(MAIN, 0)
    return int(main), int(runners.get("num_env_steps_sampled_lifetime", 0))


def _next_due(due: float, steps: int, every: float) -> float:
    """The first multiple of ``every`` past ``due`` beyond ``steps`` (an iteration may skip several)."""
    return due + every * math.ceil((steps - due + 1) / every)


class RllibSession:
    """One session of an RLlib run: the algorithm, the run's ``RllibProgress``, this session's
    clock and stop flag."""

    def __init__(self, algo: Any, args: argparse.Namespace, progress: RllibProgress) -> None:
        self.algo, self.args, self.progress = algo, args, progress
        self.out: Path = args.out
        progress.sessions += 1
        self.start = time.time() - progress.elapsed
        self.stop = StopOnSignals()  #: set by SIGTERM/SIGINT: end the iteration, then save and evaluate as usual

    def evaluate(self, name: str, games: int, label: str) -> None:
        """Export ``main`` as ``OUT/NAME``, play it against random and greedy (none when ``games``
        is 0) under a bar named ``label``, rewrite eval.csv and the curve."""
        args, p = self.args, self.progress
        policy = export(self.algo, self.out / name, args, p.steps)
        if games <= 0:
            return
        evaluation = EvalRound(games, p.steps, label, seeds=lambda i: args.seed + 1000 * i + 7,
                               leave=label.startswith("final"))
        evaluate_all(policy, args, evaluation, self.start, p.eval_rows)
        write_csv(p.eval_rows, self.out / "eval.csv")
        plot_curve(p.eval_rows, self.out / "learning_curve.png", args.players,
                   title=f"RLlib PPO on Bali, {args.players} players")

    def iterate(self) -> None:
        """One training iteration, then the snapshot and the evaluation (with a checkpoint) when due."""
        args, p = self.args, self.progress
        t0 = time.time()
        result = self.algo.train()
        p.train_seconds += time.time() - t0
        p.iterations += 1
        p.steps, p.decisions = _counts(result)
        p.elapsed = time.time() - self.start
        if p.steps >= p.due["snapshot"] and args.pool_size:
            take_snapshot(self.algo, p.snapshots % args.pool_size)
            p.snapshots += 1
            p.due["snapshot"] = _next_due(p.due["snapshot"], p.steps, args.snapshot_every)
        if p.steps >= p.due["eval"] and not self.stop.now:
            self.evaluate(f"checkpoints/step_{p.steps}.npz", args.eval_games, f"evaluating at {p.steps:,} steps")
            p.due["eval"] = _next_due(p.due["eval"], p.steps, eval_interval(args))
            p.elapsed = time.time() - self.start
            save(self.algo, args, p)

    def run(self) -> dict[str, Any]:
        """Train until ``--steps``, ``--minutes`` or a stop signal, then save, evaluate, write
        ``summary.json``; returns the summary."""
        args, p, out = self.args, self.progress, self.out
        bar = ProgressBar(args, self.start, p.steps)
        with self.stop:
            while not self.stop.now:
                if p.steps >= args.steps or (args.minutes > 0 and time.time() - self.start >= args.minutes * 60):
                    break
                self.iterate()
                bar.advance(p.steps, lambda: bar_postfix(p.steps, [], p.eval_rows))
        bar.close()
        if self.stop.now:
            say(f"interrupted: saved {out / CHECKPOINT} (continue with --resume {out}); now evaluating "
                "(interrupt again to quit at once)", err=True)
        p.elapsed = time.time() - self.start
        save(self.algo, args, p)
        self.evaluate("final.npz", args.final_eval_games, "final evaluation")
        summary = {
            "framework": "rllib",
            "env_steps": p.steps,
            "all_decisions": p.decisions,
            "wall_seconds": time.time() - self.start,
            "train_seconds": p.train_seconds,
            "env_steps_per_s": p.steps / max(p.train_seconds, 1e-9),
            "final": [r for r in p.eval_rows if r["steps"] == p.steps][-2:] if args.final_eval_games else [],
            "policy": str(out / "final.npz"),
            "checkpoint": str(out / CHECKPOINT),
            "iterations": p.iterations,
            "interrupted": self.stop.now,
            "sessions": p.sessions,
        }
        save(self.algo, args, p)
        write_text(out / "summary.json", json.dumps(summary, indent=2))
        for line in end_lines(summary, out, players=args.players, returns=[], resume=(
                f"bali train --framework rllib --resume {out}"), files=("final.npz", "learning_curve.png", "eval.csv",
                                                                        "summary.json", CHECKPOINT + "/")):
            say(line)
        return summary
