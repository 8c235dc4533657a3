"""PufferLib's trainer (PuffeRL on ``bali_env.versus.puffer_env``) against ``bali train`` on the
same env-step budget, in one run: learner env steps per second of each and their ratio.
``python -m benchmarks.puffer_vs_train [--steps 131072] [--envs 256] [--threads 1] [--trainers sb3 lean]``
(the ``pufferlib`` and ``train`` extras).

Both train the same thing the same way: 2-player games against random opponents on the batched
engine, the raw observation (``bali train --features none``), ``--envs`` games of 64 steps per
rollout, minibatches of 2048, 2 epochs, an actor and a critic of 128x128 ReLU, Adam at 3e-4, the
same PyTorch threads. ``bali train`` runs as its own process (``--eval-every 0
--final-eval-games 0``) and its ``summary.json`` gives ``env_steps_per_s`` (its training loop's
seconds, evaluations left out); PuffeRL runs here and is timed over its evaluate/train loop.
Rollouts are whole, so each runs the budget rounded up to ``envs * 64`` steps.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HORIZON = 64  #: steps of each game per rollout, both trainers


def puffer_rate(steps: int, envs: int, threads: int, seed: int = 0) -> dict[str, Any]:
    """PuffeRL's learner env steps per second over ``steps`` (its evaluate/train loop)."""
    import pufferlib
    import pufferlib.vector
    import torch

    from bali_env.versus.puffer_env import BaliPufferEnv, BaliPufferPolicy, make_trainer, puffer_config

    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    vecenv = pufferlib.vector.make(BaliPufferEnv, env_kwargs={"num_envs": envs, "opponents": "random", "seed": seed},
                                   backend=pufferlib.PufferEnv)
    minibatch = min(2048, envs * HORIZON)
    with tempfile.TemporaryDirectory() as tmp:
        trainer = make_trainer(puffer_config(total_timesteps=steps, seed=seed, data_dir=tmp, minibatch_size=minibatch,
                                             max_minibatch_size=minibatch), vecenv, BaliPufferPolicy(vecenv))
        start = time.perf_counter()
        while trainer.global_step < steps:
            trainer.evaluate()
            trainer.train()
        seconds = time.perf_counter() - start
        done = trainer.global_step
        trainer.close()
    return {"steps": int(done), "seconds": round(seconds, 2), "steps_per_s": done / seconds}


def bali_train_rate(steps: int, envs: int, threads: int, trainer: str = "sb3", seed: int = 0) -> dict[str, Any]:
    """``bali train --trainer TRAINER``'s env steps per second (its ``summary.json``), the same
    settings as PuffeRL's."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        argv = [sys.executable, "-m", "bali_env.apps.cli", "train", "--players", "2", "--opponents", "random",
                "--features", "none", "--envs", str(envs), "--steps", str(steps), "--n-steps", str(HORIZON),
                "--batch-size", str(min(2048, envs * HORIZON)), "--epochs", "2", "--net", "128,128",
                "--activation", "relu", "--lr", "3e-4", "--torch-threads", str(threads), "--trainer", trainer,
                "--eval-every", "0", "--final-eval-games", "0", "--no-progress", "--seed", str(seed),
                "--out", str(out)]
        run = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
        if run.returncode != 0:
            raise RuntimeError(f"bali train failed ({run.returncode}): {run.stderr[-2000:]}")
        summary = json.loads((out / "summary.json").read_text())
    return {"steps": summary["env_steps"], "seconds": round(summary["train_seconds"], 2),
            "steps_per_s": summary["env_steps_per_s"]}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Measure PuffeRL and each ``bali train`` trainer in one run; print them and the ratios."""
    from bali_env import flags

    parser = argparse.ArgumentParser(prog="python -m benchmarks.puffer_vs_train", description=__doc__.splitlines()[0],
                                     parents=[flags.seed(0, "the games and the learners"),
                                              flags.out("also write the results as JSON here (a file)")])
    parser.add_argument("--steps", type=int, default=131072, help="learner env steps of each (default 131072)")
    parser.add_argument("--envs", type=int, default=256, help="games stepped together (default 256)")
    parser.add_argument("--threads", type=int, default=1, help="PyTorch threads of each (default 1)")
    parser.add_argument("--trainers", nargs="+", choices=("sb3", "lean"), default=["sb3", "lean"],
                        help="bali train's trainers to run (default: sb3 lean)")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.envs < 32 or args.threads < 1:
        parser.error("--steps and --threads must be positive, --envs at least 32 (a 2048-step minibatch)")
    runs = {"pufferl": puffer_rate(args.steps, args.envs, args.threads, args.seed)}
    for trainer in args.trainers:
        runs[f"bali train --trainer {trainer}"] = bali_train_rate(args.steps, args.envs, args.threads, trainer,
                                                                  args.seed)
    puffer = runs["pufferl"]["steps_per_s"]
    for name, r in runs.items():
        ratio = "" if name == "pufferl" else f"  (PuffeRL / this: {puffer / r['steps_per_s']:.2f}x)"
        print(f"{name}: {r['steps']:,} steps in {r['seconds']:.1f} s, {r['steps_per_s']:,.0f} steps/s{ratio}")
    result = {"command": "python -m benchmarks.puffer_vs_train " + " ".join(
        f"--{k} {getattr(args, k)}" for k in ("steps", "envs", "threads", "seed")) + " --trainers "
        + " ".join(args.trainers), "runs": runs}
    if args.out:
        from benchmarks import write_result

        write_result(result, Path(args.out))
    return result


if __name__ == "__main__":
    main()
