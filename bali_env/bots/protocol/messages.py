"""The messages of the bot protocol (docs/protocol.md): what bali sends a bot, one JSON object per
line, and the checks on what the bot answers.

``decide_message`` turns one observation into the decision a bot author reads: the view by name
(``view_dict``: hands, tableaus, market, altar as known, the pending decision), the raw
observation vector, and the legal actions as ids with names. It reads the observation only, so a
bot learns exactly what its seat may know.

What a bot may answer is declared as pydantic models: ``BotHello`` (its hello) and ``ANSWER``
(a decision: an action id, or ``ActionAnswer``, ``{"action": 29}``); ``parse_hello`` and
``parse_answer`` read a line with them and turn a fault into a ``BotFault`` saying what is wrong.
The messages bali sends are built here as plain dicts, not models: ``decide_message`` runs for
every decision (a model would cost time there and check nothing bali did not build itself), and
``start``/``end`` pass on their caller's keys in the caller's order, byte for byte. ``schema.py``
declares them as strict models (the JSON Schema is generated from those), and the tests read
real messages with them. Counts by card or category name every card or category, zeros included.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, TypeAdapter, ValidationError

from bali_env.engine.ids import ACTION_NAMES, CARD_KEYS, CATEGORY_NAMES, DECISION_TEXT, N_CARD_TYPES
from bali_env.engine.decode import ObservationView, decode_observation

PROTOCOL = "bali-bot"  #: the protocol's name, in the hello messages
VERSION = 1  #: its version: a bot answers hello with the version it speaks
MAX_LINE = 65_536  #: bytes of one line from a bot (more without a newline: a protocol fault)
FAULTS = ("timeout", "crash", "illegal", "protocol")  #: why a bot loses a game
FIELDS = ("view", "observation")  #: the parts of a decision a bot may ask for in its hello (default: both)


class BotFault(RuntimeError):
    """A bot broke the rules of the protocol: ``reason`` is one of ``FAULTS``, ``detail`` says what
    happened. The bot loses the game it was playing."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


def line(message: dict[str, Any]) -> bytes:
    """A message as one line of compact JSON."""
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def hello_message(move_time: float | None, game_time: float | None) -> dict[str, Any]:
    """The first message to a new bot process; it answers ``{"type": "hello", "version": 1, ...}``."""
    return {"type": "hello", "protocol": PROTOCOL, "version": VERSION, "move_time": move_time,
            "game_time": game_time}


def start_message(game: dict[str, Any]) -> dict[str, Any]:
    """A game starts: its id, the bot's seat, the player count, the variants, who plays where."""
    return {"type": "start", **game}


def end_message(result: dict[str, Any]) -> dict[str, Any]:
    """A game ended: the final scores and winners (None when it ended early), and a forfeit if any."""
    return {"type": "end", **result}


QUIT = {"type": "quit"}  #: the last message: the bot exits


def _cards(row: np.ndarray) -> dict[str, int]:
    """Counts by card, every card named (zeros too, as ``supply`` names every category)."""
    return {CARD_KEYS[k]: int(row[k]) for k in range(len(row))}


def _categories(row: np.ndarray) -> dict[str, int]:
    return {CATEGORY_NAMES[c]: int(v) for c, v in enumerate(row)}


def view_dict(view: ObservationView) -> dict[str, Any]:
    """The decoded observation by name (seats relative: 0 is the bot itself, 1 the next player
    clockwise): what docs/protocol.md lists under ``view``."""
    seats = []
    for r in range(view.num_players):
        seats.append({
            "hand": _cards(view.hands[r][:N_CARD_TYPES]), "tableau": _cards(view.tableaus[r][:N_CARD_TYPES]),
            "stones": int(view.stones[r]), "vp": int(view.vp_tokens[r]),
            "offerings_min": _categories(view.offerings_min[r]), "offerings_max": _categories(view.offerings_max[r]),
            "offerings_total": int(view.offerings_total[r]),
        })
    scoring = None
    if view.scored_type >= 0:
        scoring = {"card": CARD_KEYS[view.scored_type], "amount": int(view.scoring_amount),
                   "bonus": bool(view.scoring_bonus)}
    return {
        "decision": view.decision, "decision_text": DECISION_TEXT[view.decision],
        "num_players": view.num_players, "oracle": view.oracle, "demon": view.demon,
        "active": view.active, "to_move": view.to_move, "seats": seats,
        "supply": _categories(view.supply), "deck_size": view.deck_size,
        "deck_cards": _cards(view.deck_cards),
        "market": [[CARD_KEYS[c] for c in column] for column in view.market],
        "demon_column": None if view.demon_column < 0 else view.demon_column,
        "altar": {"size": view.altar_size, "known": _categories(view.altar_known), "unknown": view.altar_unknown,
                  "top": [None if c < 0 else CATEGORY_NAMES[c] for c in view.altar_top[: min(4, view.altar_size)]]},
        "oracle_peeks_owed": view.peeks_owed, "oracle_window": view.oracle_window,
        "scoring": scoring, "last_take_column": None if view.last_take_column < 0 else view.last_take_column,
    }


