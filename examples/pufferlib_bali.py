"""PufferLib's own trainer (PuffeRL) on Bali: 2-player games against random opponents on the CPU,
then the trained masked policy against random, with a 95% Wilson interval.

    pip install torch==2.13.0 && pip install -e ".[pufferlib]"
    python examples/pufferlib_bali.py --steps 500000 --games 1000

The environment is ``bali_env.versus.puffer_env.BaliPufferEnv``, a native ``pufferlib.PufferEnv``
(``--envs`` games on the batched engine, the learner's seat against random opponents inside the
batch, the action mask at the end of each observation), vectorised by ``pufferlib.vector.make``;
the policy is ``BaliPufferPolicy`` (illegal actions' logits masked); the trainer is
``pufferlib.pufferl.PuffeRL``, its evaluate/train loop as ``pufferl.train`` runs it, configured
by ``puffer_config`` (Adam, no ``torch.compile``, ``bali train``'s PPO sizes). On a CPU-only
PyTorch, PufferLib's compiled advantage kernel does not load: ``load_pufferl`` stands in for it
(the module docstring of ``bali_env.versus.puffer_env`` says what and why).

The evaluation plays ``--games`` games, one per slot (the learner's seat alternating), with the
policy's most likely legal action, before and after training; a shared win counts as a share.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from typing import Any

import numpy as np
import pufferlib
import pufferlib.vector
import torch

from bali_env.arena.stats import wilson_interval
from bali_env.versus.puffer_env import BaliPufferEnv, BaliPufferPolicy, make_trainer, puffer_config

HORIZON = 64  #: steps of each game per rollout (PuffeRL's bptt_horizon)


def train(steps: int, envs: int = 256, seed: int = 0, dashboard: bool = False,
          policy: BaliPufferPolicy | None = None) -> tuple[BaliPufferPolicy, dict[str, Any]]:
    """PuffeRL for (at least) ``steps`` learner steps on ``envs`` games against random; the policy
    and what the run measured (steps, seconds, steps per second, the last training win rate)."""
    torch.manual_seed(seed)
    vecenv = pufferlib.vector.make(BaliPufferEnv, env_kwargs={"num_envs": envs, "opponents": "random", "seed": seed},
                                   backend=pufferlib.PufferEnv)
    policy = BaliPufferPolicy(vecenv) if policy is None else policy
    with tempfile.TemporaryDirectory() as tmp:  # PuffeRL's checkpoints
        config = puffer_config(total_timesteps=steps, seed=seed, data_dir=tmp,
                               minibatch_size=min(2048, envs * HORIZON), max_minibatch_size=min(2048, envs * HORIZON))
        trainer = make_trainer(config, vecenv, policy, dashboard=dashboard)
        start, last_print, win = time.perf_counter(), 0.0, float("nan")
        while trainer.global_step < steps:
            trainer.evaluate()
            logs = trainer.train()
            win = (logs or {}).get("environment/win", win)
            if not dashboard and time.perf_counter() - last_print > 10:
                last_print = time.perf_counter()
                print(f"  {trainer.global_step:,} steps, {trainer.global_step / (last_print - start):,.0f} steps/s, "
                      f"training win rate {100 * win:.1f}%", flush=True)
        seconds = time.perf_counter() - start
        done = trainer.global_step
        trainer.close()
    return policy, {"steps": int(done), "seconds": round(seconds, 1), "steps_per_s": round(done / seconds),
                    "training_win_rate": round(float(win), 3)}


def evaluate(policy: BaliPufferPolicy, games: int, seed: int = 12345, opponents: str = "random") -> float:
    """The policy's wins (a shared win: its share) in ``games`` games against ``opponents``, one
    game per slot of a ``BaliPufferEnv`` (the learner's seat alternating with the slot)."""
    env = BaliPufferEnv(games, opponents=opponents, seed=seed)
    obs, _ = env.reset()
    finished, wins = np.zeros(games, dtype=bool), np.zeros(games)
    while not finished.all():
        obs, _, terminated, _, infos = env.step(policy.act(obs).astype(np.int64))
        ended = np.flatnonzero(terminated)
        if ended.size:
            first = ~finished[ended]  # a slot's later games are not counted
            wins[ended[first]] = np.asarray(infos[0]["win"])[first]
            finished[ended] = True
    env.close()
    return float(wins.sum())


def rate(wins: float, games: int) -> dict[str, Any]:
    """A win rate against random and its 95% Wilson interval."""
    lo, hi = wilson_interval(wins, games)
    return {"against": "random", "wins": wins, "games": games, "win_rate": round(wins / games, 4),
            "interval": [round(lo, 4), round(hi, 4)]}


def shown(r: dict[str, Any]) -> str:
    """``61.2% [58.1, 64.2] of 1,000 games``, from the wins and games."""
    lo, hi = wilson_interval(r["wins"], r["games"])
    return f"{100 * r['wins'] / r['games']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] of {r['games']:,} games"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Train, evaluate before and after, print, and write ``--out`` (JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=500_000, help="learner env steps of training (default 500000)")
    parser.add_argument("--games", type=int, default=1000, help="evaluation games against random (default 1000)")
    parser.add_argument("--envs", type=int, default=256, help="games stepped together in training (default 256)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the deals, the opponents and torch (default 0)")
    parser.add_argument("--threads", type=int, default=1,
                        help="PyTorch threads (default 1: the env steps between the updates)")
    parser.add_argument("--dashboard", action="store_true", help="show PuffeRL's own full-screen dashboard")
    parser.add_argument("--out", default=None, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.games < 1 or args.envs < 32 or args.threads < 1:
        parser.error("--steps, --games and --threads must be positive, --envs at least 32 (a 2048-step minibatch)")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    policy = BaliPufferPolicy(hidden=(128, 128))
    before = rate(evaluate(policy, args.games), args.games)
    print(f"untrained policy against random: {shown(before)}", flush=True)
    policy, run = train(args.steps, args.envs, args.seed, args.dashboard, policy)
    print(f"PuffeRL: {run['steps']:,} steps in {run['seconds']:.0f} s ({run['steps_per_s']:,} steps/s)", flush=True)
    start = time.perf_counter()
    after = rate(evaluate(policy, args.games), args.games)
    after["seconds"] = round(time.perf_counter() - start, 1)
    print(f"trained policy against random: {shown(after)}")
    command = "python examples/pufferlib_bali.py " + " ".join(
        f"--{k} {getattr(args, k)}" for k in ("steps", "games", "envs", "seed", "threads"))
    result = {"command": command, "players": 2, "pufferlib": pufferlib.__version__, "torch": torch.__version__,
              "training": run, "runs": {"untrained": before, "PuffeRL": after}}
    if args.out:
        from bali_env.files import write_text

        write_text(args.out, json.dumps(result, indent=2) + "\n")
    return result


if __name__ == "__main__":
    main()
