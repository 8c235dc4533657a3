"""A trained policy as plain exported weights, played by a NumPy forward pass (no torch needed).

``bali train`` exports its final MaskablePPO policy next to the SB3 ``.zip`` as ``final.npz``
(``export_policy``): the actor MLP's weights and biases, its activation, the input and action
sizes it was trained for, and the feature set (``bali_env.agents.features``) its input appends to the
observation, if any (``features``: ``greedy-v1``, or absent for the observation alone).
A file may also carry a **value head** (``bali fit-value``, ``bali_env.training.value``): a second MLP over
the same input (keys ``vw0, vb0, ...``, metadata ``value_layers``) with either one output, whose
sigmoid is the expected win share of the seat whose observation it reads, or one output per seat
(``num_players`` of them), whose softmax is every seat's expected win share, the reading seat
first and the others in turn order after it. The policy-guided search (``bali_env.agents.puct``) needs
one. Files without one load as before.
``PPOAgent`` loads such a file and plays the most probable legal action (or samples from the
masked distribution), for a whole batch at once:

- ``make_agent("ppo:path=runs/bali2p/final.npz")`` plays that file;
- ``make_agent("ppo")`` plays the policy shipped in ``bali_env/agents/policies/`` for the player count of
  the game it is given (read from the observation); a count without a shipped policy is a clear
  error, raised early by ``check_players(num_players)`` (what ``bali play`` calls on every bot).

A file that is not such an export (a Python file, a pickle, junk) is refused with one line
("not a policy file: expected the .npz that bali train writes"); nothing is ever unpickled.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from bali_env.engine import MIN_PLAYERS, N_ACTIONS, N_PLAYER_COUNTS, O_NUM_PLAYERS, OBS_DIM

from .base import Agent, check_observations, key_uniforms

FORMAT = "bali-env/ppo-policy"
VERSION = 1
POLICY_DIR = Path(__file__).resolve().parent / "policies"
_ACTIVATIONS = {"tanh": lambda x: np.tanh(x, out=x), "relu": lambda x: np.maximum(x, 0.0, out=x)}


def shipped_policy(num_players: int) -> Path:
    """The path of the policy shipped for ``num_players`` (it may not exist)."""
    return POLICY_DIR / f"bali_{num_players}p.npz"


def policy_arrays(policy: Any, **meta: Any) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict[str, Any]]:
    """The actor of an SB3 (Maskable)ActorCriticPolicy with an MLP extractor as float32
    ``(weight, bias)`` pairs and the metadata of an export (``meta`` added)."""
    import torch

    linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)]
    layers = [*linears, policy.action_net]
    act = type(policy.activation_fn()).__name__.lower() if isinstance(policy.activation_fn, type) else "tanh"
    if act not in _ACTIVATIONS:
        raise ValueError(f"cannot export a policy with activation {act!r}; supported: {sorted(_ACTIVATIONS)}")
    weights = [(layer.weight.detach().cpu().numpy().astype(np.float32).copy(),
                layer.bias.detach().cpu().numpy().astype(np.float32).copy()) for layer in layers]
    from .features import features_for_input

    info = {"format": FORMAT, "version": VERSION, "activation": act, "layers": len(layers),
            "obs_dim": int(layers[0].in_features), "n_actions": int(layers[-1].out_features),
            "features": features_for_input(int(layers[0].in_features)), **meta}
    return weights, info


def export_policy(policy: Any, path: str | Path, **meta: Any) -> Path:
    """Write the actor of an SB3 (Maskable)ActorCriticPolicy with an MLP extractor as a ``.npz``
    (written to a temporary file, then moved into place); ``meta`` (e.g. ``num_players``) is
    stored too. Returns the path."""
    return write_policy(*policy_arrays(policy, **meta), path)


Layers = list[tuple[np.ndarray, np.ndarray]]


def write_policy(weights: Layers, info: dict[str, Any], path: str | Path, value: Layers | None = None) -> Path:
    """Write ``(weight [out, in], bias)`` pairs and export metadata (``policy_arrays``' result, or
    another trainer's) as a policy ``.npz``, with a value head's pairs when given (``value``: the
    last layer has one output), checked first like a loaded file (ValueError), written to a
    temporary file and moved into place. Returns the path."""
    info = {k: v for k, v in info.items() if k != "value_layers"}
    if value is not None:
        info["value_layers"] = len(value)
    ExportedPolicy.from_arrays(weights, info, where="the policy to export", value=value)
    arrays: dict[str, np.ndarray] = {}
    for i, (w, b) in enumerate(weights):
        arrays[f"w{i}"], arrays[f"b{i}"] = w, b
    for i, (w, b) in enumerate(value or []):
        arrays[f"vw{i}"], arrays[f"vb{i}"] = w, b
    arrays["meta"] = np.array([repr(info)])
    from bali_env.files import replace_when_done

    with replace_when_done(path) as tmp, open(tmp, "wb") as f:
        np.savez(f, **arrays)
    return Path(path)


class ExportedPolicy:
    """The weights of one exported policy, checked on load (``ExportedPolicy(path)``), or taken
    from a live SB3 policy (``ExportedPolicy.from_sb3(policy)``: a frozen copy, no file)."""

    def __init__(self, path: str | Path) -> None:
        """Load and check ``path``; ValueError saying what is wrong."""
        import ast

        p = Path(path)
        if not p.is_file():
            raise ValueError(f"no exported policy at {str(p)!r}")
        not_policy = f"not a policy file: expected the .npz that bali train writes, got {str(p)!r}"
        try:
            if not zipfile.is_zipfile(p):  # an .npz is a zip archive; anything else is never handed to NumPy
                raise ValueError(not_policy)
            with np.load(p, allow_pickle=False) as data:
                meta = ast.literal_eval(str(data["meta"][0]))
                if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                    raise ValueError(not_policy)
                weights = [(data[f"w{i}"].astype(np.float32), data[f"b{i}"].astype(np.float32))
                           for i in range(int(meta["layers"]))]
                value = [(data[f"vw{i}"].astype(np.float32), data[f"vb{i}"].astype(np.float32))
                         for i in range(int(meta.get("value_layers", 0)))] or None
        except (OSError, EOFError, KeyError, IndexError, TypeError, ValueError, SyntaxError, RecursionError,
                MemoryError, zipfile.BadZipFile):
            raise ValueError(not_policy) from None
        self._set(weights, meta, repr(str(p)), value)
        self.path = p

    @classmethod
    def from_sb3(cls, policy: Any, **meta: Any) -> ExportedPolicy:
        """A frozen NumPy copy of an SB3 policy's actor (what self-play snapshots play)."""
        return cls.from_arrays(*policy_arrays(policy, **meta), where="an SB3 policy")

    @classmethod
    def from_arrays(cls, weights: Layers, meta: dict[str, Any], where: str = "the given arrays",
                    value: Layers | None = None) -> ExportedPolicy:
        """A policy from ``(weight [out, in], bias)`` pairs and export metadata, checked like a
        file (what ``arrays()`` gives back; training checkpoints store snapshots this way), with a
        value head's pairs when given."""
        self = cls.__new__(cls)
        as32 = [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in weights]
        value32 = None if value is None else [(np.asarray(w, np.float32), np.asarray(b, np.float32)) for w, b in value]
        self._set(as32, dict(meta), where, value32)
        self.path = None
        return self

    def arrays(self) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict[str, Any]]:
        """The ``(weight [out, in], bias)`` pairs and metadata (``from_arrays`` rebuilds the policy)."""
        return [(w.T.copy(), b.copy()) for w, b in self.weights], dict(self.meta)

    def value_arrays(self) -> Layers | None:
        """The value head's ``(weight [out, in], bias)`` pairs, or None when the file has none."""
        return None if self.value_weights is None else [(w.T.copy(), b.copy()) for w, b in self.value_weights]

    def _set(self, weights: Layers, meta: dict[str, Any], where: str, value: Layers | None = None) -> None:
        if meta.get("version") != VERSION:
            raise ValueError(f"{where}: policy format version {meta.get('version')}, expected {VERSION}")
        from .features import feature_count

        try:
            extra = feature_count(meta.get("features"))
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        if meta.get("obs_dim") != OBS_DIM + extra or meta.get("n_actions") != N_ACTIONS:
            raise ValueError(f"{where} was trained for inputs of {meta.get('obs_dim')} and "
                             f"{meta.get('n_actions')} actions; this bali-env has {OBS_DIM + extra} "
                             f"(observation {OBS_DIM} + features {extra}) and {N_ACTIONS}")
        for i, (w, b) in enumerate(weights):
            if w.ndim != 2 or b.shape != (w.shape[0],) or (i and w.shape[1] != weights[i - 1][0].shape[0]):
                raise ValueError(f"{where}: layer {i} has inconsistent shapes {w.shape}, {b.shape}")
        if meta.get("activation") not in _ACTIVATIONS:
            raise ValueError(f"{where}: unknown activation {meta.get('activation')!r}")
        if weights[0][0].shape[1] != meta["obs_dim"] or weights[-1][0].shape[0] != N_ACTIONS:
            raise ValueError(f"{where}: the layers take {weights[0][0].shape[1]} inputs and give "
                             f"{weights[-1][0].shape[0]} logits, the metadata says {meta['obs_dim']} and {N_ACTIONS}")
        if value is not None:
            for i, (w, b) in enumerate(value):
                if w.ndim != 2 or b.shape != (w.shape[0],) or w.shape[1] != (value[i - 1][0].shape[0] if i
                                                                             else meta["obs_dim"]):
                    raise ValueError(f"{where}: value layer {i} has inconsistent shapes {w.shape}, {b.shape}")
            outputs, seats = value[-1][0].shape[0], meta.get("num_players")
            if outputs != 1 and not (isinstance(seats, int) and seats > 2 and outputs == seats):
                expected = "1" if not isinstance(seats, int) or seats <= 2 else f"1 or {seats} (one per seat)"
                raise ValueError(f"{where}: the value head gives {outputs} outputs, expected {expected}")
        self.weights = [(np.ascontiguousarray(w.T), b) for w, b in weights]  # [in, out] for x @ w
        self.value_weights = None if value is None else [(np.ascontiguousarray(w.T), b) for w, b in value]
        self.meta = meta
        self.features: str | None = meta.get("features")
        self.activation = _ACTIVATIONS[meta["activation"]]

    def logits(self, observations: np.ndarray, action_masks: np.ndarray | None = None,
               checked: bool = False) -> np.ndarray:
        """The action logits of a batch of observations ([N, OBS_DIM] -> [N, N_ACTIONS]); a policy
        with input features (``self.features``) needs the legal actions too ([N, N_ACTIONS]), which
        are checked with the observations unless ``checked`` (``bali_env.agents.features.policy_input``)."""
        if self.features is None:
            x = np.asarray(observations, dtype=np.float32)
        elif action_masks is None:
            raise ValueError(f"this policy reads the {self.features} features: logits() needs action_masks")
        else:
            from .features import policy_input

            x = policy_input(observations, action_masks, self.features, checked=checked)
        return self.forward(x)

    def input(self, observations: np.ndarray, action_masks: np.ndarray, checked: bool = False) -> np.ndarray:
        """The network input of a batch (the observations, then the features the policy reads)."""
        from .features import policy_input

        return policy_input(observations, action_masks, self.features, checked=checked)

    def forward(self, x: np.ndarray, value: bool = False) -> np.ndarray:
        """The actor's logits ([N, N_ACTIONS]) of a prepared input (``input``), or with ``value``
        the value head's win share of the reading seat ([N], in (0, 1)); ValueError when the file
        has no value head."""
        if value:
            return self.seat_values(x)[:, 0]
        return self._mlp(self.weights, x)

    def seat_values(self, x: np.ndarray, num_players: int | None = None) -> np.ndarray:
        """Every seat's expected win share by the value head ([N, S], rows summing to 1), the
        reading seat first, then the others in turn order: a per-seat head's softmax (S outputs),
        or a one-output head's share for the reading seat with the rest split equally among the
        ``num_players - 1`` others (S = ``num_players``; without it, the single column)."""
        if self.value_weights is None:
            raise ValueError("this policy has no value head: add one with bali fit-value")
        out = self._mlp(self.value_weights, x)
        if out.shape[1] > 1:
            out = np.exp(out - out.max(axis=1, keepdims=True))
            return out / out.sum(axis=1, keepdims=True)
        v = 1.0 / (1.0 + np.exp(-out[:, 0]))
        if num_players is None or num_players <= 1:
            return v[:, None]
        rest = np.repeat(((1.0 - v) / (num_players - 1))[:, None], num_players - 1, axis=1)
        return np.concatenate([v[:, None], rest], axis=1)

    def _mlp(self, layers: Layers, x: np.ndarray) -> np.ndarray:
        """One of the file's MLPs (the actor or the value head) over a prepared input."""
        last = len(layers) - 1
        for i, (w, b) in enumerate(layers):
            x = x @ w
            x += b
            if i < last:
                x = self.activation(x)
        return x


