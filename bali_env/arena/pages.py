"""A results folder as web pages: ``index_html`` (the table, the chart, a link to every game's
replay) from a ``results.json``, and ``write_pages`` which writes it with one HTML replay per
saved record (``bali_env.pictures.html``, public table) into ``replays/``. The pages open from
disk (relative links, nothing from the network); ``bali serve --results DIR`` serves the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import Any

INDEX = "index.html"
REPLAYS = "replays"

_STYLE = """
body { margin: 0; font-family: "DejaVu Sans", Verdana, Arial, sans-serif; background: #efe7d4; color: #22231f; }
header { background: #23382c; color: #fff; padding: 12px 20px; }
header h1 { margin: 0; font-size: 22px; } header p { margin: 4px 0 0; color: #d5e3d8; }
main { padding: 16px 20px; max-width: 1200px; }
section { background: #fffdf6; border: 1px solid #cbbd9c; border-radius: 8px; padding: 10px 16px; margin-bottom: 16px; }
table { border-collapse: collapse; font-size: 14px; }
th, td { padding: 4px 10px; text-align: right; border-bottom: 1px solid #e6dcc4; }
th:first-child, td:first-child { text-align: left; }
td.left, th.left { text-align: left; }
img { max-width: 100%; }
a { color: #0060a0; }
.games { max-height: 640px; overflow-y: auto; }
"""


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _forfeits(p: dict[str, Any]) -> str:
    """A participant's forfeits: their number, by reason (``3: timeout 2, crash 1``)."""
    f = {r: k for r, k in p.get("forfeits", {}).items() if k}
    return f"{sum(f.values())}: " + ", ".join(f"{r} {k}" for r, k in f.items()) if f else "0"


def index_html(results: dict[str, Any], replays: dict[int, str] | None = None, chart: str | None = "ratings.png",
               title: str = "Bali tournament") -> str:
    """The index page of a tournament: its settings, the participants in the table's order (most
    wins first: ``stats.ranking_key``; win rate with its 95% interval, mean score and rank, rating
    or ``n/a`` when its interval is too wide: ``stats.rating_text``), the chart, and every game (lineup, scores,
    winners) with a link to its replay where ``replays`` has one (game index -> relative URL)."""
    c = results["config"]
    variant = "+".join(v for v in ("oracle", "demon") if c.get(v)) or "base game"
    summary = (f"{len(results['participants'])} participants, {c['num_players']} players, {c['games']} games, "
               f"seed {c['seed']}, {variant}")
    from bali_env.arena.stats import RATING_NA_NOTE, ranking_key, rating_shown

    ranked = sorted(results["participants"], key=ranking_key)
    replays = replays or {}
    picture = f'<section><h2>Chart</h2><img src="{escape(chart, quote=True)}" alt="win rates and ratings"></section>' \
        if chart else ""
    wide = "" if all(rating_shown(p["rating"]) for p in ranked) else f"; {escape(RATING_NA_NOTE)}"
    note = ("" if replays else "<p>Replays: run the tournament with <code>--save-records</code> to keep every game "
            "and its replay.</p>")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<link rel=\"icon\" href=\"data:,\"><style>{_STYLE}</style></head>"
            f"<body><header><h1>{escape(title)}</h1><p>{escape(summary)}</p></header><main>"
            f"<section><h2>Participants, most wins first</h2>{_participants_table(ranked)}<p>win rate with its 95% "
            "Wilson interval; rank 1 = best; rating: Plackett-Luce fit of all games (Elo scale, field mean 0) \u00b1 "
            f"its 95% interval{wide}</p></section>{picture}<section><h2>Games</h2>{note}"
            f"{_games_table(results['games'], replays)}</section></main></body></html>\n")


def _participants_table(ranked: list[dict[str, Any]]) -> str:
    """The participants' table of the index page, in the order given."""
    from bali_env.arena.stats import rating_text

    rows = "".join(
        f"<tr><td>{escape(p['name'])}</td><td>{p['games']}</td><td>{p['wins']:g}</td><td>{_pct(p['win_rate'])}</td>"
        f"<td>[{_pct(p['win_rate_ci95'][0])}, {_pct(p['win_rate_ci95'][1])}]</td><td>{p['mean_score']:.2f}</td>"
        f"<td>{p['mean_rank']:.2f}</td><td>{rating_text(p['rating'])}</td>"
        f"<td>{_forfeits(p)}</td></tr>" for p in ranked)
    return ("<table><thead><tr><th>participant</th><th>games</th><th>wins</th><th>win %</th><th>95% interval</th>"
            "<th>mean score</th><th>mean rank</th><th>rating</th><th>forfeits</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>")


def _games_table(games: list[dict[str, Any]], replays: dict[int, str]) -> str:
    """The games' table of the index page: one row per game, with a link to its replay where
    ``replays`` has one."""
    rows = "".join(_game_row(g, replays.get(int(g["game"]))) for g in games)
    return ("<div class=\"games\"><table><thead><tr><th>game</th><th>seed</th><th class=\"left\">seats 0..n-1</th>"
            "<th class=\"left\">scores</th><th class=\"left\">winner(s)</th><th>moves</th><th>replay</th></tr></thead>"
            f"<tbody>{rows}</tbody></table></div>")


def _game_row(g: dict[str, Any], link: str | None) -> str:
    """One game's row: lineup, scores (or who forfeited, and why), winners, moves, replay link."""
    winners = ", ".join(escape(g["lineup"][w]) for w in g["winners"])
    cell = f'<a href="{escape(link, quote=True)}">replay</a>' if link else ""
    lost = g.get("forfeit")
    scores = (f"forfeit: {escape(g['lineup'][lost['seat']])} ({escape(lost['reason'])})" if lost
              else ", ".join(str(s) for s in g["scores"]))
    return (f"<tr><td>{g['game']}</td><td>{g['seed']}</td>"
            f"<td class=\"left\">{escape(', '.join(g['lineup']))}</td>"
            f"<td class=\"left\">{scores}</td>"
            f"<td class=\"left\">{winners}</td><td>{g['decisions']}</td><td>{cell}</td></tr>")


def write_pages(out_dir: str | Path, records: dict[int, dict[str, Any]] | None = None,
                on_replay: Callable[[int, int], None] | None = None) -> Path:
    """Write ``out_dir/index.html`` from ``results.json``, and a replay page (public table) per
    game record into ``out_dir/replays/``: the ``records`` given (game index -> record, as just
    saved), else those in ``out_dir/records/`` (checked as they load). ``on_replay(i, total)``
    is called after each (a progress bar). Every file appears only once complete. Returns the
    index's path."""
    from bali_env.files import write_text
    from bali_env.envs.records import load_record
    from bali_env.pictures.html import replay_html

    out = Path(out_dir)
    results = json.loads((out / "results.json").read_text())
    if records is None:
        files = sorted((out / "records").glob("game_*.json")) if (out / "records").is_dir() else []
        records = {int(path.stem.split("_")[1]): load_record(path) for path in files}
    links = {}
    for i, game in enumerate(sorted(records)):
        name = f"game_{game:05d}"
        write_text(out / REPLAYS / f"{name}.html", replay_html(records[game], title=f"{name}.json",
                                                               back=f"../{INDEX}"))
        links[game] = f"{REPLAYS}/{name}.html"
        if on_replay is not None:
            on_replay(i + 1, len(records))
    chart = "ratings.png" if (out / "ratings.png").exists() else None
    return write_text(out / INDEX, index_html(results, links, chart))


__all__ = ["INDEX", "REPLAYS", "index_html", "write_pages"]
