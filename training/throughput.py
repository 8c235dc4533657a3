"""Training throughput: env steps per second during MaskablePPO on the batched-env VecEnv
(``BaliSB3VecEnv``) next to the same setup on a plain SB3 ``DummyVecEnv`` of one
``BaliSingleAgentEnv`` object per game. ``python -m training.throughput [--steps 32768]``."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any


def measure(kind: str, steps: int, envs: int, opponent: str, players: int, seed: int = 0) -> dict[str, Any]:
    """PPO env steps/s with ``kind`` = "batched" or "dummy" (same PPO settings for both)."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from agents import make_agent
    from bali_env.single import BaliSingleAgentEnv

    from .vec_env import BaliSB3VecEnv, OpponentPool

    torch.set_num_threads(1)
    if kind == "batched":
        pool = OpponentPool(seed=seed)
        pool.add(opponent, make_agent(opponent, seed=seed))
        venv = BaliSB3VecEnv(envs, pool, num_players=players, seed=seed)
    else:
        venv = DummyVecEnv([lambda i=i: BaliSingleAgentEnv(make_agent(opponent, seed=seed + i), num_players=players)
                            for i in range(envs)])
    model = MaskablePPO("MlpPolicy", venv, n_steps=128, batch_size=2048, n_epochs=4, seed=seed, device="cpu",
                        policy_kwargs={"net_arch": [256, 256]})
    model.learn(envs * 128)  # warm-up: JIT, first rollout
    t0 = time.perf_counter()
    model.learn(steps, reset_num_timesteps=False)
    elapsed = time.perf_counter() - t0
    return {"vec_env": kind, "envs": envs, "opponent": opponent, "steps": steps, "env_steps_per_s": steps / elapsed}


def main(argv: list[str] | None = None) -> int:
    """Measure both VecEnvs and print a table and JSON."""
    p = argparse.ArgumentParser(prog="python -m training.throughput", description=__doc__)
    p.add_argument("--steps", type=int, default=32768)
    p.add_argument("--envs", type=int, default=64)
    p.add_argument("--opponent", default="random")
    p.add_argument("--players", type=int, default=2)
    args = p.parse_args(argv)
    rows = [measure(kind, args.steps, args.envs, args.opponent, args.players) for kind in ("batched", "dummy")]
    for r in rows:
        print(f"{r['vec_env']:<8} {r['envs']} games vs {r['opponent']}: "
              f"{r['env_steps_per_s']:,.0f} env steps/s during PPO")
    print(f"ratio: {rows[0]['env_steps_per_s'] / rows[1]['env_steps_per_s']:.2f}x")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
