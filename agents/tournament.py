"""Round-robin tournaments between Bali agents on the batched environment.

``run_tournament(["greedy", "random", "random", "random"], num_players=4, games=1000)`` (or
``bali tournament --agents greedy random random random --players 4 --games 1000``) plays seeded
games, rotates seats so that every participant plays every seat equally often, and reports per
participant: wins, win rate with a 95% Wilson interval, mean final score, mean rank, an
OpenSkill (Plackett-Luce) rating and the win rate per seat.

Participants
    Every entry of ``agents`` is a separate participant built by ``make_agent(spec)``; a spec that
    occurs more than once is numbered: ``["greedy", "random", "random"]`` gives ``greedy``,
    ``random#1``, ``random#2``.

Lineups (who sits where)
    With ``n = num_players`` seats and ``m`` participants (``m >= n``; fewer raises ValueError:
    list a spec several times instead, e.g. ``greedy random random random``):

    - ``m == n``: game k seats the cyclic rotation ``k mod n`` of the list: seat s is
      participant ``(s + k) mod n``.
    - ``m > n``: the combinations of n participants (``itertools.combinations(range(m), n)``, in
      that order) are cycled through; each combination is played n times in a row, once per
      cyclic rotation. Game k uses combination ``(k // n) mod C(m, n)`` and rotation ``k mod n``.

    One cycle is n games (``m == n``) or ``C(m, n) * n`` games (``m > n``); over a cycle every
    participant plays the same number of games and every seat equally often. The number of
    games is **rounded up to whole cycles** (the output says so when it does).

Deals and seeding
    Game k is dealt from seed ``seed + k``: exactly the game ``bali_env.env(...).reset(seed=seed +
    k)`` deals (``BaliVectorEnv.reset_game``), whichever worker and slot plays it. Every agent's
    randomness is drawn per decision from ``decision_keys(seed, k, seat, decision number)``
    (``Agent.act_batch_keyed``: the built-in agents draw each row from its own key, also when
    they decide a batch at once), so **a game plays out the same whatever the worker count, the
    batch size or the backend**, and so do the results. (A user's batched agent that does not
    implement ``act_batch_keyed`` is seeded once per call: its games then depend on the batching.)

Running
    Each worker process plays the games ``w, w + W, w + 2W, ...`` (strided, so slow agents spread
    evenly) on one ``BaliVectorEnv`` of up to ``batch_size`` slots (fewer for a short run: at
    least ``PROGRESS_WAVES`` waves of games, so games end, and the bar moves, from the start): at
    every step the rows are
    grouped by the participant to move and each participant's ``act_batch`` answers its rows;
    a slot whose game ends gets the worker's next game, or idles (action -1: its game stays as
    it is) until the worker's last game ends. Workers are "spawn" processes with one Numba
    thread each; ``workers=1`` plays in the calling process, and so does a short run (at most
    ``QUICK_GAMES`` games) of batched agents whose kernels are already compiled, since starting
    workers would take longer than the games. A short run of cheap agents
    (``INTERPRETABLE_AGENTS``) whose kernels are not cached yet plays interpreted instead, in
    workers started with Numba's JIT off: compiling would take longer than the games, and the
    interpreted kernels play the same games move for move. The batched env always steps on one
    thread (``parallel=False``): the parallel kernel gains little on a tournament-sized batch and
    loses badly when the cores are busy.

Statistics (from the game records, in game-index order, independent of the workers)
    - wins: a shared win (docs/rules.md section 4: highest score, then shrines, then stones, then
      shared) counts 1/k for each of the k sharers; win rate = wins / games, with the Wilson
      score interval at 95%.
    - rank: the winners are first; the other players follow by final score (the environment
      reports scores and winners only, so non-winners with equal scores share a rank). Tied
      players share the mean of the positions they span (fractional ranking: 1 = best).
    - rating: ``openskill.models.PlackettLuce()`` with its default parameters (mu 25, sigma
      25/3), one rating per participant, updated game by game in game-index order with those
      ranks; reported as ``ordinal()`` (mu - 3 sigma), mu and sigma.
    - per seat: each participant's win rate at each seat, and the share of all wins per seat.

Outputs (``out_dir``): ``results.json`` (config, statistics, one record per game: index, seed,
lineup, scores, winners, decisions), ``results.csv`` (the per-participant table) and
``ratings.png`` (win rates with their intervals and ratings; needs matplotlib). Nothing in
``results.json`` depends on timing, so equal runs write equal files.
"""

from __future__ import annotations

import contextlib
import csv
import itertools
import json
import math
import multiprocessing as mp
import queue as queue_module
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from .base import Agent, decision_keys, make_agent

Z95 = 1.959963984540054  #: the standard normal quantile of 0.975 (two-sided 95%)
DEFAULT_BATCH_SIZE = 128  #: slots of each worker's BaliVectorEnv
PROGRESS_WAVES = 8  #: a worker plays its games in at least this many waves (see ``play_games``)

LINEUP_SCHEME = (
    "m == n: game k seats the cyclic rotation k mod n of the participants (seat s = participant (s + k) mod n); "
    "m > n: combination (k // n) mod C(m, n) of itertools.combinations(range(m), n), rotation k mod n; "
    "games rounded up to whole cycles"
)


