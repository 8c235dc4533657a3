"""A league run in a table and two pictures: ``league.csv``, ``league.png`` and ``payoff.png``,
each written atomically (a temporary file moved into place).

``league.csv`` has a row per measure: ``generation``, ``main`` (main_g), ``opponent``, ``kind``,
``games``, ``win_rate``, ``ci_low``, ``ci_high`` (95% Wilson interval). The kinds: ``main`` and
``exploiter`` (the main against a member of its population), ``anchor`` (against a fixed member,
``--anchors``), ``baseline`` (against a fixed agent
of ``--baselines``), ``population`` (those member matches pooled); these are the main's win
rates. ``exploitability`` (``bali exploit``'s best response against main_g) and
``exploiter_win`` (exploiter_g, trained against main_g, in its own run's final evaluation) are
the opponent's win rate against main_g: lower is better for the main.

``league.png`` draws them by generation with their intervals; ``payoff.png`` is the payoff
matrix: a row per main, a column per opponent, each cell the main's win rate (%) and its
interval. Both need matplotlib (``plot_league`` and ``plot_payoff`` import it).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

from bali_env.files import replace_when_done

COLUMNS = ("generation", "main", "opponent", "kind", "games", "win_rate", "ci_low", "ci_high")  #: league.csv's
MAIN_SIDE = ("main", "exploiter", "anchor", "baseline", "population")  #: kinds whose win rate is the main's
MATRIX_KINDS = ("main", "exploiter", "anchor", "baseline")  #: the kinds of the payoff matrix's columns, in order
OPPONENT_SIDE = ("exploitability", "exploiter_win")  #: kinds whose win rate is the opponent's against the main


def write_table(rows: list[dict[str, Any]], path: Path) -> None:
    """``league.csv``: ``rows`` (``COLUMNS``), the rates to 4 decimals."""
    with replace_when_done(path) as tmp, open(tmp, "w", newline="") as fh:
        out = csv.DictWriter(fh, fieldnames=list(COLUMNS), extrasaction="ignore")
        out.writeheader()
        for row in rows:
            out.writerow({k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()})


def _series(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The lines of ``league.png``: label -> its rows by generation."""
    lines: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        kind = row["kind"]
        if kind in ("baseline", "anchor"):
            label = f"main against {row['opponent']}"
        elif kind == "population":
            label = "main against its population (pooled)"
        elif kind == "exploitability":
            label = "exploitability: the yardstick's best response wins"
        elif kind == "exploiter_win":
            label = "its exploiter wins (own final evaluation)"
        else:
            continue
        lines.setdefault(label, []).append(row)
    return lines


def _save(fig: Any, path: Path) -> None:
    """Write ``fig`` as a PNG at ``path`` (atomically) and close it."""
    import matplotlib.pyplot as plt

    with replace_when_done(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)


def plot_league(rows: list[dict[str, Any]], path: Path, players: int) -> None:
    """``league.png``: by generation, the main against each baseline and against its population,
    and the win rates of its best response and its exploiter, with 95% intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.6))
    for label, line in _series(rows).items():
        line = sorted(line, key=lambda r: r["generation"])
        x = [r["generation"] for r in line]
        y = [100 * r["win_rate"] for r in line]
        err = [[100 * (r["win_rate"] - r["ci_low"]) for r in line],
               [100 * (r["ci_high"] - r["win_rate"]) for r in line]]
        dashed = "--" if any(r["kind"] in OPPONENT_SIDE for r in line) else "-"
        ax.errorbar(x, y, yerr=err, fmt="o" + dashed, capsize=3, label=label)
    ax.axhline(100 / players, color="gray", ls=":", label="equal share")
    ax.set_ylim(0, 100)
    ax.set_xlabel("generation (main_g)")
    ax.set_ylabel("win rate, % (95% intervals)")
    ax.set_title(f"League training, {players} players: solid = the main's win rate, dashed = against the main")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    _save(fig, path)


def payoff_matrix(rows: list[dict[str, Any]]) -> tuple[list[str], list[str], list[list[dict[str, Any] | None]]]:
    """The payoff matrix of ``rows``' ``main``, ``exploiter``, ``anchor`` and ``baseline`` entries:
    the mains (rows), the opponents (columns: mains, exploiters, anchors, baselines, each in order
    of first appearance) and the cells (the entry, or None)."""
    entries = [r for r in rows if r["kind"] in MATRIX_KINDS]
    mains = sorted({r["main"] for r in entries}, key=lambda m: int(m.split("_")[1]))
    columns: list[str] = []
    for kind in MATRIX_KINDS:
        for r in entries:
            if r["kind"] == kind and r["opponent"] not in columns:
                columns.append(r["opponent"])
    cell = {(r["main"], r["opponent"]): r for r in entries}
    return mains, columns, [[cell.get((m, c)) for c in columns] for m in mains]


def plot_payoff(rows: list[dict[str, Any]], path: Path, players: int) -> None:
    """``payoff.png``: the payoff matrix as a heat map, each cell annotated with the main's win
    rate and its 95% interval (%), centred on the equal share."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mains, columns, cells = payoff_matrix(rows)
    values = [[math.nan if c is None else 100 * c["win_rate"] for c in line] for line in cells]
    fig, ax = plt.subplots(figsize=(1.1 * len(columns) + 2.5, 0.6 * len(mains) + 2))
    fair = 100 / players
    image = ax.imshow(values, cmap="RdBu", vmin=fair - 50, vmax=fair + 50, aspect="auto")
    for i, line in enumerate(cells):
        for j, c in enumerate(line):
            if c is not None:
                ax.text(j, i, f"{100 * c['win_rate']:.0f}\n[{100 * c['ci_low']:.0f}, {100 * c['ci_high']:.0f}]",
                        ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(columns)), columns, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(mains)), mains, fontsize=8)
    ax.set_xlabel("opponent (alone in every other seat)")
    ax.set_title(f"Payoff matrix: the main's win rate, % ({players} players)")
    fig.colorbar(image, ax=ax, label="win rate, %")
    fig.tight_layout()
    _save(fig, path)


__all__ = ["COLUMNS", "MAIN_SIDE", "MATRIX_KINDS", "OPPONENT_SIDE", "payoff_matrix", "plot_league", "plot_payoff",
           "write_table"]
