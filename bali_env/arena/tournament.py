"""``run_tournament``: checks, the journal, where to play (in-process, worker processes,
interpreted, Ray), the progress bar, and the result."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bali_env.bots.registry import make_agent
from bali_env.engine.config import GameConfig
from bali_env.arena.checks import check_tournament
from bali_env.arena.errors import TournamentFailed, TournamentInterrupted
from bali_env.arena.journal import JOURNAL, claim_out_dir, start_journal
from bali_env.arena.games import PROGRESS_WAVES, play_games
from bali_env.arena.settings import GameJob, TournamentSettings
from bali_env.arena.standings import TournamentResult, load_pyplot
from bali_env.arena.schedule import LINEUP_SCHEME, cycle_length, rounded_games
from bali_env.arena.stats import compute_stats, load_rating_fit, move_time_stats
from bali_env.arena.workers import CompileNotice, compile_parts, play_parallel, warm_up

QUICK_GAMES = 64  #: at most this many games of batched agents, kernels cached: play in-process
QUICK_WAVES = 2  #: the waves of such a run (it lasts a second or two: larger batches, less overhead)
#: agents cheap enough to play without compiled kernels (NumPy, or light per-decision kernels)
INTERPRETABLE_AGENTS = ("random", "greedy", "ppo")
INTERPRETED_NOTE = "interpreted: kernels not compiled yet"  #: in ``played`` when a run was interpreted


def _interpret_first_run(specs: Sequence[str], game: GameConfig, games: int) -> bool:
    """A short run (at most ``QUICK_GAMES`` games) of cheap agents (``INTERPRETABLE_AGENTS``)
    while the game's kernels are not in Numba's disk cache: compiling them takes about 20 s per
    process, playing such a run interpreted (Numba's JIT off, the same code run by Python) takes
    a few seconds and gives the same games move for move, so it is played interpreted in worker
    processes (long runs and search agents compile as usual, and fill the cache)."""
    if games > QUICK_GAMES or any(str(s).split(":")[0] not in INTERPRETABLE_AGENTS for s in specs):
        return False
    from bali_env.envs.batched import kernels_cached

    return not kernels_cached(game.num_players, game.oracle, game.demon)


def _quick_in_process(specs: Sequence[str], game: GameConfig, games: int) -> bool:
    """A short run of batched (fast) agents whose kernels are already compiled: starting worker
    processes (about 2 s on 2 cores) would cost more than the games, so they play here."""
    if games > QUICK_GAMES or not all(make_agent(s, seed=0).batched for s in dict.fromkeys(specs)):
        return False
    from bali_env.envs.batched import kernels_cached

    return kernels_cached(game.num_players, game.oracle, game.demon)


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


def _venue(specs: Sequence[str], game: GameConfig, workers: int, todo: int, ray: bool) -> tuple[str, int]:
    """Where ``todo`` games are played, and by how many processes: ``"ray"``, ``"interpreted"``
    (worker processes with Numba's JIT off: a short first run of cheap agents), ``"quick"`` (a
    short run of batched agents with cached kernels: here, in two waves), ``"here"`` (one
    worker asked for, or one game) or ``"workers"``."""
    if ray:
        return "ray", workers
    if _interpret_first_run(specs, game, todo):
        return "interpreted", max(1, min(workers, todo))
    if min(workers, todo) == 1:
        return "here", 1
    if _quick_in_process(specs, game, todo):
        return "quick", 1
    return "workers", min(workers, todo)


class _Run:
    """One tournament being played: its ``specs``, ``settings``, ``job`` (``GameJob``) and
    ``config`` (of results.json), the finished games ``done`` (by index) and the ``journal``."""

    def __init__(self, specs: list[str], settings: TournamentSettings, job: GameJob, config: dict[str, Any]) -> None:
        self.specs, self.settings, self.job, self.config = specs, settings, job, config
        self.total, self.workers = config["games"], config["workers"]
        self.done: dict[int, dict[str, Any]] = {}
        self.journal: Any = None

    def play(self) -> str:
        """Play the games not yet done (``play_missing``); an interruption or a failure raises
        ``TournamentInterrupted`` / ``TournamentFailed`` with the journal closed and kept."""
        out = self.settings.out_dir
        try:
            return self.play_missing()
        except KeyboardInterrupt:
            raise TournamentInterrupted(len(self.done), self.total, _journal_path(out)) from None
        except RuntimeError as exc:
            raise TournamentFailed(str(exc), len(self.done), self.total, _journal_path(out)) from None
        finally:
            if self.journal is not None:
                self.journal.close()

    def on_games(self, recs: list[dict[str, Any]]) -> None:
        """Finished games: into ``done`` and the journal."""
        for r in recs:
            self.done[int(r["game"])] = r
            if self.journal is not None:
                self.journal.write(json.dumps(r) + "\n")
        if self.journal is not None:
            self.journal.flush()

    def play_missing(self) -> str:
        """Play the games of ``range(total)`` not in ``done`` (in this process or in workers), adding
        each record to ``done`` and to the journal as it finishes, with a progress bar (or, when
        ``progress`` is a function, calling it with the count of each batch of games ended). Returns
        where they were played (``"ray"``, ``"N worker processes"`` or ``"in-process"``)."""
        todo = [k for k in range(self.total) if k not in self.done]
        if not todo:
            return "nothing left to play"
        # On 2 cores, compiling in the workers ends sooner than compiling once here first: each
        # worker compiles its share of the kernels (``compile_share``) and loads the others' from the
        # disk cache (measured from empty caches, 20 games greedy vs random: about 30 s, against 38 s
        # with every worker compiling everything and 56-64 s compiling here first). In-process runs
        # compile here. Either way a line says so while Numba compiles (and only then). A short
        # first run of cheap agents compiles nothing: it plays interpreted, 6 s instead of 30.
        threading.Thread(target=load_rating_fit, daemon=True).start()  # the statistics' library, meanwhile
        if self.settings.out_dir is not None:  # and the chart's
            threading.Thread(target=load_pyplot, daemon=True).start()
        venue, workers = _venue(self.specs, self.job.game, self.workers, len(todo), self.settings.backend == "ray")
        progress = self.settings.progress
        notice = CompileNotice(bool(progress), parts=len(compile_parts(self.specs)))
        if venue in ("here", "quick"):
            try:
                warm_up(self.specs, self.job.game, notice)
            finally:
                notice.stop()
        with self._bar() as bar, _interrupt_on_sigterm():

            def on_games(recs: list[dict[str, Any]]) -> None:
                self.on_games(recs)
                bar.update(len(recs))
                if callable(progress):
                    progress(len(recs))

            try:
                return self._play_at(venue, workers, todo, on_games, bar, notice)
            finally:
                notice.stop()

    def _bar(self) -> _GameBar:
        """The progress bar, opened when the games begin (after any compiling), so that its rate
        and time left count games only."""
        from tqdm.auto import tqdm

        return _GameBar(lambda: tqdm(total=self.total, initial=len(self.done), unit="game", desc="tournament",
                                     disable=self.settings.progress is not True, file=sys.stderr))

    def _play_at(self, venue: str, workers: int, todo: list[int], on_games: Callable[[list[dict[str, Any]]], None],
                 bar: _GameBar, notice: CompileNotice) -> str:
        """Play ``todo`` where ``_venue`` said; return where, in words."""
        if venue == "ray":
            from bali_env.arena.ray_backend import play_on_ray

            bar.open()
            play_on_ray(self.specs, self.job, todo, on_games, self.settings.ray_address, workers,
                        self.settings.chunk_size, on_first=notice.stop)
            return "ray"
        if venue in ("here", "quick"):
            bar.open()
            play_games(self.specs, todo, self.job, worker=0, on_finished=on_games,
                       waves=QUICK_WAVES if venue == "quick" else PROGRESS_WAVES)
            return "in-process"
        if venue == "interpreted":
            bar.open()  # nothing compiles
        play_parallel(self.specs, self.job, workers, todo, on_games, notice=notice,
                      interpreted=venue == "interpreted", on_ready=bar.open)
        plural = "es" if workers > 1 else ""
        return f"{workers} worker process{plural}" + (f", {INTERPRETED_NOTE}" if venue == "interpreted" else "")


def run_tournament(agents: Sequence[str], settings: TournamentSettings | None = None,
                   **fields: Any) -> TournamentResult:
    """Play a seat-rotated tournament between the agent specs ``agents`` (see the module
    docstring for lineups, seeding and statistics) and return its ``TournamentResult``.
    ``settings``: a ``TournamentSettings`` (every option with its default), or its fields as
    keywords (``num_players=4, games=1000, seed=0, workers=2, ...``; with a record they override
    its own). With ``out_dir``, also write results.json, results.csv and ratings.png there, and
    with ``save_records`` every game as a replayable record (``bali_env.envs.records``) in
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
    settings = TournamentSettings.make(settings, **fields)
    specs = [str(s) for s in agents]
    names = check_tournament(specs, settings)
    job = _job(specs, names, settings)
    run = _Run(specs, settings, job, _config(specs, names, settings, job))
    out_dir = settings.out_dir
    with claim_out_dir(out_dir) if out_dir is not None else contextlib.nullcontext():
        if out_dir is not None:
            run.journal, run.done = start_journal(out_dir, run.config, settings.resume)
        run.config["played"] = run.play()
        result, records = _result(run.config, run.done, names, settings.save_records, out_dir)
        if out_dir is not None:
            result.save(out_dir)
            _write_pages(out_dir, records, settings.progress)
        result.wall_time = time.perf_counter() - start
    return result


def _job(specs: list[str], names: list[str], settings: TournamentSettings) -> GameJob:
    """How the workers play the games: a run with ``cmd:`` bots one game at a time per worker
    (a bot process plays one game at a time), its bots' standard error in ``out_dir/logs``."""
    bots = any(s.partition(":")[0] == "cmd" for s in specs)
    out_dir = settings.out_dir
    return GameJob(game=settings.game, seed=settings.seed, batch_size=1 if bots else settings.batch_size,
                   keep_actions=settings.save_records, move_time=settings.move_time, game_time=settings.game_time,
                   names=tuple(names), log_dir=str(out_dir / "logs") if bots and out_dir is not None else None)


def _config(specs: list[str], names: list[str], settings: TournamentSettings, job: GameJob) -> dict[str, Any]:
    """The run's ``config`` (results.json, the journal's header): what decides its games."""
    game, seed = settings.game, settings.seed
    total = rounded_games(settings.games, len(specs), game)
    return {
        "agents": specs,
        "participants": names,
        "num_players": game.num_players,
        "games_requested": settings.games,
        "games": total,
        "cycle_length": cycle_length(len(specs), game),
        "seed": seed,
        "game_seeds": f"game k is dealt from deal_seed({seed}, k)",
        "workers": min(settings.workers, total),
        "batch_size": job.batch_size,
        "backend": settings.backend,
        "oracle": game.oracle,
        "demon": game.demon,
        "save_records": settings.save_records,
        "move_time": settings.move_time,
        "game_time": settings.game_time,
        "lineup_scheme": LINEUP_SCHEME,
    }


def _write_pages(out_dir: Path, records: dict[int, dict[str, Any]], progress: bool | Callable[[int], None]) -> None:
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
