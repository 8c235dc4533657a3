"""Training throughput: env steps per second during MaskablePPO on the batched-env VecEnv
(``BaliSB3VecEnv``), for ``bali train``'s default configuration next to the previous one (64
games, n-steps 128, minibatch 2048, 4 epochs, 1 torch thread), measured in one run.
``python -m training.throughput [--steps 65536] [--opponents random:1,greedy:3]``.

Opponents come from the same pool as in training (frozen self-play snapshots excluded: they
need a trained policy); PPO updates are included, evaluation is not.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

#: name -> (games, n_steps, minibatch, epochs, torch threads)
CONFIGS: dict[str, tuple[int, int, int, int, int]] = {
    "default": (512, 64, 8192, 2, 2),
    "previous": (64, 128, 2048, 4, 1),
}


def measure(name: str, steps: int, weights: dict[str, float], players: int, seed: int = 0) -> dict[str, Any]:
    """PPO env steps/s of configuration ``name`` (``CONFIGS``) against the opponent mix ``weights``."""
    import torch
    from sb3_contrib import MaskablePPO

    from agents import make_agent

    from .vec_env import BaliSB3VecEnv, OpponentPool

    envs, n_steps, batch, epochs, threads = CONFIGS[name]
    torch.set_num_threads(threads)
    pool = OpponentPool(seed=seed)
    for kind, w in weights.items():
        pool.add(kind, make_agent(kind, seed=seed + len(pool)), w)
    venv = BaliSB3VecEnv(envs, pool, num_players=players, seed=seed)
    model = MaskablePPO("MlpPolicy", venv, n_steps=n_steps, batch_size=batch, n_epochs=epochs, seed=seed,
                        device="cpu", policy_kwargs={"net_arch": [256, 256]})
    model.learn(envs * n_steps)  # warm-up: JIT, first rollout and update
    rollout = envs * n_steps
    todo = max(rollout, steps // rollout * rollout)
    t0 = time.perf_counter()
    model.learn(todo, reset_num_timesteps=False)
    elapsed = time.perf_counter() - t0
    return {"config": name, "envs": envs, "n_steps": n_steps, "batch_size": batch, "epochs": epochs,
            "torch_threads": threads, "opponents": weights, "steps": todo, "env_steps_per_s": todo / elapsed}


def main(argv: list[str] | None = None) -> int:
    """Measure both configurations, print a table and JSON."""
    from .train import _opponent_weights

    p = argparse.ArgumentParser(prog="python -m training.throughput", description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=65536, help="timed env steps per configuration")
    p.add_argument("--opponents", default="random:1,greedy:3", help="opponent mix (random, greedy)")
    p.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    args = p.parse_args(argv)
    if args.steps < 1:
        p.error(f"--steps must be positive, got {args.steps}")
    try:
        weights = _opponent_weights(args.opponents)
    except ValueError as exc:
        p.error(f"--opponents: {exc}")
    if "self" in weights:
        p.error("--opponents: self-play snapshots need a trained policy; use random and greedy here")
    rows = [measure(name, args.steps, weights, args.players) for name in CONFIGS]
    for r in rows:
        print(f"{r['config']:<8} {r['envs']:>4} games, n-steps {r['n_steps']}, minibatch {r['batch_size']}, "
              f"{r['epochs']} epochs, {r['torch_threads']} torch thread(s): "
              f"{r['env_steps_per_s']:,.0f} env steps/s during PPO")
    print(f"ratio default / previous: {rows[0]['env_steps_per_s'] / rows[1]['env_steps_per_s']:.2f}x")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
