"""``cmd:PROGRAM ARGS``: a bot in any language as an agent. ``CommandAgent`` runs the program as its
own process (``process.BotProcess``), one process per agent, reused from game to game, and
speaks the bot protocol with it (docs/protocol.md) under a clock.

A fault (``timeout``, ``crash``, ``illegal``, ``protocol``) raises ``BotFault`` from ``act`` and
kills the process; the next game starts it again. Tournaments turn the fault into a lost game
for the bot (``bali_env.arena.games``); ``bali play``, ``bali serve`` and training stop the game
with the bot's message.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from bali_env.bots.base import Agent
from bali_env.bots.protocol.messages import BotFault, decide_message, end_message, parse_answer, start_message
from bali_env.bots.protocol.process import BotProcess

DEFAULT_MOVE_TIME = 10.0  #: seconds a ``cmd:`` bot has per decision when no clock is set
AFTER_ILLEGAL = 0.05  #: seconds bali waits after an illegal answer for a line that shows the bot one answer behind
KEY_SHIFT = 11  #: a decision's 64-bit key is sent as its top 53 bits: an integer every JSON parser reads exactly


#: the interpreter that runs a script, by its file name's ending (``not_executable_text``)
INTERPRETERS = {".py": "python3", ".sh": "bash", ".bash": "bash", ".zsh": "zsh", ".js": "node", ".mjs": "node",
                ".cjs": "node", ".ts": "npx tsx", ".rb": "ruby", ".pl": "perl", ".php": "php", ".lua": "lua",
                ".r": "Rscript", ".jl": "julia", ".java": "java", ".exs": "elixir", ".tcl": "tclsh"}


def _interpreter(path: Path) -> str | None:
    """The interpreter that runs the script ``path``: its ``#!`` line's (``#!/usr/bin/env
    python3``: python3), else the one of its ending (``INTERPRETERS``); None when unknown."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline(200).decode("utf-8", "replace").strip()
    except OSError:
        first = ""
    if first.startswith("#!"):
        words = first[2:].split()
        if words and Path(words[0]).name == "env":
            words = [w for w in words[1:] if not w.startswith("-")]
        if words:
            return " ".join([Path(words[0]).name, *words[1:]])
    return INTERPRETERS.get(path.suffix.lower())


def not_executable_text(program: str, path: Path) -> str:
    """Why a ``cmd:`` program that is a file without the execute permission cannot run, and the two
    ways out: ``chmod +x``, or the spec that runs it with its interpreter (``cmd:bash ./bot.sh`` for
    a shell script, ``cmd:python3 ./bot.py`` for Python: ``_interpreter``)."""
    chmod = f"chmod +x {shlex.quote(program)}"
    interpreter = _interpreter(path)
    if interpreter is None:
        return f"program {program!r} is not executable (make it so: {chmod})"
    spec = "cmd:" + " ".join([interpreter, shlex.quote(program)])
    return f"program {program!r} is not executable ({chmod}, or run it with its interpreter: {spec!r})"


def parse_command(command: str) -> list[str]:
    """The argv of a ``cmd:`` spec's command (``PROGRAM ARGS``, split as a POSIX shell would:
    quote an argument that holds spaces). ValueError for an empty or unparsable command, or a
    program that does not exist or is not executable."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise ValueError(f"cannot parse the command {command!r}: {exc}") from None
    if not argv:
        raise ValueError("a cmd: spec needs a program: cmd:PROGRAM ARGS, e.g. 'cmd:python3 mybot.py'")
    program = argv[0]
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program).expanduser()
        if not path.is_file():
            raise ValueError(f"program {program!r} does not exist")
        if not os.access(path, os.X_OK):
            raise ValueError(not_executable_text(program, path))
        argv[0] = str(path.resolve())
    else:
        found = shutil.which(program)
        if found is None:
            raise ValueError(f"program {program!r} is not on the PATH")
        argv[0] = found
    return argv


def check_bot_input(observations: np.ndarray, action_masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The input of a ``cmd:`` agent's decisions, checked: observations and masks as 2-D
    float32 / int8 arrays: the shapes, finite values, 0/1 masks with a legal action per row
    (TypeError / ValueError otherwise). Lighter than
    ``check_observations``: a bot program gets the values as they are, and the view is decoded
    by ``decode_observation``, which reads only fixed slots."""
    from bali_env.engine import N_ACTIONS, OBS_DIM

    obs, masks = np.asarray(observations), np.asarray(action_masks)
    if obs.ndim == 1:
        obs, masks = obs[None], masks[None]
    if obs.ndim != 2 or obs.shape[1] != OBS_DIM or masks.shape != (obs.shape[0], N_ACTIONS):
        raise ValueError(f"observation and action_mask must have shapes [{OBS_DIM}] and [{N_ACTIONS}] (or "
                         f"[N, ...] each), got {np.shape(observations)} and {np.shape(action_masks)}")
    if not (np.issubdtype(obs.dtype, np.number) and (np.issubdtype(masks.dtype, np.number) or masks.dtype == bool)):
        raise TypeError(f"observation and action_mask must be numeric, got {obs.dtype} and {masks.dtype}")
    obs, masks = obs.astype(np.float32, copy=False), masks.astype(np.int8, copy=False)
    if not np.isfinite(obs).all() or not ((masks == 0) | (masks == 1)).all() or not masks.any(axis=1).all():
        raise ValueError("observations must be finite and masks 0/1 with a legal action per row")
    return obs, masks