class TournamentError(ValueError):
    """A tournament that cannot be run as configured (unknown agent, too few participants, ...)."""


# ----------------------------------------------------------------------------------------------- lineups
def participant_names(specs: Sequence[str]) -> list[str]:
    """Names of the participants: the spec, numbered ``spec#1``, ``spec#2``, ... when it repeats."""
    counts: dict[str, int] = {}
    for spec in specs:
        counts[spec] = counts.get(spec, 0) + 1
    seen: dict[str, int] = {}
    names = []
    for spec in specs:
        if counts[spec] == 1:
            names.append(spec)
        else:
            seen[spec] = seen.get(spec, 0) + 1
            names.append(f"{spec}#{seen[spec]}")
    return names


def _check_sizes(num_participants: int, num_players: int) -> None:
    if num_players not in (2, 3, 4):
        raise TournamentError(f"num_players must be 2, 3 or 4, got {num_players!r}")
    if num_participants < num_players:
        raise TournamentError(
            f"{num_participants} participant(s) for {num_players} seats: list at least {num_players} agents; "
            f"repeat a spec to field it several times (e.g. greedy {' '.join(['random'] * (num_players - 1))})"
        )


def cycle_length(num_participants: int, num_players: int) -> int:
    """Games in one full rotation: n when there are n participants, ``C(m, n) * n`` for m > n."""
    _check_sizes(num_participants, num_players)
    return math.comb(num_participants, num_players) * num_players


