"""A trained policy as plain exported weights, played by a NumPy forward pass (no torch needed).

``bali train`` exports its final MaskablePPO policy next to the SB3 ``.zip`` as ``final.npz``
(``export_policy``): the actor MLP's weights and biases, its activation, the input and action
sizes it was trained for, and the feature set (``bali_env.bots.features``) its input appends to the
observation, if any (``features``: ``greedy-v1``, or absent for the observation alone).
A file may also carry a **value head** (``bali fit-value``, ``bali_env.trainers.finetune.fit_value``): a second MLP over
the same input (keys ``vw0, vb0, ...``, metadata ``value_layers``) with either one output, whose
sigmoid is the expected win share of the seat whose observation it reads, or one output per seat
(``num_players`` of them), whose softmax is every seat's expected win share, the reading seat
first and the others in turn order after it. The policy-guided search (``bali_env.bots.puct``) needs
one. Files without one load as before.
``PPOAgent`` loads such a file and plays the most probable legal action (or samples from the
masked distribution), for a whole batch at once. Its numbers are computed in one fixed order
(``bali_env.bots.network``): the same bits on every machine and whatever the batch, so a
decision never hangs on the BLAS build, the CPU or the thread count:

- ``make_agent("ppo:path=runs/bali2p/final.npz")`` plays that file;
- ``make_agent("ppo")`` plays the policy shipped in ``bali_env/bots/policies/`` for the player count of
  the game it is given (read from the observation): ``bali_2p.npz`` in 2 players, ``bali_4p.npz``
  in 4, and in 3 (no network was trained for them) the 4-player network with its value head cut
  to three seats (``SHIPPED_FILES``, ``ExportedPolicy.for_players``); a count without a shipped
  policy (a folder without its file) is a clear error, raised early by
  ``check_players(num_players)`` (what ``bali play`` calls on every bot).

A file that is not such an export (a Python file, a pickle, junk) is refused with one line
("not a policy file: expected the .npz that bali train writes"); nothing is ever unpickled.

The metadata (the array ``meta``: one string) is written as JSON (``json.dumps`` of the dict) and
read by the declared model ``PolicyMeta`` (pydantic; extra keys such as ``env_steps`` or
``value_fit`` are kept). Files written before it was JSON (the shipped ``bali_2p.npz`` and
``bali_4p.npz`` among them) hold the dict as a Python literal (its ``repr``): ``parse_meta``
reads JSON first and falls back to ``ast.literal_eval`` (data only, never code) for those older
files; the model checks the metadata either way.
"""

from __future__ import annotations

import ast
import json
import zipfile
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from bali_env.engine import MIN_PLAYERS, N_ACTIONS, N_PLAYER_COUNTS, O_NUM_PLAYERS, OBS_DIM
from bali_env.engine.validate import check_flag, model_problem

from bali_env.bots import network
from bali_env.bots.base import Agent, check_observations
from bali_env.engine.seeds import key_uniforms

FORMAT = "bali-env/ppo-policy"
VERSION = 1
POLICY_DIR = Path(__file__).resolve().parent / "policies"


class PolicyMeta(BaseModel):
    """The metadata of a policy export, declared: its format and version, the actor's activation,
    layer count and sizes, the feature set its input appends (None: the observation alone), and
    what else trainers store (``num_players``, ``env_steps``, ``value_layers``: the value head's
    layer count, 0 without one; other keys are kept as they are)."""

    model_config = ConfigDict(extra="allow")

    format: Literal["bali-env/ppo-policy"]  # FORMAT
    version: StrictInt = Field(ge=VERSION, le=VERSION)
    activation: Literal["tanh", "relu"]  # network.ACTIVATIONS
    layers: StrictInt = Field(ge=1, description="a positive integer (the actor's layer count)")
    obs_dim: StrictInt = Field(ge=1, description="a positive integer (the network's input size)")
    n_actions: StrictInt = Field(ge=1, description="a positive integer (the action count)")
    features: StrictStr | None = Field(None, description="a feature set's name or null")
    num_players: StrictInt | None = Field(None, ge=2, description="a player count (an integer >= 2) or null")
    env_steps: StrictInt = Field(0, ge=0, description="an integer >= 0")
    value_layers: StrictInt = Field(0, ge=0, description="an integer >= 0 (the value head's layer count)")