class PPOAgent(Agent):
    """An exported policy (``path``), or the shipped one for the game's player count (no path).

    ``deterministic=True`` (default) plays the most probable legal action; False samples from the
    masked softmax with the agent's seeded generator."""

    batched = True

    def __init__(self, seed: int | None = None, path: str | Path | None = None, deterministic: bool = True,
                 policy: ExportedPolicy | None = None, name: str | None = None) -> None:
        """Load ``path`` now (a bad file fails here), play ``policy`` (already loaded, e.g. a
        self-play snapshot), or the shipped policies on first use."""
        self._policies: dict[int, ExportedPolicy] = {}
        self.path = Path(path) if path else None
        if policy is not None and self.path is not None:
            raise ValueError("give path or policy, not both")
        self._fixed: ExportedPolicy | None = ExportedPolicy(self.path) if self.path is not None else policy
        self.deterministic = bool(deterministic)
        self.name = name or (f"ppo:{self.path.stem}" if self.path else "ppo")
        super().__init__(seed)

    def check_players(self, num_players: int) -> None:
        """Make sure this agent has a policy for games of ``num_players`` (the shipped one for that
        count is loaded now): ValueError, in one line naming what to do, when there is none."""
        self._policy_for(num_players)

    def _policy_for(self, num_players: int) -> ExportedPolicy:
        if self._fixed is not None:
            return self._fixed
        if num_players not in self._policies:
            path = shipped_policy(num_players)
            if not path.is_file():
                have = sorted(int(p.stem.split("_")[1][0]) for p in POLICY_DIR.glob("bali_*p.npz"))
                raise ValueError(f"ppo has no shipped policy for {num_players} players (shipped: "
                                 f"{', '.join(map(str, have)) or 'none'}): train a {num_players}-player policy "
                                 f"with bali train --players {num_players} and pass it with ppo:path=FILE")
            self._policies[num_players] = ExportedPolicy(path)
        return self._policies[num_players]

    def compile_kernels(self) -> None:
        """Compile (or load) the feature kernel (``bali_env.agents.features``) when the policy reads
        features (the shipped policies do); nothing else here is compiled."""
        if self._fixed is None or self._fixed.features is not None:
            from .features import compile_feature_kernels

            compile_feature_kernels()

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The policy's action for one observation (only legal actions can be chosen)."""
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """The policy's actions for a batch ([N, OBS_DIM] observations, [N, N_ACTIONS] masks)."""
        return self._decide(observations, action_masks, None)

    def act_batch_keyed(self, observations: np.ndarray, action_masks: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """``act_batch`` with row i's sample (when not deterministic) drawn from ``keys[i]``."""
        return self._decide(observations, action_masks, np.asarray(keys, dtype=np.uint64).reshape(-1))

    def _decide(self, observations: np.ndarray, action_masks: np.ndarray, keys: np.ndarray | None) -> np.ndarray:
        obs, masks = check_observations(observations, action_masks)
        legal = masks.astype(bool)
        # the player-count one-hot of the spec, read for the whole batch at once
        counts = MIN_PLAYERS + np.argmax(obs[:, O_NUM_PLAYERS : O_NUM_PLAYERS + N_PLAYER_COUNTS], axis=1)
        actions = np.empty(len(obs), dtype=np.int64)
        for n in np.unique(counts):
            rows = np.flatnonzero(counts == n)
            policy = self._policy_for(int(n))
            logits = np.where(legal[rows], policy.logits(obs[rows], masks[rows], checked=True), -np.inf)
            if self.deterministic:
                actions[rows] = np.argmax(logits, axis=1)
            else:
                cum = np.cumsum(np.exp(logits - logits.max(axis=1, keepdims=True)), axis=1)
                draw = self.rng.random(len(rows)) if keys is None else key_uniforms(keys[rows], 1)[:, 0]
                u = draw[:, None] * cum[:, -1:]  # in [0, total)
                actions[rows] = (cum <= u).sum(axis=1)  # the first action whose cumulative weight passes u
        return actions
