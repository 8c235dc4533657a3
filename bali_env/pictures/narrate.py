"""What happened at the table, in words, as one player saw it: ``TurnNarrator`` (each move, a
newly dealt column, what a turn's scoring gave) and ``explain_final_scoring`` (the final scoring
line by line). Used by ``bali play``, the replays (text, HTML, GIF) and the web app; it reads the
viewer's own decoded observations only, and the true state only once the game is over."""

from __future__ import annotations

from typing import Any

import numpy as np

from bali_env import engine as E
from bali_env.engine.ids import CARD_NAMES, CARD_SHORT, CATEGORY_NAMES

__all__ = ["TurnNarrator", "explain_final_scoring", "result_text"]


class TurnNarrator:
    """What ``bali play`` tells the human about each move and turn, from the human's own views
    only (before and after each move): the move (what a column take gave), a newly dealt column
    and the oracles removed from it, and once a turn's scoring is over, the scored type and what
    every player received (or that the deck ran out and the game ends)."""

    _SCORING = ("shrine_reward", "farmer_choice")

    def __init__(self, labels: list[str], seat: int) -> None:
        self.labels, self.seat = labels, seat
        self.scored = -1  #: the card type being scored, -1 outside a scoring
        self.take_column = -1  #: the column of the active player's last take
        self.receipts: np.ndarray | None = None  #: per relative seat: stones, VP, offering cards (total, by category)

    def move(self, before: Any, action: int, after: Any, text: str) -> list[str]:
        """The lines about one move (``text`` is the move as the human may see it)."""
        mover = self.labels[(self.seat + before.to_move) % before.num_players]
        if before.decision == "refill":
            self.take_column = action - E.A_REFILL
            if before.market[self.take_column]:
                text += f": {CARD_SHORT[before.market[self.take_column][0]]}"
        lines = [f"{mover}: {text}"]
        if before.decision == "refill" and after.deck_size < before.deck_size:
            col = self.take_column
            dealt, column = before.deck_size - after.deck_size, after.market[col]
            removed = dealt - len(column)
            lines.append(f"  column {col} dealt: {', '.join(CARD_SHORT[c] for c in column) or '-'}"
                         + (f" ({removed} oracle{'s' if removed > 1 else ''} removed)" if removed else ""))
        if after.decision == "game_over" and before.decision in ("refill", "oracle"):
            lines.append("  the deck ran out: the game ends (no scoring this turn)")
            return lines
        scoring_starts = before.decision in ("refill", "oracle") and (
            after.decision not in ("refill", "oracle") or after.active != before.active)
        if scoring_starts or (self.receipts is not None and before.decision in self._SCORING):
            gained = self._counts(after) - self._counts(before)
            if before.decision == "oracle" and E.is_oracle_take(action):  # the peeked card is not a reward
                gained[before.to_move, 2] -= 1
                gained[before.to_move, 3:] = np.minimum(gained[before.to_move, 3:], 0)
            if scoring_starts:
                self.receipts = np.zeros_like(gained)
                column = after.market[self.take_column]  # the scored type: its first card now
                self.scored = column[0] if column else -1
            self.receipts += gained
        if self.receipts is not None and after.decision not in self._SCORING:
            lines.append(self._scoring_line(after))
            self.receipts, self.scored = None, -1
        return lines

    @staticmethod
    def _counts(view: Any) -> np.ndarray:
        """Stones, VP, offering cards and the offering cards known exactly by category, per seat."""
        exact = np.where(view.offerings_min == view.offerings_max, view.offerings_min, 0)
        return np.column_stack([view.stones, view.vp_tokens, view.offerings_total, exact]).astype(np.int64)

    def _scoring_line(self, view: Any) -> str:
        n = view.num_players
        parts = []
        for r in range(n):
            stones, vp, cards = (int(x) for x in self.receipts[r, :3])
            got = [f"+{stones} stone{'s' if stones > 1 else ''}"] if stones else []
            got += [f"+{vp} VP"] if vp else []
            by_category = [f"+{int(k)} {CATEGORY_NAMES[c]}" for c, k in enumerate(self.receipts[r, 3:]) if k > 0]
            if cards and sum(int(k) for k in self.receipts[r, 3:] if k > 0) == cards:
                got += by_category
            elif cards:
                got.append(f"+{cards} offering card{'s' if cards > 1 else ''}")
            if got:
                parts.append(f"{self.labels[(self.seat + r) % n]} {' '.join(got)}")
        what = CARD_NAMES[self.scored] if self.scored >= 0 else "the turn"
        return f"  scoring {what}: " + (", ".join(parts) if parts else "nobody receives anything")


