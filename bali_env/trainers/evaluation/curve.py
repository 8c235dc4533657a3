"""Learning curve of a finished (or running) ``bali train`` run against any opponents.

``python -m bali_env.trainers.evaluation.curve runs/bali2p --opponents greedy mcts --games 200`` plays every exported
checkpoint of the run (``OUT/checkpoints/*.npz``, one per evaluation, by env steps) against each
opponent spec with the tournament code (seat-rotated, ``--games`` per point, the same seeds for
every checkpoint), and writes ``OUT/curve.csv`` and ``OUT/curve.png`` (win rate with its 95%
interval by env steps). Training evaluates against random and greedy only (an MCTS opponent costs
minutes per point); this adds the slower yardsticks afterwards. For a run that went on from
another policy (``bali train --init FILE.npz``), ``--start FILE.npz`` plays that policy as the
first point and counts every checkpoint's env steps from the steps it had (its ``env_steps``),
so the curve shows the whole training.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bali_env import flags


def checkpoints(run: Path) -> list[tuple[int, Path]]:
    """The run's exported checkpoints as (env steps, path), by env steps: each file's metadata
    read by ``bali_env.bots.ppo`` (``read_meta``, then the ``PolicyMeta`` model: JSON, or an
    older file's Python literal), its weights unread."""
    from bali_env.bots.ppo import check_meta, read_meta

    found = [(check_meta(read_meta(p), repr(str(p))).env_steps, p) for p in sorted((run / "checkpoints").glob("*.npz"))]
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    """Evaluate every checkpoint of a run against each opponent; write curve.csv and curve.png."""
    from bali_env.bots import make_agent

    from bali_env.trainers.evaluation.evaluate import evaluate, plot_curve, write_csv

    p = argparse.ArgumentParser(prog="python -m bali_env.trainers.evaluation.curve",
                                description=__doc__.splitlines()[0],
                                parents=[flags.games(200, "games per checkpoint and opponent"), flags.workers(2),
                                         flags.seed(20_000, "the deals: game k of every point is dealt from SEED "
                                                    "and k hashed together (deal_seed)")])
    p.add_argument("run", type=Path, help="the --out folder of a bali train run")
    p.add_argument("--opponents", nargs="+", default=["greedy", "mcts"], help="opponent agent specs")
    p.add_argument("--start", type=Path, default=None, metavar="FILE.npz",
                   help="the policy the run started from (its --init): the first point; steps count from its own")
    args = p.parse_args(argv)
    if args.games < 1 or args.workers < 1:
        p.error("--games and --workers must be positive")
    try:
        config = json.loads((args.run / "config.json").read_text())
    except (OSError, ValueError) as exc:
        p.error(f"{args.run} is not a bali train run folder ({exc})")
    for spec in args.opponents:
        try:
            make_agent(spec, seed=0)
        except (ValueError, TypeError) as exc:
            p.error(f"--opponents: {exc}")
    points = checkpoints(args.run)
    if not points:
        p.error(f"no exported checkpoints in {args.run / 'checkpoints'}")
    if args.start is not None:
        from bali_env.bots.ppo import ExportedPolicy

        try:
            before = ExportedPolicy(args.start).info.env_steps
        except ValueError as exc:
            p.error(f"--start: {exc}")
        points = [(before, args.start)] + [(before + steps, path) for steps, path in points]
    setup = argparse.Namespace(players=config["players"], oracle=config["oracle"], demon=config["demon"],
                               eval_workers=args.workers)
    rows: list[dict[str, Any]] = []
    for steps, path in points:
        for opp in args.opponents:
            r = evaluate(path, opp, setup, args.games, seed=args.seed)
            rows.append({"steps": steps, "checkpoint": path.name, "opponent": opp, **r})
            print(f"{path.name:>22} ({steps:>11,} steps) vs {opp}: win {r['win_rate']:.1%} "
                  f"[{r['ci_low']:.1%}, {r['ci_high']:.1%}] over {r['games']} games", flush=True)
            write_csv(rows, args.run / "curve.csv")
    plot_curve(rows, args.run / "curve.png", config["players"])
    print(f"wrote {args.run / 'curve.csv'} and {args.run / 'curve.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