def parse_meta(text: str) -> dict[str, Any]:
    """The metadata dict stored in a policy file's ``meta``: JSON, or for files written before
    (the shipped policies) a Python literal, read with ``ast.literal_eval``. ValueError for text
    that is neither, or not a dict."""
    try:
        meta = json.loads(text)
    except ValueError:  # an older file: the dict's repr()
        try:
            meta = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise ValueError("the policy metadata is neither JSON nor a Python literal") from None
    if not isinstance(meta, dict):
        raise ValueError(f"the policy metadata is a {type(meta).__name__}, not a dict")
    return meta


def read_meta(path: str | Path) -> dict[str, Any]:
    """The metadata dict of a policy file (``parse_meta`` of its ``meta``), its weights unread."""
    with np.load(path, allow_pickle=False) as data:
        return parse_meta(str(data["meta"][0]))


def check_meta(meta: dict[str, Any], where: str) -> PolicyMeta:
    """``meta`` read by ``PolicyMeta``; ValueError naming ``where`` and the first bad field (a
    version or activation this bali-env does not play, said as such)."""
    try:
        return PolicyMeta.model_validate(meta)
    except ValidationError as exc:
        field = (exc.errors()[0]["loc"] or ("",))[0]
        if field == "version":
            problem = f"policy format version {meta.get('version')}, expected {VERSION}"
        elif field == "activation":
            problem = f"unknown activation {meta.get('activation')!r}"
        else:
            problem = model_problem(exc, PolicyMeta)
        raise ValueError(f"{where}: {problem}") from None


#: the shipped file each player count plays: 3 players have no network of their own and play the
#: 4-player one, its value head cut to three seats (``ExportedPolicy.for_players``)
SHIPPED_FILES = {2: "bali_2p.npz", 3: "bali_4p.npz", 4: "bali_4p.npz"}


def shipped_policy(num_players: int) -> Path:
    """The path of the policy file shipped for ``num_players`` (``SHIPPED_FILES``; it may not
    exist); ``ExportedPolicy(path).for_players(num_players)`` is the network ``ppo`` plays."""
    return POLICY_DIR / SHIPPED_FILES.get(num_players, f"bali_{num_players}p.npz")


def policy_arrays(policy: Any, **meta: Any) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict[str, Any]]:
    """The actor of an SB3 (Maskable)ActorCriticPolicy with an MLP extractor as float32
    ``(weight, bias)`` pairs and the metadata of an export (``meta`` added)."""
    import torch

    linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, torch.nn.Linear)]
    layers = [*linears, policy.action_net]
    act = type(policy.activation_fn()).__name__.lower() if isinstance(policy.activation_fn, type) else "tanh"
    if act not in network.ACTIVATIONS:
        raise ValueError(f"cannot export a policy with activation {act!r}; supported: {sorted(network.ACTIVATIONS)}")
    weights = [(layer.weight.detach().cpu().numpy().astype(np.float32).copy(),
                layer.bias.detach().cpu().numpy().astype(np.float32).copy()) for layer in layers]
    from bali_env.bots.features import features_for_input

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
    arrays["meta"] = np.array([json.dumps(info)])
    from bali_env.files import replace_when_done

    with replace_when_done(path) as tmp, open(tmp, "wb") as f:
        np.savez(f, **arrays)
    return Path(path)


