"""A league: every pair of the given agents in 2-player matches, plus the free-for-all in 3 and 4
players, in one results folder (``bali league``).

Each part is a tournament of its own (``run_tournament``: seat rotation, the clock, forfeits,
``--resume``), in ``OUT/pairs/I-J/`` and ``OUT/ffa-3p/``, ``OUT/ffa-4p/``; every pair plays the
same deals (game k of every part is dealt from ``deal_seed(seed, k)``), which makes the pairs
comparable. The league then writes ``league.json``: the pairwise win-rate matrix (row against
column, 95% Wilson intervals, the game counts), Plackett-Luce ratings fitted to all the league's
games at once (2-player and free-for-all: ``stats.rating_fit``; one model for every table size,
where OpenSkill would fit it game by game), ``league.png`` (the matrix as a heat map, and the
ratings) and ``index.html`` (both, with links to every part's pages).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from bali_env.arena.checks import check_extra, check_out_dir, validate_agents
from bali_env.arena.errors import TournamentError
from bali_env.arena.schedule import participant_names
from bali_env.arena.settings import TABLE_SIZES, LeagueSettings
from bali_env.arena.stats import RATING_NA_NOTE, game_ranks, rating_fit, rating_shown, rating_text, wilson_interval

FINISHED = "league.json"  #: written last: a folder holding it holds a finished league
#: everything a league writes in its folder (what ``--overwrite`` removes, and nothing else)
LEAGUE_OUTPUTS = (FINISHED, "league.png", "index.html", "pairs", "ffa-3p", "ffa-4p")


@dataclass
class LeagueResult:
    """The outcome of ``run_league``: the participants' ``names``, the pairwise ``matrix`` (wins
    of row against column, games, win rate and interval per cell), the ``ratings`` fitted to all
    games, and each part's ``TournamentResult`` (``parts``, by folder name)."""

    config: dict[str, Any]
    names: list[str]
    matrix: list[list[dict[str, Any] | None]]
    ratings: list[dict[str, float]]
    parts: dict[str, Any] = field(default_factory=dict)
    out_dir: Path | None = field(default=None, compare=False)  #: where it was written (None: nowhere)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``league.json`` (no timings)."""
        return {"config": self.config, "participants": self.names, "pairwise": self.matrix,
                "ratings": self.ratings, "parts": {k: f"{k}/results.json" for k in self.parts}}

    def table(self) -> str:
        """The league as text: the ratings (best first), then the pairwise win rates."""
        order = sorted(range(len(self.names)), key=lambda p: -self.ratings[p]["elo"])
        w = max(11, *(len(n) for n in self.names))
        lines = [f"Bali league: {len(self.names)} participants, {self.config['games']} games per part, "
                 f"parts: {', '.join(self.parts)}",
                 f"{'participant':<{w}} {'rating':>12} {'games':>6}"]
        for p in order:
            r = self.ratings[p]
            rating = rating_text(r)
            lines.append(f"{self.names[p]:<{w}} {rating:>12} {r['games']:>6}")
        lines.append("")
        lines.append("2-player win rate of the row against the column, % (95% interval):")
        short = [n[:12] for n in self.names]
        lines.append(f"{'':<{w}} " + " ".join(f"{s:>17}" for s in (short[p] for p in order)))
        for p in order:
            cells = []
            for q in order:
                c = self.matrix[p][q]
                text = "-" if c is None else \
                    f"{100 * c['win_rate']:.0f} [{100 * c['ci95'][0]:.0f},{100 * c['ci95'][1]:.0f}]"
                cells.append(f"{text:>17}")
            lines.append(f"{self.names[p]:<{w}} " + " ".join(cells))
        lines.append("ratings: Plackett-Luce fit of all the league's games (Elo scale, mean 0) ± its 95% interval; "
                     "best first by rating: the one figure over every part")
        if not all(rating_shown(r) for r in self.ratings):
            lines.append(RATING_NA_NOTE)
        return "\n".join(lines)

    def save(self, out_dir: str | Path) -> None:
        """Write ``league.json``, ``league.png`` (with matplotlib) and ``index.html``."""
        from bali_env.files import write_text

        out = Path(out_dir)
        write_text(out / "league.json", json.dumps(self.to_dict(), indent=1) + "\n")
        try:
            plot_league(self, out / "league.png")
        except ImportError:
            print("no league.png: matplotlib is not installed (pip install -e '.[tournament]')", file=sys.stderr)
        write_text(out / "index.html", league_page(self, (out / "league.png").exists()))


