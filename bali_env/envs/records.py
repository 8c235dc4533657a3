"""Game records: save a game as JSON, load it back with validation, replay it step by step.

A record holds what deals and replays the game exactly::

    {"format": "bali-env game record", "version": 1, "env": "bali_v0",
     "num_players": 3, "variants": {"oracle": false, "demon": true},
     "seed": 123, "options": {...reset options, if any...},
     "agents": ["greedy", "mcts", "human"],           # optional: who played each seat
     "actions": [4, 9, 30, ...],
     "final_scores": [41, 38, 29], "winners": [0]}    # null while the game is unfinished

``env.unwrapped.game_record()`` makes one from an AEC env, ``new_record`` from its parts (both in
``bali_v0``: the env owns what a record holds, this module what is done with one);
``save_record``/``load_record`` write and read JSON files; ``load_record`` replays the actions
and refuses (ValueError, saying what is wrong) a file that is malformed, has an illegal action, or
does not reach the recorded scores. ``replay_states(record)`` gives the env state after every
step (for viewers such as ``bali replay``).

What a record's fields may hold is declared once, as the pydantic model ``RecordModel`` (with
``RecordVariants``): a malformed record is one ValueError naming the field (``record field
num_players must be 2, 3 or 4 (an integer), got 5``; a bool is never an int). The model only reads a record:
records are written by ``new_record`` as plain JSON data, byte for byte as before. Whether the
actions are legal where they stand, and lead to the recorded result, is checked by replaying them.
"""

from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError, model_validator

from bali_env.engine.validate import model_problem

from bali_env.envs.bali_v0 import RECORD_FORMAT as FORMAT
from bali_env.envs.bali_v0 import RECORD_VERSION as VERSION
from bali_env.envs.bali_v0 import GameRecord, new_record, raw_env

__all__ = ["FORMAT", "GameRecord", "RecordModel", "RecordVariants", "VERSION", "env_for", "load_record", "make_record",
           "new_record", "parse_record", "playthrough", "replay_states", "save_record", "validate_record"]


def make_record(env: Any, agents: list[str] | None = None) -> dict[str, Any]:
    """The record of the game an AEC ``raw_env`` is playing (or has finished): ``env.game_record``."""
    return env.game_record(agents)


def save_record(record: dict[str, Any], path: str | Path) -> Path:
    """Write a record as JSON (after checking that it replays to its scores)."""
    validate_record(record)
    from bali_env.files import write_text

    return write_text(path, json.dumps(record, indent=1))


class RecordVariants(BaseModel):
    """A record's ``variants``: both switches, each a JSON ``true`` or ``false``, nothing else."""

    model_config = ConfigDict(extra="forbid")

    oracle: StrictBool
    demon: StrictBool


class RecordModel(BaseModel):
    """The fields of a game record (the module docstring shows one), declared: what ``parse_record``
    reads before anything is replayed. Unknown keys are ignored; ``env``, ``options``, ``agents``,
    ``final_scores`` and ``winners`` may be absent (null)."""

    model_config = ConfigDict(extra="ignore")

    format: Literal["bali-env game record"]  # FORMAT
    version: StrictInt = Field(ge=VERSION, le=VERSION, description=f"{VERSION}")
    env: StrictStr = "bali_v0"
    num_players: StrictInt = Field(ge=2, le=4, description="2, 3 or 4 (an integer)")
    variants: RecordVariants = Field(description='{"oracle": true/false, "demon": true/false}')
    seed: StrictInt = Field(description="an integer (the reset seed that deals the game)")
    options: dict[str, list[StrictInt] | None] | None = Field(None, description="the reset options or null")
    agents: list[StrictStr] | None = Field(None, description="a list of names, one per seat, or null")
    actions: list[StrictInt] = Field(description="a list of action ids")
    final_scores: list[StrictInt] | None = Field(None, description="a list of scores, one per seat, or null")
    winners: list[StrictInt] | None = Field(None, description="a list of seats or null")

    @model_validator(mode="after")
    def _one_agent_per_seat(self) -> RecordModel:
        if self.agents is not None and len(self.agents) != self.num_players:
            raise ValueError(f"record field agents must be a list of {self.num_players} names (one per seat), "
                             f"got {self.agents!r}")
        return self


def parse_record(record: Any) -> RecordModel:
    """``record`` (JSON data) read by ``RecordModel``; ValueError in one line naming what is wrong:
    not an object, not a record of this format and version, or the first bad field. Its actions
    are not replayed here (``validate_record`` does)."""
    if not isinstance(record, dict):
        raise ValueError("a game record is a JSON object")
    try:
        return RecordModel.model_validate(record)
    except ValidationError as exc:
        first = exc.errors()[0]
        if first["loc"] and first["loc"][0] in ("format", "version"):
            raise ValueError(f"not a {FORMAT!r} version {VERSION} (format={record.get('format')!r}, "
                             f"version={record.get('version')!r})") from None
        problem = model_problem(exc, RecordModel)
        raise ValueError(f"record field {problem}" if first["loc"] else problem) from None