def _read_export(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The metadata dict and the float32 arrays of a policy file; ValueError (and whatever NumPy or
    zipfile raise) for a file that is not one. Only a zip archive is handed to NumPy, never
    unpickling."""
    if not zipfile.is_zipfile(path):  # an .npz is a zip archive; anything else is never handed to NumPy
        raise ValueError("not a zip archive")
    with np.load(path, allow_pickle=False) as data:
        meta = parse_meta(str(data["meta"][0]))
        if meta.get("format") != FORMAT:
            raise ValueError("not a policy export")
        return meta, {k: data[k].astype(np.float32) for k in data.files if k != "meta"}


def _check_input_size(info: PolicyMeta, where: str) -> None:
    """The input and action sizes the policy was trained for are this bali-env's (the observation,
    and the features its input appends)."""
    from bali_env.bots.features import feature_count

    try:
        extra = feature_count(info.features)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    if info.obs_dim != OBS_DIM + extra or info.n_actions != N_ACTIONS:
        raise ValueError(f"{where} was trained for inputs of {info.obs_dim} and "
                         f"{info.n_actions} actions; this bali-env has {OBS_DIM + extra} "
                         f"(observation {OBS_DIM} + features {extra}) and {N_ACTIONS}")


def _check_chain(layers: Layers, inputs: int | None, where: str, what: str) -> None:
    """Each ``(weight [out, in], bias)`` pair is a layer taking the previous one's outputs (the
    first one ``inputs``; None: not checked here)."""
    for i, (w, b) in enumerate(layers):
        takes = layers[i - 1][0].shape[0] if i else inputs
        if w.ndim != 2 or b.shape != (w.shape[0],) or (takes is not None and w.shape[1] != takes):
            raise ValueError(f"{where}: {what} {i} has inconsistent shapes {w.shape}, {b.shape}")


def _check_actor(weights: Layers, info: PolicyMeta, where: str) -> None:
    """The actor's layers: as many as the metadata says, chained, from its input size to the actions."""
    if len(weights) != info.layers:
        raise ValueError(f"{where}: {len(weights)} actor layers, the metadata says {info.layers}")
    _check_chain(weights, None, where, "layer")
    if weights[0][0].shape[1] != info.obs_dim or weights[-1][0].shape[0] != N_ACTIONS:
        raise ValueError(f"{where}: the layers take {weights[0][0].shape[1]} inputs and give "
                         f"{weights[-1][0].shape[0]} logits, the metadata says {info.obs_dim} and {N_ACTIONS}")


def _check_value_head(value: Layers, info: PolicyMeta, where: str) -> None:
    """A value head's layers: chained from the actor's input to one output, or one per seat (more
    than two seats)."""
    _check_chain(value, info.obs_dim, where, "value layer")
    outputs, seats = value[-1][0].shape[0], info.num_players or 0
    if outputs != 1 and not (seats > 2 and outputs == seats):
        expected = "1" if seats <= 2 else f"1 or {seats} (one per seat)"
        raise ValueError(f"{where}: the value head gives {outputs} outputs, expected {expected}")


