"""The games the web app plays: ``GameSession`` (one ``TableSession``, the game ``bali play``
plays too, with the lock and the id a browser needs) and ``GameStore`` (the games open at once,
by id). The requests that start a game and make a move are declared models (``NewGame``,
``Move``: pydantic), so a bad request is one 400 answer naming the field.

Everything a session sends to the browser is built from the human's own observation (the
session's ``Spectator`` frames): the picture, the legal options with what they cost and give
(``text.option_text``, as ``bali play`` shows them) and, when there is only one, why
(``text.only_option_reason``), the move log with the bots' hidden moves
described as the table saw them, and at the end the result. A bot that raises ends its game with
a message; the other games and the server go on.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError, model_validator

from bali_env.engine.validate import model_problem
from bali_env.pictures.frames import frame_parts
from bali_env.pictures.style import DEFS
from bali_env.pictures.svg import SVG_CLOSE, SVG_OPEN
from bali_env.pictures.text import only_option_reason, option_text

from bali_env.apps.session import SessionError, SetupError, TableSession

MAX_GAMES = 32  #: games open at once; the one untouched longest is closed to make room
BUILTIN_CHOICES = ("greedy", "random", "mcts", "mcts:sims=200", "ppo")  #: the opponents a browser may ask for


class GameError(ValueError):
    """A request the game cannot take (a bad setting, not your turn, an illegal action): the web
    app answers it with a 4xx status and the message."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class NewGame(BaseModel):
    """``POST /api/games``: the settings of a new game (unknown keys are ignored)."""

    model_config = ConfigDict(extra="ignore")

    players: StrictInt = Field(2, ge=2, le=4, description="an integer in 2..4")
    seat: StrictInt = Field(0, ge=0, le=3, description="an integer in 0..players-1")
    opponents: list[str] = Field(default_factory=lambda: ["greedy"], min_length=1,
                                 description="a list of agent names")
    oracle: StrictBool = Field(False, description="true or false")
    demon: StrictBool = Field(False, description="true or false")
    seed: StrictInt | None = Field(None, ge=0, le=2**31 - 1, description="an integer in 0..2147483647 or null")

    @model_validator(mode="after")
    def _seat_at_the_table(self) -> NewGame:
        if self.seat >= self.players:
            raise ValueError(f"seat must be an integer in 0..{self.players - 1}, got {self.seat}")
        return self


class Move(BaseModel):
    """``POST /api/games/{id}/move``: the human's action."""

    action: StrictInt = Field(description="an action id (an integer)")


def parse(model: type[BaseModel], body: Any) -> Any:
    """``body`` (a request's JSON) as ``model``; GameError (400) naming the first bad field."""
    if not isinstance(body, dict):
        raise GameError(f"send a JSON object ({', '.join(model.model_fields)})")
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise GameError(model_problem(exc, model)) from None


@dataclass
class GameSession:
    """One game in the browser: a ``TableSession`` under an id and a lock."""

    id: str
    table: TableSession
    lock: threading.Lock = field(default_factory=threading.Lock)
    touched: float = field(default_factory=time.monotonic)

    def human_move(self, action: int) -> None:
        """The human's move; GameError (409) when it is not their turn, (400) when not legal."""
        try:
            self.table.human_move(action)
        except SessionError as exc:
            raise GameError(str(exc), exc.status) from None

    def bot_move(self) -> None:
        """One move by the bot to move; GameError (409) when it is the human's turn. A bot that
        fails ends the game with a message."""
        try:
            self.table.bot_move()
        except SessionError as exc:
            raise GameError(str(exc), exc.status) from None

    def close(self) -> None:
        """Tell the bots the game ended and release them."""
        self.table.close()

    def snapshot(self) -> dict[str, Any]:
        """What the browser shows: the picture, whose turn, the human's options (and why, when
        there is only one), the move log, the result. Built from the human's view only."""
        t = self.table
        frame = t.frame
        svg = SVG_OPEN + DEFS + "".join(frame_parts(frame, t.spectator)) + SVG_CLOSE
        q = t.to_move()
        legal = t.legal()
        out: dict[str, Any] = {
            "id": self.id, "status": t.status, "message": t.message, "svg": svg, "step": frame.step,
            "seat": t.seat, "labels": t.labels, "to_move": q, "your_turn": q == t.seat,
            "options": [{"action": a, "text": option_text(frame.view, a)} for a in legal],
            "only": only_option_reason(frame.view, legal[0]) if len(legal) == 1 else "",
            "log": [{"step": f.step, "text": f.move, "events": list(f.events)} for f in t.frames[1:]],
        }
        if t.status == "over":
            out["result"] = t.result()
            out["scoring"] = t.final_scoring()
            out["record"] = t.record()
        return out


class GameStore:
    """The open games by id (at most ``max_games``; the one untouched longest makes room).
    ``extra_specs`` are the agent specs the server was started with (file bots, ``cmd:``...)
    that browsers may ask for besides ``BUILTIN_CHOICES``."""

    def __init__(self, extra_specs: list[str] | None = None, max_games: int = MAX_GAMES) -> None:
        self.choices = list(dict.fromkeys([*BUILTIN_CHOICES, *(extra_specs or [])]))
        self.max_games = max_games
        self._games: OrderedDict[str, GameSession] = OrderedDict()
        self._lock = threading.Lock()

    def new_game(self, body: Any) -> GameSession:
        """Start a game from a browser's ``NewGame`` settings (the seed drawn when not given);
        GameError for a bad setting or an opponent that cannot play."""
        settings = parse(NewGame, body)
        bad = [o for o in settings.opponents if o not in self.choices]
        if bad:
            raise GameError(f"unknown opponent {bad[0]!r}; choose from {self.choices}")
        seed = secrets.randbelow(2**31) if settings.seed is None else settings.seed
        try:
            table = TableSession(settings.players, settings.seat, settings.opponents, seed, settings.oracle,
                                 settings.demon)
        except SetupError as exc:
            raise GameError(str(exc)) from None
        session = GameSession(secrets.token_urlsafe(12), table)
        with self._lock:
            self._games[session.id] = session
            while len(self._games) > self.max_games:
                self._games.popitem(last=False)[1].close()
        return session

    def get(self, game_id: str) -> GameSession:
        """The game with this id; GameError (404) when there is none."""
        with self._lock:
            session = self._games.get(game_id)
            if session is None:
                raise GameError("no such game (it may have been closed to make room for newer ones)", 404)
            self._games.move_to_end(game_id)
            session.touched = time.monotonic()
            return session

    def __len__(self) -> int:
        return len(self._games)


__all__ = ["BUILTIN_CHOICES", "GameError", "GameSession", "GameStore", "MAX_GAMES", "Move", "NewGame", "parse"]
