"""``TournamentResult``: the outcome of a tournament, its table, and the files it writes
(results.json, results.csv, ratings.png)."""

from __future__ import annotations

import csv
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bali_env.bots.protocol.messages import FAULTS
from bali_env.arena.stats import RATING_NA_NOTE, RATING_SHOWN_CI, ranking_key, rating_shown, rating_text

@dataclass
class TournamentResult:
    """The outcome of ``run_tournament``: ``config``, per-participant ``participants`` statistics,
    ``seat_win_share`` (share of all wins taken from each seat), ``mean_decisions`` (per game),
    ``games`` (one record per game, lineup by participant name), and what depends on timing and
    is not part of ``to_dict``: ``timing`` (per participant: decisions, mean and longest
    decision in ms; ``timing.json``) and the ``wall_time`` in seconds."""

    config: dict[str, Any]
    participants: list[dict[str, Any]]
    seat_win_share: list[float]
    mean_decisions: float
    games: list[dict[str, Any]]
    wall_time: float = field(default=0.0, compare=False)
    timing: dict[str, dict[str, float]] | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``results.json`` (deterministic: no timings)."""
        return {
            "config": self.config,
            "participants": self.participants,
            "seat_win_share": self.seat_win_share,
            "mean_decisions_per_game": self.mean_decisions,
            "games": self.games,
        }

    def ranked(self) -> list[dict[str, Any]]:
        """The participants, best first: by win rate, then fitted rating, then name
        (``stats.ranking_key``: more wins never rank below fewer; the order depends on the games
        only, never on the order they were played in)."""
        return sorted(self.participants, key=ranking_key)

    def table(self, width: int | None = None) -> str:
        """A readable leaderboard (most wins first) with a header line and the seat balance,
        fitted to ``width`` columns (default: the terminal's, 100 when not a terminal): the win
        rates by seat are left out (they are in results.csv) when they do not fit."""
        import shutil
        import textwrap

        width = width or shutil.get_terminal_size((100, 24)).columns
        lines, by_seat = self._leaderboard(width)
        wrap = max(40, width)

        def wrapped(texts: list[str]) -> list[str]:
            return [line.replace("\N{NO-BREAK SPACE}", " ") for text in texts
                    for line in textwrap.wrap(text, wrap, subsequent_indent="  ")]

        return "\n".join(wrapped(self._head()) + lines + wrapped(self._notes(by_seat)) + self.clock_table(width))

    def _head(self) -> list[str]:
        """The table's first lines: the run in one line, and a note when the games were rounded up."""
        c = self.config
        variant = "+".join(v for v in ("oracle", "demon") if c[v]) or "base game"
        head = (f"Bali tournament: {len(self.participants)} participants, {c['num_players']} players, "
                f"{c['games']} games, seed {c['seed']}, {variant}, {c.get('played', str(c['workers']) + ' worker(s)')}"
                + (f", {self.wall_time:.1f}\N{NO-BREAK SPACE}s" if self.wall_time else ""))
        if c["games"] == c["games_requested"]:
            return [head]
        return [head, f"note: {c['games_requested']} games requested, rounded up to {c['games']} = whole "
                      f"rotations of {c['cycle_length']} games (every participant plays every seat equally)"]

    def _leaderboard(self, width: int) -> tuple[list[str], bool]:
        """The table's rows, best first, with the win rates by seat when they fit in ``width``
        columns (and whether they did)."""
        name_w = max(11, *(len(p["name"]) for p in self.participants))
        rows = [[f"{'participant':<{name_w}}", f"{'games':>6}", f"{'wins':>7}", f"{'win %':>6}", f"{'95% CI':>12}",
                 f"{'score':>6}", f"{'rank':>4}", f"{'rating':>12}"]]
        seats = [[f"{'seat' + str(s):>5}" for s in range(self.config["num_players"])]]
        for p in self.ranked():
            lo, hi = p["win_rate_ci95"]
            rating = rating_text(p["rating"])
            rows.append([f"{p['name']:<{name_w}}", f"{p['games']:>6}", f"{p['wins']:>7.6g}",
                         f"{100 * p['win_rate']:6.1f}", f"{f'[{100 * lo:.1f}, {100 * hi:.1f}]':>12}",
                         f"{p['mean_score']:6.2f}", f"{p['mean_rank']:4.2f}", f"{rating:>12}"])
            seats.append([f"{'-':>5}" if v is None else f"{100 * v:5.1f}" for v in p["seat_win_rate"]])
        lines = [" ".join(r) for r in rows]
        with_seats = [line + "   " + " ".join(extra) for line, extra in zip(lines, seats, strict=True)]
        if max(len(line) for line in with_seats) <= width:
            return with_seats, True
        return lines, False

    def _notes(self, by_seat: bool) -> list[str]:
        """The notes under the table (``by_seat``: whether it shows the win rates by seat)."""
        n = self.config["num_players"]
        notes = [] if by_seat else ["win rates by seat: in results.csv (a wider terminal shows them here)"]
        shares = ", ".join(f"seat {s} {100 * v:.1f}%" for s, v in enumerate(self.seat_win_share))
        notes.append(f"share of all wins by seat: {shares} (equal share {100 / n:.1f}%); "
                     f"{self.mean_decisions:.1f} decisions per game")
        notes.append("best first: by win rate (its 95% interval beside it); wins: a shared win counts 1/k; rank: 1 = "
                     "best, ties share; rating: Plackett-Luce fit of all games (Elo scale, field mean 0) ± its 95% "
                     "interval" + ("; seatK: win % from seat K" if by_seat else ""))
        if not all(rating_shown(p["rating"]) for p in self.participants):
            notes.append(RATING_NA_NOTE)
        return notes

    def first_crash(self) -> str | None:
        """The first game (by number) an in-process agent lost by raising, in words: who, how many
        games it lost so, the exception and its traceback (``games.crash_traceback``; absent from a
        journal written before tracebacks were kept); None when no agent raised."""
        crashed = [g for g in self.games if (g.get("forfeit") or {}).get("reason") == "crash"]
        if not crashed:
            return None
        first = min(crashed, key=lambda g: g["game"])
        forfeit = first["forfeit"]
        who = first["lineup"][forfeit["seat"]]
        count = sum(1 for g in crashed if g["lineup"][g["forfeit"]["seat"]] == who)
        text = (f"{who} crashed in {count} game{'s' if count != 1 else ''}; the first, game {first['game']} "
                f"(seat {forfeit['seat']}): {forfeit['detail']}")
        trace = forfeit.get("traceback")
        return text + ("\n" + trace.rstrip("\n") if trace else "")

    def clock_table(self, width: int | None = None) -> list[str]:
        """The lines on the clock and the faults: per participant its forfeits by reason and its
        mean and longest decision; shown when a clock was set, a ``cmd:`` bot played or a game was
        lost by a fault (nothing otherwise)."""
        c = self.config
        forfeits = sum(sum(p.get("forfeits", {}).values()) for p in self.participants)
        bots = any(str(spec).startswith("cmd:") for spec in c.get("agents", []))
        if not (forfeits or bots or c.get("move_time") or c.get("game_time")):
            return []
        name_w = max(11, *(len(p["name"]) for p in self.participants))
        lines = [self._clock_line(bots),
                 f"{'participant':<{name_w}} {'forfeits':>8}  {' '.join(FAULTS):<30} {'mean move':>10} "
                 f"{'worst move':>11}"]
        timing = self.timing or {}
        lines += [_clock_row(p, timing.get(p["name"], {}), name_w) for p in self.ranked()]
        return [line[: width or 100] for line in lines]

    def _clock_line(self, bots: bool) -> str:
        """``clock: 1 s a decision, no limit a game`` (and the ``cmd:`` bots' default, with ``bots``)."""
        c = self.config
        move = f"{c['move_time']:g} s a decision" if c.get("move_time") else "no limit a decision"
        game = f"{c['game_time']:g} s a game" if c.get("game_time") else "no limit a game"
        from bali_env.bots.protocol import DEFAULT_MOVE_TIME

        return f"clock: {move}, {game}" + (f"; cmd: bots {DEFAULT_MOVE_TIME:g} s a decision unless set"
                                           if bots and not c.get("move_time") else "")

    def save(self, out_dir: str | Path) -> dict[str, Path]:
        """Write ``results.json``, ``results.csv`` and (with matplotlib) ``ratings.png`` into
        ``out_dir``; return the paths written by kind."""
        from bali_env.files import replace_when_done, write_text

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {"json": out / "results.json", "csv": out / "results.csv"}
        write_text(paths["json"], json.dumps(self.to_dict(), indent=1) + "\n")
        if self.timing is not None:
            paths["timing"] = write_text(out / "timing.json", json.dumps(self.timing, indent=1) + "\n")
        n = self.config["num_players"]
        with replace_when_done(paths["csv"]) as tmp, tmp.open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["participant", "spec", "games", "wins", "win_rate", "ci95_low", "ci95_high", "mean_score",
                             "mean_rank", "rating_elo", "rating_ci95"]
                            + [f"win_rate_seat{s}" for s in range(n)] + [f"forfeits_{r}" for r in FAULTS])
            for p, spec in zip(self.participants, self.config["agents"], strict=True):
                writer.writerow([p["name"], spec, p["games"], p["wins"], p["win_rate"], *p["win_rate_ci95"],
                                 p["mean_score"], p["mean_rank"], p["rating"]["elo"], p["rating"]["ci95"]]
                                + ["" if v is None else v for v in p["seat_win_rate"]]
                                + [p.get("forfeits", {}).get(r, 0) for r in FAULTS])
        try:
            plot_ratings(self, out / "ratings.png")
            paths["png"] = out / "ratings.png"
        except ImportError:
            print("no ratings.png: matplotlib is not installed (pip install -e '.[tournament]')", file=sys.stderr)
        return paths


