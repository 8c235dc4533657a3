"""Training throughput: env steps per second during PPO on the batched-env VecEnv
(``BaliSB3VecEnv``), for ``bali train``'s default configuration (MaskablePPO), the same with the
lean trainer (``--trainer lean``), the lean trainer over the observation alone (``--features
none``) and the previous configuration (64 games, n-steps 128,
minibatch 2048, 4 epochs, 1 torch thread, a 256x256 tanh network over the observation alone,
without the heuristic's input features), measured in one run, against
``bali train``'s default opponent mix and against random opponents.
``python -m benchmarks.throughput [--steps 65536] [--players 2]``.

The opponent mix is the one training uses, self-play included: ``self`` opponents are frozen
NumPy copies of the (untrained) policy, ``--pool-size`` of them, which cost what trained ones
cost. PPO updates are included, evaluation is not.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any


def configs() -> dict[str, dict[str, Any]]:
    """name -> settings: ``default`` is ``bali train``'s defaults (MaskablePPO), ``lean`` the same
    with ``--trainer lean``, ``lean-obs`` that without the input features (``--features none``),
    ``previous`` the 64-game configuration."""
    from bali_env.trainers.ppo_selfplay.train import defaults

    d = defaults()
    default = {"trainer": d.trainer, "envs": d.envs, "n_steps": d.n_steps, "batch_size": d.batch_size,
               "epochs": d.epochs, "torch_threads": d.torch_threads, "net": d.net, "activation": d.activation,
               "features": d.features}
    return {
        "default": default,
        "lean": {**default, "trainer": "lean"},
        "lean-obs": {**default, "trainer": "lean", "features": "none"},
        "previous": {"trainer": "sb3", "envs": 64, "n_steps": 128, "batch_size": 2048, "epochs": 4,
                     "torch_threads": 1, "net": "256,256", "activation": "tanh", "features": "none"},
    }


def measure(name: str, steps: int, opponents: str, players: int, seed: int = 0) -> dict[str, Any]:
    """PPO env steps/s of configuration ``name`` (``configs()``) against the mix ``opponents``."""
    import torch

    from bali_env.bots import make_agent

    from bali_env.trainers.ppo_selfplay.loop import make_model
    from bali_env.trainers.ppo_selfplay.pool import OpponentPool, make_policy_opponent, opponent_weights
    from bali_env.trainers.ppo_selfplay.train import defaults
    from bali_env.versus.sb3_vecenv import BaliSB3VecEnv

    c = configs()[name]
    weights = opponent_weights(opponents)
    settings = defaults()
    for key, value in c.items():
        setattr(settings, key, value)
    settings.seed = seed
    torch.set_num_threads(c["torch_threads"])
    pool = OpponentPool(seed=seed)
    for spec, weight in weights.items():
        if spec != "self" and weight > 0:
            pool.add(spec, make_agent(spec, seed=seed + len(pool)), weight)
    if not len(pool):  # only self-play: start with one snapshot, as training does
        pool.add("random", make_agent("random", seed=seed), 1e-9)
    venv = BaliSB3VecEnv(c["envs"], pool, num_players=players, seed=seed,
                         features=None if c["features"] == "none" else c["features"])
    model, _ = make_model(settings, venv)
    if weights.get("self", 0) > 0:
        for k in range(settings.pool_size):
            opponent = make_policy_opponent(model.policy, seed=seed + k)
            pool.add(f"self@{k}", opponent, weights["self"] / settings.pool_size)
    rollout = c["envs"] * c["n_steps"]
    todo = max(rollout, steps // rollout * rollout)
    if c["trainer"] == "lean":
        model.learn(rollout, lambda _: True)  # warm-up: JIT, first rollout and update
        t0 = time.perf_counter()
        model.learn(model.num_timesteps + todo, lambda _: True)
    else:
        model.learn(rollout)
        t0 = time.perf_counter()
        model.learn(todo, reset_num_timesteps=False)
    elapsed = time.perf_counter() - t0
    return {"config": name, **c, "opponents": opponents, "steps": todo, "env_steps_per_s": todo / elapsed}


def main(argv: list[str] | None = None) -> int:
    """Measure both configurations against both mixes, print a table and JSON."""
    from bali_env.trainers.ppo_selfplay.pool import opponent_weights
    from bali_env.trainers.ppo_selfplay.train import defaults

    from bali_env import flags

    p = argparse.ArgumentParser(prog="python -m benchmarks.throughput", description=__doc__.splitlines()[0],
                                parents=[flags.players(2)])
    p.add_argument("--steps", type=int, default=65536, help="timed env steps per measurement")
    p.add_argument("--opponents", nargs="+", default=[defaults().opponents, "random"],
                   help="opponent mixes to measure (default: bali train's default mix, then random)")
    args = p.parse_args(argv)
    if args.steps < 1:
        p.error(f"--steps must be positive, got {args.steps}")
    for mix in args.opponents:
        try:
            opponent_weights(mix)
        except ValueError as exc:
            p.error(f"--opponents: {exc}")
    rows = [measure(name, args.steps, mix, args.players) for mix in args.opponents for name in configs()]
    for r in rows:
        print(f"{r['config']:<8} ({r['trainer']}) vs {r['opponents']:<24} {r['envs']:>4} games, "
              f"n-steps {r['n_steps']}, "
              f"minibatch {r['batch_size']}, {r['epochs']} epochs, net {r['net']} {r['activation']}, "
              f"features {r['features']}, "
              f"{r['torch_threads']} torch thread(s): {r['env_steps_per_s']:,.0f} env steps/s")
    for mix in args.opponents:
        speed = {r["config"]: r["env_steps_per_s"] for r in rows if r["opponents"] == mix}
        print(f"vs {mix}: default / previous {speed['default'] / speed['previous']:.2f}x, "
              f"lean / default {speed['lean'] / speed['default']:.2f}x, "
              f"lean without features / lean {speed['lean-obs'] / speed['lean']:.2f}x")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
