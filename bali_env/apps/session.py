"""A human at a table with bots: the one game session that the terminal game (``bali play``) and
the web app (``bali serve``) both drive.

``TableSession(num_players, seat, opponents, seed, ...)`` builds the bots from their specs
(``make_agent``, each seeded ``seed + seat``, refused with ``SetupError`` when one cannot play
this player count), deals the game, tells the bots it begins, and then takes one move at a time:
``human_move(action)`` and ``bot_move()`` each return the ``Frame`` after the move as the human
saw it (``bali_env.pictures.frames.Spectator``: the human's own view, the bots' hidden moves
described as the table saw them). A bot that raises or answers an illegal action ends the game
(``status == "failed"``, ``message`` saying who and why); ``close()`` tells the bots the game
ended and releases them (a ``cmd:`` bot's process). Nothing the session shows comes from the
true state before the game is over.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bali_env.bots.registry import make_agent
from bali_env.engine.validate import check_flag, check_int, check_num_players, check_seat, is_int
from bali_env.envs.bali_v0 import raw_env
from bali_env.pictures.frames import Frame, Spectator
from bali_env.pictures.narrate import explain_final_scoring, result_text

__all__ = ["SessionError", "SetupError", "TableSession", "opponent_seats"]


class SetupError(ValueError):
    """A game that cannot be set up: a bad setting, an opponent that cannot be built or cannot
    play this player count, a bot program that does not start."""


class SessionError(ValueError):
    """A move the game cannot take now: ``status`` 409 when it is not that player's turn or the
    game is over, 400 for an illegal action."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def opponent_seats(num_players: int, seat: int, opponents: Sequence[str]) -> dict[int, str]:
    """Every seat but the human's, in order, with its opponent spec (the specs cycle when there
    are fewer than seats)."""
    others = [q for q in range(num_players) if q != seat]
    return {q: opponents[i % len(opponents)] for i, q in enumerate(others)}


def _one_line(exc: BaseException, limit: int = 300) -> str:
    """An exception as one short line: its type and its message with the whitespace folded."""
    return f"{type(exc).__name__}: " + " ".join(str(exc).split())[:limit]


