"""Every message of the bot protocol as a declared model, and the JSON Schema generated from them
(``docs/protocol.schema.json``), so that a bot in any language can check what it reads and what
it writes.

bali builds the messages it sends as plain dicts (``messages.py``: a model per decision would cost
time and check nothing bali did not build itself); the models here declare them, strictly (no
other key, no other type), and the tests read real messages of real games with them and with the
generated schema. What a bot answers is read by ``messages.BotHello`` and ``messages.ANSWER``,
the models bali itself parses answers with.

| model | the message |
|---|---|
| ``HelloMessage``, ``StartMessage``, ``DecideMessage``, ``EndMessage``, ``QuitMessage`` | from bali (``TO_BOT``) |
| ``View``, ``Seat``, ``Altar``, ``Scoring``, ``Legal``, ``Forfeit``, ``Variants`` | their parts |
| ``BotHello``, ``ActionAnswer`` | from the bot (``messages.py``) |

``python -m bali_env.bots.protocol.schema [FILE]`` writes the schema file; ``--check`` only compares
(exit 1 when it is out of date; ``tests/test_protocol_schema.py`` runs the same comparison).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, TypeAdapter, \
    create_model

from bali_env.engine.ids import (CARD_KEYS, CATEGORY_NAMES, DECISION_NAMES, MAX_PLAYERS, MIN_PLAYERS, N_ACTIONS,
                                 N_CARD_TYPES, N_COLUMNS)
from bali_env.engine.obs_spec import OBS_DIM
from bali_env.files import write_text

from bali_env.bots.protocol.messages import ANSWER, FAULTS, FIELDS, PROTOCOL, VERSION, BotHello

SCHEMA_FILE = Path(__file__).resolve().parents[3] / "docs" / "protocol.schema.json"  #: in a clone of the repository
KEY_LIMIT = 2**53  #: a decision's ``key`` is below it: an integer every JSON parser reads exactly

_STRICT = ConfigDict(extra="forbid", strict=True)
Count = Annotated[StrictInt, Field(ge=0)]
Seat_ = Annotated[StrictInt, Field(ge=0, lt=MAX_PLAYERS)]
Column = Annotated[StrictInt, Field(ge=0, lt=N_COLUMNS)]
CardKey = Literal[CARD_KEYS[:N_CARD_TYPES]]  # type: ignore[valid-type]
Category = Literal[CATEGORY_NAMES]  # type: ignore[valid-type]


def _counts(name: str, keys: tuple[str, ...], what: str) -> type[BaseModel]:
    """A model of counts by name: every key present (zeros too), each an integer >= 0."""
    return create_model(name, __config__=_STRICT, __doc__=f"{what}: every key present, zeros included.",
                        **{k: (Count, ...) for k in keys})


Cards = _counts("Cards", CARD_KEYS[:N_CARD_TYPES], "Cards by kind (a hand, a tableau)")
DeckCards = _counts("DeckCards", CARD_KEYS, "The deck's cards by kind, oracle included")
Categories = _counts("Categories", CATEGORY_NAMES, "Offering cards by category")


class Seat(BaseModel):
    """One seat as the bot may know it (relative: 0 is the bot itself)."""

    model_config = _STRICT

    hand: Cards  # type: ignore[valid-type]
    tableau: Cards  # type: ignore[valid-type]
    stones: Count
    vp: Count = Field(description="VP tokens")
    offerings_min: Categories = Field(description="offering cards known at least (exact for seat 0)")  # type: ignore[valid-type]
    offerings_max: Categories = Field(description="offering cards known at most (exact for seat 0)")  # type: ignore[valid-type]
    offerings_total: Count


class Altar(BaseModel):
    """The altar as the bot may know it."""

    model_config = _STRICT

    size: Count
    known: Categories = Field(description="altar cards whose category the bot knows")  # type: ignore[valid-type]
    unknown: Count
    top: list[Category | None] = Field(max_length=4, description=(
        "the top min(4, size) cards, top first: a category where the bot knows it, else null"))


class Scoring(BaseModel):
    """A pending scoring decision (``shrine_reward``, ``farmer_choice``)."""

    model_config = _STRICT

    card: CardKey = Field(description="the card being scored")
    amount: Count = Field(description="what the choice gives")
    bonus: StrictBool = Field(description=(
        "whether the majority bonus is part of it (shrine reward) or this choice is it (farmer choice)"))


class View(BaseModel):
    """The decision's observation by name (docs/protocol.md, the ``view`` table)."""

    model_config = _STRICT

    decision: Literal[DECISION_NAMES[:-1]]  # type: ignore[valid-type]
    decision_text: StrictStr
    num_players: Annotated[StrictInt, Field(ge=MIN_PLAYERS, le=MAX_PLAYERS)]
    oracle: StrictBool
    demon: StrictBool
    active: Seat_
    to_move: Seat_
    seats: list[Seat] = Field(min_length=MIN_PLAYERS, max_length=MAX_PLAYERS)
    supply: Categories  # type: ignore[valid-type]
    deck_size: Count
    deck_cards: DeckCards  # type: ignore[valid-type]
    market: list[list[CardKey]] = Field(min_length=N_COLUMNS, max_length=N_COLUMNS,
                                        description="the columns, each in take order")
    demon_column: Column | None
    altar: Altar
    oracle_peeks_owed: Count
    oracle_window: Count = Field(description="how many altar cards the oracle shows now (a count, not the cards)")
    scoring: Scoring | None
    last_take_column: Column | None


