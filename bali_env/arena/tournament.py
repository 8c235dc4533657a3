"""``run_tournament``: checks, the journal, where to play (in-process, worker processes,
interpreted, Ray), the progress bar, and the result."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bali_env.bots.registry import make_agent
from bali_env.arena.checks import check_tournament
from bali_env.arena.errors import TournamentFailed, TournamentInterrupted
from bali_env.arena.journal import JOURNAL, claim_out_dir, start_journal
from bali_env.arena.games import DEFAULT_BATCH_SIZE, PROGRESS_WAVES, play_games
from bali_env.arena.standings import TournamentResult, load_pyplot
from bali_env.arena.schedule import LINEUP_SCHEME, cycle_length, rounded_games
from bali_env.arena.stats import compute_stats, load_rating_fit, move_time_stats
from bali_env.arena.workers import CompileNotice, compile_parts, play_parallel, warm_up

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
    from bali_env.envs.batched import kernels_cached

    return not kernels_cached(job["num_players"], job["oracle"], job["demon"])


def _quick_in_process(job: dict[str, Any], games: int) -> bool:
    """A short run of batched (fast) agents whose kernels are already compiled: starting worker
    processes (about 2 s on 2 cores) would cost more than the games, so they play here."""
    if games > QUICK_GAMES or not all(make_agent(s, seed=0).batched for s in dict.fromkeys(job["specs"])):
        return False
    from bali_env.envs.batched import kernels_cached

    return kernels_cached(job["num_players"], job["oracle"], job["demon"])


class _GameBar:
    """The tournament's progress bar, made by ``make`` when ``open()`` is first called (or the
    first games are counted), so that time spent compiling before never enters its rate."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._bar: Any = None

    def open(self) -> None:
        """Show the bar (once)."""
        if self._bar is None:
            self._bar = self._make()

    def update(self, count: int) -> None:
        """Count ``count`` more finished games."""
        self.open()
        self._bar.update(count)

    def __enter__(self) -> _GameBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()


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


def _venue(job: dict[str, Any], workers: int, todo: int, ray: dict[str, Any] | None) -> tuple[str, int]:
    """Where ``todo`` games are played, and by how many processes: ``"ray"``, ``"interpreted"``
    (worker processes with Numba's JIT off: a short first run of cheap agents), ``"quick"`` (a
    short run of batched agents with cached kernels: here, in two waves), ``"here"`` (one
    worker asked for, or one game) or ``"workers"``."""
    if ray is not None:
        return "ray", workers
    if _interpret_first_run(job, todo):
        return "interpreted", max(1, min(workers, todo))
    if min(workers, todo) == 1:
        return "here", 1
    if _quick_in_process(job, todo):
        return "quick", 1
    return "workers", min(workers, todo)


def _play_missing(job: dict[str, Any], workers: int, total: int, done: dict[int, dict[str, Any]],
                  journal: Any, progress: bool | Callable[[int], None], plot: bool = False,
                  ray: dict[str, Any] | None = None) -> str:
    """Play the games of ``range(total)`` not in ``done`` (in this process or in workers), adding
    each record to ``done`` and to the journal as it finishes, with a progress bar (or, when
    ``progress`` is a function, calling it with the count of each batch of games ended). Returns
    where they were played (``"ray"``, ``"N worker processes"`` or ``"in-process"``)."""
    from tqdm.auto import tqdm

    todo = [k for k in range(total) if k not in done]
    if not todo:
        return "nothing left to play"
    # On 2 cores, compiling in the workers ends sooner than compiling once here first: each
    # worker compiles its share of the kernels (``compile_share``) and loads the others' from the
    # disk cache (measured from empty caches, 20 games greedy vs random: about 30 s, against 38 s
    # with every worker compiling everything and 56-64 s compiling here first). In-process runs
    # compile here. Either way a line says so while Numba compiles (and only then). A short
    # first run of cheap agents compiles nothing: it plays interpreted, 6 s instead of 30.
    threading.Thread(target=load_rating_fit, daemon=True).start()  # the statistics' library, meanwhile
    if plot:  # and the chart's
        threading.Thread(target=load_pyplot, daemon=True).start()
    venue, workers = _venue(job, workers, len(todo), ray)
    notice = CompileNotice(bool(progress), parts=len(compile_parts(job["specs"])))
    if venue in ("here", "quick"):
        try:
            warm_up(job["specs"], job["num_players"], job["oracle"], job["demon"], notice)
        finally:
            notice.stop()
    # the bar opens when the games begin (after any compiling), so its rate and time left count games only
    bar = _GameBar(lambda: tqdm(total=total, initial=len(done), unit="game", desc="tournament",
                                disable=progress is not True, file=sys.stderr))
    with bar, _interrupt_on_sigterm():

        def on_games(recs: list[dict[str, Any]]) -> None:
            for r in recs:
                done[int(r["game"])] = r
                if journal is not None:
                    journal.write(json.dumps(r) + "\n")
            if journal is not None:
                journal.flush()
            bar.update(len(recs))
            if callable(progress):
                progress(len(recs))

        try:
            if venue == "ray":
                from bali_env.arena.ray_backend import play_on_ray

                bar.open()
                play_on_ray(job, todo, on_games, ray["address"], workers, ray["chunk_size"], on_first=notice.stop)
                return "ray"
            if venue in ("here", "quick"):
                bar.open()
                play_games(games=todo, worker=0, on_finished=on_games,
                           waves=QUICK_WAVES if venue == "quick" else PROGRESS_WAVES, **job)
                return "in-process"
            if venue == "interpreted":
                bar.open()  # nothing compiles
            play_parallel(job, workers, todo, on_games, notice=notice, interpreted=venue == "interpreted",
                          on_ready=bar.open)
            plural = "es" if workers > 1 else ""
            return f"{workers} worker process{plural}" + (f", {INTERPRETED_NOTE}" if venue == "interpreted" else "")
        finally:
            notice.stop()


