"""A results folder in the browser: ``ResultsFolder`` finds the tournament runs under it (folders
holding a ``results.json``) and gives each run's index page (``tournament.pages.index_html``),
its chart and its games' replays (the run's own ``replays/`` pages, or drawn from ``records/``
on demand); every page links back to the play page and the list of runs (``NAV``). Only those
files are served: every path is checked to lie inside the folder (``..``, absolute paths and
links out are refused), and a record is checked as it loads.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from html import escape
from pathlib import Path

from bali_env.arena.pages import REPLAYS, index_html
from bali_env.apps.web.tables import GameError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_GAME = re.compile(r"^game_(\d{5,7})$")
MAX_DEPTH = 4  #: how deep under the folder runs are looked for


class ResultsFolder:
    """The tournament runs under ``root`` (a folder such as ``results/``)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise ValueError(f"--results {str(root)!r} is not a folder")

    def runs(self) -> list[str]:
        """Every run under the folder, as a relative path with ``/`` (newest first by name)."""
        found = []
        for path in self.root.rglob("results.json"):
            rel = path.parent.relative_to(self.root)
            if len(rel.parts) <= MAX_DEPTH and all(_NAME.match(p) for p in rel.parts):
                found.append("/".join(rel.parts) or ".")
        return sorted(found, reverse=True)

    def run_dir(self, run: str) -> Path:
        """The folder of ``run`` (a relative path from ``runs``); GameError (404) for anything
        else, including a path that leads outside the folder."""
        parts = [p for p in run.split("/") if p not in ("", ".")]
        if len(parts) > MAX_DEPTH or not all(_NAME.match(p) for p in parts):
            raise GameError("no such run", 404)
        path = self.root.joinpath(*parts).resolve()
        if not path.is_relative_to(self.root) or not (path / "results.json").is_file():
            raise GameError("no such run", 404)
        return path

    def index(self, run: str) -> str:
        """The index page of a run, its replay links relative to it."""
        path = self.run_dir(run)
        try:
            results = json.loads((path / "results.json").read_text())
            games = {int(m.group(1)) for f in (path / "records").glob("game_*.json")
                     if (m := _GAME.match(f.stem))} if (path / "records").is_dir() else set()
            links = {g: f"{REPLAYS}/game_{g:05d}.html" for g in games}
            chart = "ratings.png" if (path / "ratings.png").is_file() else None
            return with_nav(index_html(results, links, chart, title=f"Bali tournament: {run}"))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise GameError(f"cannot read this run's results.json: {exc}", 422) from None

    def chart(self, run: str) -> Path:
        """The run's ``ratings.png``; GameError (404) when it has none."""
        path = self.run_dir(run) / "ratings.png"
        if not path.is_file():
            raise GameError("this run has no chart", 404)
        return path

    def replay(self, run: str, game: str) -> str:
        """The replay page of game ``game`` (``game_00042``) of a run."""
        m = _GAME.match(game)
        if not m:
            raise GameError("no such game", 404)
        path = self.run_dir(run)
        page = path / REPLAYS / f"{game}.html"
        if page.is_file() and page.resolve().is_relative_to(self.root):
            return with_nav(page.read_text(encoding="utf-8"))
        record = path / "records" / f"{game}.json"
        if not record.is_file() or not record.resolve().is_relative_to(self.root):
            raise GameError("no such game", 404)
        return _replay_page(str(record), record.stat().st_mtime_ns)


@lru_cache(maxsize=64)
def _replay_page(path: str, mtime: int) -> str:
    """A record's replay page, drawn once per file version."""
    from bali_env.envs.records import load_record
    from bali_env.pictures.html import replay_html

    try:
        return with_nav(replay_html(load_record(path), title=Path(path).name, back="../"))
    except ValueError as exc:
        raise GameError(f"this record cannot be replayed: {exc}", 422) from None


#: the links back that every results page of the app carries (a run's page is also a file on its own)
NAV = ('<nav class="bali-nav" style="background:#23382c;padding:8px 18px;font-size:15px">'
       '<a href="/" style="color:#fff;margin-right:16px">\u2190 Play (home)</a>'
       '<a href="/results/" style="color:#d5e3d8">All results</a></nav>')


def with_nav(page: str) -> str:
    """``page`` (a whole HTML page) with ``NAV`` at the top of its body."""
    head, body, rest = page.partition("<body>")
    return head + body + NAV + rest if body else NAV + page


def runs_page(folder: ResultsFolder) -> str:
    """The list of runs, linking to each run's index."""
    runs = folder.runs()
    items = "".join(f'<li><a href="/results/{escape(r, quote=True)}/">{escape(r)}</a></li>' for r in runs)
    body = f"<ul>{items}</ul>" if runs else "<p>No tournament results here yet (a folder with results.json).</p>"
    return _page("Results", f"<p>Tournament runs under <code>{escape(str(folder.root))}</code>:</p>{body}")


def _page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
            "<link rel=\"stylesheet\" href=\"/static/app.css\"><link rel=\"icon\" href=\"data:,\"></head>"
            "<body><header><h1>"
            f"<a href=\"/\">Bali</a> \u00b7 {escape(title)}</h1><nav><a href=\"/\">Play</a> "
            f"<a href=\"/results/\">Results</a></nav></header><main class=\"page\">{body}</main>"
            "</body></html>\n")


__all__ = ["MAX_DEPTH", "NAV", "ResultsFolder", "runs_page", "with_nav"]