class TableSession:
    """One game: the human in ``seat``, bots from ``opponents`` in the other seats (see the module
    docstring). ``label_width`` shortens the bots' specs in the seat labels (a terminal's 80
    columns)."""

    def __init__(self, num_players: int, seat: int, opponents: Sequence[str], seed: int, oracle: bool = False,
                 demon: bool = False, label_width: int | None = None) -> None:
        try:
            num_players = check_num_players(num_players)
            seat = check_seat(seat, num_players)
            seed = check_int("seed", seed, 0)
            oracle, demon = check_flag("oracle", oracle), check_flag("demon", demon)
        except (TypeError, ValueError) as exc:
            raise SetupError(str(exc)) from None
        if not opponents:
            raise SetupError("name at least one opponent, e.g. greedy")
        self.seat, self.seed = seat, seed
        self.specs = {q: str(spec) for q, spec in opponent_seats(num_players, seat, list(opponents)).items()}
        self.bots = self._build_bots(num_players)
        self.labels = [f"player_{q} (you)" if q == seat else f"player_{q} ({self._short(self.specs[q], label_width)})"
                       for q in range(num_players)]
        self.agents = ["human" if q == seat else self.specs[q] for q in range(num_players)]
        self.env = raw_env(num_players=num_players, oracle=oracle, demon=demon)
        self.env.reset(seed=seed)
        self.spectator = Spectator(self.labels, seat)
        self.frames: list[Frame] = [self.spectator.start(self.env.state())]
        self.status = "playing"  #: playing, over, failed (a bot failed), left (the human left)
        self.message = ""
        self._closed = False
        game = {"game": 0, "num_players": num_players, "variants": {"oracle": oracle, "demon": demon},
                "agents": self.agents}
        for q, bot in self.bots.items():
            try:
                bot.begin_game({**game, "seat": q})
            except Exception as exc:  # noqa: BLE001 - a bot program that does not start
                self.close()
                raise SetupError(f"opponent {self.specs[q]!r} did not start: {_one_line(exc)}") from None

    def _build_bots(self, num_players: int) -> dict[int, Any]:
        """The opponents as agents, each asked whether it plays ``num_players``."""
        bots = {}
        for q, spec in self.specs.items():
            try:
                bots[q] = make_agent(spec, seed=self.seed + q)
                check = getattr(bots[q], "check_players", None)  # e.g. the shipped ppo: a policy for this count?
                if callable(check):
                    check(num_players)
            except Exception as exc:  # noqa: BLE001 - unknown kind, bad setting, missing file or extra
                for bot in bots.values():
                    bot.close()
                raise SetupError(f"opponent {spec!r}: " + " ".join(str(exc).split())) from None
        return bots

    @staticmethod
    def _short(spec: str, width: int | None) -> str:
        return spec if width is None or len(spec) <= width else spec[: width - 1] + "~"

    # ------------------------------------------------------------------ whose turn, what is legal
    @property
    def num_players(self) -> int:
        """Seats at the table."""
        return self.env.num_players

    def to_move(self) -> int | None:
        """The seat that decides now (None once the game has ended, however it ended)."""
        return None if self.status != "playing" else self.env.agent_name_mapping[self.env.agent_selection]

    def your_turn(self) -> bool:
        """Whether the human decides now."""
        return self.to_move() == self.seat

    def legal(self) -> list[int]:
        """The human's legal actions now (empty when it is not their turn)."""
        if not self.your_turn():
            return []
        return [int(a) for a in np.flatnonzero(self.env.observe(self.env.agent_selection)["action_mask"])]

    @property
    def frame(self) -> Frame:
        """The latest frame: the table as the human knows it now."""
        return self.frames[-1]

    # ------------------------------------------------------------------ moves
    def human_move(self, action: Any) -> Frame:
        """The human's move; SessionError (409) when it is not their turn, (400) when it is not a
        legal action id."""
        self._check_playing()
        if not self.your_turn():
            raise SessionError("it is not your turn: a bot is to move (advance the game)", 409)
        if not is_int(action):
            raise SessionError(f"action must be an action id (an integer), got {action!r}")
        if int(action) not in self.legal():
            raise SessionError(f"action {action} is not legal now; legal: {self.legal()}")
        return self._play(int(action))

    def bot_move(self) -> Frame | None:
        """One move by the bot to move, its frame; SessionError (409) when it is the human's
        turn. A bot that fails (raises, or answers an illegal action) ends the game: None, with
        ``status`` "failed" and ``message`` saying who and why."""
        self._check_playing()
        q = self.to_move()
        if q == self.seat:
            raise SessionError("it is your turn", 409)
        obs = self.env.observe(self.env.agent_selection)
        try:
            action = int(self.bots[q].act(obs["observation"], obs["action_mask"]))
            if not 0 <= action < len(obs["action_mask"]) or not obs["action_mask"][action]:
                raise ValueError(f"it chose action {action}, which is not legal")
        except Exception as exc:  # noqa: BLE001 - any failure of the bot ends this game, not the program
            self.status, self.message = "failed", f"{self.labels[q]} failed ({_one_line(exc)}): the game ends here."
            self.close()
            return None
        return self._play(action)

    def leave(self, why: str) -> None:
        """The human leaves the game unfinished."""
        if self.status == "playing":
            self.status, self.message = "left", why
        self.close()

    def _check_playing(self) -> None:
        if self.status != "playing":
            raise SessionError(f"the game is {self.status}", 409)

    def _play(self, action: int) -> Frame:
        frame = self.spectator.step(self.env.state(), action, apply=self.env.step)
        self.frames.append(frame)
        if all(self.env.terminations.values()):
            self.status = "over"
            self.close()
        return frame

    def close(self) -> None:
        """Tell the bots the game ended and release them (once; a bot that fails to stop does not
        matter any more)."""
        if self._closed:
            return
        self._closed = True
        s = self.env.state_dict()
        for bot in self.bots.values():
            try:
                bot.end_game({"game": 0, "final_scores": s["scores"], "winners": s["winners"], "forfeit": None})
                bot.close()
            except Exception:  # noqa: BLE001
                pass

    # ------------------------------------------------------------------ the end
    def record(self) -> dict[str, Any]:
        """The game record so far (``final_scores`` None while unfinished)."""
        return self.env.game_record(self.agents)

    def result(self) -> str:
        """How the game ended, in words (every score, the winner); the game must be over."""
        return result_text(self.env.infos[self.env.possible_agents[self.seat]], self.labels, self.frame.step)

    def final_scoring(self) -> str:
        """The final scoring, line by line (the true state, revealed once the game is over)."""
        if self.status != "over":
            raise SessionError("the final scoring is shown once the game is over", 409)
        return explain_final_scoring(self.env.state_dict(), self.env.infos[self.env.possible_agents[self.seat]],
                                     self.labels)
