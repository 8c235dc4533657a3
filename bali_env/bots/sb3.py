"""Load a trained stable-baselines3 policy (MaskablePPO from sb3-contrib, or plain PPO) as an agent,
so it can play in tournaments: ``make_agent("sb3:path/to/model.zip")``. Needs the ``train`` extra."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bali_env.bots.base import Agent


class SB3Agent(Agent):
    """A saved SB3 model playing from its observation and action mask (vectorised over a batch).

    ``deterministic=True`` (default) plays the most probable legal action; with False it samples,
    from PyTorch's global generator (seed it with ``torch.manual_seed`` for reproducible play)."""

    batched = True

    def __init__(self, path: str | Path = "", seed: int | None = None, deterministic: bool = True, model=None) -> None:
        if model is None:
            p = Path(path)
            if not str(path) or p.is_dir():
                raise ValueError(f"sb3 needs the path of a saved model: sb3:PATH.zip (got {str(path)!r})")
            if not p.exists() and not p.with_suffix(".zip").exists():
                raise ValueError(f"no trained model at {str(path)!r}")
            try:
                from sb3_contrib import MaskablePPO
            except ImportError:  # pragma: no cover - depends on the extra
                raise ValueError("an sb3: agent needs the train extra (pip install torch==2.13.0 && pip install -e "
                                 "'.[train]'); without torch, play an exported policy as ppo:path=FILE.npz") from None
            model = MaskablePPO.load(str(p), device="cpu")
        from bali_env.bots.features import features_for_input

        self.model = model
        self.features = features_for_input(int(np.prod(model.observation_space.shape)))  # what bali train fed it
        self.deterministic = bool(deterministic)
        self.name = f"sb3:{Path(path).stem}" if path else "sb3"
        super().__init__(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The policy's action for one observation (only legal actions can be chosen)."""
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """The policy's actions for a batch."""
        from bali_env.bots.features import policy_input

        inputs = policy_input(np.asarray(observations, dtype=np.float32), action_masks, self.features)
        actions, _ = self.model.predict(inputs,
                                        action_masks=np.asarray(action_masks).astype(bool),
                                        deterministic=self.deterministic)
        return np.asarray(actions, dtype=np.int64).reshape(len(observations))