def run_tournament(
    agents: list[str],
    num_players: int = 4,
    games: int = 1000,
    seed: int = 0,
    workers: int = 2,
    oracle: bool = False,
    demon: bool = False,
    out_dir: str | Path | None = None,
    progress: bool | Callable[[int], None] = True,
    batch_size: int = DEFAULT_BATCH_SIZE,
    save_records: bool = False,
    resume: bool = False,
    backend: str = "local",
    ray_address: str | None = None,
    chunk_size: int | None = None,
    move_time: float | None = None,
    game_time: float | None = None,
    overwrite: bool = False,
) -> TournamentResult:
    """Play a seat-rotated tournament between the agent specs ``agents`` (see the module
    docstring for lineups, seeding and statistics) and return its ``TournamentResult``; with
    ``out_dir``, also write results.json, results.csv and ratings.png there, and with
    ``save_records`` every game as a replayable record (``bali_env.envs.records``) in
    ``out_dir/records/``. ``games`` is rounded up to whole rotations. Raises TournamentError (a
    ValueError) for a bad setup.

    With ``out_dir``, every finished game is appended to ``out_dir/journal.jsonl`` as it ends;
    ``resume=True`` reads that journal and plays only the games it lacks (the results are those
    of an uninterrupted run). An ``out_dir`` holding an earlier run (finished or not) is refused
    (TournamentError) unless ``overwrite=True``: then its files are replaced (said on stderr),
    the rule of every output folder (``bali_env.files.check_out_folder``). SIGINT/SIGTERM stop
    the workers and raise ``TournamentInterrupted`` (a KeyboardInterrupt) with the journal kept.

    ``backend="ray"`` plays chunks of ``chunk_size`` games as Ray tasks on a local Ray instance of
    ``workers`` CPUs, or on the cluster at ``ray_address`` (``bali_env.arena.ray_backend``); the results
    are the same as with local worker processes.

    ``move_time`` / ``game_time``: the clock, in seconds per decision and per game, for every
    agent (``play.Clock``; ``cmd:`` bots always have one). A participant that runs out of time,
    raises, breaks the bot protocol or chooses an illegal action loses that game (a forfeit, by
    reason, in the results and the table); a ``cmd:`` bot is restarted for its next game, and its
    standard error goes to ``out_dir/logs/NAME.log``. A run with ``cmd:`` bots plays one game at
    a time per worker (``batch_size`` 1: one process per bot per worker).

    ``progress``: a progress bar on stderr (True), none (False), or a function called with the
    count of each batch of games as it ends (a caller's own bar: ``bali train``'s evaluations)."""
    start = time.perf_counter()
    specs = [str(s) for s in agents]
    names = check_tournament(specs, num_players, games, seed, workers, out_dir, batch_size, save_records, resume,
                             backend, ray_address, chunk_size, move_time, game_time, overwrite)
    bots = [s for s in specs if s.partition(":")[0] == "cmd"]
    if bots:
        batch_size = 1  # a bot process plays one game at a time
    n, seed = int(num_players), int(seed)
    total = rounded_games(games, len(specs), n)
    workers = min(int(workers), total)
    config = {
        "agents": specs,
        "participants": names,
        "num_players": n,
        "games_requested": int(games),
        "games": total,
        "cycle_length": cycle_length(len(specs), n),
        "seed": seed,
        "game_seeds": f"game k is dealt from deal_seed({seed}, k)",
        "workers": workers,
        "batch_size": int(batch_size),
        "backend": backend,
        "oracle": bool(oracle),
        "demon": bool(demon),
        "save_records": bool(save_records),
        "move_time": move_time,
        "game_time": game_time,
        "lineup_scheme": LINEUP_SCHEME,
    }
    log_dir = str(Path(out_dir) / "logs") if bots and out_dir is not None else None
    job = {"specs": specs, "num_players": n, "seed": seed, "oracle": bool(oracle), "demon": bool(demon),
           "batch_size": int(batch_size), "keep_actions": bool(save_records), "move_time": move_time,
           "game_time": game_time, "names": names, "log_dir": log_dir}
    with claim_out_dir(Path(out_dir)) if out_dir is not None else contextlib.nullcontext():
        journal, done = start_journal(Path(out_dir), config, resume) if out_dir is not None else (None, {})
        try:
            ray = {"address": ray_address, "chunk_size": chunk_size} if backend == "ray" else None
            config["played"] = _play_missing(job, workers, total, done, journal, progress, plot=out_dir is not None,
                                             ray=ray)
        except KeyboardInterrupt:
            raise TournamentInterrupted(len(done), total, _journal_path(out_dir)) from None
        except RuntimeError as exc:
            raise TournamentFailed(str(exc), len(done), total, _journal_path(out_dir)) from None
        finally:
            if journal is not None:
                journal.close()
        result, records = _result(config, done, names, save_records, out_dir)
        if out_dir is not None:
            result.save(out_dir)
            _write_pages(Path(out_dir), records, progress)
        result.wall_time = time.perf_counter() - start
    return result