def lineup(k: int, num_participants: int, num_players: int) -> tuple[int, ...]:
    """The participant indices seated in game k, seat 0 first (the scheme of the module docstring)."""
    n = num_players
    if num_participants == n:
        players: tuple[int, ...] = tuple(range(n))
    else:
        combos = _combinations(num_participants, n)
        players = combos[(k // n) % len(combos)]
    r = k % n
    return tuple(players[(s + r) % n] for s in range(n))


_COMBOS: dict[tuple[int, int], list[tuple[int, ...]]] = {}


def _combinations(m: int, n: int) -> list[tuple[int, ...]]:
    if (m, n) not in _COMBOS:
        _COMBOS[(m, n)] = list(itertools.combinations(range(m), n))
    return _COMBOS[(m, n)]


def rounded_games(games: int, num_participants: int, num_players: int) -> int:
    """``games`` rounded up to a whole number of cycles (at least one cycle)."""
    if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < 1:
        raise TournamentError(f"games must be a positive int, got {games!r}")
    cycle = cycle_length(num_participants, num_players)
    return max(1, -(-int(games) // cycle)) * cycle


def agent_seed(seed: int, participant: int, worker: int = 0) -> int:
    """The seed participant ``participant``'s agent is built with (every worker builds it with
    ``worker=0``: the randomness of its moves comes from ``decision_keys``)."""
    ss = np.random.SeedSequence([int(seed) % 2**64, participant, worker])
    return int(ss.generate_state(1, np.uint64)[0])


# ----------------------------------------------------------------------------------------------- playing
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


class _Spinner:
    """A line on stderr while kernels compile ("compiling the game kernels, first run only"),
    shown only when the wait lasts more than half a second; ``stop()`` clears it."""

    def __init__(self, enabled: bool = True) -> None:
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._spin, daemon=True) if enabled else None
        if self._thread is not None:
            self._thread.start()

    def _spin(self) -> None:
        if self._done.wait(0.5):
            return
        if not sys.stderr.isatty():  # a log file or a pipe: the line once, no animation
            sys.stderr.write("compiling the game kernels (first run only; cached afterwards)\n")
            sys.stderr.flush()
            return
        frames, k = "|/-\\", 0
        while not self._done.wait(0.1):
            sys.stderr.write(f"\r{frames[k % 4]} compiling the game kernels (first run only; cached afterwards)")
            sys.stderr.flush()
            k += 1
        sys.stderr.write("\r" + " " * 72 + "\r")
        sys.stderr.flush()

    def stop(self) -> None:
        """Stop and clear the line (idempotent)."""
        self._done.set()
        if self._thread is not None:
            self._thread.join()


def warm_up(specs: Sequence[str], num_players: int, oracle: bool, demon: bool) -> None:
    """Compile (or load from Numba's disk cache) every kernel a game between ``specs`` uses, in
    this process: deal a game, let every agent decide a few times, step."""
    from bali_env.vector import BaliVectorEnv

    env = BaliVectorEnv(1, num_players=num_players, oracle=oracle, demon=demon, seed=0, parallel=False)
    env.reset()
    env.reset_game(0, 0)
    agents = [make_agent(spec, seed=0) for spec in dict.fromkeys(specs)]
    for _ in range(3):
        for agent in agents:
            agent.act_batch(env.obs, env.action_masks)
        env.step(agents[0].act_batch(env.obs, env.action_masks))


def _exit_with_parent(parent: int) -> None:
    """A daemon thread that ends this worker process when its parent is gone (killed included)."""
    import os
    import threading

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(3)

    threading.Thread(target=watch, daemon=True).start()


def compile_share(specs: Sequence[str], num_players: int, oracle: bool, demon: bool, worker: int,
                  workers: int) -> None:
    """Worker ``worker``'s share of the kernels a tournament needs: the jobs (the env's kernels,
    then each distinct agent's ``compile_kernels``) dealt round-robin over the workers. Each job
    compiles (or loads from Numba's disk cache) once; the other workers load it afterwards."""
    from bali_env.vector import compile_kernels

    jobs: list[str | None] = [None, *dict.fromkeys(specs)]
    for spec in jobs[worker::workers]:
        if spec is None:
            compile_kernels(num_players, oracle, demon)
        else:
            make_agent(spec, seed=0).compile_kernels()


@contextlib.contextmanager
def _jit_disabled_in_children(disabled: bool) -> Iterator[None]:
    """Within the block, processes started inherit ``NUMBA_DISABLE_JIT=1`` when ``disabled``
    (this process's own environment is restored on exit)."""
    import os

    if not disabled:
        yield
        return
    before = os.environ.get("NUMBA_DISABLE_JIT")
    os.environ["NUMBA_DISABLE_JIT"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["NUMBA_DISABLE_JIT"]
        else:
            os.environ["NUMBA_DISABLE_JIT"] = before


def _worker_main(kwargs: dict[str, Any], messages: Any, parent: int, compiled: Any = None) -> None:
    """Entry point of a worker process: compile its share of the kernels (``compile_share``) and
    wait for the others' (``compiled``, a barrier), play, send each step's finished games through
    ``messages`` as they end (the parent journals them), then ``done``; exit if the parent dies."""
    import contextlib
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it terminates the workers
    _exit_with_parent(parent)
    worker = kwargs["worker"]
    try:
        import numba

        numba.set_num_threads(1)
        if numba.config.DISABLE_JIT:  # interpreted: NumPy scalars wrap around (SplitMix64) like Numba's ints
            np.seterr(over="ignore")
        if compiled is not None:
            compile_share(kwargs["specs"], kwargs["num_players"], kwargs["oracle"], kwargs["demon"], worker,
                          compiled.parties)
            with contextlib.suppress(threading.BrokenBarrierError):  # a slow share: the rest compiles on use
                compiled.wait(timeout=900)
        play_games(on_finished=lambda recs: messages.put(("games", worker, recs)), **kwargs)
        messages.put(("done", worker, None))
    except BaseException:  # noqa: BLE001  (reported to the parent, which raises)
        messages.put(("error", worker, traceback.format_exc()))


def _play_parallel(job: dict[str, Any], workers: int, todo: list[int], on_games: Callable[[list[dict[str, Any]]], None],
                   on_first: Callable[[], None] = lambda: None, interpreted: bool = False) -> None:
    """Play the games ``todo`` in ``workers`` spawned processes (strided), passing every batch of
    finished records to ``on_games`` as it arrives (``on_first()`` at the first message). A
    worker that dies is reported within about a second (RuntimeError naming it); on any exit the
    workers are stopped. ``interpreted``: the workers start with Numba's JIT off
    (``NUMBA_DISABLE_JIT=1``) and compile nothing."""
    import os

    ctx = mp.get_context("spawn")
    messages = ctx.Queue()
    # every worker compiles its share of the kernels, then plays (interpreted: nothing to compile)
    compiled = None if interpreted else ctx.Barrier(workers)
    procs = []
    for w in range(workers):
        kwargs = dict(job, games=todo[w::workers], worker=w)
        procs.append(ctx.Process(target=_worker_main, args=(kwargs, messages, os.getpid(), compiled),
                                 name=f"bali-tournament-{w}", daemon=True))
    done: set[int] = set()
    try:
        with _jit_disabled_in_children(interpreted):
            for p in procs:
                p.start()
        while len(done) < workers:
            dead = [p for w, p in enumerate(procs) if w not in done and p.exitcode not in (None, 0)]
            if dead:
                raise RuntimeError(f"tournament worker {dead[0].name} died (exit code {dead[0].exitcode})")
            try:
                kind, w, payload = messages.get(timeout=0.2)
            except queue_module.Empty:
                continue
            on_first()
            if kind == "games":
                on_games(payload)
            elif kind == "done":
                done.add(w)
            else:
                raise RuntimeError(f"tournament worker {w} failed:\n{payload}")
        for p in procs:
            p.join()
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join(timeout=5)


# ----------------------------------------------------------------------------------------------- journal
JOURNAL = "journal.jsonl"  #: the append-only journal of finished games in a tournament's output folder
_RUN_FILES = ("results.json", "results.csv", "ratings.png", JOURNAL)


class TournamentInterrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM stopped a tournament; ``finished`` games are in the journal ``journal``."""

    def __init__(self, finished: int, total: int, journal: Path | None) -> None:
        super().__init__(f"{finished} of {total} games finished")
        self.finished, self.total, self.journal = finished, total, journal


class TournamentFailed(RuntimeError):
    """A worker died or an agent failed mid-run; ``finished`` games are in the journal ``journal``
    (resume with ``resume=True`` once the cause is fixed)."""

    def __init__(self, message: str, finished: int, total: int, journal: Path | None) -> None:
        super().__init__(message)
        self.finished, self.total, self.journal = finished, total, journal


def _journal_header(config: dict[str, Any]) -> dict[str, Any]:
    """What a journal must agree on to be resumed: everything that decides the games."""
    keys = ("agents", "num_players", "games", "seed", "oracle", "demon", "save_records")
    return {"journal": "bali-tournament", "version": 1, **{k: config[k] for k in keys}}


def read_journal(path: Path) -> tuple[dict[str, Any], dict[int, dict[str, Any]]]:
    """The header and the finished games (by index) of a journal; a last line cut short by an
    interruption is ignored. ValueError for a file that is not a tournament journal."""
    lines = path.read_bytes().split(b"\n")
    try:
        header = json.loads(lines[0])
    except (ValueError, IndexError):
        raise ValueError(f"{path} is not a tournament journal") from None
    if not isinstance(header, dict) or header.get("journal") != "bali-tournament":
        raise ValueError(f"{path} is not a tournament journal")
    games: dict[int, dict[str, Any]] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            if number == len(lines) or (number == len(lines) - 1 and not lines[-1]):
                break  # the last line, cut short
            raise ValueError(f"{path}: line {number} is not a game record") from None
        games[int(rec["game"])] = rec
    return header, games


def _start_journal(out: Path, config: dict[str, Any], resume: bool) -> tuple[Any, dict[int, dict[str, Any]]]:
    """Open the journal in ``out`` for appending: the finished games of the run it holds
    (``resume``), or a new journal replacing an earlier run's files (said on stderr)."""
    import shutil

    path = out / JOURNAL
    header = _journal_header(config)
    done: dict[int, dict[str, Any]] = {}
    if resume:
        if not path.exists():
            raise TournamentError(f"nothing to resume: {path} does not exist")
        try:
            old, done = read_journal(path)
        except ValueError as exc:
            raise TournamentError(str(exc)) from None
        differ = [k for k in header if old.get(k) != header[k]]
        if differ:
            raise TournamentError(f"cannot resume {path}: it was run with other settings ({', '.join(differ)}: "
                                  f"{', '.join(repr(old.get(k)) for k in differ)})")
        done = {k: r for k, r in done.items() if 0 <= k < config["games"]}
        with path.open("rb+") as fh:  # drop a last line cut short, so appends start on a new line
            data = fh.read()
            keep = data.rfind(b"\n") + 1
            fh.truncate(keep)
        return path.open("a", encoding="utf-8"), done
    earlier = [name for name in _RUN_FILES if (out / name).exists()] + (["records/"] if (out / "records").exists()
                                                                         else [])
    if earlier:
        print(f"replacing the earlier run in {out} ({', '.join(earlier)})", file=sys.stderr)
        for name in _RUN_FILES:
            (out / name).unlink(missing_ok=True)
        shutil.rmtree(out / "records", ignore_errors=True)
    fh = path.open("w", encoding="utf-8")
    fh.write(json.dumps(header) + "\n")
    fh.flush()
    return fh, done


class _interrupt_on_sigterm:
    """Within the block, SIGTERM raises KeyboardInterrupt in the main thread (as Ctrl-C does), so
    a terminated tournament stops its workers and keeps its journal."""

    def __enter__(self) -> _interrupt_on_sigterm:
        import signal
        import threading

        self.previous = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGTERM, self._raise)
        return self

    @staticmethod
    def _raise(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    def __exit__(self, *exc: object) -> None:
        import signal

        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)


def check_out_dir(out: Path) -> None:
    """TournamentError unless ``out`` is (or can be made) a writable folder: checked before any
    game is played."""
    import os

    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".write-test-{os.getpid()}"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise TournamentError(f"cannot write to the output folder {str(out)!r}: {exc.strerror or exc}") from None


# ----------------------------------------------------------------------------------------------- statistics
def wilson_interval(wins: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a win rate ``wins / n`` (``(0, 1)`` when ``n == 0``)."""
    if n <= 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1.0 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # the interval always contains p; min/max only undo rounding (e.g. p = 1 and center + half = 1 - 1e-16)
    return max(0.0, min(p, center - half)), min(1.0, max(p, center + half))


def game_ranks(scores: Sequence[int], winners: Sequence[int]) -> list[float]:
    """Rank of every seat (1 = best): winners first, then by final score; tied seats share the
    mean of the positions they span (e.g. two winners both get 1.5)."""
    keys = [(q in winners, scores[q]) for q in range(len(scores))]
    ranks = []
    for key in keys:
        better = sum(k > key for k in keys)
        equal = sum(k == key for k in keys)
        ranks.append(better + (equal + 1) / 2)
    return ranks


def compute_stats(records: Sequence[dict[str, Any]], names: Sequence[str], num_players: int) -> dict[str, Any]:
    """Per-participant statistics and per-seat win shares from game records (``lineup`` as
    participant indices or names, as in results.json), processed in game-index order. Returns
    ``{"participants": [...], "seat_win_share": [...], "mean_decisions": float}``."""
    from openskill.models import PlackettLuce

    m, n = len(names), num_players
    index = {name: p for p, name in enumerate(names)}
    games = np.zeros(m)
    wins = np.zeros(m)
    score_sum = np.zeros(m)
    rank_sum = np.zeros(m)
    seat_games = np.zeros((m, n))
    seat_wins = np.zeros((m, n))
    seat_win_total = np.zeros(n)
    model = PlackettLuce()
    ratings = [model.rating(name=name) for name in names]
    decisions = 0
    for rec in sorted(records, key=lambda r: r["game"]):
        lineup_ = [index[p] if isinstance(p, str) else int(p) for p in rec["lineup"]]
        scores, winners = rec["scores"], rec["winners"]
        ranks = game_ranks(scores, winners)
        share = 1.0 / len(winners) if winners else 0.0
        for seat, p in enumerate(lineup_):
            games[p] += 1
            seat_games[p, seat] += 1
            score_sum[p] += scores[seat]
            rank_sum[p] += ranks[seat]
            if seat in winners:
                wins[p] += share
                seat_wins[p, seat] += share
                seat_win_total[seat] += share
        new = model.rate([[ratings[p]] for p in lineup_], ranks=ranks)
        for team, p in zip(new, lineup_, strict=True):
            ratings[p] = team[0]
        decisions += rec.get("decisions", 0)
    participants = []
    for p, name in enumerate(names):
        g = int(games[p])
        lo, hi = wilson_interval(float(wins[p]), g)
        participants.append({
            "name": name,
            "games": g,
            "wins": round(float(wins[p]), 6),
            "win_rate": float(wins[p] / g) if g else 0.0,
            "win_rate_ci95": [lo, hi],
            "mean_score": float(score_sum[p] / g) if g else 0.0,
            "mean_rank": float(rank_sum[p] / g) if g else 0.0,
            "rating": {"ordinal": float(ratings[p].ordinal()), "mu": float(ratings[p].mu),
                       "sigma": float(ratings[p].sigma)},
            "seat_games": [int(v) for v in seat_games[p]],
            "seat_win_rate": [float(seat_wins[p, s] / seat_games[p, s]) if seat_games[p, s] else None
                              for s in range(n)],
        })
    total = max(1, len(records))
    return {
        "participants": participants,
        "seat_win_share": [float(v / total) for v in seat_win_total],
        "mean_decisions": float(decisions / total),
    }


# ----------------------------------------------------------------------------------------------- result
@dataclass
class TournamentResult:
    """The outcome of ``run_tournament``: ``config``, per-participant ``participants`` statistics,
    ``seat_win_share`` (share of all wins taken from each seat), ``mean_decisions`` (per game),
    ``games`` (one record per game, lineup by participant name) and the ``wall_time`` in seconds
    (not part of ``to_dict``)."""

    config: dict[str, Any]
    participants: list[dict[str, Any]]
    seat_win_share: list[float]
    mean_decisions: float
    games: list[dict[str, Any]]
    wall_time: float = field(default=0.0, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``results.json`` (deterministic: no timings)."""
        return {
            "config": self.config,
            "participants": self.participants,
            "seat_win_share": self.seat_win_share,
            "mean_decisions_per_game": self.mean_decisions,
            "games": self.games,
        }

    def table(self) -> str:
        """A readable leaderboard (best rating first) with a header line and the seat balance."""
        c = self.config
        n = c["num_players"]
        variant = "+".join(v for v in ("oracle", "demon") if c[v]) or "base game"
        lines = [
            f"Bali tournament: {len(self.participants)} participants, {n} players, {c['games']} games, "
            f"seed {c['seed']}, {variant}, {c.get('played', str(c['workers']) + ' worker(s)')}"
            + (f", {self.wall_time:.1f} s" if self.wall_time else ""),
        ]
        if c["games"] != c["games_requested"]:
            lines.append(f"note: {c['games_requested']} games requested, rounded up to {c['games']} "
                         f"= whole rotations of {c['cycle_length']} games (every participant plays every seat equally)")
        width = max(11, *(len(p["name"]) for p in self.participants))
        seat_head = " ".join(f"{'seat' + str(s):>6}" for s in range(n))
        lines.append(f"{'participant':<{width}}  {'games':>6} {'wins':>8} {'win rate':>8} {'95% CI':>15} "
                     f"{'score':>6} {'rank':>5} {'rating':>7} {'mu':>6} {'sigma':>5}  win rate by {seat_head}")
        order = sorted(self.participants, key=lambda p: -p["rating"]["ordinal"])
        for p in order:
            lo, hi = p["win_rate_ci95"]
            seats = " ".join(f"{'-':>6}" if v is None else f"{100 * v:5.1f}%" for v in p["seat_win_rate"])
            lines.append(
                f"{p['name']:<{width}}  {p['games']:>6} {p['wins']:>8.6g} {100 * p['win_rate']:7.1f}% "
                f"{'[' + format(100 * lo, '.1f') + ', ' + format(100 * hi, '.1f') + ']%':>15} "
                f"{p['mean_score']:6.2f} {p['mean_rank']:5.2f} {p['rating']['ordinal']:7.2f} "
                f"{p['rating']['mu']:6.2f} {p['rating']['sigma']:5.2f}  {'':>11} {seats}"
            )
        lines.append("share of all wins by seat: " + ", ".join(
            f"seat {s} {100 * v:.1f}%" for s, v in enumerate(self.seat_win_share))
            + f" (equal share {100 / n:.1f}%); {self.mean_decisions:.1f} decisions per game")
        lines.append("wins: a shared win counts 1/k; rank: 1 = best, ties share; rating: OpenSkill Plackett-Luce "
                     "ordinal = mu - 3 sigma")
        return "\n".join(lines)

    def save(self, out_dir: str | Path) -> dict[str, Path]:
        """Write ``results.json``, ``results.csv`` and (with matplotlib) ``ratings.png`` into
        ``out_dir``; return the paths written by kind."""
        from bali_env.files import replace_when_done, write_text

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {"json": out / "results.json", "csv": out / "results.csv"}
        write_text(paths["json"], json.dumps(self.to_dict(), indent=1) + "\n")
        n = self.config["num_players"]
        with replace_when_done(paths["csv"]) as tmp, tmp.open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["participant", "spec", "games", "wins", "win_rate", "ci95_low", "ci95_high", "mean_score",
                             "mean_rank", "rating_ordinal", "rating_mu", "rating_sigma"]
                            + [f"win_rate_seat{s}" for s in range(n)])
            for p, spec in zip(self.participants, self.config["agents"], strict=True):
                writer.writerow([p["name"], spec, p["games"], p["wins"], p["win_rate"], *p["win_rate_ci95"],
                                 p["mean_score"], p["mean_rank"], p["rating"]["ordinal"], p["rating"]["mu"],
                                 p["rating"]["sigma"]] + ["" if v is None else v for v in p["seat_win_rate"]])
        try:
            plot_ratings(self, out / "ratings.png")
            paths["png"] = out / "ratings.png"
        except ImportError:
            print("no ratings.png: matplotlib is not installed (pip install -e '.[tournament]')", file=sys.stderr)
        return paths


def _load_pyplot() -> None:
    """Import matplotlib's pyplot (Agg backend) for ``plot_ratings``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401


def plot_ratings(result: TournamentResult, path: str | Path) -> None:
    """Draw the win rates (with 95% intervals) and the OpenSkill ratings per participant."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = sorted(result.participants, key=lambda p: p["rating"]["ordinal"])
    names = [p["name"] for p in order]
    y = np.arange(len(order))
    n = result.config["num_players"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 1.9 + 0.45 * len(order)), sharey=True)
    rates = np.array([100 * p["win_rate"] for p in order])
    lo = np.array([100 * p["win_rate_ci95"][0] for p in order])
    hi = np.array([100 * p["win_rate_ci95"][1] for p in order])
    ax1.barh(y, rates, color="tab:blue", alpha=0.7)
    ax1.errorbar(rates, y, xerr=[np.maximum(rates - lo, 0), np.maximum(hi - rates, 0)], fmt="none", ecolor="black",
                 capsize=4)
    ax1.axvline(100 / n, color="gray", ls="--", lw=1, label=f"equal share ({100 / n:.0f}%)")
    ax1.set_yticks(y, names)
    ax1.set_xlabel("win rate, % (95% Wilson interval)")
    ax1.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    mu = np.array([p["rating"]["mu"] for p in order])
    sigma = np.array([p["rating"]["sigma"] for p in order])
    ordinal = np.array([p["rating"]["ordinal"] for p in order])
    ax2.errorbar(mu, y, xerr=3 * sigma, fmt="o", color="tab:orange", capsize=4, label="mu ± 3 sigma")
    ax2.plot(ordinal, y, "k|", markersize=14, label="ordinal = mu - 3 sigma")
    ax2.set_xlabel("OpenSkill Plackett-Luce rating")
    ax2.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    for ax in (ax1, ax2):
        ax.grid(True, axis="x", alpha=0.3)
    c = result.config
    fig.suptitle(f"Bali tournament: {n} players, {c['games']} games, seed {c['seed']}", fontsize=11)
    fig.tight_layout()
    from bali_env.files import replace_when_done

    with replace_when_done(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)


# ----------------------------------------------------------------------------------------------- entry point
def validate_agents(specs: Sequence[str]) -> None:
    """Build every agent once; raise TournamentError naming the spec when one cannot be built."""
    for spec in specs:
        try:
            make_agent(spec, seed=0)
        except (ValueError, TypeError) as exc:
            raise TournamentError(f"agent {spec!r}: {exc}") from exc


def _check_setup(specs: list[str], num_players: Any, workers: Any, batch_size: Any, seed: Any,
                 out_dir: str | Path | None, save_records: bool, resume: bool) -> None:
    """TournamentError for a bad setup, before anything is played or written."""
    if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)):
        raise TournamentError(f"num_players must be 2, 3 or 4, got {num_players!r}")
    _check_sizes(len(specs), int(num_players))
    for name, value in (("workers", workers), ("batch_size", batch_size)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise TournamentError(f"{name} must be a positive int, got {value!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TournamentError(f"seed must be an int, got {seed!r}")
    validate_agents(specs)
    if save_records and out_dir is None:
        raise TournamentError("save_records needs out_dir (the records go to out_dir/records/)")
    if resume and out_dir is None:
        raise TournamentError("resume needs out_dir (the folder of the interrupted run)")
    if out_dir is not None:
        check_out_dir(Path(out_dir))


BACKENDS = ("local", "ray")  #: where a tournament's games are played
QUICK_GAMES = 64  #: at most this many games of batched agents, kernels cached: play in-process
QUICK_WAVES = 2  #: the waves of such a run (it lasts a second or two: larger batches, less overhead)
#: agents cheap enough to play without compiled kernels (NumPy, or light per-decision kernels)
INTERPRETABLE_AGENTS = ("random", "greedy", "ppo")
INTERPRETED_NOTE = "interpreted: kernels not compiled yet"  #: in ``played`` when a run was interpreted


def _interpret_first_run(job: dict[str, Any], games: int) -> bool:
    """A short run (at most ``QUICK_GAMES`` games) of cheap agents (``INTERPRETABLE_AGENTS``)
    while the game's kernels are not in Numba's disk cache: compiling them takes about 20 s per
    process, playing such a run interpreted (Numba's JIT off, the same code run by Python) takes
    a few seconds and gives the same games move for move, so it is played interpreted in worker
    processes (long runs and search agents compile as usual, and fill the cache)."""
    if games > QUICK_GAMES or any(str(s).split(":")[0] not in INTERPRETABLE_AGENTS for s in job["specs"]):
        return False
    from bali_env.vector import kernels_cached

    return not kernels_cached(job["num_players"], job["oracle"], job["demon"])


def _quick_in_process(job: dict[str, Any], games: int) -> bool:
    """A short run of batched (fast) agents whose kernels are already compiled: starting worker
    processes (about 2 s on 2 cores) would cost more than the games, so they play here."""
    if games > QUICK_GAMES or not all(make_agent(s, seed=0).batched for s in dict.fromkeys(job["specs"])):
        return False
    from bali_env.vector import kernels_cached

    return kernels_cached(job["num_players"], job["oracle"], job["demon"])


def _check_backend(backend: Any, ray_address: Any, chunk_size: Any) -> None:
    """The backend settings, checked before any game (TournamentError saying what is wrong)."""
    if backend not in BACKENDS:
        raise TournamentError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend != "ray" and (ray_address is not None or chunk_size is not None):
        raise TournamentError("ray_address and chunk_size need backend='ray'")
    if chunk_size is not None and (isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1):
        raise TournamentError(f"chunk_size must be a positive int, got {chunk_size!r}")
    if backend == "ray":
        from .ray_backend import check_ray

        check_ray(ray_address)


def _play_missing(job: dict[str, Any], workers: int, total: int, done: dict[int, dict[str, Any]],
                  journal: Any, progress: bool, plot: bool = False, ray: dict[str, Any] | None = None) -> str:
    """Play the games of ``range(total)`` not in ``done`` (in this process or in workers), adding
    each record to ``done`` and to the journal as it finishes, with a progress bar. Returns
    where they were played (``"ray"``, ``"N worker processes"`` or ``"in-process"``)."""
    from tqdm.auto import tqdm

    todo = [k for k in range(total) if k not in done]
    if not todo:
        return "nothing left to play"
    # On 2 cores, compiling in the workers ends sooner than compiling once here first: each
    # worker compiles its share of the kernels (``compile_share``) and loads the others' from the
    # disk cache (measured from empty caches, 20 games greedy vs random: about 30 s, against 38 s
    # with every worker compiling everything and 56-64 s compiling here first). In-process runs
    # compile here. Either way a line says so meanwhile. A short first run of cheap agents
    # compiles nothing: it plays interpreted (``_interpret_first_run``), 6 s instead of 30.
    if plot:  # load the chart's library meanwhile
        threading.Thread(target=_load_pyplot, daemon=True).start()
    interpreted = ray is None and _interpret_first_run(job, len(todo))
    quick = False  # a short run of fast agents, played here: a second or two, so fewer, larger waves
    spinner = _Spinner(progress and not interpreted)
    if interpreted:
        workers = max(1, min(workers, len(todo)))
    elif ray is None and (min(workers, len(todo)) == 1 or (quick := _quick_in_process(job, len(todo)))):
        workers = 1
        try:
            warm_up(job["specs"], job["num_players"], job["oracle"], job["demon"])
        finally:
            spinner.stop()
    with tqdm(total=total, initial=len(done), unit="game", desc="tournament", disable=not progress,
              file=sys.stderr) as bar, _interrupt_on_sigterm():

        def on_games(recs: list[dict[str, Any]]) -> None:
            for r in recs:
                done[int(r["game"])] = r
                if journal is not None:
                    journal.write(json.dumps(r) + "\n")
            if journal is not None:
                journal.flush()
            bar.update(len(recs))

        try:
            if ray is not None:
                from .ray_backend import play_on_ray

                play_on_ray(job, todo, on_games, ray["address"], workers, ray["chunk_size"], on_first=spinner.stop)
                return "ray"
            if interpreted:
                _play_parallel(job, workers, todo, on_games, interpreted=True)
                return f"{workers} worker process{'es' if workers > 1 else ''}, {INTERPRETED_NOTE}"
            if min(workers, len(todo)) == 1:
                play_games(games=todo, worker=0, on_finished=on_games, waves=QUICK_WAVES if quick else PROGRESS_WAVES,
                           **job)
                return "in-process"
            _play_parallel(job, min(workers, len(todo)), todo, on_games, on_first=spinner.stop)
            return f"{min(workers, len(todo))} worker processes"
        finally:
            spinner.stop()


def run_tournament(
    agents: list[str],
    num_players: int = 4,
    games: int = 1000,
    seed: int = 0,
    workers: int = 2,
    oracle: bool = False,
    demon: bool = False,
    out_dir: str | Path | None = None,
    progress: bool = True,
    batch_size: int = DEFAULT_BATCH_SIZE,
    save_records: bool = False,
    resume: bool = False,
    backend: str = "local",
    ray_address: str | None = None,
    chunk_size: int | None = None,
) -> TournamentResult:
    """Play a seat-rotated tournament between the agent specs ``agents`` (see the module
    docstring for lineups, seeding and statistics) and return its ``TournamentResult``; with
    ``out_dir``, also write results.json, results.csv and ratings.png there, and with
    ``save_records`` every game as a replayable record (``bali_env.records``) in
    ``out_dir/records/``. ``games`` is rounded up to whole rotations. Raises TournamentError (a
    ValueError) for a bad setup.

    With ``out_dir``, every finished game is appended to ``out_dir/journal.jsonl`` as it ends;
    ``resume=True`` reads that journal and plays only the games it lacks (the results are those
    of an uninterrupted run); otherwise an earlier run's files in ``out_dir`` are replaced (said
    on stderr). SIGINT/SIGTERM stop the workers and raise ``TournamentInterrupted`` (a
    KeyboardInterrupt) with the journal kept.

    ``backend="ray"`` plays chunks of ``chunk_size`` games as Ray tasks on a local Ray instance of
    ``workers`` CPUs, or on the cluster at ``ray_address`` (``agents.ray_backend``); the results
    are the same as with local worker processes."""
    start = time.perf_counter()
    specs = [str(s) for s in agents]
    _check_backend(backend, ray_address, chunk_size)
    _check_setup(specs, num_players, workers, batch_size, seed, out_dir, save_records, resume)
    n, seed = int(num_players), int(seed)
    total = rounded_games(games, len(specs), n)
    workers = min(int(workers), total)
    names = participant_names(specs)
    config = {
        "agents": specs,
        "participants": names,
        "num_players": n,
        "games_requested": int(games),
        "games": total,
        "cycle_length": cycle_length(len(specs), n),
        "seed": seed,
        "game_seeds": f"game k is dealt from seed {seed} + k",
        "workers": workers,
        "batch_size": int(batch_size),
        "backend": backend,
        "oracle": bool(oracle),
        "demon": bool(demon),
        "save_records": bool(save_records),
        "lineup_scheme": LINEUP_SCHEME,
    }
    job = {"specs": specs, "num_players": n, "seed": seed, "oracle": bool(oracle), "demon": bool(demon),
           "batch_size": int(batch_size), "keep_actions": bool(save_records)}
    journal, done = _start_journal(Path(out_dir), config, resume) if out_dir is not None else (None, {})
    try:
        ray = {"address": ray_address, "chunk_size": chunk_size} if backend == "ray" else None
        config["played"] = _play_missing(job, workers, total, done, journal, progress, plot=out_dir is not None,
                                         ray=ray)
    except KeyboardInterrupt:
        raise TournamentInterrupted(len(done), total, None if out_dir is None else Path(out_dir) / JOURNAL) from None
    except RuntimeError as exc:
        raise TournamentFailed(str(exc), len(done), total, None if out_dir is None else Path(out_dir) / JOURNAL) \
            from None
    finally:
        if journal is not None:
            journal.close()
    records = [done[k] for k in sorted(done)]
    if len(records) != total or [r["game"] for r in records] != list(range(total)):
        raise RuntimeError(f"expected records of games 0..{total - 1}, got {len(records)}")
    stats = compute_stats(records, names, n)
    if save_records:
        from bali_env.records import new_record, save_record

        for r in records:
            rec = new_record(n, oracle, demon, r["seed"], r.pop("actions"), r["scores"], r["winners"],
                             [names[p] for p in r["lineup"]])
            save_record(rec, Path(out_dir) / "records" / f"game_{r['game']:05d}.json")
    named = [dict(r, lineup=[names[p] for p in r["lineup"]]) for r in records]
    result = TournamentResult(config=config, participants=stats["participants"],
                              seat_win_share=stats["seat_win_share"], mean_decisions=stats["mean_decisions"],
                              games=named)
    result.wall_time = time.perf_counter() - start
    if out_dir is not None:
        result.save(out_dir)
    return result
