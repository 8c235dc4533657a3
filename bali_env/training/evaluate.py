"""Evaluating a policy during and after training, with the tournament code (``bali_env.arena``):
``evaluate`` plays an exported policy against one opponent, ``evaluate_checkpoint`` saves, exports
and evaluates ``bali train``'s model against random and greedy, and ``write_csv`` / ``plot_curve``
write ``eval.csv`` and ``learning_curve.png`` (also used by ``bali_env.training.rllib`` and
``bali_env.training.curve``).
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path
from typing import Any

from bali_env.files import replace_when_done

from .checkpoints import save_model


def evaluate(policy_path: Path, opponent: str, args: argparse.Namespace, games: int, seed: int) -> dict[str, Any]:
    """Win rate of an exported policy (``.npz``, played by the ``ppo`` agent) against ``opponent``
    (an agent spec) over ``games`` seat-rotated games."""
    from bali_env.arena import run_tournament

    lineup = [f"ppo:path={policy_path}"] + [opponent] * (args.players - 1)
    res = run_tournament(lineup, num_players=args.players, games=games, seed=seed, workers=args.eval_workers,
                         oracle=args.oracle, demon=args.demon, out_dir=None, progress=False)
    learner = res.participants[0]
    low, high = learner["win_rate_ci95"]
    return {"win_rate": learner["win_rate"], "ci_low": low, "ci_high": high, "games": learner["games"],
            "mean_score": learner["mean_score"]}


def write_csv(rows: list[dict[str, Any]], path: Path) -> None:
    """Write ``rows`` as CSV to a temporary file, then move it into place."""
    with replace_when_done(path) as tmp, open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def plot_curve(rows: list[dict[str, Any]], path: Path, players: int, title: str | None = None) -> None:
    """Learning curve: evaluation win rate (with 95% CI) against each opponent vs env steps
    (written to a temporary file, then moved into place)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    colors = ("tab:blue", "tab:red", "tab:green", "tab:purple", "tab:orange", "tab:brown")
    for opp, color in zip(dict.fromkeys(r["opponent"] for r in rows), colors, strict=False):
        pts = [r for r in rows if r["opponent"] == opp]
        if not pts:
            continue
        x = [r["steps"] for r in pts]
        ax.plot(x, [r["win_rate"] for r in pts], "o-", color=color, label=f"vs {opp}")
        ax.fill_between(x, [r["ci_low"] for r in pts], [r["ci_high"] for r in pts], color=color, alpha=0.15)
    ax.axhline(1 / players, color="gray", ls=":", label=f"chance ({1 / players:.0%})")
    ax.set_ylim(0, 1)
    ax.set_xlabel("learner env steps")
    ax.set_ylabel("win rate (95% CI)")
    ax.set_title(title or f"MaskablePPO on Bali, {players} players")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    with replace_when_done(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)


def evaluate_checkpoint(model: Any, args: argparse.Namespace, name: str, step: int, games: int,
                        eval_rows: list[dict[str, Any]], start: float) -> Path:
    """Save the model as ``checkpoints/NAME``, export its policy next to it (``.npz``), play it
    against each of ``--eval-opponents`` (random and greedy by default), append the rows to
    ``eval_rows`` and rewrite ``eval.csv`` and the learning curve. Returns the exported policy's
    path."""
    from bali_env.agents.ppo import export_policy

    out: Path = args.out
    save_model(model, out / "checkpoints" / name)
    path = export_policy(model.policy, (out / "checkpoints" / name).with_suffix(".npz"), num_players=args.players,
                         env_steps=int(step))
    for opp in getattr(args, "eval_opponents", ("random", "greedy")):
        r = evaluate(path, opp, args, games, seed=10_000 + step % 997)
        row = {"steps": step, "minutes": (time.time() - start) / 60, "opponent": opp, **r}
        eval_rows.append(row)
        model.logger.record(f"eval/win_rate_vs_{opp}", r["win_rate"])
        print(f"[{row['minutes']:5.1f} min, {step:>9,} steps] vs {opp}: win {r['win_rate']:.1%} "
              f"[{r['ci_low']:.1%}, {r['ci_high']:.1%}] over {r['games']} games", flush=True)
    write_csv(eval_rows, out / "eval.csv")
    plot_curve(eval_rows, out / "learning_curve.png", args.players)
    return path