def _clock_row(p: dict[str, Any], t: dict[str, float], name_w: int) -> str:
    """A participant's line of the clock table: forfeits in all and by reason, mean and worst
    decision (``t``: its timing, empty when unknown)."""
    f = p.get("forfeits", {})
    by_reason = " ".join(f"{f.get(r, 0):>{len(r)}}" for r in FAULTS)
    mean = f"{t['mean_ms']:.1f} ms" if t.get("decisions") else "-"
    worst = f"{t['worst_ms']:.1f} ms" if t.get("decisions") else "-"
    return f"{p['name']:<{name_w}} {sum(f.values()):>8}  {by_reason:<30} {mean:>10} {worst:>11}"


def load_pyplot() -> None:
    """Import matplotlib's pyplot (Agg backend) for ``plot_ratings``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401


def plot_ratings(result: TournamentResult, path: str | Path) -> None:
    """Draw the win rates (with 95% intervals) and the fitted ratings (with 95% intervals) per
    participant, in the table's order (most wins at the top); a rating whose interval is too wide
    to mean anything (``stats.rating_shown``) is written ``n/a`` instead of a point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = result.ranked()[::-1]
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
    shown = [k for k, p in enumerate(order) if rating_shown(p["rating"])]
    elo = np.array([order[k]["rating"]["elo"] for k in shown])
    half = np.array([order[k]["rating"]["ci95"] for k in shown])
    ax2.errorbar(elo, y[shown], xerr=half, fmt="o", color="tab:orange", capsize=4, label="rating ± 95% interval")
    for k in sorted(set(range(len(order))) - set(shown)):
        ax2.text(0, y[k], f"n/a: 95% interval wider than \u00b1{RATING_SHOWN_CI:.0f}", ha="center", va="center",
                 fontsize=8, color="dimgray")
    if not shown:
        ax2.set_xlim(-RATING_SHOWN_CI, RATING_SHOWN_CI)
    ax2.axvline(0, color="gray", ls="--", lw=1, label="field mean")
    ax2.set_xlabel("Plackett-Luce rating, fitted to all games (Elo scale)")
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
