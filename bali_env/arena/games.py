"""Playing tournament games: one ``BaliVectorEnv`` of slots, each participant's
``act_batch_keyed`` over the rows where it is to move, a record per finished game, under the
tournament's ``Clock``, as a ``GameJob`` says (``settings``).

A participant that raises, breaks the bot protocol, chooses an illegal action or runs out of
time loses the game it was playing (a *forfeit*, recorded with its reason: ``timeout``,
``crash``, ``illegal``, ``protocol``); the other seats share the win and the tournament goes on.
A call that fails for several rows is repeated row by row, so that the same games are lost
whatever the batching.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bali_env.bots.base import Agent
from bali_env.bots.registry import make_agent
from bali_env.engine.seeds import agent_seed, deal_seed, decision_keys
from bali_env.arena.schedule import lineup
from bali_env.arena.settings import GameJob

PROGRESS_WAVES = 8  #: a worker plays its games in at least this many waves (see ``play_games``)


class Clock:
    """The clock of a tournament: seconds per decision (``move_time``) and per game
    (``game_time``), None for no limit. ``cmd:`` bots get it in their process (and always a
    clock: ``protocol.DEFAULT_MOVE_TIME`` by default); in-process agents cannot be stopped, so
    their time is measured (a batched call's time shared out over its rows) and a decision over
    the limit loses the game once it returns."""

    def __init__(self, move_time: float | None = None, game_time: float | None = None) -> None:
        self.move_time, self.game_time = move_time, game_time

    def over(self, seconds: float, used: float) -> str | None:
        """Why a decision of ``seconds`` (``used``: the seat's time in the game, this decision
        included) is over the clock, or None."""
        if self.move_time is not None and seconds > self.move_time:
            return f"a decision took {seconds:.3g} s (the clock allows {self.move_time:g} s)"
        if self.game_time is not None and used > self.game_time:
            return f"{used:.3g} s for the game (the clock allows {self.game_time:g} s)"
        return None


TRACEBACK_FRAMES = 12  #: the innermost frames of an agent's exception kept in its forfeit (``crash_traceback``)
TRACEBACK_CHARS = 4000  #: and at most this many characters of them (the end: where it was raised)


def crash_traceback(exc: BaseException) -> str:
    """The traceback of an in-process agent's exception, as Python prints it (its innermost
    ``TRACEBACK_FRAMES`` frames, the last ``TRACEBACK_CHARS`` characters): a crash's forfeit keeps
    it (``traceback``), and ``bali tournament`` shows the first one."""
    import traceback

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-TRACEBACK_FRAMES))
    return text if len(text) <= TRACEBACK_CHARS else "..." + text[-TRACEBACK_CHARS:]


def _call(agent: Agent, obs: np.ndarray, masks: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """The agent's actions for some rows, and per row None or the fault that loses its game
    (``(reason, detail)``; a crash's with its traceback, ``(reason, detail, traceback)``). A call
    that fails is repeated row by row, so that only the rows that fail lose (the same rows
    whatever the batching)."""
    from bali_env.bots.protocol.messages import BotFault

    try:
        chosen = np.asarray(agent.act_batch_keyed(obs, masks, keys))
        if chosen.shape != (len(obs),):
            raise RuntimeError(f"act_batch returned shape {chosen.shape} for {len(obs)} rows")
        return chosen, [None] * len(obs)
    except BotFault as exc:
        if len(obs) == 1:
            return np.full(1, -1), [(exc.reason, exc.detail)]
    except Exception as exc:  # noqa: BLE001 - an agent that raises loses its game; the tournament goes on
        if len(obs) == 1:
            return np.full(1, -1), [("crash", f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}",
                                     crash_traceback(exc))]
    out, faults = np.full(len(obs), -1), []
    for i in range(len(obs)):
        a, f = _call(agent, obs[i : i + 1], masks[i : i + 1], keys[i : i + 1])
        out[i] = a[0]
        faults += f
    return out, faults


def _choose_actions(
    agents: Sequence[Agent], movers: np.ndarray, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray,
    keys: np.ndarray, seconds: np.ndarray, faults: list[Any],
) -> None:
    """Fill ``actions`` in place: for every participant, one ``act_batch_keyed`` call over the
    slots where it is to move (row randomness from ``keys``: ``decision_keys``); -1 for idle slots
    (``movers < 0``). ``seconds``: each row's share of its call's time; ``faults``: per row None
    or ``(reason, detail)`` when the agent to move loses the row's game (it raised, broke the
    protocol, or chose an illegal action)."""
    seconds[:] = 0.0
    faults[:] = [None] * len(actions)
    for p in np.unique(movers):
        rows = np.flatnonzero(movers == p)
        if p < 0:  # idle slots: action -1 leaves their game as it is
            actions[rows] = -1
            continue
        started = time.perf_counter()
        chosen, row_faults = _call(agents[p], obs[rows], masks[rows], keys[rows])
        seconds[rows] = (time.perf_counter() - started) / len(rows)
        for i, b in enumerate(rows):
            a = int(chosen[i])
            if row_faults[i] is None and not (0 <= a < masks.shape[1] and masks[b, a] == 1):
                row_faults[i] = ("illegal", f"action {a} is not legal (legal: {np.flatnonzero(masks[b]).tolist()})")
            faults[b] = row_faults[i]
            actions[b] = a if row_faults[i] is None else -1


def _game_record(seed: int, game: int, lineup_: np.ndarray, steps: int, final_scores: np.ndarray | None,
                 winner_mask: np.ndarray | None, forfeit: dict[str, Any] | None = None) -> dict[str, Any]:
    """The record of one finished tournament game (the keys listed in ``play_games``); a game
    lost by a fault has no scores, and every other seat shares the win."""
    n = len(lineup_)
    record: dict[str, Any] = {
        "game": int(game),
        "seed": deal_seed(seed, game),
        "lineup": [int(p) for p in lineup_],
        "scores": None if final_scores is None else [int(v) for v in final_scores],
        "winners": ([q for q in range(n) if q != forfeit["seat"]] if forfeit is not None
                    else [int(q) for q in np.flatnonzero(winner_mask)]),
        "decisions": int(steps),
    }
    if forfeit is not None:
        record["forfeit"] = forfeit
    return record


def log_name(participant: str) -> str:
    """The file name of a participant's bot log (``logs/NAME.log``): the name with anything but
    letters, digits, ``.``, ``_``, ``-`` and ``#`` made ``_``."""
    return re.sub(r"[^A-Za-z0-9._#-]", "_", participant)[:80] + ".log"


