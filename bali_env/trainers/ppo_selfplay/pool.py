"""The opponent pool of ``bali train`` (``bali_env.versus.opponents`` holds the pool itself):
``build_pool`` fills a run's pool from ``--opponents`` (or rebuilds a resumed run's),
``add_snapshot`` adds a frozen NumPy copy of the learner's policy (dropping the oldest past
``--pool-size``), and ``log_returns`` logs the learner's returns against each kind of opponent
(``train/return_vs_KIND`` in ``progress.csv``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bali_env.versus.opponents import (  # noqa: F401 - the pool's names, as training uses them
    OPPONENT_KINDS,
    OpponentPool,
    make_policy_opponent,
    opponent,
    opponent_weights,
)
from bali_env.trainers.ppo_selfplay.run_settings import TrainSettings


def build_pool(args: TrainSettings, saved: dict[str, Any] | None = None) -> OpponentPool:
    """A run's opponent pool: every opponent of ``args.weights`` but ``self``, with its weight
    (self-play snapshots join during the run, ``add_snapshot``), or a resumed run's pool as it
    was saved."""
    if saved is not None:
        return OpponentPool.from_checkpoint(saved["pool"])
    pool = OpponentPool(seed=args.seed)
    for spec, weight in args.weights.items():
        if spec != "self" and weight > 0:
            spec = f"mcts:sims={args.mcts_sims}" if spec == "mcts" else spec  # the pool rebuilds it by name
            pool.add(spec, opponent(spec, seed=args.seed + len(pool)), weight)
    return pool


def add_snapshot(pool: OpponentPool, policy: Any, args: TrainSettings, step: int) -> None:
    """Add a frozen copy of the learner's ``policy`` as ``self@STEP`` (its share of the ``self``
    weight), dropping the oldest snapshot past ``--pool-size``; nothing without a ``self`` weight."""
    weight = args.weights.get("self", 0)
    if weight <= 0:
        return
    if sum(n.startswith("self@") for n in pool.names) >= args.pool_size:
        pool.remove_oldest("self@")
    pool.add(f"self@{step}", make_policy_opponent(policy, seed=args.seed + step), weight / args.pool_size)


def log_returns(logger: Any, venv: Any, seen: int) -> int:
    """Log the learner's returns of the games ``venv`` finished since the first ``seen``: their
    mean, and their mean against each kind of opponent. Returns the new count seen."""
    returns = venv.episode_returns[seen:]
    if returns:
        logger.record_mean("train/learner_return", float(np.mean(returns)))
        by_kind: dict[str, list[float]] = {}
        for ret, names in zip(returns, venv.episode_opponents[seen:], strict=True):
            by_kind.setdefault(opponent_kinds(names), []).append(ret)
        for kind, rets in by_kind.items():
            logger.record_mean(f"train/return_vs_{kind}", float(np.mean(rets)))
    return len(venv.episode_returns)


def opponent_kinds(names: str) -> str:
    """The kinds of a game's opponents as logged (``train/return_vs_KIND``), from their names
    joined by `` | ``: ``self@1024 | greedy`` gives ``greedy+self``, ``mcts:sims=200,c=1.4``
    gives ``mcts``, ``cmd:python3 bot.py`` gives ``cmd``."""
    return "+".join(sorted({n.split("@")[0].split(":")[0] for n in names.split(" | ")}))
