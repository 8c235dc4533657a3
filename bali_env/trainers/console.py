"""What a training run says in words, for both loops (``bali train`` and ``--framework rllib``):
the plan it announces before training (``plan_line`` of a ``Budget`` and a ``FinalEval``: how long
it trains, when it evaluates, what the final evaluation adds), the line an evaluation prints
(``eval_line``), and the lines it ends with (``end_lines``: what it wrote, its key figures, how to
play the policy). Formatting only: nothing here reads or writes a file."""

from __future__ import annotations

import math
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RECENT = 1000  #: the training games the mean return is taken over (the bar's postfix, the end lines)


def duration(seconds: float) -> str:
    """``seconds`` in words a person reads at a glance: ``45 s``, ``1 min 47 s``, ``1 h 05 min``."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s" if s % 60 else f"{s // 60} min"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def listing(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def final_eval_text(games: int, opponents: Sequence[str], seconds: float | None) -> str:
    """The final evaluation in words: its games, opponents and estimated time."""
    against = f"against each of {listing(opponents)}" if len(opponents) > 1 else f"against {opponents[0]}"
    about = "" if seconds is None else f", up to about {duration(seconds)}"
    return f"the final evaluation ({games:,} games {against}{about})"


@dataclass(frozen=True)
class Budget:
    """How long a run trains: ``minutes`` in all, the final evaluation included (``--minutes``; 0:
    no time limit), else ``steps`` env steps (``--steps``); ``train_seconds``: the training left
    from now (None when unknown); ``train_until``: the seconds after the run's start at which
    training stops, the total of the training bar (which counts from the run's start; None: not
    said)."""

    minutes: float
    steps: float
    train_seconds: float | None
    train_until: float | None = None


@dataclass(frozen=True)
class FinalEval:
    """The final evaluation: ``games`` against each of ``opponents``, taking up to about
    ``seconds`` (estimated from the evaluations so far; None when not yet timed)."""

    games: int
    opponents: Sequence[str]
    seconds: float | None


def plan_line(budget: Budget, final: FinalEval, *, eval_seconds: float = 0.0, eval_steps: float = math.inf) -> str:
    """The run's plan, announced before it trains: the ``budget`` (``--minutes``, the final
    evaluation included, so ``train_seconds`` of training from now, said with ``train_until`` when
    given, so the plan and the bar show the same number; or ``--steps``), the evaluations on the
    way (every ``eval_seconds`` and every ``eval_steps``) and the ``final`` one."""
    text = "; ".join([*_budget_parts(budget, final.games), _evaluations_part(eval_seconds, eval_steps)])
    if not final.games:
        return text + "; no final evaluation (--final-eval-games 0)"
    text += f"; then {final_eval_text(final.games, final.opponents, final.seconds)}"
    if budget.minutes > 0 and (final.seconds is None or final.seconds <= budget.minutes * 15):
        text += ", within the budget"
    return text + " (--final-eval-games 0 skips it)"


def _budget_parts(budget: Budget, final_games: int) -> list[str]:
    """The plan's words for the budget (``final_games`` 0: all of a timed budget trains)."""
    if budget.minutes <= 0:
        return [f"training for {budget.steps:,.0f} env steps (--steps; no time limit)"]
    parts = [f"{duration(budget.minutes * 60)} in all (--minutes {budget.minutes:g})"]
    if not final_games:
        parts.append("all of it training")
    elif budget.train_until is None:
        parts.append(f"training for about {duration(budget.train_seconds or 0)}")
    else:
        parts.append(f"training until {duration(budget.train_until)} into the run (about "
                     f"{duration(budget.train_seconds or 0)} from now)")
    return parts


def _evaluations_part(eval_seconds: float, eval_steps: float) -> str:
    """The plan's words for the evaluations on the way."""
    every = [f"every {duration(eval_seconds)}"] if eval_seconds > 0 else []
    every += [f"every {eval_steps:,.0f} env steps"] if eval_steps < math.inf else []
    return f"evaluating {' and '.join(every)} of it" if every else "no evaluation on the way (--eval-every 0)"