def decide_message(observation: np.ndarray, mask: np.ndarray, game: int | None, decision: int,
                   time_left: float | None, fields: tuple[str, ...] = FIELDS) -> dict[str, Any]:
    """One decision: the view by name and the observation vector (those of ``fields`` the bot
    asked for), and always the legal actions with names."""
    message: dict[str, Any] = {"type": "decide", "game": game, "decision": decision, "time_left": time_left}
    if "view" in fields:
        message["view"] = view_dict(decode_observation(observation))
    if "observation" in fields:
        message["observation"] = np.asarray(observation, dtype=np.float64).round(6).tolist()
    message["legal"] = [{"id": a, "name": ACTION_NAMES[a]} for a in np.flatnonzero(mask).tolist()]
    return message


class ActionAnswer(BaseModel):
    """A decision answered as an object: ``{"action": 29}`` (other keys are ignored)."""

    model_config = ConfigDict(extra="ignore")

    action: StrictInt


ANSWER: TypeAdapter[int | ActionAnswer] = TypeAdapter(StrictInt | ActionAnswer)
"""What a bot may answer to ``decide``: an action id (``29``, not ``true``, ``29.0`` or ``"29"``) or an
``ActionAnswer``."""


def _shown_name(name: Any) -> str:
    """A hello's ``name`` as tables show it: a string that is not blank, cut to 60 characters; anything
    else is no name (``""``: the agent keeps its spec as its name)."""
    return name[:60] if isinstance(name, str) and name.strip() else ""


class BotHello(BaseModel):
    """A bot's answer to hello: ``{"type": "hello", "version": 1, "name": "mybot", "fields": [...]}``
    (``name`` and ``fields`` optional; other keys ignored)."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["hello"]
    version: StrictInt = Field(ge=VERSION, le=VERSION)
    name: Annotated[str, BeforeValidator(_shown_name)] = ""
    fields: list[Literal["view", "observation"]] = Field(default_factory=lambda: list(FIELDS))


def parse_answer(raw: bytes, mask: np.ndarray) -> int:
    """The action id in a bot's answer line (``29`` or ``{"action": 29}``: ``ANSWER``); BotFault
    ``protocol`` for anything else, ``illegal`` for an id that is not legal now."""
    try:
        answer = ANSWER.validate_json(raw)
    except ValidationError as exc:
        what = "not JSON" if exc.errors()[0]["type"] == "json_invalid" else "not an action id"
        raise BotFault("protocol", f"the answer is {what}: {raw[:80]!r}") from None
    action = answer if isinstance(answer, int) else answer.action
    if not 0 <= action < len(mask) or not mask[action]:
        legal = np.flatnonzero(mask).tolist()
        raise BotFault("illegal", f"action {action} is not legal now (legal: {legal})")
    return action


def parse_hello(raw: bytes) -> tuple[str, tuple[str, ...]]:
    """The bot's name and the decision ``fields`` it asks for (default ``FIELDS``: the view and
    the observation) from its hello answer (``BotHello``); BotFault ``protocol`` when it is not one."""
    try:
        answer = json.loads(raw)
    except (ValueError, RecursionError):
        answer = None
    try:
        hello = BotHello.model_validate(answer if isinstance(answer, dict) else None)
    except ValidationError as exc:
        field = (exc.errors()[0]["loc"] or ("",))[0]
        if field == "version":
            raise BotFault("protocol", f"the bot speaks version {answer.get('version')!r}; this is version "
                                       f"{VERSION}") from None
        if field == "fields":
            raise BotFault("protocol", f"hello fields must be a list drawn from {list(FIELDS)}, got "
                                       f"{answer.get('fields')!r}") from None
        raise BotFault("protocol", f'expected {{"type": "hello", "version": {VERSION}, ...}}, got {raw[:80]!r}') \
            from None
    return hello.name, tuple(f for f in FIELDS if f in hello.fields)


__all__ = ["ANSWER", "FAULTS", "FIELDS", "MAX_LINE", "PROTOCOL", "QUIT", "VERSION", "ActionAnswer", "BotFault",
           "BotHello", "decide_message", "end_message", "hello_message", "line", "parse_answer", "parse_hello",
           "start_message", "view_dict"]