class Legal(BaseModel):
    """A legal action: its id and its name."""

    model_config = _STRICT

    id: Annotated[StrictInt, Field(ge=0, lt=N_ACTIONS)]
    name: StrictStr


class Variants(BaseModel):
    """The game's variants."""

    model_config = _STRICT

    oracle: StrictBool
    demon: StrictBool


class Forfeit(BaseModel):
    """A player lost the game by a fault."""

    model_config = _STRICT

    seat: Seat_
    reason: Literal[FAULTS]  # type: ignore[valid-type]
    detail: StrictStr


def _absent_not_null(schema: dict[str, Any]) -> None:
    """A field that may be left out but is never null: no ``default`` in the schema."""
    schema.pop("default", None)


class HelloMessage(BaseModel):
    """bali's first message to a new bot process."""

    model_config = _STRICT

    type: Literal["hello"]
    protocol: Literal[PROTOCOL]  # type: ignore[valid-type]
    version: Literal[VERSION]  # type: ignore[valid-type]
    move_time: StrictFloat = Field(gt=0, description="seconds per decision")
    game_time: StrictFloat | None = Field(gt=0, description="seconds per game, null: no game clock")


class StartMessage(BaseModel):
    """A game starts (tournaments, ``bali play``, ``bali serve``; not in training)."""

    model_config = _STRICT

    type: Literal["start"]
    game: Count
    seat: Seat_ = Field(description="the bot's absolute seat (0 plays first)")
    num_players: Annotated[StrictInt, Field(ge=MIN_PLAYERS, le=MAX_PLAYERS)]
    variants: Variants
    agents: list[StrictStr] = Field(description="who plays in each absolute seat")


class DecideMessage(BaseModel):
    """One decision for the bot; ``view`` and ``observation`` are there when its hello asked for
    them (both by default)."""

    model_config = _STRICT

    type: Literal["decide"]
    game: Count | None = Field(description="null for a training opponent (decisions of many games interleaved)")
    decision: Count = Field(description="the bot's decisions in this game before this one")
    time_left: StrictFloat | None = Field(gt=0, description="seconds left of the game clock; null without one")
    key: Annotated[StrictInt, Field(ge=0, lt=KEY_LIMIT)] = Field(description=(
        "drawn for this decision from the tournament's seed, the game, the seat and the decision: below 2^53"))
    view: View = Field(None, json_schema_extra=_absent_not_null)  # type: ignore[assignment]
    observation: list[StrictFloat] = Field(None, min_length=OBS_DIM, max_length=OBS_DIM,  # type: ignore[assignment]
                                           json_schema_extra=_absent_not_null)
    legal: list[Legal] = Field(min_length=1)