def run_league(agents: Sequence[str], settings: LeagueSettings | None = None, **fields: Any) -> LeagueResult:
    """Play the league of ``agents`` (specs): ``games`` games (rounded up to whole rotations) for
    every pair in 2 players and for the free-for-all in each other size of ``sizes`` that has
    enough agents and that every agent can play (one that cannot, such as the shipped ``ppo`` in
    3 players, leaves that free-for-all out: said on stderr and in ``config["skipped"]``); see
    the module docstring. ``settings``: a ``LeagueSettings`` (every option with its default), or
    its fields as keywords (``games=200, seed=0, workers=2, sizes=(2, 3, 4), ...``; with a record
    they override its own). TournamentError for a bad setup, before any game and before any folder
    is made: ``out_dir`` follows the rule of every output folder (``bali_env.files.check_out_folder``:
    a league there is continued with ``resume``, replaced only with ``overwrite``); without it,
    ``out_parent`` gets a new folder (``new_output_dir``, named on stderr) once every check passed,
    and ``on_folder`` is told it. The folder written is the result's ``out_dir``."""
    settings = LeagueSettings.make(settings, **fields)
    specs = [str(s) for s in agents]
    check_league(specs, settings)
    names = participant_names(validate_agents(specs, None))
    parts, skipped = league_parts(specs, settings.sizes)
    config = _league_config(specs, names, settings, parts, skipped)
    out = _league_folder(settings.out_dir, settings.out_parent, settings.overwrite)
    if out is not None and settings.on_folder is not None:
        settings.on_folder(out)
    with _hold(out):
        results = {}
        for k, (folder, who, n) in enumerate(parts):
            if settings.progress:
                print(f"league part {k + 1}/{len(parts)}: {folder} ({', '.join(names[p] for p in who)}, {n} players)",
                      file=sys.stderr)
            results[folder] = (who, _play_part([specs[p] for p in who], n, out / folder if out else None, settings))
        result = league_result(config, names, results)
        if out is not None:
            result.save(out)
            result.out_dir = out
    return result


def _league_config(specs: list[str], names: list[str], settings: LeagueSettings,
                   parts: list[tuple[str, list[int], int]], skipped: dict[str, str]) -> dict[str, Any]:
    """The league's ``config`` (league.json): its agents, settings and parts."""
    return {"agents": specs, "participants": names, "games": settings.games, "seed": settings.seed,
            "sizes": list(settings.sizes), "oracle": settings.oracle, "demon": settings.demon,
            "move_time": settings.move_time, "game_time": settings.game_time,
            "parts": {folder: {"participants": [names[p] for p in who], "players": n} for folder, who, n in parts},
            "skipped": skipped}


@contextlib.contextmanager
def _hold(out: Path | None) -> Iterator[None]:
    """Within the block this league alone writes to ``out`` (``bali_env.files.lock_folder``: no
    lock file left); TournamentError when another run holds it."""
    if out is None:
        yield
        return
    from bali_env.files import lock_folder

    try:
        with lock_folder(out):
            yield
    except BlockingIOError:
        raise TournamentError(f"another league is writing to {str(out)!r}: wait for it, or choose another --out") \
            from None


def _league_folder(out: Path | None, out_parent: str | Path | None, overwrite: bool) -> Path | None:
    """The league's folder, once every check passed: ``out`` (an earlier league's files removed
    with ``overwrite``), or a new folder in ``out_parent`` (named on stderr), or None."""
    from bali_env.files import new_output_dir, remove_outputs

    if out is not None:
        removed = remove_outputs(out, LEAGUE_OUTPUTS) if overwrite and out.is_dir() else []
        if removed:
            print(f"--overwrite: replaced the earlier league in {out} ({', '.join(removed)})", file=sys.stderr)
        return out
    if out_parent is None:
        return None
    folder = new_output_dir(out_parent)
    print(f"writing to {folder}", file=sys.stderr)
    return folder


def check_league(specs: list[str], settings: LeagueSettings) -> None:
    """What the league's record alone cannot judge (TournamentError naming what is wrong): the
    tournament extra, at least 2 agents, the folder ``out_dir`` (or where a new one would go,
    ``out_parent``) by the rule of every output folder (``bali_env.files.check_out_folder``); the
    agents are asked by ``validate_agents``."""
    check_extra()
    if len(specs) < 2:
        raise TournamentError("a league needs at least 2 agents")
    out, resume = settings.out_dir, settings.resume
    if out is not None:
        check_out_dir(Path(out))
        from bali_env.files import check_out_folder

        try:
            check_out_folder(out, what="league", outputs=LEAGUE_OUTPUTS, finished=FINISHED,
                             resumable=LEAGUE_OUTPUTS[3:], resume=resume, overwrite=settings.overwrite)
        except ValueError as exc:
            raise TournamentError(str(exc)) from None
    if resume and (out is None or not any((Path(out) / name).is_dir() for name in LEAGUE_OUTPUTS[3:])):
        raise TournamentError(f"nothing to resume: no league in {str(out)!r}" if out is not None else
                              "resume needs out_dir (the folder of the interrupted league)")
    if out is None and settings.out_parent is not None:
        check_out_dir(Path(settings.out_parent))


