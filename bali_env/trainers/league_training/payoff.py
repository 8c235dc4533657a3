"""The payoff evaluation: a new main against every member of the population and every baseline,
a row of the payoff matrix.

Each match is the main alone against the opponent in every other seat (``bali exploit``'s and the
gate's lineup: ``bali_env.trainers.alphazero.gate.match``), ``--eval-games`` seat-rotated games
(rounded up to whole rotations) on fresh deals: generation g's row is dealt from the tournament
seed ``payoff_seed(g)``, in ``PAYOFF_SEEDS``, a range no other evaluation uses (``bali train``'s
evaluations play ``bali_env.trainers.evaluation.evaluate.EVAL_SEEDS``, 10,000-10,996; the kept
figures' runs seeds 1-3), and training deals from its own generators, never from a tournament
seed. Every match of a row uses the same deals, so the row compares its opponents on equal terms.
Each entry keeps the main's win rate with its 95% Wilson interval; ``pooled`` pools a row's
population matches (the main against its population as a whole).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from bali_env.trainers.alphazero.gate import match
from bali_env.trainers.league_training.league_settings import LeagueTrainSettings

PAYOFF_SEEDS = range(20_000, 21_000)  #: the tournament seeds of the payoff rows (``payoff_seed``)
BASELINE = "baseline"  #: the kind of a fixed opponent (``--baselines``) in a row
ANCHOR = "anchor"  #: the kind of a fixed member of the population (``--anchors``) in a row


def payoff_seed(generation: int) -> int:
    """The tournament seed of generation ``generation``'s payoff row."""
    return PAYOFF_SEEDS[generation % len(PAYOFF_SEEDS)]


def payoff_row(main_spec: str, opponents: Mapping[str, tuple[str, str]], settings: LeagueTrainSettings, seed: int,
               on_entry: Callable[[dict[str, Any]], None] | None = None,
               progress: bool = False) -> list[dict[str, Any]]:
    """The main (``main_spec``, an agent spec) against each of ``opponents`` (name -> (kind,
    agent spec)), ``settings.eval_games`` games each dealt from ``seed``, in this process (a
    tournament of 200 games between two networks takes seconds; worker processes would take
    longer to start): an entry per opponent (``opponent``, ``kind``, ``games``, ``win_rate``,
    ``ci_low``, ``ci_high``), each passed to ``on_entry`` as it is measured."""
    rows = []
    for name, (kind, spec) in opponents.items():
        lineup = [main_spec] + [spec] * (settings.players - 1)
        found = match(lineup, settings.players, settings.eval_games, seed, 1, progress)
        entry = {"opponent": name, "kind": kind, **found}
        rows.append(entry)
        if on_entry is not None:
            on_entry(entry)
    return rows


def pooled(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The entries' games as one match (``games``, ``win_rate``, ``ci_low``, ``ci_high``: its 95%
    Wilson interval); None without entries."""
    from bali_env.arena.stats import wilson_interval

    games = sum(int(e["games"]) for e in entries)
    if not games:
        return None
    wins = sum(e["win_rate"] * e["games"] for e in entries)
    low, high = wilson_interval(wins, games)
    return {"games": games, "win_rate": wins / games, "ci_low": float(low), "ci_high": float(high)}


__all__ = ["ANCHOR", "BASELINE", "PAYOFF_SEEDS", "payoff_row", "payoff_seed", "pooled"]
