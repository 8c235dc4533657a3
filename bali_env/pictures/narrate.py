"""What happened at the table, in words: ``TurnNarrator`` (each move, a newly dealt column, what a
turn's scoring gave) and ``explain_final_scoring`` (the final scoring line by line). Used by ``bali
play``, the replays (text, HTML, GIF) and the web app through ``frames.Spectator``. The narrator
tells the engine's public events (``bali_env.engine.events``), which every viewer may know; the
final scoring reads the true state only once the game is over."""

from __future__ import annotations

from typing import Any

import numpy as np

from bali_env import engine as E
from bali_env.engine import events as EV
from bali_env.engine.events import Event
from bali_env.engine.ids import CARD_NAMES, CARD_SHORT, CATEGORY_NAMES
from bali_env.engine.state import absolute_seat, relative_seat

__all__ = ["TurnNarrator", "explain_final_scoring", "final_scoring_text", "result_text"]


class TurnNarrator:
    """What the table is told about each move and turn, from the engine's public events
    (``engine.events.move_events``): the move (what a column take gave), a newly dealt column
    and the oracles removed from it, and once a turn's scoring is over, the scored type and what
    every player received (or that the deck ran out and the game ends). ``seat`` is the viewer
    (0 for the public): the scoring line names the players from there, clockwise."""

    def __init__(self, labels: list[str], seat: int) -> None:
        self.labels, self.seat = labels, seat
        self.scored = -1  #: the card type being scored, -1 outside a scoring
        self.receipts: np.ndarray | None = None  #: per seat: stones, VP, offering cards by category

    def move(self, mover: int, text: str, events: list[Event]) -> list[str]:
        """The lines about one move by ``mover`` (``text``: the move as the viewer may see it)."""
        lines = [f"{self.labels[mover]}: {text}"]
        for event in events:
            line = self._tell(event)
            if line is not None:
                lines.append(line)
        return lines

    def _tell(self, event: Event) -> str | None:
        """One event in words, or None for one that only feeds the scoring line."""
        if event.kind == EV.TAKE and event.card >= 0:
            return None  # said with the move: see ``take_text``
        if event.kind == EV.DEALT:
            removed = event.removed
            return (f"  column {event.column} dealt: {', '.join(CARD_SHORT[c] for c in event.cards) or '-'}"
                    + (f" ({removed} oracle{'s' if removed > 1 else ''} removed)" if removed else ""))
        if event.kind == EV.DECK_OUT:
            return "  the deck ran out: the game ends (no scoring this turn)"
        if event.kind == EV.SCORING:
            self.scored, self.receipts = event.card, np.zeros((len(self.labels), 2 + E.N_CATEGORIES), np.int64)
        elif event.kind == EV.RECEIVED and self.receipts is not None:
            self.receipts[event.seat] += (event.stones, event.vp, *event.offerings)
        elif event.kind == EV.SCORED and self.receipts is not None:
            line = self._scoring_line()
            self.receipts, self.scored = None, -1
            return line
        return None

    @staticmethod
    def take_text(text: str, events: list[Event]) -> str:
        """A refill take's text with the card it got (``take column 2: Shrine``)."""
        take = next((e for e in events if e.kind == EV.TAKE and e.card >= 0), None)
        return text if take is None else f"{text}: {CARD_SHORT[take.card]}"

    def _scoring_line(self) -> str:
        """What every player received from the turn's scoring, the viewer first."""
        n = len(self.labels)
        parts = []
        for r in range(n):
            q = absolute_seat(self.seat, r, n)
            got = _receipt_words(self.receipts[q])
            if got:
                parts.append(f"{self.labels[q]} {' '.join(got)}")
        what = CARD_NAMES[self.scored] if self.scored >= 0 else "the turn"
        return f"  scoring {what}: " + (", ".join(parts) if parts else "nobody receives anything")


def _receipt_words(row: np.ndarray) -> list[str]:
    """One player's receipts (stones, VP, offering cards by category) as ``+2 stones +1 rice``."""
    stones, vp = int(row[0]), int(row[1])
    got = [f"+{stones} stone{'s' if stones > 1 else ''}"] if stones else []
    got += [f"+{vp} VP"] if vp else []
    return got + [f"+{int(k)} {CATEGORY_NAMES[c]}" for c, k in enumerate(row[2:]) if k > 0]