class CommandAgent(Agent):
    """A bot program speaking the bot protocol. ``command``: ``PROGRAM ARGS``; ``move_time`` and
    ``game_time``: its clock in seconds per decision and per game (``set_clock``)."""

    batched = False

    def __init__(self, command: str, seed: int | None = None, move_time: float | None = None,
                 game_time: float | None = None, stderr_path: str | Path | None = None) -> None:
        self.argv = parse_command(command)
        self.command = command
        self.name = "cmd:" + command
        self.process = BotProcess(self.argv, stderr_path)
        self.set_clock(move_time, game_time)
        self._game: int | None = None
        self._decisions = 0
        self._used = 0.0
        super().__init__(seed)

    # ------------------------------------------------------------------ settings
    def set_clock(self, move_time: float | None, game_time: float | None) -> None:
        """Seconds per decision (``DEFAULT_MOVE_TIME`` when None) and per game (None: no budget)."""
        self.move_time = DEFAULT_MOVE_TIME if move_time is None else float(move_time)
        self.game_time = None if game_time is None else float(game_time)

    def set_log(self, path: str | Path | None) -> None:
        """Append the bot's standard error to ``path`` from its next start; None: discard it (a
        tournament without a folder: its faults never quote it, so results do not depend on it).
        Never set, bali keeps its tail for the faults' messages (``BotProcess.with_stderr``)."""
        self.process.stderr_path = Path(path) if path is not None else None
        self.process.keep_stderr = False

    def start(self) -> str:
        """Start the bot if it is not running (hello exchanged); returns its name."""
        if not self.process.alive:
            name = self.process.start(self.move_time, self.game_time)
            if name:
                self.name = name
        return self.name

    # ------------------------------------------------------------------ games
    def begin_game(self, game: dict[str, Any]) -> None:
        """A game starts (``start`` message): its id, this bot's seat, the players, the variants."""
        self._game, self._decisions, self._used = game.get("game"), 0, 0.0
        self.start()
        try:
            self.process.send(start_message(game))
        except BotFault as exc:
            self.process.kill()
            raise (self.process.with_stderr(exc) if exc.reason == "crash" else exc) from None

    def end_game(self, result: dict[str, Any]) -> None:
        """A game ended (``end`` message); a bot that cannot take it is stopped (not a fault: the
        game is over)."""
        if self.process.alive:
            try:
                self.process.send(end_message(result))
            except BotFault:
                self.process.kill()
        self._game = None

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """One decision; BotFault when the bot fails it (the process is killed)."""
        obs, masks = check_bot_input(observation, action_mask)
        return self._decide(obs[0], masks[0], int(self.rng.integers(2**63)))

    def act_batch_keyed(self, observations: np.ndarray, action_masks: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """One decision per row, each message carrying its row's key (its top 53 bits,
        ``KEY_SHIFT``: exact in any JSON parser; a bot that draws its
        randomness from it plays the same games whatever the worker or batch)."""
        obs, masks = check_bot_input(observations, action_masks)
        return np.array([self._decide(o, m, int(k)) for o, m, k in zip(obs, masks, keys, strict=True)],
                        dtype=np.int64)

    def _decide(self, observation: np.ndarray, mask: np.ndarray, key: int) -> int:
        """One checked decision (``check_bot_input`` by the caller)."""
        budget = self.move_time
        left = None if self.game_time is None else self.game_time - self._used
        if left is not None:
            if left <= 0:
                self.process.kill()
                raise BotFault("timeout", f"its {self.game_time:g} s for the game are used up")
            budget = min(budget, left)
        try:
            self.start()
            message = decide_message(observation, mask, self._game, self._decisions, left, self.process.fields)
            message["key"] = (key % 2**64) >> KEY_SHIFT
            started = time.monotonic()
            raw = self.process.request(message, budget)
            self._used += time.monotonic() - started
            try:
                action = parse_answer(raw, mask)
            except BotFault as exc:  # an illegal answer followed by another line: it answered unasked before
                if exc.reason == "illegal":
                    self.process.expect_quiet(AFTER_ILLEGAL, after=raw)
                raise
            self.process.expect_quiet(after=raw)  # a second line with the answer: a fault now, not the next answer
        except BotFault as exc:
            self.process.kill()
            raise (self.process.with_stderr(exc) if exc.reason == "crash" else exc) from None
        self._decisions += 1
        return action

    def close(self) -> None:
        """Stop the bot (``quit``, then kill if it lingers)."""
        self.process.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown: the process may be gone already
            self.process.kill()


__all__ = ["DEFAULT_MOVE_TIME", "KEY_SHIFT", "CommandAgent", "check_bot_input", "parse_command"]
