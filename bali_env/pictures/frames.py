"""A game step by step as one viewer saw it: ``Spectator`` turns a game's state and the actions
played in it into ``Frame`` s (the view, the move as the viewer saw it, what it caused, the result at
the end), and ``record_frames`` does so for a saved record. The HTML replay, the GIF, the web
app and ``render_mode="rgb_array"`` all draw frames; ``frame_parts`` is the picture of one.

Three viewers: a seat (``seat=K``: that player's own decoded observation, other players' hidden
moves described as the table saw them), the public (``seat=None``: ``text.public_view``, every
hidden move hidden) and, after the game, everything (``reveal=True``: ``text.revealed_view``,
every move in full). A frame holds nothing its viewer did not know at that step; the true state
is read only once the game is over, for the result and what the final scoring shows everyone
(``text.scored_view``: every altar card's category, every player's offering cards).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bali_env import engine as E
from bali_env.engine.contract import action_to_str, dealt_state, final_result
from bali_env.engine.decode import ObservationView, decode_observation
from bali_env.engine.events import move_events

from bali_env.pictures.narrate import TurnNarrator
from bali_env.pictures.svg import table_parts, viewpoint_text
from bali_env.pictures.text import describe_move, public_view, revealed_view, scored_view


@dataclass(frozen=True)
class Frame:
    """One step of a game as one viewer saw it."""

    step: int  #: 0 before the first move, then the number of moves made
    view: ObservationView  #: the table as the viewer knew it
    mover: int | None  #: the absolute seat whose move led here (None at step 0)
    move: str | None  #: that move as the viewer saw it: ``player_1 (mcts): take column 2: Shrine``
    events: tuple[str, ...]  #: what the move caused: a dealt column, a turn's scoring, the end
    final: dict[str, Any] | None  #: ``contract.final_result`` once the game is over

    def notes(self) -> list[str]:
        """The lines the picture shows under the decision: the move, then what it caused."""
        notes = [f"Last move: {self.move}"] if self.move else []
        if self.events:
            notes.append(" \N{MIDDLE DOT} ".join(e.strip() for e in self.events))
        return notes


def labels_for(num_players: int, agents: Sequence[str | None] | None = None) -> list[str]:
    """``player_K (agent)`` per seat, or ``player_K`` where the agent is not known."""
    who = list(agents) if agents else [None] * num_players
    return [f"player_{q}" + (f" ({who[q]})" if who[q] else "") for q in range(num_players)]


class Spectator:
    """Frames of a game as one viewer sees it, over an engine state (``env.unwrapped.state()`` of an
    AEC env, or a state array): ``start(s)`` for the position as it stands, then ``step(s,
    action)`` makes each move and returns the frame after it. ``labels`` name the seats; ``seat``
    (absolute) or None for the public; ``reveal`` for everything (after the game)."""

    def __init__(self, labels: Sequence[str], seat: int | None = None, reveal: bool = False) -> None:
        if seat is not None and reveal:
            raise ValueError("a seat's view or everything revealed, not both")
        if seat is not None and not 0 <= seat < len(labels):
            raise ValueError(f"seat must be None or 0..{len(labels) - 1}, got {seat}")
        self.labels, self.seat, self.reveal = list(labels), seat, reveal
        self._narrator = TurnNarrator(self.labels, 0 if seat is None else seat)
        self._step = 0

    def viewpoint(self) -> str:
        """Whose frames these are, in words (the picture's header pill)."""
        return viewpoint_text(self.seat, self.labels, self.reveal)

    def look(self, s: np.ndarray) -> ObservationView:
        """The table of state ``s`` as this viewer knows it now."""
        if self.seat is None:
            return revealed_view(s) if self.reveal else public_view(s)
        obs = np.zeros(E.OBS_DIM, dtype=np.float32)
        E.observe(s, self.seat, obs, np.zeros(E.N_ACTIONS, dtype=np.int8))
        return scored_view(decode_observation(obs), s, self.seat)

    def start(self, s: np.ndarray, step: int = 0) -> Frame:
        """The frame of the position in ``s`` as it stands (``step`` moves into the game)."""
        self._step = step
        return Frame(step, self.look(s), None, None, (), _final(s))

    def step(self, s: np.ndarray, action: int, apply: Callable[[int], Any] | None = None) -> Frame:
        """Make the move ``action`` in ``s`` and return the frame after it. ``apply(action)``
        makes the move (e.g. an AEC env's ``step``, which keeps its rewards); by default the
        engine's checked step, ValueError for an illegal action (``s`` unchanged)."""
        if int(s[E.S_PHASE]) == E.PH_GAME_OVER:
            raise ValueError("the game is over: no move to make")
        before = np.array(s, copy=True)
        mover, decision = int(s[E.S_TO_MOVE]), E.DECISION_NAMES[int(E.decision_index(s))]
        if apply is not None:
            apply(action)
        elif E.step_checked(s, int(action)) != 0:
            raise ValueError(f"illegal action {action} ({action_to_str(int(action))}) in this position")
        after = self.look(s)
        events = move_events(before, int(action), s)
        mine = self.reveal or self.seat == mover
        text = TurnNarrator.take_text(action_to_str(action) if mine else describe_move(decision, action), events)
        lines = self._narrator.move(mover, text, events)
        self._step += 1
        final = _final(s)
        if final is not None and not any("game ends" in line for line in lines):
            lines.append("the game ends")
        return Frame(self._step, after, mover, lines[0], tuple(line.strip() for line in lines[1:]), final)


def _final(s: np.ndarray) -> dict[str, Any] | None:
    """The result once the game in ``s`` is over, else None."""
    return final_result(s) if int(s[E.S_PHASE]) == E.PH_GAME_OVER else None


def record_frames(record: dict[str, Any], seat: int | None = None, reveal: bool = False) -> list[Frame]:
    """Every frame of a game record (``bali_env.envs.records``: one that ``load_record`` accepted or
    an env's ``game_record``), before the first move and after each, as ``seat`` (or the public,
    or with ``reveal`` everyone) saw it. ValueError for an action that is illegal where it
    stands."""
    s = dealt_state(record["num_players"], record["variants"]["oracle"], record["variants"]["demon"],
                    record["seed"], record.get("options"))
    spectator = Spectator(labels_for(record["num_players"], record.get("agents")), seat, reveal)
    frames = [spectator.start(s)]
    for i, action in enumerate(record["actions"]):
        try:
            frames.append(spectator.step(s, int(action)))
        except ValueError as exc:
            raise ValueError(f"record action {i} ({action}) does not replay: {exc}") from None
    return frames


def frame_parts(frame: Frame, spectator: Spectator, caption: str | None = None) -> list[str]:
    """The picture of ``frame`` seen by ``spectator`` (``svg.table_parts``), with the move and
    what it caused under the decision."""
    s = spectator
    return table_parts(frame.view, s.seat, s.labels, frame.final, frame.notes(), s.viewpoint(), caption)


__all__ = ["Frame", "Spectator", "frame_parts", "labels_for", "record_frames"]