def league_parts(specs: list[str], sizes: tuple[int, ...]) -> tuple[list[tuple[str, list[int], int]], dict[str, str]]:
    """The parts to play, as (folder, participant indices, players): every pair in 2 players
    (every agent must play 2), then the free-for-all of each other size with enough agents that
    every agent plays; and the free-for-alls left out, with why. TournamentError when nothing
    is left to play."""
    parts: list[tuple[str, list[int], int]] = []
    if 2 in sizes:
        validate_agents(specs, 2)
        parts += [(f"pairs/{i}-{j}", [i, j], 2) for i, j in itertools.combinations(range(len(specs)), 2)]
    skipped = {}
    for n in sorted(n for n in sizes if n != 2 and len(specs) >= n):
        try:  # a free-for-all that one of the agents cannot play (a policy for other counts) is left out
            validate_agents(specs, n)
            parts.append((f"ffa-{n}p", list(range(len(specs))), n))
        except TournamentError as exc:
            skipped[f"ffa-{n}p"] = str(exc)
            print(f"league: no {n}-player free-for-all: {exc}", file=sys.stderr)
    if not parts:
        raise TournamentError(f"nothing to play: no pair (players 2 not asked) and no free-for-all "
                              f"({'; '.join(skipped.values()) or 'too few agents'})")
    return parts, skipped


def _play_part(specs: list[str], num_players: int, out: Path | None, settings: LeagueSettings) -> Any:
    """One part of the league as a tournament in its own folder (resumed when its journal is there)."""
    from bali_env.arena.tournament import run_tournament

    again = settings.resume and out is not None and (out / "journal.jsonl").is_file()
    return run_tournament(specs, settings.part(num_players, out, again))


def league_result(config: dict[str, Any], names: list[str], parts: dict[str, tuple[list[int], Any]]) -> LeagueResult:
    """The league's matrix and ratings from its parts (folder -> (who by participant index,
    TournamentResult)): the 2-player games of each pair for the matrix, every game for the fit."""
    m = len(names)
    wins = np.zeros((m, m))
    games = np.zeros((m, m), dtype=np.int64)
    fit_games = []
    played = np.zeros(m, dtype=np.int64)
    for who, result in parts.values():
        local = {name: who[i] for i, name in enumerate(result.config["participants"])}
        for g in result.games:
            lineup = [local[name] for name in g["lineup"]]
            scores = g["scores"] if g["scores"] is not None else [0] * len(lineup)
            fit_games.append((lineup, game_ranks(scores, g["winners"])))
            played[lineup] += 1
            if len(lineup) == 2:
                _count_pair(lineup, g["winners"], wins, games)
    fit = rating_fit(fit_games, m)
    matrix = [[_cell(wins[p, q], games[p, q]) if p != q else None for q in range(m)] for p in range(m)]
    ratings = [{"elo": round(fit["rating"][p], 6), "ci95": round(fit["ci95"][p], 6), "games": int(played[p])}
               for p in range(m)]
    return LeagueResult(config, names, matrix, ratings, {k: r for k, (_, r) in parts.items()})


def _count_pair(lineup: list[int], winners: list[int], wins: np.ndarray, games: np.ndarray) -> None:
    """Count a 2-player game in the matrix's ``wins`` and ``games`` (both cells; a shared win
    counts 1/2)."""
    a, b = lineup
    share = 1.0 / len(winners)
    for seat, (p, q) in enumerate(((a, b), (b, a))):
        games[p, q] += 1
        wins[p, q] += share if seat in winners else 0.0


def _cell(wins: float, games: int) -> dict[str, Any] | None:
    """A cell of the matrix: wins of the row against the column, games, win rate and its 95%
    interval; None without games."""
    if games == 0:
        return None
    lo, hi = wilson_interval(float(wins), int(games))
    return {"wins": round(float(wins), 6), "games": int(games), "win_rate": float(wins / games), "ci95": [lo, hi]}


