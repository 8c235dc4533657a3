"""What a generation of ``bali az`` costs on this machine: self-play on 1 and on 2 worker
processes (the same chunks, so the same rows), training, the gate.

``python -m benchmarks.az_generation [--players 2] [--games 64] [--gumbel M] [--out docs/results/az/cost-2p.json]``
plays ``--games`` self-play games of the shipped policy with ``bali az``'s default settings (the
search's ``sims``, ``leaves`` and root, the target) in chunks of ``chunk`` games, first in
this process (its search on every Numba thread), then on 1 and on 2 local worker processes (one
thread each), times ``train_steps`` training steps on the rows and a gate of ``gate_games`` games,
prints each, and writes them as JSON (a temporary file moved into place). Run it on a quiet machine:
it is a timing. Numba's kernels are compiled before anything is timed.
"""

from __future__ import annotations

import json
import time
from typing import Any


def measure(players: int, games: int, seed: int = 0, gumbel: int | None = None) -> dict[str, Any]:
    """The seconds of each part of one generation (and the rows it made); ``gumbel``: the root
    (``bali az --gumbel``; None: the default)."""
    import numpy as np

    from bali_env.bots.ppo import ExportedPolicy, shipped_policy
    from bali_env.trainers.alphazero import gate
    from bali_env.trainers.alphazero.learn import Learner
    from bali_env.trainers.alphazero.generations import Config, selfplay_job
    from bali_env.trainers.alphazero.jobs import Rows
    from bali_env.trainers.alphazero.selfplay import merge, play_chunk
    from bali_env.trainers.alphazero.dispatch import Pool, chunks_of

    cfg = Config(players=players, games=games) if gumbel is None else Config(players=players, games=games,
                                                                              gumbel=gumbel)
    policy = ExportedPolicy(shipped_policy(players))
    job = selfplay_job(cfg, policy, seed)
    play_chunk(job, [0])  # compile (or load) the kernels
    chunks = chunks_of(games, cfg.chunk)
    out: dict[str, Any] = {"players": players, "games": games, "sims": cfg.sims, "leaves": cfg.leaves,
                           "gumbel": cfg.gumbel, "noise": job.settings.noise, "target": job.settings.target,
                           "chunk": cfg.chunk, "train_steps": cfg.train_steps, "batch": cfg.batch}
    rows: Rows | None = None
    for label, workers, in_process in (("in_process", 1, True), ("workers_1", 1, False), ("workers_2", 2, False)):
        parts: dict[int, Rows] = {}
        with Pool(workers, in_process=in_process) as pool:
            pool.play(job, {0: [0]}, lambda i, r: None)  # start the workers (imports, cached kernels) untimed
            t = time.perf_counter()
            pool.play(job, chunks, parts.__setitem__)
            out[f"selfplay_s_{label}"] = time.perf_counter() - t
        merged = merge([parts[i] for i in sorted(parts)])
        if rows is not None:
            assert all(np.array_equal(a, b) for a, b in zip(rows.arrays().values(), merged.arrays().values(),
                                                             strict=True)), "the same chunks gave other rows"
        rows = merged
        print(f"self-play, {label.replace('_', ' ')}: {games} games in {out[f'selfplay_s_{label}']:.1f} s", flush=True)
    assert rows is not None
    out["positions"] = len(rows)
    out["speedup_2_workers"] = out["selfplay_s_workers_1"] / out["selfplay_s_workers_2"]
    import torch

    torch.set_num_threads(cfg.torch_threads)
    learner = Learner.from_policy(policy, cfg.lr)
    t = time.perf_counter()
    learner.train(rows, cfg.train_steps, cfg.batch, seed)
    out["train_s"] = time.perf_counter() - t
    print(f"training: {cfg.train_steps} steps of {cfg.batch} rows in {out['train_s']:.1f} s", flush=True)
    t = time.perf_counter()
    gate.gate(shipped_policy(players), shipped_policy(players), players, cfg.gate_games, seed,
               workers=2)
    out["gate_s"] = time.perf_counter() - t
    print(f"gate: {cfg.gate_games} games in {out['gate_s']:.1f} s", flush=True)
    print(f"{out['positions']:,} positions; 2 workers {out['speedup_2_workers']:.2f}x 1 worker", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    """Measure, print, write the JSON."""
    from bali_env import flags

    p = flags.Parser(prog="python -m benchmarks.az_generation", description=__doc__.split("\n\n")[0],
                     parents=[flags.players(2), flags.games(64, "self-play games timed"),
                              flags.out("where to write the JSON (default: print only)")])
    p.add_argument("--gumbel", type=int, default=None, help="the root, as bali az --gumbel (default: bali az's)")
    args = p.parse_args(argv)
    if args.gumbel is not None and args.gumbel < 0:
        p.error(f"--gumbel must be at least 0, got {args.gumbel}")
    result = measure(args.players, args.games, gumbel=args.gumbel)
    if args.out is not None:
        from bali_env.files import write_text

        args.out.parent.mkdir(parents=True, exist_ok=True)
        write_text(args.out, json.dumps(result, indent=1) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
