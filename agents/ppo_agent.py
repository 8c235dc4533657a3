"""A trained policy as plain exported weights, played by a NumPy forward pass (no torch needed).

``bali train`` exports its final MaskablePPO policy next to the SB3 ``.zip`` as ``final.npz``
(``export_policy``): the actor MLP's weights and biases, its activation, and the observation and
action sizes it was trained for. ``PPOAgent`` loads such a file and plays the most probable legal
action (or samples from the masked distribution), for a whole batch at once:

- ``make_agent("ppo:path=runs/bali2p/final.npz")`` plays that file;
- ``make_agent("ppo")`` plays the policy shipped in ``agents/policies/`` for the player count of
  the game it is given (read from the observation); a count without a shipped policy is a clear
  error.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from bali_env.engine import N_ACTIONS, O_NUM_PLAYERS, OBS_DIM

from .base import Agent

FORMAT = "bali-env/ppo-policy"
VERSION = 1
POLICY_DIR = Path(__file__).resolve().parent / "policies"
_ACTIVATIONS = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0)}


def shipped_policy(num_players: int) -> Path:
    """The path of the policy shipped for ``num_players`` (it may not exist)."""
    return POLICY_DIR / f"bali_{num_players}p.npz"


def export_policy(policy: Any, path: str | Path, **meta: Any) -> Path:
    """Write the actor of an SB3 (Maskable)ActorCriticPolicy with an MLP extractor as a ``.npz``
    (written to a temporary file, then moved into place); ``meta`` (e.g. ``num_players``) is
    stored too. Returns the path."""
    import torch

    linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)]
    layers = [*linears, policy.action_net]
    act = type(policy.activation_fn()).__name__.lower() if isinstance(policy.activation_fn, type) else "tanh"
    if act not in _ACTIVATIONS:
        raise ValueError(f"cannot export a policy with activation {act!r}; supported: {sorted(_ACTIVATIONS)}")
    arrays: dict[str, np.ndarray] = {}
    for i, layer in enumerate(layers):
        arrays[f"w{i}"] = layer.weight.detach().cpu().numpy().astype(np.float32)
        arrays[f"b{i}"] = layer.bias.detach().cpu().numpy().astype(np.float32)
    arrays["meta"] = np.array([repr({"format": FORMAT, "version": VERSION, "activation": act, "layers": len(layers),
                                     "obs_dim": int(layers[0].in_features),
                                     "n_actions": int(layers[-1].out_features), **meta})])
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".npz")
    os.close(fd)
    np.savez(tmp, **arrays)
    os.replace(tmp, p)
    return p


class ExportedPolicy:
    """The weights of one exported policy, checked on load."""

    def __init__(self, path: str | Path) -> None:
        """Load and check ``path``; ValueError saying what is wrong."""
        import ast

        p = Path(path)
        if not p.is_file():
            raise ValueError(f"no exported policy at {str(p)!r}")
        try:
            with np.load(p, allow_pickle=False) as data:
                meta = ast.literal_eval(str(data["meta"][0]))
                if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                    raise ValueError("not a bali-env policy export")
                self.weights = [(data[f"w{i}"].astype(np.float32), data[f"b{i}"].astype(np.float32))
                                for i in range(int(meta["layers"]))]
        except (OSError, KeyError, ValueError, SyntaxError) as exc:
            raise ValueError(f"{str(p)!r} is not a valid exported policy: {exc}") from None
        if meta.get("version") != VERSION:
            raise ValueError(f"{str(p)!r}: policy format version {meta.get('version')}, expected {VERSION}")
        if meta.get("obs_dim") != OBS_DIM or meta.get("n_actions") != N_ACTIONS:
            raise ValueError(f"{str(p)!r} was trained for observations of {meta.get('obs_dim')} and "
                             f"{meta.get('n_actions')} actions; this bali-env has {OBS_DIM} and {N_ACTIONS}")
        for i, (w, b) in enumerate(self.weights):
            if w.ndim != 2 or b.shape != (w.shape[0],) or (i and w.shape[1] != self.weights[i - 1][0].shape[0]):
                raise ValueError(f"{str(p)!r}: layer {i} has inconsistent shapes {w.shape}, {b.shape}")
        self.meta = meta
        self.activation = _ACTIVATIONS[meta["activation"]]
        self.path = p

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """The action logits of a batch of observations ([N, OBS_DIM] -> [N, N_ACTIONS])."""
        x = np.asarray(observations, dtype=np.float32)
        for i, (w, b) in enumerate(self.weights):
            x = x @ w.T + b
            if i < len(self.weights) - 1:
                x = self.activation(x)
        return x


class PPOAgent(Agent):
    """An exported policy (``path``), or the shipped one for the game's player count (no path).

    ``deterministic=True`` (default) plays the most probable legal action; False samples from the
    masked softmax with the agent's seeded generator."""

    batched = True

    def __init__(self, seed: int | None = None, path: str | Path | None = None, deterministic: bool = True) -> None:
        """Load ``path`` now (a bad file fails here), or the shipped policies on first use."""
        self._policies: dict[int, ExportedPolicy] = {}
        self.path = Path(path) if path else None
        if self.path is not None:
            self._fixed: ExportedPolicy | None = ExportedPolicy(self.path)
        else:
            self._fixed = None
        self.deterministic = bool(deterministic)
        self.name = f"ppo:{self.path.stem}" if self.path else "ppo"
        super().__init__(seed)

    def _policy_for(self, num_players: int) -> ExportedPolicy:
        if self._fixed is not None:
            return self._fixed
        if num_players not in self._policies:
            path = shipped_policy(num_players)
            if not path.is_file():
                have = sorted(int(p.stem.split("_")[1][0]) for p in POLICY_DIR.glob("bali_*p.npz"))
                raise ValueError(f"no shipped ppo policy for {num_players} players (shipped: "
                                 f"{', '.join(map(str, have)) or 'none yet'}); train one with `bali train "
                                 f"--players {num_players}` and play it with ppo:path=OUT/final.npz")
            self._policies[num_players] = ExportedPolicy(path)
        return self._policies[num_players]

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The policy's action for one observation (only legal actions can be chosen)."""
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """The policy's actions for a batch ([N, OBS_DIM] observations, [N, N_ACTIONS] masks)."""
        obs = np.asarray(observations, dtype=np.float32)
        masks = np.asarray(action_masks)
        if obs.ndim != 2 or obs.shape[1] != OBS_DIM:
            raise ValueError(f"observations must have shape [N, {OBS_DIM}], got {obs.shape}")
        if masks.shape != (obs.shape[0], N_ACTIONS):
            raise ValueError(f"action_masks must have shape [{obs.shape[0]}, {N_ACTIONS}], got {masks.shape}")
        legal = masks.astype(bool)
        if not legal.any(axis=1).all():
            raise ValueError("action_masks: every row needs at least one legal action")
        counts = np.argmax(obs[:, O_NUM_PLAYERS : O_NUM_PLAYERS + 3], axis=1) + 2
        actions = np.empty(len(obs), dtype=np.int64)
        for n in np.unique(counts):
            rows = np.flatnonzero(counts == n)
            logits = np.where(legal[rows], self._policy_for(int(n)).logits(obs[rows]), -np.inf)
            if self.deterministic:
                actions[rows] = np.argmax(logits, axis=1)
            else:
                cum = np.cumsum(np.exp(logits - logits.max(axis=1, keepdims=True)), axis=1)
                u = self.rng.random(len(rows))[:, None] * cum[:, -1:]  # in [0, total)
                actions[rows] = (cum <= u).sum(axis=1)  # the first action whose cumulative weight passes u
        return actions