def env_for(record: dict[str, Any]) -> Any:
    """A fresh AEC ``raw_env`` dealt as the record's game starts (no action played); ValueError
    for a record whose fields are malformed (``parse_record``)."""
    return _env_for(parse_record(record))


def _env_for(fields: RecordModel) -> Any:
    """A fresh ``raw_env`` dealt from a record's checked fields."""
    env = raw_env(num_players=fields.num_players, oracle=fields.variants.oracle, demon=fields.variants.demon,
                  render_mode="ansi")
    env.reset(seed=fields.seed, options=fields.options or None)
    return env


def _replay(record: dict[str, Any]) -> Iterator[Any]:
    """Yield the env before the first action and after each action of a record; ValueError if
    an action is illegal where it stands or comes after the end."""
    fields = parse_record(record)
    env = _env_for(fields)
    yield env
    for i, a in enumerate(fields.actions):
        if all(env.terminations.values()):
            raise ValueError(f"record has {len(fields.actions)} actions but the game ended after {i}")
        try:
            env.step(a)
        except ValueError as exc:
            raise ValueError(f"record action {i} ({a}) does not replay: {exc}") from None
        yield env


def replay_states(record: dict[str, Any]) -> list[Any]:
    """Replay a record; return a list of AEC env copies, one per position (before the first
    action, then after each). Raises ValueError if an action is illegal where it stands."""
    import copy

    return [copy.deepcopy(env) for env in _replay(record)]


def validate_record(record: dict[str, Any]) -> Any:
    """Replay ``record`` and check it reaches its recorded final scores and winners; return the
    final env. Raises ValueError saying what is wrong."""
    *_, env = _replay(record)  # run the whole replay; keep the env at the last position
    s = env.state_dict()
    if s["scores"] != record.get("final_scores") or s["winners"] != record.get("winners"):
        raise ValueError(f"record does not replay to its result: recorded scores {record.get('final_scores')} "
                         f"winners {record.get('winners')}, replayed {s['scores']} winners {s['winners']}")
    return env


MAX_RECORD_BYTES = 10_000_000  #: a record of the longest game is well under 100 kB


#: what a game record file is, said when a file is not one
RECORD_FILES = ("a game record is the JSON file that bali play --save FILE or bali tournament --save-records "
                "(OUT/records/game_NNNNN.json) writes")


def _not_json(data: bytes, exc: Exception) -> str:
    """What a file that is not JSON seems to be: an HTML page (a replay page), a picture, or just
    not JSON (the parser's reason)."""
    head = data[:512].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html")) or b"<html" in head:
        return "it is an HTML page (a replay page, as bali replay --html writes), not JSON"
    if head.startswith((b"gif8", b"\x89png")):
        return "it is a picture, not JSON"
    return f"not JSON ({exc})"


def load_record(path: str | Path) -> GameRecord:
    """Read a record file, check it replays to its recorded scores, and return it (a
    ``GameRecord``: a dict that a notebook shows as its replay). ValueError for
    a file that is not a regular file, larger than ``MAX_RECORD_BYTES``, not JSON, or nested too
    deep to be a record."""
    p = Path(path)
    try:
        if not p.exists():
            raise OSError("no such file")
        if not p.is_file():
            raise OSError("a folder, not a file" if p.is_dir() else "not a regular file")
        with p.open("rb") as fh:
            data = fh.read(MAX_RECORD_BYTES + 1)
        if len(data) > MAX_RECORD_BYTES:
            raise OSError(f"larger than {MAX_RECORD_BYTES:,} bytes: not a game record")
        record = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read game record {str(p)!r}: {_not_json(data, exc)}; {RECORD_FILES}") from None
    except (OSError, RecursionError) as exc:
        raise ValueError(f"cannot read game record {str(p)!r}: {exc}") from None
    validate_record(record)
    return GameRecord(record)


def playthrough(record: dict[str, Any]) -> list[dict[str, Any]]:
    """Every step of a record as OpenSpiel-style golden data: the seat to move, its legal actions,
    its observation (sparse: index -> value), a SHA-256 of every seat's observation and mask,
    the action, and the rewards at the end. Any change to rules or encoding changes this."""
    import hashlib

    import numpy as np

    env = env_for(record)
    steps = []
    for a in record["actions"] + [None]:
        seat = None if all(env.terminations.values()) else env.agent_name_mapping[env.agent_selection]
        digest = hashlib.sha256()
        for agent in env.possible_agents:
            o = env.observe(agent)
            digest.update(o["observation"].tobytes())
            digest.update(o["action_mask"].tobytes())
        step: dict[str, Any] = {"to_move": seat, "observations_sha256": digest.hexdigest()}
        if seat is not None:
            o = env.observe(env.possible_agents[seat])
            nz = np.flatnonzero(o["observation"])
            step["legal"] = [int(i) for i in np.flatnonzero(o["action_mask"])]
            step["observation"] = {str(int(i)): float(o["observation"][i]) for i in nz}
            step["action"] = a
        else:
            step["rewards"] = [float(env.rewards[x]) for x in env.possible_agents]
        steps.append(step)
        if a is None:
            break
        env.step(a)
    return steps