def _write_pages(out_dir: Path, records: dict[int, dict[str, Any]], progress: bool) -> None:
    """``index.html`` and, for saved records, a replay page per game (``pages.write_pages``),
    with a progress bar over the replays."""
    from bali_env.arena.pages import write_pages

    bar = None
    if progress and records:
        from tqdm import tqdm

        bar = tqdm(total=len(records), desc="replays", unit="game", file=sys.stderr, leave=False)
    try:
        write_pages(out_dir, records, on_replay=(lambda i, total: bar.update(1)) if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()


def _journal_path(out_dir: str | Path | None) -> Path | None:
    """Where the journal of a run writing to ``out_dir`` is (None without one)."""
    return None if out_dir is None else Path(out_dir) / JOURNAL


def _result(config: dict[str, Any], done: dict[int, dict[str, Any]], names: list[str], save_records: bool,
            out_dir: str | Path | None) -> tuple[TournamentResult, dict[int, dict[str, Any]]]:
    """The statistics of the finished games ``done`` (all of them), and with ``save_records``
    their records, saved to ``out_dir/records/`` (game index -> record; else empty)."""
    total, n = config["games"], config["num_players"]
    records = [done[k] for k in sorted(done)]
    if len(records) != total or [r["game"] for r in records] != list(range(total)):
        raise RuntimeError(f"expected records of games 0..{total - 1}, got {len(records)}")
    stats = compute_stats(records, names, n)
    saved = {}
    if save_records:
        from bali_env.envs.records import new_record, save_record

        for r in records:  # a game lost by a fault is saved as unfinished (no scores, no winners)
            lost = r.get("forfeit") is not None
            rec = new_record(n, config["oracle"], config["demon"], r["seed"], r.pop("actions"), r["scores"],
                             None if lost else r["winners"], [names[p] for p in r["lineup"]])
            save_record(rec, Path(out_dir) / "records" / f"game_{r['game']:05d}.json")
            saved[int(r["game"])] = rec
    timing = move_time_stats(records, names)
    named = [{k: v for k, v in r.items() if k != "move_times"} | {"lineup": [names[p] for p in r["lineup"]]}
             for r in records]  # results.json holds nothing that depends on timing
    return TournamentResult(config=config, participants=stats["participants"],
                            seat_win_share=stats["seat_win_share"], mean_decisions=stats["mean_decisions"],
                            games=named, timing=timing), saved