def play_games(
    specs: Sequence[str],
    games: Iterable[int],
    job: GameJob | None = None,
    *,
    worker: int = 0,
    on_finished: Callable[[list[dict[str, Any]]], None] | None = None,
    waves: int = PROGRESS_WAVES,
    **fields: Any,
) -> list[dict[str, Any]]:
    """Play the tournament games with the given indices on one ``BaliVectorEnv``; return one
    record per game (in index order): ``game``, ``seed``, ``lineup`` (participant indices by
    seat), ``scores`` (None for a game lost by a fault), ``winners`` (seats), ``decisions``,
    ``forfeit`` (only for such a game: ``seat``, ``reason``, ``detail``, and for an in-process
    agent that raised its ``traceback``), ``move_times`` (per
    seat: decisions, seconds in all, the longest decision's seconds; not part of results.json),
    and ``actions`` with the job's ``keep_actions``. ``on_finished(records)`` is called after each step in
    which games ended, with their records. The games are played in at least ``waves`` waves
    (smaller batches: the first games end sooner; the records do not depend on it).
    ``job``: how to play them (a ``GameJob``: the game, the seed, the batch size, the clock
    (``Clock``), the participants' names for the agents' ``start`` messages and the log files, the
    folder of ``cmd:`` bots' standard error), or its fields as keywords (``num_players=4, seed=0,
    oracle=..., keep_actions=...``), which override a job's."""
    from bali_env.envs.batched import BaliVectorEnv

    job = GameJob.make(job, **fields)
    games = list(games)
    if not games:
        return []
    clock = Clock(job.move_time, job.game_time)
    names = list(job.names) if job.names is not None else list(specs)
    agents: list[Agent] = [make_agent(spec, seed=agent_seed(job.seed, p, 0)) for p, spec in enumerate(specs)]
    for p, agent in enumerate(agents):
        if hasattr(agent, "set_clock"):
            agent.set_clock(clock.move_time, clock.game_time)
        if hasattr(agent, "set_log"):  # no folder: a bot's stderr goes nowhere (never into the results)
            agent.set_log(None if job.log_dir is None else Path(job.log_dir) / log_name(names[p]))
    # at most batch_size games at once, and at least PROGRESS_WAVES waves of them, so the first
    # games end (and the progress bar moves) early even in a short run
    b_size = min(int(job.batch_size), -(-len(games) // max(1, int(waves))))
    # one thread: a tournament batch is small, and a parallel region loses badly on busy cores
    env = BaliVectorEnv(b_size, **job.game.as_dict(), seed=job.seed, parallel=False)
    env.reset()
    slots = _Slots(env, agents, names, games, job, on_finished)
    try:
        while slots.busy():
            slots.step(clock)
    finally:
        for agent in agents:
            agent.close()
    return sorted(slots.records, key=lambda r: r["game"])


class _Slots:
    """The games in play on one ``BaliVectorEnv``: which game each slot holds, who sits where,
    the moves and times so far; ``step`` plays one decision in every slot."""

    def __init__(self, env: Any, agents: list[Agent], names: list[str], games: list[int], job: GameJob,
                 on_finished: Callable[[list[dict[str, Any]]], None] | None) -> None:
        b_size, n = env.num_envs, env.num_players
        self.env, self.agents, self.names, self.seed = env, agents, names, job.seed
        self.variants = {"oracle": job.game.oracle, "demon": job.game.demon}
        self.keep_actions, self.on_finished = job.keep_actions, on_finished
        self.m, self.n = len(agents), n
        self.game = np.full(b_size, -1, dtype=np.int64)
        self.lineup = np.zeros((b_size, n), dtype=np.int64)
        self.steps = np.zeros(b_size, dtype=np.int64)
        self.times = np.zeros((b_size, n, 3))  # per seat: decisions, seconds, longest decision
        self.actions_kept: list[list[int]] = [[] for _ in range(b_size)]
        self.pending = iter(games)
        self.records: list[dict[str, Any]] = []
        self.lost_at_start: list[dict[str, Any]] = []  # games lost before their first decision
        self.actions = np.zeros(b_size, dtype=np.int64)
        self.seconds = np.zeros(b_size)
        self.faults: list[Any] = [None] * b_size
        for b in range(b_size):
            self.load(b)
        self.report([])

    def busy(self) -> bool:
        """True while a slot holds a game."""
        return bool((self.game >= 0).any())

    def load(self, b: int) -> None:
        """Deal the worker's next game into slot b (a bot that fails to start it loses it)."""
        while True:
            k = next(self.pending, None)
            if k is None:
                self.game[b] = -1
                return
            self.env.reset_game(b, deal_seed(self.seed, k))
            self.game[b], self.lineup[b], self.steps[b], self.actions_kept[b] = k, lineup(k, self.m, self.n), 0, []
            self.times[b] = 0.0
            forfeit = _begin(self.agents, self.names, self.lineup[b], k, self.n, self.variants)
            if forfeit is None:
                return
            self.lost_at_start.append(self.finish(b, _game_record(self.seed, k, self.lineup[b], 0, None, None,
                                                                  forfeit)))

    def finish(self, b: int, record: dict[str, Any]) -> dict[str, Any]:
        """Complete slot b's record (times, actions) and tell its agents the game ended."""
        record["move_times"] = [[int(t[0]), float(t[1]), float(t[2])] for t in self.times[b]]
        if self.keep_actions:
            record["actions"] = self.actions_kept[b]
        forfeit = record.get("forfeit")
        if forfeit is not None:  # what the protocol's end message holds (a traceback stays in the record)
            forfeit = {k: forfeit[k] for k in ("seat", "reason", "detail")}
        result = {"game": record["game"], "final_scores": record["scores"], "winners": record["winners"],
                  "forfeit": forfeit}
        for p in sorted({int(x) for x in self.lineup[b]}):
            self.agents[p].end_game(result)
        return record

    def report(self, finished: list[dict[str, Any]]) -> None:
        finished += self.lost_at_start
        self.lost_at_start.clear()
        self.records.extend(finished)
        if finished and self.on_finished is not None:
            self.on_finished(finished)

    def step(self, clock: Clock) -> None:
        """One decision in every slot that holds a game; the games that end (or are lost) are
        recorded and their slots dealt the next game."""
        env, rows = self.env, np.arange(len(self.game))
        active = self.game >= 0
        movers = np.where(active, self.lineup[rows, env.to_move], -1)
        masks = env.action_masks
        keys = decision_keys(self.seed, self.game, env.to_move, self.steps)
        seats = env.to_move.copy()
        _choose_actions(self.agents, movers, env.obs, masks, self.actions, keys, self.seconds, self.faults)
        forfeits: dict[int, dict[str, Any]] = {}
        for b in np.flatnonzero(active):
            t = self.times[b, seats[b]]
            t[0], t[1], t[2] = t[0] + 1, t[1] + self.seconds[b], max(t[2], self.seconds[b])
            late = clock.over(float(self.seconds[b]), float(t[1])) if self.faults[b] is None else None
            if self.faults[b] is not None or late is not None:
                reason, detail, *trace = self.faults[b] if self.faults[b] is not None else ("timeout", late)
                forfeits[int(b)] = {"seat": int(seats[b]), "reason": reason, "detail": detail}
                if trace:  # an in-process agent that raised: where
                    forfeits[int(b)]["traceback"] = trace[0]
                self.actions[b] = -1  # the slot is dealt its next game below
            elif self.keep_actions:
                self.actions_kept[b].append(int(self.actions[b]))
        _, _, terminated, _, info = env.step(self.actions)
        self.steps[active] += 1
        finished = []
        for b in np.flatnonzero(active):
            if b in forfeits:
                record = _game_record(self.seed, self.game[b], self.lineup[b], self.steps[b] - 1, None, None,
                                      forfeits[int(b)])
            elif terminated[b]:
                record = _game_record(self.seed, self.game[b], self.lineup[b], self.steps[b],
                                      info["final_scores"][b], info["winners"][b])
            else:
                continue
            finished.append(self.finish(b, record))
            self.load(int(b))
        self.report(finished)


def _begin(agents: Sequence[Agent], names: Sequence[str], lineup_: np.ndarray, game: int, n: int,
           variants: dict[str, bool]) -> dict[str, Any] | None:
    """Tell every seat's agent that game ``game`` starts; the forfeit of the first that fails
    (a ``cmd:`` bot that cannot be started), or None."""
    from bali_env.bots.protocol.messages import BotFault

    who = [names[int(p)] for p in lineup_]
    for seat, p in enumerate(lineup_):
        try:
            agents[int(p)].begin_game({"game": int(game), "seat": seat, "num_players": n, "variants": variants,
                                       "agents": who})
        except BotFault as exc:
            return {"seat": seat, "reason": exc.reason, "detail": exc.detail}
        except Exception as exc:  # noqa: BLE001 - an agent that raises loses the game
            return {"seat": seat, "reason": "crash", "detail": f"{type(exc).__name__}: {exc}"[:300],
                    "traceback": crash_traceback(exc)}
    return None