class ExportedPolicy:
    """The weights of one exported policy, checked on load (``ExportedPolicy(path)``), or taken
    from a live SB3 policy (``ExportedPolicy.from_sb3(policy)``: a frozen copy, no file)."""

    def __init__(self, path: str | Path) -> None:
        """Load and check ``path``; ValueError saying what is wrong."""
        p = Path(path)
        if not p.is_file():
            raise ValueError(f"no exported policy at {str(p)!r}")
        not_policy = f"not a policy file: expected the .npz that bali train writes, got {str(p)!r}"
        try:
            meta, arrays = _read_export(p)
        except (OSError, EOFError, KeyError, IndexError, TypeError, ValueError, SyntaxError, RecursionError,
                MemoryError, zipfile.BadZipFile):
            raise ValueError(not_policy) from None
        info = check_meta(meta, repr(str(p)))
        try:
            weights = [(arrays[f"w{i}"], arrays[f"b{i}"]) for i in range(info.layers)]
            value = [(arrays[f"vw{i}"], arrays[f"vb{i}"]) for i in range(info.value_layers)] or None
        except KeyError:
            raise ValueError(not_policy) from None
        self._set(weights, meta, repr(str(p)), value, info)
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

    def for_players(self, num_players: int) -> ExportedPolicy:
        """This network as a start for games of ``num_players`` (``bali az --init``): itself when
        it is for that count (or says none); else the same actor (the observation tells it the
        player count) and a per-seat value head cut to its first ``num_players`` outputs (the
        reading seat, then the others in turn order), so the 4-player network starts a 3-player
        run. ValueError when the head cannot be cut: none, one output, or fewer seats."""
        have = self.info.num_players
        if have in (None, num_players):
            return self
        outputs = 0 if self.value_weights is None else self.value_weights[-1][0].shape[1]
        if not 2 < num_players < outputs:
            raise ValueError(f"a {have}-player policy whose value head gives {outputs} output(s) cannot start "
                             f"{num_players}-player games (only a per-seat head for more seats is cut to fewer)")
        weights, meta = self.arrays()
        value = self.value_arrays() or []
        value[-1] = (value[-1][0][:num_players].copy(), value[-1][1][:num_players].copy())
        return ExportedPolicy.from_arrays(weights, {**meta, "num_players": num_players},
                                          where=f"{self.path or 'the policy'} for {num_players} players", value=value)

    def _set(self, weights: Layers, meta: dict[str, Any], where: str, value: Layers | None = None,
             info: PolicyMeta | None = None) -> None:
        """Check the layers against the metadata (``check_meta``'s ``info``, read here when not
        given) and this bali-env, and keep them; ValueError naming ``where`` otherwise."""
        info = info if info is not None else check_meta(meta, where)
        _check_input_size(info, where)
        _check_actor(weights, info, where)
        if value is not None:
            _check_value_head(value, info, where)
        self.weights = [(np.ascontiguousarray(w.T), b) for w, b in weights]  # [in, out] for x @ w
        self.value_weights = None if value is None else [(np.ascontiguousarray(w.T), b) for w, b in value]
        self.meta = meta
        self.info = info  #: the metadata as ``PolicyMeta`` (``meta``: the dict as stored)
        self.features: str | None = info.features
        self.activation: str = info.activation  #: the hidden layers' activation (``network.ACTIVATIONS``)

    def logits(self, observations: np.ndarray, action_masks: np.ndarray | None = None,
               checked: bool = False) -> np.ndarray:
        """The action logits of a batch of observations ([N, OBS_DIM] -> [N, N_ACTIONS]); a policy
        with input features (``self.features``) needs the legal actions too ([N, N_ACTIONS]), which
        are checked with the observations unless ``checked`` (``bali_env.bots.features.policy_input``)."""
        if self.features is None:
            x = np.asarray(observations, dtype=np.float32)
        elif action_masks is None:
            raise ValueError(f"this policy reads the {self.features} features: logits() needs action_masks")
        else:
            from bali_env.bots.features import policy_input

            x = policy_input(observations, action_masks, self.features, checked=checked)
        return self.forward(x)

    def input(self, observations: np.ndarray, action_masks: np.ndarray, checked: bool = False) -> np.ndarray:
        """The network input of a batch (the observations, then the features the policy reads)."""
        from bali_env.bots.features import policy_input

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
        return network.seat_shares(self._mlp(self.value_weights, x), num_players)

    def _mlp(self, layers: Layers, x: np.ndarray) -> np.ndarray:
        """One of the file's MLPs (the actor or the value head) over a prepared input, in the fixed
        order of ``bali_env.bots.network``: a row's outputs are the same bits whatever else is in
        the batch and on whatever machine (tested), so ``act`` and a batch choose alike even at a
        near-tie."""
        return network.mlp(x, layers, self.activation)


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
        self.deterministic = check_flag("deterministic", deterministic)
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
                have = sorted(n for n, name in SHIPPED_FILES.items() if (POLICY_DIR / name).is_file())
                raise ValueError(f"ppo has no shipped policy for {num_players} players (shipped: "
                                 f"{', '.join(map(str, have)) or 'none'}): train a {num_players}-player policy "
                                 f"with bali train --players {num_players} and pass it with ppo:path=FILE")
            self._policies[num_players] = ExportedPolicy(path).for_players(num_players)
        return self._policies[num_players]

    def compile_kernels(self) -> None:
        """Compile (or load) the network's kernel (``bali_env.bots.network``) and the feature
        kernel (``bali_env.bots.features``) when the policy reads features (the shipped ones do)."""
        network.compile_network_kernels()
        if self._fixed is None or self._fixed.features is not None:
            from bali_env.bots.features import compile_feature_kernels

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

    def act_batch_unchecked(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """``act_batch`` on an environment's own buffers (nothing to check)."""
        return self._decide(observations, action_masks, None, checked=True)

    def _decide(self, observations: np.ndarray, action_masks: np.ndarray, keys: np.ndarray | None,
                checked: bool = False) -> np.ndarray:
        """The actions of a batch: the most probable legal one, or one drawn from the masked
        softmax (its weights by ``network.fixed_exp``, the same bits everywhere)."""
        obs, masks = (observations, action_masks) if checked else check_observations(observations, action_masks)
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
                cum = np.cumsum(network.fixed_exp(logits - logits.max(axis=1, keepdims=True)), axis=1)
                draw = self.rng.random(len(rows)) if keys is None else key_uniforms(keys[rows], 1)[:, 0]
                u = draw[:, None] * cum[:, -1:]  # in [0, total)
                actions[rows] = (cum <= u).sum(axis=1)  # the first action whose cumulative weight passes u
        return actions
