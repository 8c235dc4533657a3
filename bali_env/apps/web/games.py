"""The games the web app plays: ``GameSession`` (one game, one human seat, bots in the others) and
``GameStore`` (the games open at once, by id).

Everything a session sends to the browser is built from the human's own observation
(``viewer.frames.Spectator`` for that seat): the picture, the legal options with what they cost
and give (``render.option_text``, as ``bali play`` shows them), the move log with the bots'
hidden moves described as the table saw them, and at the end the result. A bot that raises ends
its game with a message; the other games and the server go on.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bali_env.envs.bali_v0 import raw_env
from bali_env.pictures.narrate import explain_final_scoring, result_text
from bali_env.pictures.text import option_text
from bali_env.pictures.frames import Frame, Spectator, frame_parts
from bali_env.pictures.style import DEFS
from bali_env.pictures.svg import SVG_CLOSE, SVG_OPEN

from bali_env.agents.base import make_agent

MAX_GAMES = 32  #: games open at once; the one untouched longest is closed to make room
BUILTIN_CHOICES = ("greedy", "random", "mcts", "mcts:sims=200", "ppo")  #: the opponents a browser may ask for


class GameError(ValueError):
    """A request the game cannot take (a bad setting, not your turn, an illegal action): the web
    app answers it with a 4xx status and the message."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class GameSession:
    """One game in the browser: the human in ``seat``, bots built from ``specs`` elsewhere."""

    id: str
    env: Any
    seat: int
    specs: list[str]
    bots: dict[int, Any]
    spectator: Spectator
    frames: list[Frame]
    status: str = "playing"  #: playing, over, failed
    message: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)
    touched: float = field(default_factory=time.monotonic)

    # ------------------------------------------------------------------ moves
    def to_move(self) -> int | None:
        """The seat that decides now (None once the game has ended)."""
        return None if self.status != "playing" else self.env.agent_name_mapping[self.env.agent_selection]

    def human_move(self, action: Any) -> None:
        """The human's move; GameError (409) when it is not their turn, (400) when not legal."""
        if self.status != "playing":
            raise GameError(f"the game is {self.status}", 409)
        if self.to_move() != self.seat:
            raise GameError("it is not your turn: a bot is to move (advance the game)", 409)
        if isinstance(action, bool) or not isinstance(action, int):
            raise GameError(f"action must be an action id (an integer), got {action!r}")
        if action not in self.legal():
            raise GameError(f"action {action} is not legal now; legal: {self.legal()}")
        self._play(action)

    def bot_move(self) -> None:
        """One move by the bot to move; GameError (409) when it is the human's turn. A bot that
        fails (raises, or answers an illegal action) ends the game with a message."""
        if self.status != "playing":
            raise GameError(f"the game is {self.status}", 409)
        q = self.to_move()
        if q == self.seat:
            raise GameError("it is your turn", 409)
        obs = self.env.observe(self.env.agent_selection)
        try:
            action = int(self.bots[q].act(obs["observation"], obs["action_mask"]))
            if not 0 <= action < len(obs["action_mask"]) or not obs["action_mask"][action]:
                raise ValueError(f"answered {action}, which is not a legal action")
        except Exception as exc:  # noqa: BLE001 - any failure of the bot ends this game, not the server
            self.status = "failed"
            self.message = (f"{self.spectator.labels[q]} failed: {type(exc).__name__}: "
                            + " ".join(str(exc).split())[:300] + ". The game ends here.")
            self.close()
            return
        self._play(action)

    def legal(self) -> list[int]:
        """The human's legal actions now (empty when it is not their turn)."""
        if self.to_move() != self.seat:
            return []
        return [int(a) for a in np.flatnonzero(self.env.observe(self.env.agent_selection)["action_mask"])]

    def _play(self, action: int) -> None:
        self.frames.append(self.spectator.step(self.env._state, action, apply=self.env.step))
        if all(self.env.terminations.values()):
            self.status = "over"
            self.close()

    def close(self) -> None:
        """Tell the bots the game ended and release them (a ``cmd:`` bot's process)."""
        s = self.env.state_dict()
        for bot in self.bots.values():
            try:
                bot.end_game({"game": 0, "final_scores": s["scores"], "winners": s["winners"], "forfeit": None})
                bot.close()
            except Exception:  # noqa: BLE001 - a bot that fails to stop does not matter any more
                pass

    # ------------------------------------------------------------------ what the browser gets
    def snapshot(self) -> dict[str, Any]:
        """What the browser shows: the picture, whose turn, the human's options, the move log,
        the result. Built from the human's view only."""
        frame = self.frames[-1]
        s = self.spectator
        svg = SVG_OPEN + DEFS + "".join(frame_parts(frame, s)) + SVG_CLOSE
        q = self.to_move()
        options = [{"action": a, "text": option_text(frame.view, a)} for a in self.legal()]
        log = [{"step": f.step, "text": f.move, "events": list(f.events)} for f in self.frames[1:]]
        out: dict[str, Any] = {
            "id": self.id, "status": self.status, "message": self.message, "svg": svg, "step": frame.step,
            "seat": self.seat, "labels": s.labels, "to_move": q, "your_turn": q == self.seat,
            "options": options, "log": log,
        }
        if self.status == "over":
            info = self.env.infos[self.env.possible_agents[self.seat]]
            out["result"] = result_text(info, s.labels, frame.step)
            out["scoring"] = explain_final_scoring(self.env.state_dict(), info, s.labels)
            out["record"] = self.env.game_record(self.specs)
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

    def new_game(self, settings: Any) -> GameSession:
        """Start a game from the browser's settings: ``players`` (2-4), ``seat``, ``opponents``
        (one spec per other seat, from ``choices``), ``oracle``, ``demon``, ``seed`` (optional).
        GameError for a bad setting."""
        if not isinstance(settings, dict):
            raise GameError("send the game's settings as a JSON object")
        players = _int(settings, "players", 2, 4, 2)
        seat = _int(settings, "seat", 0, players - 1, 0)
        seed = settings.get("seed")
        seed = secrets.randbelow(2**31) if seed in (None, "") else _int(settings, "seed", 0, 2**31 - 1, 0)
        flags = {k: settings.get(k, False) for k in ("oracle", "demon")}
        if not all(isinstance(v, bool) for v in flags.values()):
            raise GameError("oracle and demon must be true or false")
        opponents = settings.get("opponents", ["greedy"])
        if not isinstance(opponents, list) or not opponents or not all(isinstance(o, str) for o in opponents):
            raise GameError("opponents must be a list of agent names")
        bad = [o for o in opponents if o not in self.choices]
        if bad:
            raise GameError(f"unknown opponent {bad[0]!r}; choose from {self.choices}")
        others = [q for q in range(players) if q != seat]
        specs = {q: opponents[i % len(opponents)] for i, q in enumerate(others)}
        bots = {}
        for q, spec in specs.items():
            try:
                bots[q] = make_agent(spec, seed=seed + q)
                check = getattr(bots[q], "check_players", None)
                if callable(check):
                    check(players)
            except Exception as exc:  # noqa: BLE001 - a missing extra, a policy for another player count
                raise GameError(f"opponent {spec!r}: " + " ".join(str(exc).split())) from None
        env = raw_env(num_players=players, oracle=flags["oracle"], demon=flags["demon"])
        env.reset(seed=seed)
        all_specs = ["you" if q == seat else specs[q] for q in range(players)]
        labels = [f"player_{q} ({name})" for q, name in enumerate(all_specs)]
        spectator = Spectator(labels, seat)
        session = GameSession(secrets.token_urlsafe(12), env, seat, ["human" if q == seat else specs[q]
                                                                    for q in range(players)],
                              bots, spectator, [spectator.start(env._state)])
        for q, bot in bots.items():
            try:
                bot.begin_game({"game": 0, "seat": q, "num_players": players, "variants": flags,
                                "agents": session.specs})
            except Exception as exc:  # noqa: BLE001 - a bot program that does not start
                session.close()
                raise GameError(f"opponent {specs[q]!r} did not start: " + " ".join(str(exc).split())) from None
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


def _int(settings: dict[str, Any], key: str, low: int, high: int, default: int) -> int:
    value = settings.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise GameError(f"{key} must be an integer in {low}..{high}, got {value!r}")
    return value


__all__ = ["BUILTIN_CHOICES", "GameError", "GameSession", "GameStore", "MAX_GAMES"]