def explain_final_scoring(state: dict[str, Any], info: dict[str, Any], labels: list[str]) -> str:
    """The final scoring, line by line per player, from the end-of-game ``info`` (``final_scores``,
    ``winners``, ``decided_by``, ``score_breakdown``: the engine's scoring) and the final, fully
    revealed ``state`` (``state_dict()`` after the game is over); then the winner(s) and the
    tie-break that decided."""
    n = state["num_players"]
    counts = np.bincount(np.asarray(state["altar"], dtype=np.int64), minlength=E.N_CATEGORIES)[: E.N_CATEGORIES]
    values = np.zeros(E.N_CATEGORIES, dtype=np.int64)
    E.altar_values(counts, values)
    lines = ["=== Final scoring ===",
             "Altar: " + ", ".join(f"{CATEGORY_NAMES[c]} {int(counts[c])} cards -> worth {int(values[c])}"
                                   for c in range(E.N_CATEGORIES))]
    scores, winners = info["final_scores"], info["winners"]
    for q in range(n):
        b = info["score_breakdown"][q]
        shrines = state["tableaus"][q][E.SHRINE]
        stones = state["stones"][q]
        lines.append(f"{labels[q]}:")
        rows = [("VP tokens", b["vp_tokens"]), (f"shrines  {shrines} x {E.SHRINE_POINTS}", b["shrines"]),
                (f"stones   {stones} // {E.STONES_PER_POINT}", b["stones"])]
        rows += [(f"{cat:<8} {state['offerings'][q][c]} cards x {int(values[c])}", b["offerings"][cat])
                 for c, cat in enumerate(CATEGORY_NAMES)]
        rows.append(("total", b["total"]))
        lines += [f"  {text:<28}{value:>4}" for text, value in rows]
    best = max(scores)
    tied = [q for q in range(n) if scores[q] == best]
    names = " and ".join(labels[q] for q in winners)
    tied_names = ", ".join(labels[q] for q in tied)
    decided_by = info["decided_by"]
    if decided_by == "score":
        lines.append(f"Winner: {names} with {best} points.")
    elif decided_by == "shrines":
        shr = ", ".join(str(state["tableaus"][q][E.SHRINE]) for q in tied)
        lines.append(f"Tie at {best} points between {tied_names}; broken by shrines ({shr}): winner {names}.")
    elif decided_by == "stones":
        st = ", ".join(str(state["stones"][q]) for q in tied)
        lines.append(f"Tie at {best} points and on shrines between {tied_names}; broken by stones "
                     f"({st}): winner {names}.")
    else:
        lines.append(f"Tie at {best} points between {tied_names}, also on shrines and stones: "
                     f"shared win for {names}.")
    return "\n".join(lines)


def result_text(result: dict[str, Any] | None, labels: list[str], moves: int) -> str:
    """How a game ended, in words: every final score, then the winner(s) on a line of their own;
    or that it was left unfinished after ``moves`` moves. ``result``: anything with
    ``final_scores`` and ``winners`` (a game record, ``contract.final_result``), or None."""
    if result is None or result.get("final_scores") is None:
        return f"The game was left unfinished after {moves} moves."
    scores = ", ".join(f"{labels[q]} {score}" for q, score in enumerate(result["final_scores"]))
    winners = [labels[int(w)] for w in result["winners"]]
    won = f"Winner: {winners[0]}." if len(winners) == 1 else f"Shared win: {' and '.join(winners)}."
    return f"Final scores: {scores}.\n{won}"