def plot_league(result: LeagueResult, path: str | Path) -> None:
    """The pairwise win rates as a heat map (each cell: % and interval; a colour-blind-safe
    diverging map centred on 50%), best-rated first, and the ratings with their intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bali_env.files import replace_when_done

    order = sorted(range(len(result.names)), key=lambda p: -result.ratings[p]["elo"])
    labels = [result.names[p] for p in order]
    m = len(order)
    grid = np.full((m, m), np.nan)
    for i, p in enumerate(order):
        for j, q in enumerate(order):
            if result.matrix[p][q] is not None:
                grid[i, j] = 100 * result.matrix[p][q]["win_rate"]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(6 + 1.3 * m, 1.8 + 0.9 * m),
                                  gridspec_kw={"width_ratios": [m, 2.2]})
    image = ax.imshow(grid, cmap="PuOr", vmin=0, vmax=100)
    for i, p in enumerate(order):
        for j, q in enumerate(order):
            c = result.matrix[p][q]
            if c is None:
                continue
            text = f"{100 * c['win_rate']:.0f}%\n[{100 * c['ci95'][0]:.0f}, {100 * c['ci95'][1]:.0f}]\n{c['games']} g"
            ax.text(j, i, text, ha="center", va="center", fontsize=8,
                    color="white" if abs(grid[i, j] - 50) > 30 else "black")
    ax.set_xticks(range(m), labels, rotation=30, ha="right")
    ax.set_yticks(range(m), labels)
    ax.set_xlabel("opponent")
    ax.set_ylabel("player")
    ax.set_title("2-player win rate of the row against the column")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="win rate, %")
    bottom_up = order[::-1]
    shown = [k for k, p in enumerate(bottom_up) if rating_shown(result.ratings[p])]
    ax2.errorbar([result.ratings[bottom_up[k]]["elo"] for k in shown], shown,
                 xerr=[result.ratings[bottom_up[k]]["ci95"] for k in shown], fmt="o", color="#0072B2", capsize=4)
    for k in sorted(set(range(m)) - set(shown)):
        ax2.text(0, k, "n/a: interval too wide", ha="center", va="center", fontsize=8, color="dimgray")
    ax2.set_yticks(range(m), labels[::-1])
    ax2.axvline(0, color="gray", ls="--", lw=1)
    ax2.set_xlabel("rating (Elo scale), all games")
    ax2.set_title("Plackett-Luce rating ± 95%")
    ax2.grid(True, axis="x", alpha=0.3)
    fig.suptitle(f"Bali league: {m} participants, {result.config['games']} games per part, seed "
                 f"{result.config['seed']}")
    fig.tight_layout()
    with replace_when_done(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)


def league_page(result: LeagueResult, chart: bool) -> str:
    """``index.html`` of a league: the chart, the ratings, the matrix, links to every part."""
    order = sorted(range(len(result.names)), key=lambda p: -result.ratings[p]["elo"])
    rows = "".join(f"<tr><td>{escape(result.names[p])}</td><td>{rating_text(result.ratings[p])}</td>"
                   f"<td>{result.ratings[p]['games']}</td></tr>" for p in order)
    head = "".join(f"<th>{escape(result.names[q])}</th>" for q in order)
    cells = []
    for p in order:
        tds = []
        for q in order:
            c = result.matrix[p][q]
            tds.append("<td>-</td>" if c is None else f"<td>{100 * c['win_rate']:.1f}% [{100 * c['ci95'][0]:.1f}, "
                       f"{100 * c['ci95'][1]:.1f}] ({c['games']})</td>")
        cells.append(f"<tr><th>{escape(result.names[p])}</th>{''.join(tds)}</tr>")
    parts = "".join(f'<li><a href="{escape(k, quote=True)}/index.html">{escape(k)}</a>: '
                    f"{escape(', '.join(v['participants']))} ({v['players']} players)</li>"
                    for k, v in result.config["parts"].items())
    picture = '<p><img src="league.png" alt="the pairwise win rates and the ratings"></p>' if chart else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Bali league</title>"
            "<link rel=\"icon\" href=\"data:,\"><style>body{font-family:'DejaVu Sans',Verdana,sans-serif;margin:20px;"
            "background:#efe7d4;color:#22231f}table{border-collapse:collapse;font-size:14px;background:#fffdf6}"
            "td,th{border:1px solid #cbbd9c;padding:4px 8px;text-align:right}img{max-width:100%}</style></head><body>"
            f"<h1>Bali league</h1>{picture}<h2>Ratings (all games)</h2><table><tr><th>participant</th><th>rating</th>"
            f"<th>games</th></tr>{rows}</table><h2>2-player win rate of the row against the column (games)</h2>"
            f"<table><tr><th></th>{head}</tr>{''.join(cells)}</table><h2>Parts</h2><ul>{parts}</ul></body></html>\n")


__all__ = ["LEAGUE_OUTPUTS", "TABLE_SIZES", "LeagueResult", "LeagueSettings", "check_league", "league_page",
           "league_result", "plot_league", "run_league"]
