"""The uniform random agent: any legal action, each with the same probability."""

from __future__ import annotations

import numpy as np

from .base import Agent


class RandomAgent(Agent):
    """Uniform over the legal mask (vectorised over a batch)."""

    name = "random"
    batched = True

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """A uniform random legal action."""
        legal = np.flatnonzero(action_mask)
        return int(legal[self.rng.integers(len(legal))])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """A uniform random legal action per row."""
        return np.argmax(action_masks * self.rng.random(action_masks.shape), axis=1)
