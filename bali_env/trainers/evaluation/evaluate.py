"""Evaluating a policy during and after training, with the tournament code (``bali_env.arena``):
``evaluate`` plays an exported policy against one opponent, ``evaluate_all`` against each
opponent under one progress bar (an ``EvalRound``: the games, the step, the seeds, the bar),
``evaluate_checkpoint`` saves, exports and evaluates ``bali train``'s model against random and
greedy, and ``write_csv`` / ``plot_curve`` write ``eval.csv`` and ``learning_curve.png`` (also
used by ``bali_env.trainers.rllib.launch`` and ``bali_env.trainers.evaluation.curve``).
"""

from __future__ import annotations

import csv
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bali_env.files import replace_when_done

from bali_env.trainers.ppo_selfplay.checkpoints import save_model
from bali_env.trainers.console import eval_line
from bali_env.trainers.options import RunSettings

#: the tournament seeds ``bali train``'s evaluation plays (``EVAL_SEEDS[step % 997]``): tournaments deal
#: from ``deal_seed(seed, k)``, so these games never share a deal with the kept figures' runs (seeds 1-3)
EVAL_SEEDS = range(10_000, 10_997)


def evaluate(policy_path: Path, opponent: str, args: RunSettings, games: int, seed: int,
             progress: bool | Callable[[int], None] = False) -> dict[str, Any]:
    """Win rate of an exported policy (``.npz``, played by the ``ppo`` agent) against ``opponent``
    (an agent spec) over ``games`` seat-rotated games; ``progress`` is ``run_tournament``'s (a
    function: called with the count of each batch of games ended)."""
    from bali_env.arena import run_tournament

    lineup = [f"ppo:path={policy_path}"] + [opponent] * (args.players - 1)
    res = run_tournament(lineup, num_players=args.players, games=games, seed=seed, workers=args.eval_workers,
                         oracle=args.oracle, demon=args.demon, out_dir=None, progress=progress)
    learner = res.participants[0]
    low, high = learner["win_rate_ci95"]
    return {"win_rate": learner["win_rate"], "ci_low": low, "ci_high": high, "games": learner["games"],
            "mean_score": learner["mean_score"]}


def eval_opponents(args: RunSettings) -> list[str]:
    """The agents a run's checkpoints are evaluated against (``--eval-opponents``; RLlib's: random, greedy)."""
    return list(getattr(args, "eval_opponents", ("random", "greedy")))


class _Tally:
    """Counts an evaluation's games as they end (moving its bar, if any) and times them from the
    first batch on, so a first run's compiling (before any game ends) is not counted as playing."""

    def __init__(self, bar: Any) -> None:
        self.bar, self.first, self.at_first, self.games = bar, 0.0, 0, 0

    def __call__(self, n: int) -> None:
        if not self.games:
            self.first = time.time()
            self.at_first = n
        self.games += n
        if self.bar is not None:
            self.bar.update(n)

    def seconds_per_game(self) -> float:
        """Seconds per game after the first batch (0 when fewer than two batches ended)."""
        later = self.games - self.at_first
        return (time.time() - self.first) / later if later > 0 else 0.0


@dataclass(frozen=True)
class EvalRound:
    """One evaluation of a run: ``games`` against each opponent, at env step ``step``, the i-th
    opponent's games dealt from seed ``seeds(i)``, under a progress bar named ``label`` (kept on
    the screen when it ends with ``leave``)."""

    games: int
    step: int
    label: str
    seeds: Callable[[int], int]
    leave: bool = False


def evaluate_all(policy_path: Path, args: RunSettings, evaluation: EvalRound, start: float,
                 eval_rows: list[dict[str, Any]]) -> float:
    """Play the exported policy against each of ``eval_opponents(args)`` as ``evaluation`` says
    under one progress bar (``LABEL: k/N games``, with ``--progress``), print a line per opponent,
    append the rows (eval.csv's; ``minutes`` since ``start``) to ``eval_rows``. Returns the
    seconds a game took (the mean over the opponents, compiling left out)."""
    from bali_env.arena.schedule import rounded_games

    from bali_env.trainers.progress import say, task_bar

    opponents = eval_opponents(args)
    games = evaluation.games
    total = rounded_games(games, args.players, args.players) * len(opponents)
    rates = []
    with task_bar(args, evaluation.label, total, leave=evaluation.leave) as bar:
        for i, opp in enumerate(opponents):
            tally = _Tally(bar)
            r = evaluate(policy_path, opp, args, games, seed=evaluation.seeds(i), progress=tally)
            rates.append(tally.seconds_per_game())
            row = {"steps": evaluation.step, "minutes": (time.time() - start) / 60, "opponent": opp, **r}
            eval_rows.append(row)
            say(eval_line(row))
    return sum(rates) / len(rates)


def write_csv(rows: list[dict[str, Any]], path: Path) -> None:
    """Write ``rows`` as CSV to a temporary file, then move it into place."""
    with replace_when_done(path) as tmp, open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def plot_curve(rows: list[dict[str, Any]], path: Path, players: int, title: str | None = None,
               xlabel: str = "learner env steps") -> None:
    """Learning curve: evaluation win rate (with 95% CI) against each opponent vs the rows'
    ``steps`` (env steps, or what ``xlabel`` names; written to a temporary file, then moved into place)."""
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
    ax.set_xlabel(xlabel)
    ax.set_ylabel("win rate (95% CI)")
    ax.set_title(title or f"MaskablePPO on Bali, {players} players")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    with replace_when_done(path) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)


def evaluate_checkpoint(model: Any, args: RunSettings, name: str, step: int, games: int,
                        eval_rows: list[dict[str, Any]], start: float, label: str = "evaluating") -> tuple[Path, float]:
    """Save the model as ``checkpoints/NAME``, export its policy next to it (``.npz``), play it
    ``games`` games against each of ``--eval-opponents`` (random and greedy by default; none
    when ``games`` is 0) under a progress bar named ``label``, append the rows to ``eval_rows``,
    log the win rates and rewrite ``eval.csv`` and the learning curve. Returns the exported
    policy's path and the seconds per game the evaluation took (0 without one)."""
    from bali_env.bots.ppo import export_policy

    out: Path = args.out
    save_model(model, out / "checkpoints" / name)
    path = export_policy(model.policy, (out / "checkpoints" / name).with_suffix(".npz"), num_players=args.players,
                         env_steps=int(step))
    if games <= 0:
        return path, 0.0
    before = len(eval_rows)
    evaluation = EvalRound(games, step, label, seeds=lambda i: EVAL_SEEDS[step % len(EVAL_SEEDS)],
                           leave=label.startswith("final"))
    rate = evaluate_all(path, args, evaluation, start, eval_rows)
    for row in eval_rows[before:]:
        model.logger.record(f"eval/win_rate_vs_{row['opponent']}", row["win_rate"])
    write_csv(eval_rows, out / "eval.csv")
    plot_curve(eval_rows, out / "learning_curve.png", args.players)
    return path, rate
