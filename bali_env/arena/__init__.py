"""The arena: round-robin tournaments and leagues between Bali agents on the batched environment,
with ratings; one module per job.

| module | job |
|---|---|
| ``settings.py`` | ``TournamentSettings``, ``LeagueSettings``, ``GameJob``: every option, its default, one check |
| ``schedule.py`` | participant names, seat-rotated lineups, whole rotations (the seeds: ``bali_env.engine.seeds``) |
| ``games.py`` | ``play_games``: the games on one ``BaliVectorEnv``, a record per game |
| ``workers.py`` | worker processes: shared compilation, the compile notice, interpreted first runs |
| ``ray_backend.py`` | the same games as Ray tasks, on a local instance or a cluster |
| ``journal.py`` | ``journal.jsonl`` (one line per finished game) and ``--resume`` |
| ``stats.py`` | wins, Wilson intervals, ranks, seat shares, the rating fit |
| ``standings.py`` | ``TournamentResult``: the table, results.json / results.csv / ratings.png |
| ``checks.py`` | what the settings record cannot judge (agents, output folder, Ray), before anything happens |
| ``errors.py`` | ``TournamentError``, ``TournamentInterrupted``, ``TournamentFailed`` |
| ``tournament.py`` | ``run_tournament``: checks, journal, where to play, progress, result |
| ``pages.py`` | ``index.html`` (the table, the chart, every game) and a replay page per saved game |
| ``league.py`` | ``run_league`` (``bali league``): every pair plus the free-for-all, the matrix, the heat map |

The clock and forfeits live in ``games.py`` (``Clock``: a participant that runs out of time,
raises, breaks the bot protocol or chooses an illegal action loses that game) and
``stats.py``/``standings.py`` (forfeits by reason, decision times); bots in other languages are
agents (``bali_env.bots.protocol``, ``cmd:`` specs); the web app is ``bali_env.apps.web``.

``run_tournament(["greedy", "random", "random", "random"], num_players=4, games=1000)`` (or
``bali tournament --agents greedy random random random --players 4 --games 1000``) plays seeded
games, rotates seats so that every participant plays every seat equally often, and reports per
participant: wins, win rate with a 95% Wilson interval, mean final score, mean rank, a
Plackett-Luce rating fitted to all games at once (with its 95% interval) and the win rate per
seat; the table lists the participants by win rate, then rating (``stats.ranking_key``), and
reads ``n/a`` for a rating whose interval is too wide to mean anything (``stats.rating_text``).

Participants
    Every entry of ``agents`` is a separate participant built by ``make_agent(spec)``, named by
    its spec (a bot from a file, ``FILE.py:Class``, by its own ``name``); a name that occurs more
    than once is numbered: ``["greedy", "random", "random"]`` gives ``greedy``, ``random#1``,
    ``random#2``.

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
    Game k is dealt from ``deal_seed(seed, k)``, the tournament seed and the game number hashed
    together (SplitMix64, 53 bits), and each game's record keeps it: exactly the game
    ``bali_env.env(...).reset(seed=record["seed"])`` deals (``BaliVectorEnv.reset_game``),
    whichever worker and slot plays it. Tournaments with different seeds therefore share no deal
    (with ``seed + k`` the runs with seeds 1 and 2 shared 999 of 1,000), and results of several
    seeds pool as independent games. Every agent's
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

Statistics (from the game records; nothing depends on the order in which games were played)
    - wins: a shared win (docs/rules.md section 4: highest score, then shrines, then stones, then
      shared) counts 1/k for each of the k sharers; win rate = wins / games, with the Wilson
      score interval at 95%.
    - rank: the winners are first; the other players follow by final score (the environment
      reports scores and winners only, so non-winners with equal scores share a rank). Tied
      players share the mean of the positions they span (fractional ranking: 1 = best).
    - rating: a Plackett-Luce model fitted by maximum likelihood to the finishing orders of all
      games at once (``choix.ilsr_rankings``, as Ordo and BayesElo rate chess engines; a tie
      counts as each of its orders equally), on the Elo scale (400 log10 strength) with the
      field's mean at 0, and a 95% interval from the Fisher information (``stats.rating_fit``).
      Shuffling the games leaves it unchanged; in a balanced round robin, more wins never rank
      lower.
    - per seat: each participant's win rate at each seat, and the share of all wins per seat.

Outputs (``out_dir``, checked before anything is played and created only then; the command
line's default is a new folder ``results/tournament/<date-time>[-N]``, created exclusively so
that two runs never share one; two runs given the same ``out_dir`` at once: the second is
refused; an ``out_dir`` holding an earlier run is replaced only with ``overwrite=True``,
``bali_env.files.check_out_folder``): ``results.json`` (config, statistics, one record per game: index, seed,
lineup, scores, winners, decisions, and the forfeit of a game lost by a fault),
``results.csv`` (the per-participant table), ``ratings.png`` (win rates with their intervals
and ratings; needs matplotlib), ``index.html`` (the table, the chart, every game, with a link to
its replay when the records are saved), ``timing.json`` (decision times per participant) and,
with ``cmd:`` bots, ``logs/``. Nothing in ``results.json`` depends on timing (but a forfeit by
timeout), so equal runs write equal files.
"""

from __future__ import annotations

from bali_env.arena.checks import BACKENDS, check_out_dir, check_tournament, validate_agents
from bali_env.arena.errors import TournamentError, TournamentFailed, TournamentInterrupted
from bali_env.arena.journal import JOURNAL, read_journal
from bali_env.arena.games import PROGRESS_WAVES, play_games
from bali_env.arena.settings import DEFAULT_BATCH_SIZE, GameJob, LeagueSettings, TournamentSettings
from bali_env.arena.standings import TournamentResult, plot_ratings
from bali_env.arena.tournament import INTERPRETABLE_AGENTS, INTERPRETED_NOTE, QUICK_GAMES, QUICK_WAVES, run_tournament
from bali_env.engine.seeds import agent_seed, deal_seed
from bali_env.arena.schedule import (LINEUP_SCHEME, cycle_length, lineup, participant_names,
                       rounded_games)
from bali_env.arena.stats import Z95, compute_stats, game_ranks, rating_fit, wilson_interval
from bali_env.arena.workers import compile_share, warm_up

__all__ = [
    "BACKENDS", "DEFAULT_BATCH_SIZE", "GameJob", "INTERPRETABLE_AGENTS", "INTERPRETED_NOTE", "JOURNAL", "LINEUP_SCHEME",
    "LeagueSettings", "PROGRESS_WAVES", "QUICK_GAMES", "QUICK_WAVES", "TournamentError", "TournamentFailed",
    "TournamentInterrupted", "TournamentResult", "TournamentSettings", "Z95", "agent_seed", "check_out_dir",
    "check_tournament", "compile_share", "compute_stats", "cycle_length", "deal_seed", "game_ranks", "lineup",
    "participant_names", "play_games", "plot_ratings", "rating_fit", "read_journal", "rounded_games", "run_tournament",
    "validate_agents", "warm_up", "wilson_interval",
]
