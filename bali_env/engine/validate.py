"""The argument validators: every public entry point checks its arguments here before anything
reaches a kernel (Numba does no bounds checking), so a bad argument is one clear error naming it
and nothing is corrupted.

Each validator returns the value in its plain Python form and raises ``TypeError`` for a value of
the wrong type and ``ValueError`` for one out of range, the message naming the argument. A
``bool`` is never an int or a number here (``True`` is not a seat), a NumPy integer or float is.
``arg_type`` turns a validator into an ``argparse`` type, so a command's flags are checked by the
same code as the Python API's arguments.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from bali_env.engine.ids import MAX_PLAYERS, MIN_PLAYERS, N_ACTIONS

T = TypeVar("T")


def is_int(value: Any) -> bool:
    """Whether ``value`` is an integer (a Python or NumPy int, not a bool)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_int(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """``value`` as an int: TypeError naming ``name`` for another type (a bool included),
    ValueError outside ``low..high`` (inclusive; None: unbounded)."""
    if not is_int(value):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        span = f"{low}..{high}" if low is not None and high is not None else \
            f"an int >= {low}" if low is not None else f"an int <= {high}"
        raise ValueError(f"{name} must be {span}, got {v}")
    return v


def check_number(name: str, value: Any, low: float | None = None, high: float | None = None,
                 low_open: bool = False) -> float:
    """``value`` as a finite float: TypeError naming ``name`` for a non-number (a bool
    included), ValueError for NaN, an infinity or a value outside ``low..high`` (``low``
    excluded when ``low_open``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {v}")
    below = low is not None and (v <= low if low_open else v < low)
    if below or (high is not None and v > high):
        lo = "" if low is None else f"{'>' if low_open else '>='} {low:g}"
        hi = "" if high is None else f"<= {high:g}"
        raise ValueError(f"{name} must be {' and '.join(x for x in (lo, hi) if x)}, got {value!r}")
    return v


def check_flag(name: str, value: Any) -> bool:
    """A switch (``oracle``, ``demon``...) that must be a real bool: TypeError naming it otherwise."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool (True or False), got {type(value).__name__} {value!r}")
    return bool(value)


def check_choice(name: str, value: Any, choices: Sequence[T]) -> T:
    """``value`` if it is one of ``choices`` (ValueError naming ``name`` and listing them)."""
    if isinstance(value, (list, dict, set)) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def check_num_players(value: Any, name: str = "num_players") -> int:
    """A player count: the int 2, 3 or 4 (TypeError / ValueError naming ``name``)."""
    return check_int(name, value, MIN_PLAYERS, MAX_PLAYERS)


def check_seat(value: Any, num_players: int, name: str = "seat") -> int:
    """A seat of a game of ``num_players``: an int in ``0..num_players - 1``."""
    return check_int(name, value, 0, num_players - 1)


def check_seed(value: Any, name: str = "seed") -> int:
    """A seed: any int, negative ones included (TypeError naming ``name`` otherwise)."""
    if not is_int(value):
        raise TypeError(f"{name} must be an int or None, got {type(value).__name__} {value!r}")
    return int(value)


def check_action(value: Any, name: str = "action") -> int:
    """An action id: an int in 0..43 (a 0-d integer array too); TypeError for a non-integer,
    ValueError out of range."""
    if isinstance(value, np.ndarray) and value.shape == () and np.issubdtype(value.dtype, np.integer):
        value = value.item()
    if not is_int(value):
        raise TypeError(f"{name} must be an integer in 0..{N_ACTIONS - 1}, got {type(value).__name__} {value!r}")
    a = int(value)
    if not 0 <= a < N_ACTIONS:
        raise ValueError(f"{name} {a} is out of range: actions are integers in 0..{N_ACTIONS - 1}")
    return a


def check_game_count(name: str, value: Any, bytes_per_game: int, low: int = 1) -> int:
    """A number of games held in memory at once (``num_envs``, ``num_games``): an int >= ``low``
    whose arrays (``bytes_per_game`` each) fit in half of this machine's physical memory;
    TypeError / ValueError naming ``name`` otherwise (instead of a process killed for memory)."""
    n = check_int(name, value, low)
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # not a POSIX system: numpy's MemoryError decides
        return n
    if n * bytes_per_game > memory // 2:
        raise ValueError(f"{name}={n} needs about {n * bytes_per_game / 2**30:.1f} GiB, more than half of this "
                         f"machine's {memory / 2**30:.1f} GiB: play fewer games at a time")
    return n


def model_problem(error: Any, model: Any = None) -> str:
    """The first problem of a pydantic ``ValidationError`` as one line naming the field: ``seat
    must be an integer in 0..3, got 7`` where the model's field has that ``description``, else
    pydantic's own words (``actions[3]: Input should be a valid integer``); ``missing`` fields
    say so. The declared models of records, web requests and bot protocol messages answer with it."""
    first = error.errors()[0]
    loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"]).lstrip(".") or "the data"
    fields = getattr(model, "model_fields", {}) if model is not None else {}
    top = first["loc"][0] if first["loc"] else None
    if first["type"] == "missing":
        return f"{loc} is missing"
    if first["type"] == "value_error":  # a model's own check: its message as it wrote it
        message = str(first.get("ctx", {}).get("error", first["msg"]))
        return message if not first["loc"] else f"{loc}: {message}"
    described = fields.get(top) if isinstance(top, str) and len(first["loc"]) == 1 else None
    if described is not None and described.description:
        return f"{loc} must be {described.description}, got {first.get('input')!r}"
    return f"{loc}: {first['msg']}"


def arg_type(check: Callable[..., T], *bounds: Any) -> Callable[[str], T]:
    """An ``argparse`` type that parses a flag's text (an int, else a number) and checks it with
    ``check(name, value, *bounds)``; a bad value is argparse's one-line error naming the flag."""
    import argparse

    def parse(text: str) -> T:
        try:
            value: Any = int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        try:
            return check("the value", value, *bounds)
        except (TypeError, ValueError) as exc:
            raise argparse.ArgumentTypeError(str(exc).replace("the value must be", "must be")) from None

    parse.__name__ = check.__name__.removeprefix("check_")
    return parse


__all__ = [
    "arg_type", "check_action", "check_choice", "check_flag", "check_game_count", "check_int", "check_num_players",
    "check_number", "check_seat", "check_seed", "is_int", "model_problem",
]
