"""The records self-play passes around: the job a worker plays (``SelfPlayJob``: the network's
arrays and the ``SelfPlaySettings``) and the rows it leaves (``Rows``).

Each is a frozen dataclass: it pickles as it is (to local worker processes and Ray tasks), its
defaults are its fields' and it is checked once, when made (``ValueError`` naming the field).
The settings also settle the root's rule once: with Gumbel's root (``gumbel`` > 0) there is no
root noise and the policy target is Gumbel MuZero's improved policy (``settled_target``).

``Rows`` holds the arrays of ``selfplay``'s table in the order the buffer files keep them
(``ROW_NAMES``); ``Rows.arrays`` gives them by name in that order, for ``np.savez``, and
``Rows.from_arrays`` reads them back, so a file written from rows and read again gives the same
rows and the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

TARGETS = ("visits", "improved")  #: the policy targets: the root's visit shares, Gumbel MuZero's improved policy
#: the rows' arrays, in the order a buffer file keeps them
ROW_NAMES = ("input", "action_mask", "policy", "value", "game", "action")


def settled_target(gumbel: int, target: str) -> str:
    """The policy target self-play keeps: ``target`` with a PUCT root (``gumbel`` 0), Gumbel
    MuZero's improved policy with Gumbel's root (whatever ``target`` says)."""
    return "improved" if gumbel else target


def _whole(name: str, value: Any, low: int) -> int:
    """``value`` as an int of at least ``low`` (ValueError naming ``name`` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be a whole number of at least {low}, got {value!r}")
    return int(value)


def _number(name: str, value: Any, low: float, high: float = math.inf) -> float:
    """``value`` as a finite float in ``[low, high]`` (ValueError naming ``name`` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not low <= value <= high or not math.isfinite(value):
        raise ValueError(f"{name} must be a number in [{low:g}, {high:g}], got {value!r}")
    return float(value)


@dataclass(frozen=True)
class SelfPlaySettings:
    """How a generation's self-play plays: ``players`` seats, games dealt from ``seed``, each
    decision searched with ``sims`` descents (exploration weight ``c``, ``leaves`` descents per
    tree per round), Gumbel's root over ``gumbel`` actions (0: a PUCT root with Dirichlet
    ``noise`` (alpha, weight; None: none) and the move drawn from the visit shares for the first
    ``temp_moves`` decisions), keeping the policy ``target`` (``TARGETS``). With Gumbel's root
    ``noise`` becomes None and ``target`` ``"improved"`` (``settled_target``)."""

    players: int
    seed: int
    sims: int
    c: float
    leaves: int
    temp_moves: int
    gumbel: int = 0
    noise: tuple[float, float] | None = None
    target: str = "visits"

    def __post_init__(self) -> None:
        settled: dict[str, Any] = {
            "players": _whole("players", self.players, 2), "seed": _whole("seed", self.seed, 0),
            "sims": _whole("sims", self.sims, 1), "c": _number("c", self.c, 0.0),
            "leaves": _whole("leaves", self.leaves, 1), "temp_moves": _whole("temp_moves", self.temp_moves, 0),
            "gumbel": _whole("gumbel", self.gumbel, 0)}
        if settled["players"] > 4:
            raise ValueError(f"players must be 2, 3 or 4, got {self.players!r}")
        if self.target not in TARGETS:
            raise ValueError(f"target must be 'visits' or 'improved', got {self.target!r}")
        settled["target"] = settled_target(settled["gumbel"], self.target)
        settled["noise"] = None if self.noise is None or settled["gumbel"] else self._noise(self.noise)
        for name, value in settled.items():
            object.__setattr__(self, name, value)

    @staticmethod
    def _noise(noise: Any) -> tuple[float, float]:
        """Root noise as (alpha > 0, weight in [0, 1]) (ValueError naming ``noise`` otherwise)."""
        if not isinstance(noise, (tuple, list)) or len(noise) != 2:
            raise ValueError(f"noise must be None or (alpha, weight), got {noise!r}")
        alpha, weight = _number("noise alpha", noise[0], 0.0), _number("noise weight", noise[1], 0.0, 1.0)
        if not alpha > 0:
            raise ValueError(f"noise alpha must be above 0 (no noise: noise=None), got {noise[0]!r}")
        return alpha, weight


@dataclass(frozen=True, eq=False)
class NetworkArrays:
    """An exported policy with a value head as plain arrays (what pickles to a worker): the
    actor's ``(weight, bias)`` pairs, its metadata, the value head's pairs."""

    weights: list[tuple[np.ndarray, np.ndarray]]
    meta: dict[str, Any]
    value: list[tuple[np.ndarray, np.ndarray]]

    def __post_init__(self) -> None:
        if not self.weights:
            raise ValueError("weights must hold the actor's layers, got none")
        if not self.value:
            raise ValueError("value must hold the value head's layers (the search needs one), got none")

    @classmethod
    def of(cls, policy: Any) -> NetworkArrays:
        """The arrays of ``policy`` (an ``ExportedPolicy`` with a value head)."""
        weights, meta = policy.arrays()
        return cls(weights, meta, policy.value_arrays())

    def policy(self) -> Any:
        """The network as an ``ExportedPolicy`` again."""
        from bali_env.bots.ppo import ExportedPolicy

        return ExportedPolicy.from_arrays(self.weights, self.meta, value=self.value)


@dataclass(frozen=True, eq=False)
class SelfPlayJob:
    """What a worker needs to play a generation's chunks (``selfplay.play_chunk``): the network
    and the settings."""

    network: NetworkArrays
    settings: SelfPlaySettings

    def __post_init__(self) -> None:
        if not isinstance(self.network, NetworkArrays):
            raise ValueError(f"network must be NetworkArrays, got {type(self.network).__name__}")
        if not isinstance(self.settings, SelfPlaySettings):
            raise ValueError(f"settings must be SelfPlaySettings, got {type(self.settings).__name__}")


@dataclass(frozen=True, eq=False)
class Rows:
    """Self-play's rows, one per decision with a choice (``selfplay``'s table): the network
    ``input`` [M, D] float32, the legal actions ``action_mask`` [M, A] int8, the ``policy``
    target [M, A] float32, the ``value`` target [M, S] float32 (every seat's final share, the
    deciding seat first), the ``game`` [M] int64 and the ``action`` played [M] int64. The
    arrays are kept as given (their dtypes are the buffer files'); ``rows["input"]`` reads one by
    its name in the files."""

    input: np.ndarray
    action_mask: np.ndarray
    policy: np.ndarray
    value: np.ndarray
    game: np.ndarray
    action: np.ndarray

    def __post_init__(self) -> None:
        for name in ROW_NAMES:
            array, dims = getattr(self, name), 1 if name in ("game", "action") else 2
            if not isinstance(array, np.ndarray) or array.ndim != dims:
                raise ValueError(f"{name} must be a {dims}-D array, got {type(array).__name__} "
                                 f"{getattr(array, 'shape', '')}")
        count = len(self.game)
        for name in ROW_NAMES:
            array = getattr(self, name)
            if len(array) != count:
                raise ValueError(f"{name} has {len(array)} rows, game has {count}")

    def __len__(self) -> int:
        """The number of rows."""
        return len(self.game)

    def __getitem__(self, name: str) -> np.ndarray:
        """The array named ``name`` (``ROW_NAMES``: the buffer files' names)."""
        if name not in ROW_NAMES:
            raise KeyError(name)
        return getattr(self, name)

    __iter__ = None  # not a sequence of rows: read the arrays by name

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays by name, in the order a buffer file keeps them."""
        return {name: getattr(self, name) for name in ROW_NAMES}

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> Rows:
        """The rows of arrays named as ``arrays`` names them (a buffer file's: ValueError naming
        a missing or an unknown one)."""
        missing = [n for n in ROW_NAMES if n not in arrays]
        unknown = [n for n in arrays if n not in ROW_NAMES]
        if missing or unknown:
            raise ValueError(f"rows need the arrays {', '.join(ROW_NAMES)}: missing {missing}, unknown {unknown}")
        return cls(**{name: arrays[name] for name in ROW_NAMES})

    @classmethod
    def empty(cls, width: int, players: int) -> Rows:
        """No rows, for an input of ``width`` and ``players`` seats."""
        from bali_env.engine import N_ACTIONS

        return cls(np.zeros((0, width), np.float32), np.zeros((0, N_ACTIONS), np.int8),
                   np.zeros((0, N_ACTIONS), np.float32), np.zeros((0, players), np.float32),
                   np.zeros(0, np.int64), np.zeros(0, np.int64))

    @classmethod
    def concat(cls, parts: list[Rows]) -> Rows:
        """The rows of ``parts`` one after the other, in the order given."""
        return cls(**{name: np.concatenate([getattr(p, name) for p in parts]) for name in ROW_NAMES})

    def select(self, which: np.ndarray) -> Rows:
        """The rows ``which`` picks (a boolean mask or indices), in its order."""
        return Rows(**{name: getattr(self, name)[which] for name in ROW_NAMES})


__all__ = ["NetworkArrays", "ROW_NAMES", "Rows", "SelfPlayJob", "SelfPlaySettings", "TARGETS", "settled_target"]
