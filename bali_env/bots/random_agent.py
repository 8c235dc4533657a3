"""The uniform random agent: any legal action, each with the same probability."""

from __future__ import annotations

import numpy as np

from bali_env.bots.base import Agent, check_observations
from bali_env.engine.seeds import key_uniforms


class RandomAgent(Agent):
    """Uniform over the legal mask (vectorised over a batch)."""

    name = "random"
    batched = True

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """A uniform random legal action."""
        _, masks = check_observations(observation, action_mask)
        legal = np.flatnonzero(masks[0])
        return int(legal[self.rng.integers(len(legal))])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """A uniform random legal action per row."""
        _, masks = check_observations(observations, action_masks)
        return np.argmax(masks * self.rng.random(masks.shape), axis=1)

    def act_batch_unchecked(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """``act_batch`` on an environment's own buffers (nothing to check)."""
        return np.argmax(action_masks * self.rng.random(action_masks.shape), axis=1)

    def act_batch_keyed(self, observations: np.ndarray, action_masks: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """A uniform random legal action per row, drawn from that row's key."""
        _, masks = check_observations(observations, action_masks)
        return np.argmax(masks * (key_uniforms(np.asarray(keys, dtype=np.uint64), masks.shape[1]) + 1e-12), axis=1)
