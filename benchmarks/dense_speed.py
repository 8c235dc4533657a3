"""What the fixed-order network costs against NumPy's BLAS, in one run: ``python -m benchmarks.dense_speed``.

The policy's numbers are computed by ``bali_env.bots.network`` (each output summed in one fixed
order by a small Numba kernel: the same bits on every machine). The anchor is the plain NumPy
matrix product (``x @ w + b``: OpenBLAS, one thread), which the shipped agents used before. Both run
in this process, alternately:

- one forward pass of the shipped 2-player actor and value head, microseconds per call, for
  batches of 1, 16, 128 and 1,024 rows (the inputs of random games' positions);
- ``ppo`` and ``ppo+search`` decisions (``bali_env.speed.search``'s positions and harness), one
  at a time, in a batch of 64, and one at a time beside a competing process.

Prints a table with each side's figure and the ratio fixed / BLAS (below 1: the fixed order is
faster); ``--out FILE`` also writes them as JSON.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np


def blas_mlp(x: np.ndarray, layers: list[tuple[np.ndarray, np.ndarray]], activation: str) -> np.ndarray:
    """The anchor: the same MLP by NumPy's matrix product (BLAS), ``activation`` after every layer but the last."""
    x = np.asarray(x, dtype=np.float32)
    for i, (w, b) in enumerate(layers):
        x = x @ w + b
        if i < len(layers) - 1:
            x = np.maximum(x, 0) if activation == "relu" else np.tanh(x)
    return x


@contextmanager
def network_by(mlp: Callable[..., np.ndarray]) -> Iterator[None]:
    """Within the block the agents' networks run through ``mlp``."""
    from bali_env.bots import network

    kept = network.mlp
    network.mlp = mlp
    try:
        yield
    finally:
        network.mlp = kept


def _best_of(fn: Callable[[], Any], seconds: float) -> float:
    """The best time of one call of ``fn`` over about ``seconds`` of calls."""
    best, spent = float("inf"), 0.0
    while spent < seconds or best == float("inf"):
        start = time.perf_counter()
        fn()
        took = time.perf_counter() - start
        best, spent = min(best, took), spent + took
    return best


def forward_rows(seconds: float) -> list[dict[str, Any]]:
    """Microseconds per forward pass (actor, then value head) of the shipped 2-player policy."""
    from bali_env.bots import network
    from bali_env.bots.ppo import ExportedPolicy, shipped_policy
    from bali_env.speed.search import choice_positions

    policy = ExportedPolicy(shipped_policy(2))
    obs, masks = choice_positions(count=1024)
    x = policy.input(obs, masks)
    network.mlp(x[:2], policy.weights, "relu")  # compiled (or loaded) before timing
    rows = []
    for n in (1, 16, 128, 1024):
        for part, layers in (("actor", policy.weights), ("value head", policy.value_weights)):
            timed = {name: _best_of(lambda f=f, n=n, layers=layers: f(x[:n], layers, "relu"), seconds) * 1e6
                     for name, f in (("fixed", network.mlp), ("blas", blas_mlp))}
            rows.append({"what": f"{part}, {n} rows", "unit": "us a call", **timed})
    return rows


def decision_rows(decisions: int) -> list[dict[str, Any]]:
    """Milliseconds a decision of ``ppo`` and ``ppo+search`` with each network (``bench_search``'s figures)."""
    from bali_env.bots import network
    from bali_env.speed import search

    rows = []
    kept = search.AGENTS
    search.AGENTS = ("ppo", "ppo+search")
    try:
        found = {}
        for name, mlp in (("fixed", network.mlp), ("blas", blas_mlp)):
            with network_by(mlp):
                found[name] = search.bench_search(one_by_one=decisions)
    finally:
        search.AGENTS = kept
    for spec in found["fixed"]:
        for key, label in (("ms_per_decision", "one at a time"), ("ms_per_decision_batched", "in a batch of 64"),
                           ("ms_per_decision_busy", "one at a time, beside a competing process")):
            rows.append({"what": f"{spec}, {label}", "unit": "ms a decision",
                         "fixed": found["fixed"][spec][key], "blas": found["blas"][spec][key]})
    return rows


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    """Measure, print the table, and write it to ``--out`` when given."""
    from bali_env import flags

    parser = flags.Parser(prog="python -m benchmarks.dense_speed", description=__doc__.splitlines()[0],
                          parents=[flags.out("also write the figures to this JSON file")])
    parser.add_argument("--seconds", type=float, default=1.0, help="time spent on each forward figure (default 1)")
    parser.add_argument("--decisions", type=int, default=20, help="positions decided one at a time (default 20)")
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        rows = forward_rows(args.seconds) + decision_rows(args.decisions)
    for r in rows:
        r["ratio"] = r["fixed"] / r["blas"]
        print(f"{r['what']:<58} fixed {r['fixed']:9.3g}  blas {r['blas']:9.3g} {r['unit']:<14} ratio {r['ratio']:.2f}")
    if args.out:
        from bali_env.files import replace_when_done

        with replace_when_done(args.out) as tmp:
            Path(tmp).write_text(json.dumps(rows, indent=1) + "\n")
    return rows


if __name__ == "__main__":
    main()