def explain_final_scoring(state: dict[str, Any], info: dict[str, Any], labels: list[str]) -> str:
    """The final scoring, line by line per player, from the end-of-game ``info`` (``final_scores``,
    ``winners``, ``decided_by``, ``score_breakdown``: the engine's scoring) and the final, fully
    revealed ``state`` (``state_dict()`` after the game is over); then the winner(s) and the
    tie-break that decided."""
    counts = np.bincount(np.asarray(state["altar"], dtype=np.int64), minlength=E.N_CATEGORIES)[: E.N_CATEGORIES]
    values = np.zeros(E.N_CATEGORIES, dtype=np.int64)
    E.altar_values(counts, values)
    final = {**info, "altar_counts": [int(c) for c in counts], "altar_values": [int(v) for v in values],
             "offering_cards": state["offerings"]}
    return _scoring_lines(final, [t[E.SHRINE] for t in state["tableaus"]], state["stones"], labels)


def final_scoring_text(final: dict[str, Any], view: Any, seat: int | None, labels: list[str]) -> str:
    """The same explanation from what every player sees at the end: ``final``
    (``contract.final_result``: the scores, the altar counted, every player's offering cards) and
    the final view from absolute ``seat`` (None: the public view; shrines and stones are public)."""
    n = len(labels)
    me = 0 if seat is None else seat
    rel = [relative_seat(me, q, n) for q in range(n)]
    return _scoring_lines(final, [int(view.tableaus[r][E.SHRINE]) for r in rel], [int(view.stones[r]) for r in rel],
                          labels)


def _scoring_lines(final: dict[str, Any], shrines: list[int], stones: list[int], labels: list[str]) -> str:
    """The final scoring's lines: the altar, each player's score by part, the winner(s)."""
    counts, values = final["altar_counts"], final["altar_values"]
    lines = ["=== Final scoring ===",
             "Altar: " + ", ".join(f"{CATEGORY_NAMES[c]} {int(counts[c])} cards -> worth {int(values[c])}"
                                   for c in range(E.N_CATEGORIES))]
    for q, label in enumerate(labels):
        b = final["score_breakdown"][q]
        lines.append(f"{label}:")
        rows = [("VP tokens", b["vp_tokens"]), (f"shrines  {shrines[q]} x {E.SHRINE_POINTS}", b["shrines"]),
                (f"stones   {stones[q]} // {E.STONES_PER_POINT}", b["stones"])]
        rows += [(f"{cat:<8} {final['offering_cards'][q][c]} cards x {int(values[c])}", b["offerings"][cat])
                 for c, cat in enumerate(CATEGORY_NAMES)]
        rows.append(("total", b["total"]))
        lines += [f"  {text:<28}{value:>4}" for text, value in rows]
    lines.append(_winner_line(final, shrines, stones, labels))
    return "\n".join(lines)


def _winner_line(final: dict[str, Any], shrines: list[int], stones: list[int], labels: list[str]) -> str:
    """Who won, and the tie-break that decided."""
    scores, winners = final["final_scores"], final["winners"]
    best = max(scores)
    tied = [q for q in range(len(labels)) if scores[q] == best]
    names = " and ".join(labels[q] for q in winners)
    tied_names = ", ".join(labels[q] for q in tied)
    decided_by = final["decided_by"]
    if decided_by == "score":
        return f"Winner: {names} with {best} points."
    if decided_by == "shrines":
        shr = ", ".join(str(shrines[q]) for q in tied)
        return f"Tie at {best} points between {tied_names}; broken by shrines ({shr}): winner {names}."
    if decided_by == "stones":
        st = ", ".join(str(stones[q]) for q in tied)
        return (f"Tie at {best} points and on shrines between {tied_names}; broken by stones "
                f"({st}): winner {names}.")
    return f"Tie at {best} points between {tied_names}, also on shrines and stones: shared win for {names}."


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