def short_of_budget(minutes: float, final_seconds: float, share: float = 0.25) -> str | None:
    """A warning when the final evaluation would take more than ``share`` of ``--minutes`` (None
    otherwise): training keeps the rest of the budget, so the run takes longer than asked."""
    if minutes > 0 and final_seconds > minutes * 60 * share:
        return (f"the final evaluation may take up to about {duration(final_seconds)}, more than {share:.0%} of "
                f"--minutes {minutes:g}: training keeps the rest, so the run may take up to about "
                f"{duration(minutes * 60 * (1 - share) + final_seconds)}; fewer --final-eval-games (or 0) keep it "
                "within --minutes")
    return None


def spent(minutes: float, elapsed: float, left: float) -> str | None:
    """A warning when less than a quarter of ``--minutes`` is left for training after the
    ``elapsed`` seconds of starting (None otherwise)."""
    if minutes > 0 and left < minutes * 15:
        return (f"starting took {duration(elapsed)} of --minutes {minutes:g} (on a first run Numba compiles the game "
                f"kernels once), so about {duration(left)} are left for training")
    return None


def eval_line(row: dict[str, Any]) -> str:
    """One evaluation's result against one opponent (a row of eval.csv)."""
    return (f"[{row['minutes']:5.1f} min, {row['steps']:>9,} steps] vs {row['opponent']}: win {row['win_rate']:.1%} "
            f"[{row['ci_low']:.1%}, {row['ci_high']:.1%}] over {row['games']} games")


def latest_win_rates(rows: Sequence[dict[str, Any]]) -> str:
    """The win rates of the latest evaluation, short (``88% vs random, 19% vs greedy``); '' when none."""
    if not rows:
        return ""
    last = rows[-1]["steps"]
    latest = {r["opponent"]: r["win_rate"] for r in rows if r["steps"] == last}
    return ", ".join(f"{rate:.0%} vs {opp}" for opp, rate in latest.items())


def bar_postfix(steps: int, returns: Sequence[float], rows: Sequence[dict[str, Any]]) -> str:
    """The training bar's postfix: env steps, the mean return of the last ``RECENT`` training games,
    and the win rates of the latest evaluation."""
    parts = [f"{steps:,} steps"]
    recent = returns[-RECENT:]
    if len(recent):
        parts.append(f"return {sum(recent) / len(recent):+.2f}")
    wins = latest_win_rates(rows)
    if wins:
        parts.append(wins)
    return ", ".join(parts)


def play_command(policy: Path, players: int, opponent: str = "greedy") -> str:
    """The ``bali tournament`` command that plays ``policy`` against ``opponent`` in every other seat."""
    agents = [f"ppo:path={policy}"] + [opponent] * (players - 1)
    return f"bali tournament --agents {shlex.join(agents)} --players {players} --games 400"


def end_lines(summary: dict[str, Any], out: Path, *, players: int, files: Sequence[str], returns: Sequence[float],
              resume: str) -> list[str]:
    """The lines a run ends with: what it wrote (``files`` of ``out`` that exist), its key figures
    in words (``summary``: steps, times, the final evaluation; ``returns``: the training games'),
    and how to play the policy; an interrupted run says how to continue it (``resume``)."""
    made = [name for name in files if (out / name.rstrip("/")).exists()]
    lines = [f"wrote: {out} ({', '.join(made)})"]
    steps, train, wall = summary["env_steps"], summary["train_seconds"], summary["wall_seconds"]
    figures = (f"{steps:,} env steps in {duration(train)} of training ({summary['env_steps_per_s']:,.0f} steps/s), "
               f"{duration(wall)} in all")
    recent = list(returns[-RECENT:])
    if recent:
        figures += f"; mean return of the last {len(recent):,} training games {sum(recent) / len(recent):+.2f}"
    lines.append(figures)
    final = summary.get("final") or []
    if final:
        wins = [f"{r['win_rate']:.1%} [{r['ci_low']:.1%}, {r['ci_high']:.1%}] against {r['opponent']}" for r in final]
        lines.append(f"the final policy won {listing(wins)} ({final[0]['games']:,} games each; equal share "
                     f"{1 / players:.0%})")
    else:
        lines.append("no final evaluation (--final-eval-games 0): eval.csv holds the evaluations on the way, if any")
    if summary.get("interrupted"):
        lines.append(f"interrupted: continue it with {resume}")
    lines.append(f"play it: {play_command(out / 'final.npz', players)}")
    return lines


__all__ = ["RECENT", "Budget", "FinalEval", "bar_postfix", "duration", "end_lines", "eval_line", "final_eval_text",
           "latest_win_rates", "listing", "plan_line", "play_command", "short_of_budget", "spent"]
