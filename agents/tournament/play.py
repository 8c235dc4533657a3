"""Playing tournament games: one ``BaliVectorEnv`` of slots, each participant's
``act_batch_keyed`` over the rows where it is to move, a record per finished game."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..base import Agent, decision_keys, make_agent
from .schedule import agent_seed, lineup

DEFAULT_BATCH_SIZE = 128  #: slots of each worker's BaliVectorEnv
PROGRESS_WAVES = 8  #: a worker plays its games in at least this many waves (see ``play_games``)


def _choose_actions(
    agents: Sequence[Agent], specs: Sequence[str], movers: np.ndarray, obs: np.ndarray, masks: np.ndarray,
    actions: np.ndarray, keys: np.ndarray,
) -> None:
    """Fill ``actions`` in place: for every participant, one ``act_batch_keyed`` call over the
    slots where it is to move (row randomness from ``keys``: ``decision_keys``); -1 for idle slots
    (``movers < 0``). RuntimeError if an agent returns the wrong shape."""
    for p in np.unique(movers):
        rows = np.flatnonzero(movers == p)
        if p < 0:  # idle slots: action -1 leaves their game as it is
            actions[rows] = -1
            continue
        chosen = np.asarray(agents[p].act_batch_keyed(obs[rows], masks[rows], keys[rows]))
        if chosen.shape != rows.shape:
            raise RuntimeError(f"agent {specs[p]!r}: act_batch returned shape {chosen.shape} for {len(rows)} rows")
        actions[rows] = chosen


def _check_legal(
    specs: Sequence[str], actions: np.ndarray, masks: np.ndarray, active: np.ndarray, movers: np.ndarray,
    slot_game: np.ndarray,
) -> None:
    """Raise RuntimeError naming the agent, action and game of the first active slot whose action
    is illegal (out of range or masked out); idle slots are not checked."""
    rows_all = np.arange(len(actions))
    legal = masks[rows_all, np.clip(actions, 0, masks.shape[1] - 1)] == 1
    legal &= (actions >= 0) & (actions < masks.shape[1])
    legal |= ~active
    if not legal.all():
        b = int(np.flatnonzero(~legal)[0])
        p = int(movers[b])
        raise RuntimeError(f"agent {specs[p]!r} chose illegal action {int(actions[b])} in game {int(slot_game[b])} "
                           f"(legal: {np.flatnonzero(masks[b]).tolist()})")


def _game_record(seed: int, game: int, lineup_: np.ndarray, steps: int, final_scores: np.ndarray,
                 winner_mask: np.ndarray) -> dict[str, Any]:
    """The record of one finished tournament game (the keys listed in ``play_games``)."""
    return {
        "game": int(game),
        "seed": seed + int(game),
        "lineup": [int(p) for p in lineup_],
        "scores": [int(v) for v in final_scores],
        "winners": [int(q) for q in np.flatnonzero(winner_mask)],
        "decisions": int(steps),
    }


def play_games(
    specs: Sequence[str],
    games: Iterable[int],
    *,
    num_players: int,
    seed: int,
    oracle: bool = False,
    demon: bool = False,
    worker: int = 0,
    batch_size: int = DEFAULT_BATCH_SIZE,
    on_finished: Callable[[list[dict[str, Any]]], None] | None = None,
    keep_actions: bool = False,
    waves: int = PROGRESS_WAVES,
) -> list[dict[str, Any]]:
    """Play the tournament games with the given indices on one ``BaliVectorEnv``; return one
    record per game (in index order): ``game``, ``seed``, ``lineup`` (participant indices by
    seat), ``scores``, ``winners`` (seats), ``decisions`` (and ``actions`` with
    ``keep_actions``). ``on_finished(records)`` is called after each step in which games ended,
    with their records. The games are played in at least ``waves`` waves (smaller batches: the
    first games end sooner; the records do not depend on it)."""
    from bali_env.vector import BaliVectorEnv

    games = list(games)
    m, n = len(specs), num_players
    if not games:
        return []
    agents: list[Agent] = [make_agent(spec, seed=agent_seed(seed, p, 0)) for p, spec in enumerate(specs)]
    # at most batch_size games at once, and at least PROGRESS_WAVES waves of them, so the first
    # games end (and the progress bar moves) early even in a short run
    b_size = min(int(batch_size), -(-len(games) // max(1, int(waves))))
    # one thread: a tournament batch is small, and a parallel region loses badly on busy cores
    env = BaliVectorEnv(b_size, num_players=n, oracle=oracle, demon=demon, seed=seed, parallel=False)
    env.reset()
    slot_game = np.full(b_size, -1, dtype=np.int64)
    slot_lineup = np.zeros((b_size, n), dtype=np.int64)
    slot_steps = np.zeros(b_size, dtype=np.int64)
    slot_actions: list[list[int]] = [[] for _ in range(b_size)]  # with keep_actions: for game records
    rows_all = np.arange(b_size)
    pending = iter(games)

    def load(b: int) -> None:
        k = next(pending, None)
        if k is None:
            slot_game[b] = -1
            return
        env.reset_game(b, seed + k)
        slot_game[b] = k
        slot_lineup[b] = lineup(k, m, n)
        slot_steps[b] = 0
        slot_actions[b] = []

    for b in range(b_size):
        load(b)
    records: list[dict[str, Any]] = []
    actions = np.zeros(b_size, dtype=np.int64)
    while (slot_game >= 0).any():
        active = slot_game >= 0
        movers = np.where(active, slot_lineup[rows_all, env.to_move], -1)
        masks = env.action_masks
        keys = decision_keys(seed, slot_game, env.to_move, slot_steps)
        _choose_actions(agents, specs, movers, env.obs, masks, actions, keys)
        _check_legal(specs, actions, masks, active, movers, slot_game)
        if keep_actions:
            for b in np.flatnonzero(active):
                slot_actions[b].append(int(actions[b]))
        _, _, terminated, _, info = env.step(actions)
        slot_steps[active] += 1
        ended = np.flatnonzero(terminated & active)
        finished = []
        for b in ended:
            finished.append(_game_record(seed, slot_game[b], slot_lineup[b], slot_steps[b],
                                         info["final_scores"][b], info["winners"][b]))
            if keep_actions:
                finished[-1]["actions"] = slot_actions[b]
        records.extend(finished)
        for b in ended:
            load(int(b))
        if finished and on_finished is not None:
            on_finished(finished)
    records.sort(key=lambda r: r["game"])
    return records