class EndMessage(BaseModel):
    """A game ended."""

    model_config = _STRICT

    type: Literal["end"]
    game: Count
    final_scores: list[StrictInt] | None = Field(description="by absolute seat; null when the game ended early")
    winners: list[Seat_] | None = Field(description=(
        "absolute seats; after a forfeit every other seat; null when the game ended early without one"))
    forfeit: Forfeit | None


class QuitMessage(BaseModel):
    """bali is done with the bot: it exits."""

    model_config = _STRICT

    type: Literal["quit"]


ToBot = Annotated[Union[HelloMessage, StartMessage, DecideMessage, EndMessage, QuitMessage],  # noqa: UP007
                  Field(discriminator="type")]
TO_BOT: TypeAdapter[Any] = TypeAdapter(ToBot)
"""Any message bali sends, told apart by its ``type``."""


def _plain_descriptions(node: Any) -> None:
    """Docstrings as schema descriptions: one line, Markdown's single backticks."""
    if isinstance(node, dict):
        if isinstance(node.get("description"), str):
            node["description"] = " ".join(node["description"].replace("``", "`").split())
        for value in node.values():
            _plain_descriptions(value)
    elif isinstance(node, list):
        for value in node:
            _plain_descriptions(value)


def protocol_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of every message: ``$defs/ToBot`` (what bali sends),
    ``$defs/BotHello`` and ``$defs/Answer`` (what a bot answers), and their parts."""
    defs: dict[str, Any] = {}
    for name, adapter in (("ToBot", TO_BOT), ("BotHello", TypeAdapter(BotHello)), ("Answer", ANSWER)):
        schema = adapter.json_schema(ref_template="#/$defs/{model}", mode="validation")
        defs.update(schema.pop("$defs", {}))
        defs[name] = schema
    _plain_descriptions(defs)
    defs["ToBot"]["description"] = "Any message bali sends to a bot, by its type."
    defs["BotHello"]["description"] = (f"The bot's answer to hello. name: shown in tables (cut to 60 characters); "
                                       f"fields: the parts of a decision it reads, of {list(FIELDS)} (default both).")
    defs["Answer"]["description"] = ("The bot's answer to decide: an action id, or {\"action\": id} (an id that "
                                     "is not legal now is an illegal answer, not a protocol fault).")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"The bali bot protocol, version {VERSION}",
        "description": ("One JSON object per line (docs/protocol.md). Check a line from bali against "
                        "#/$defs/ToBot, the bot's hello against #/$defs/BotHello, its answers against "
                        "#/$defs/Answer. Generated by python -m bali_env.bots.protocol.schema."),
        "anyOf": [{"$ref": "#/$defs/ToBot"}, {"$ref": "#/$defs/BotHello"}, {"$ref": "#/$defs/Answer"}],
        "$defs": dict(sorted(defs.items())),
    }


def schema_text() -> str:
    """The schema file's text: the schema as indented JSON, keys in a stable order."""
    return json.dumps(protocol_schema(), indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the schema file (or, with ``--check``, say whether it is out of date: exit 1)."""
    parser = argparse.ArgumentParser(prog="python -m bali_env.bots.protocol.schema",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 when out of date")
    parser.add_argument("file", nargs="?", type=Path, default=SCHEMA_FILE,
                        help="the schema file (default: docs/protocol.schema.json of this clone)")
    args = parser.parse_args(argv)
    fresh = schema_text()
    if args.check:
        if not args.file.is_file() or args.file.read_text() != fresh:
            print(f"out of date: {args.file} (regenerate: python -m bali_env.bots.protocol.schema)")
            return 1
        return 0
    write_text(args.file, fresh)
    print(f"wrote {args.file}")
    return 0


__all__ = ["KEY_LIMIT", "SCHEMA_FILE", "TO_BOT", "Altar", "DecideMessage", "EndMessage", "Forfeit", "HelloMessage",
           "Legal", "QuitMessage", "Scoring", "Seat", "StartMessage", "Variants", "View", "main", "protocol_schema",
           "schema_text"]

if __name__ == "__main__":
    sys.exit(main())
