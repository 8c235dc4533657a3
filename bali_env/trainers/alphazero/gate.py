"""The matches a run plays with the tournament code: the gate, and the yardsticks of the curve.

- ``gate``: the new network alone (the ``ppo`` agent on its ``.npz``) against the best so far
  alone, ``games`` seat-rotated games (in 3 and 4 players against ``players - 1`` copies of the
  best). The new one replaces the best when it beats it: when the 95% Wilson interval of its
  win rate lies wholly above a fair share (1 / players). AlphaGo Zero's rule, 55% of the games,
  let a network of 56.5% [49.6, 63.2] over 200 games through here, no better than the best; the
  result, its interval and the decision are logged.
- ``confirm``: a gate that passed is played again on other deals, and the new network replaces
  the best only if the two matches pooled clear the fair share too. Forty generations of 3-player
  networks no better than their start put two lucky ones through a single match.
- ``yardsticks``: the best network alone against fixed agents (``greedy``, ``mcts``, the shipped
  ``ppo``), each in ``players - 1`` seats, for the learning curve by generation.

Each match is dealt from its own seed (``generations.seed_for``), never from the kept figures' seeds.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def match(lineup: list[str], players: int, games: int, seed: int, workers: int,
          progress: bool | Callable[[int], None] = False) -> dict[str, Any]:
    """The first agent of ``lineup``'s win rate over ``games`` seat-rotated games (``games``,
    ``win_rate``, ``ci_low``, ``ci_high``)."""
    from bali_env.arena import run_tournament

    res = run_tournament(lineup, num_players=players, games=games, seed=seed, workers=workers, out_dir=None,
                         progress=progress)
    first = res.participants[0]
    low, high = first["win_rate_ci95"]
    return {"games": int(first["games"]), "win_rate": float(first["win_rate"]), "ci_low": float(low),
            "ci_high": float(high)}


def gate(candidate: Path, best: Path, players: int, games: int, seed: int, workers: int,
         progress: bool | Callable[[int], None] = False) -> dict[str, Any]:
    """The gate's match and decision: ``match``'s figures, ``needed`` (the fair share its
    interval must clear) and ``accepted`` (a pass is then ``confirm``ed)."""
    result = match(_gate_lineup(candidate, best, players), players, games, seed, workers, progress)
    return {**result, **decide(result["ci_low"], players)}


def confirm(verdict: dict[str, Any], candidate: Path, best: Path, players: int, seed: int, workers: int,
            progress: bool | Callable[[int], None] = False) -> dict[str, Any]:
    """A gate that passed, played again on other deals (``seed``), as many games: ``verdict``
    with ``confirm`` (the second match's figures, and the two pooled: ``pooled_games``,
    ``pooled_win_rate``, ``pooled_ci_low``, ``pooled_ci_high``), ``accepted`` only if the pooled
    interval clears the fair share too. Over many generations no better than the best, one match
    alone lets a lucky one through about once in 40 tries (the interval's upper 2.5%)."""
    again = match(_gate_lineup(candidate, best, players), players, verdict["games"], seed, workers, progress)
    pooled = pool(verdict, again)
    return {**verdict, "confirm": {**again, **pooled}, "accepted": decide(pooled["pooled_ci_low"], players)["accepted"]}


def pool(first: dict[str, Any], again: dict[str, Any]) -> dict[str, Any]:
    """Two matches' figures (``games``, ``win_rate``) as one: ``pooled_games``,
    ``pooled_win_rate`` and its 95% Wilson interval (``pooled_ci_low``, ``pooled_ci_high``)."""
    from bali_env.arena.stats import wilson_interval

    wins = first["win_rate"] * first["games"] + again["win_rate"] * again["games"]
    total = first["games"] + again["games"]
    low, high = wilson_interval(wins, total)
    return {"pooled_games": total, "pooled_win_rate": wins / total, "pooled_ci_low": float(low),
            "pooled_ci_high": float(high)}


def _gate_lineup(candidate: Path, best: Path, players: int) -> list[str]:
    """The new network in the first seat, the best in every other."""
    return [f"ppo:path={candidate}"] + [f"ppo:path={best}"] * (players - 1)


def decide(ci_low: float, players: int) -> dict[str, Any]:
    """Whether a new network whose win rate against the best has the interval's lower bound
    ``ci_low`` replaces it: the fair share (``1 / players``) that bound must exceed, and the answer."""
    needed = 1.0 / players
    return {"needed": needed, "accepted": bool(ci_low > needed)}


def yardstick_spec(name: str, players: int) -> str | None:
    """The agent spec a yardstick name stands for (``ppo``: the shipped policy for ``players``,
    None when there is none), else the name itself (any agent spec)."""
    if name == "ppo":
        from bali_env.bots.ppo import shipped_policy

        return f"ppo:path={shipped_policy(players)}" if shipped_policy(players).is_file() else None
    return name


def yardsticks(policy: Path, names: list[str], players: int, games: int, seed: int, workers: int,
               progress: bool | Callable[[int], None] = False) -> list[dict[str, Any]]:
    """``policy`` alone against each yardstick in ``players - 1`` seats (``match``'s figures
    with ``opponent``); a yardstick without an agent for this player count is left out."""
    rows = []
    for i, name in enumerate(names):
        spec = yardstick_spec(name, players)
        if spec is None:
            continue
        result = match([f"ppo:path={policy}"] + [spec] * (players - 1), players, games, seed + i, workers, progress)
        rows.append({"opponent": name, **result})
    return rows


__all__ = ["confirm", "decide", "gate", "match", "pool", "yardstick_spec", "yardsticks"]
