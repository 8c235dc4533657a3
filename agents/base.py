"""The interface every bali-env agent implements, and a registry to build agents by name.

An agent decides from one player's observation and action mask only (what that player may know,
docs/rules.md section 5), never from the hidden state. ``act`` takes one decision; ``act_batch`` takes
one decision per row (the default loops over ``act``; vectorised agents override it and set
``batched = True`` so the tournament can drive them with the batched environment).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

import numpy as np


class Agent(ABC):
    """A Bali player: ``act(observation, action_mask) -> action id``."""

    name: str = "agent"
    batched: bool = False  #: True when act_batch is vectorised (no per-row Python loop)

    def __init__(self, seed: int | None = None) -> None:
        self.seed(seed)

    def seed(self, seed: int | None = None) -> None:
        """(Re)seed the agent's own random generator."""
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """Choose a legal action id (``action_mask[a] == 1``) for one observation."""

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """One action per row; the default calls ``act`` row by row."""
        return np.array([self.act(o, m) for o, m in zip(observations, action_masks, strict=True)], dtype=np.int64)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


_REGISTRY: dict[str, Callable[..., Agent]] = {}


def register_agent(kind: str, factory: Callable[..., Agent]) -> None:
    """Make ``make_agent(kind)`` build agents with ``factory(seed=..., **settings)``."""
    _REGISTRY[kind] = factory


def _parse_settings(text: str) -> dict[str, object]:
    settings: dict[str, object] = {}
    for item in filter(None, text.split(",")):
        if "=" not in item:
            raise ValueError(f"agent setting {item!r} must look like key=value")
        key, value = item.split("=", 1)
        for cast in (int, float):
            try:
                settings[key] = cast(value)
                break
            except ValueError:
                continue
        else:
            settings[key] = value
    return settings


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """Build an agent from a spec: ``"random"``, ``"greedy"``, ``"mcts"``, ``"mcts:sims=200"``,
    ``"sb3:path/to/model.zip"``. Raises ValueError for an unknown kind."""
    from . import _builtin  # noqa: F401  (registers the built-in agents)

    kind, _, rest = spec.partition(":")
    if kind not in _REGISTRY:
        raise ValueError(f"unknown agent {kind!r}; known: {sorted(_REGISTRY)}")
    if kind == "sb3":
        return _REGISTRY[kind](path=rest, seed=seed)
    return _REGISTRY[kind](seed=seed, **_parse_settings(rest))
