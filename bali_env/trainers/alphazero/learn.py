"""The network AlphaZero trains, in PyTorch: the actor and the value head of an exported policy.

``Learner`` holds both MLPs (the shapes of ``bali_env.bots.ppo``'s ``.npz``: an actor over the
network input, a separate value head over the same input) and their Adam optimiser. It starts
from an exported policy with a value head (``from_policy``) or from scratch (``scratch``), trains
on the replay buffer's rows (``train``: the search's visit shares by cross-entropy for the actor;
every seat's final share for the value head, by softmax cross-entropy with one output per seat,
or by binary cross-entropy on the deciding seat's share with one output), and gives the policy
back as arrays that play without torch (``policy``, ``bali_env.bots.ppo.ExportedPolicy``).
``save`` / ``load`` keep the weights and the optimiser (a resumed run trains on exactly as before).
It trains on ``device`` (``"cpu"``, or ``"cuda"`` where PyTorch sees a GPU); the batches are drawn
on the CPU either way, so the rows a step sees do not depend on the device.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from bali_env.bots.ppo import FORMAT, VERSION, ExportedPolicy
from bali_env.trainers.alphazero.jobs import Rows

#: what the learner trains on: the buffer's rows, or arrays of the same names
RowsLike = Rows | Mapping[str, np.ndarray]

HIDDEN = (128, 128)  #: the actor's hidden layers from scratch (the shipped policies' shape)
VALUE_HIDDEN = (256, 256)  #: the value head's hidden layers from scratch (``bali fit-value``'s default)
FEATURES = "greedy-v1"  #: the input features from scratch (the shipped policies')


def _mlp(sizes: list[int], activation: str) -> Any:
    import torch

    act = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[activation]
    layers: list[Any] = []
    for i in range(len(sizes) - 1):
        layers.append(torch.nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(act())
    return torch.nn.Sequential(*layers)


def load_pairs(net: Any, pairs: list[tuple[np.ndarray, np.ndarray]]) -> None:
    """Set the linear layers of the MLP ``net`` (in order) to the ``(weight [out, in], bias)`` ``pairs``."""
    import torch

    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        for m, (w, b) in zip(linears, pairs, strict=True):
            m.weight.copy_(torch.from_numpy(np.asarray(w, np.float32)))
            m.bias.copy_(torch.from_numpy(np.asarray(b, np.float32)))


def layer_pairs(net: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """The ``(weight [out, in], bias)`` pairs of the linear layers of the MLP ``net``, copied to NumPy."""
    import torch

    return [(m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy())
            for m in net if isinstance(m, torch.nn.Linear)]



class Learner:
    """The actor and value MLPs being trained, their optimiser and the export metadata."""

    def __init__(self, weights: list[tuple[np.ndarray, np.ndarray]], value: list[tuple[np.ndarray, np.ndarray]],
                 meta: dict[str, Any], lr: float, device: str = "cpu") -> None:
        import torch

        self.meta = {k: v for k, v in meta.items() if k != "value_layers"}
        self.device = torch.device(device)
        activation = meta["activation"]
        self.actor = _mlp([weights[0][0].shape[1], *(w.shape[0] for w, _ in weights)], activation)
        self.value = _mlp([value[0][0].shape[1], *(w.shape[0] for w, _ in value)], activation)
        load_pairs(self.actor, weights)
        load_pairs(self.value, value)
        self.actor.to(self.device)
        self.value.to(self.device)
        self.opt = torch.optim.Adam([*self.actor.parameters(), *self.value.parameters()], lr=lr)

    @classmethod
    def from_policy(cls, policy: ExportedPolicy, lr: float, device: str = "cpu") -> Learner:
        """Go on from an exported policy with a value head (ValueError without one), on ``device``."""
        if policy.value_weights is None:
            raise ValueError(f"{policy.path or 'the policy'} has no value head: add one with bali fit-value")
        weights, meta = policy.arrays()
        return cls(weights, policy.value_arrays() or [], meta, lr, device)

    @classmethod
    def scratch(cls, players: int, lr: float, seed: int, device: str = "cpu",
                hidden: tuple[int, ...] = HIDDEN) -> Learner:
        """A new network (an actor with the ``hidden`` layers, ``HIDDEN`` unless given, a
        ``VALUE_HIDDEN`` value head with one output in 2 players and one per seat in more, ReLU,
        ``FEATURES`` input), PyTorch's initialisation seeded by ``seed``."""
        import torch

        from bali_env.bots.features import feature_count
        from bali_env.engine import N_ACTIONS, OBS_DIM

        width = OBS_DIM + feature_count(FEATURES)
        torch.manual_seed(seed)
        if not hidden or any(not isinstance(n, int) or n < 1 for n in hidden):
            raise ValueError(f"hidden must be one or more positive layer widths, got {hidden!r}")
        actor = _mlp([width, *hidden, N_ACTIONS], "relu")
        value = _mlp([width, *VALUE_HIDDEN, 1 if players == 2 else players], "relu")
        meta = {"format": FORMAT, "version": VERSION, "activation": "relu", "layers": len(hidden) + 1,
                "obs_dim": width, "n_actions": N_ACTIONS, "features": FEATURES, "num_players": players, "env_steps": 0}
        return cls(layer_pairs(actor), layer_pairs(value), meta, lr, device)

    def policy(self, **meta: Any) -> ExportedPolicy:
        """The network now as an exported policy with its value head (``meta`` added)."""
        value = layer_pairs(self.value)
        return ExportedPolicy.from_arrays(layer_pairs(self.actor), {**self.meta, **meta, "value_layers": len(value)},
                                          where="the trained network", value=value)

    def train(self, rows: RowsLike, steps: int, batch: int, seed: int,
              orders: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, float]:
        """``steps`` Adam steps on minibatches of ``batch`` rows drawn uniformly from ``rows`` (the
        buffer's ``input``, ``action_mask``, ``policy``, ``value``) with a generator seeded by
        ``seed``; returns the mean losses (``policy_loss``: cross-entropy to the visit shares,
        ``value_loss``, ``loss`` their sum) over the steps. With ``orders`` (index maps of the
        input and of the actions, one row per order: ``bali_env.bots.features.input_permutation``),
        each row of a batch is read in one of them, drawn from a second generator (seeded by ``seed + 1``)."""
        import torch

        dev = self.device
        x, legal, target, share = self._tensors(rows)
        gen = torch.Generator().manual_seed(int(seed) % 2**63)
        if orders is not None:  # a stream of their own, so the batches' rows are those drawn without them
            read_input, read_action = (torch.from_numpy(np.asarray(m, dtype=np.int64)).to(dev) for m in orders)
            order_gen = torch.Generator().manual_seed((int(seed) + 1) % 2**63)
        totals = np.zeros(2)
        for _ in range(steps):
            idx = torch.randint(0, len(x), (min(batch, len(x)),), generator=gen).to(dev)
            xb, lb, tb = x[idx], legal[idx], target[idx]
            if orders is not None:
                k = torch.randint(0, len(read_input), (len(idx),), generator=order_gen).to(dev)
                xb, lb, tb = (torch.gather(xb, 1, read_input[k]), torch.gather(lb, 1, read_action[k]),
                              torch.gather(tb, 1, read_action[k]))
            p_loss, v_loss = self.losses(xb, lb, tb, share[idx])
            self.opt.zero_grad()
            (p_loss + v_loss).backward()
            self.opt.step()
            totals += (p_loss.item(), v_loss.item())
        mean = totals / max(steps, 1)
        return {"policy_loss": float(mean[0]), "value_loss": float(mean[1]), "loss": float(mean.sum())}

    def evaluate(self, rows: RowsLike) -> dict[str, float]:
        """The losses on ``rows`` (the buffer's table) without a step: ``policy_loss``,
        ``value_loss``, and ``agreement``, the share of rows whose most likely legal action is
        the target's most likely one (rows held out from training say how well the network fits
        positions it has not seen)."""
        import torch

        with torch.no_grad():
            x, legal, target, share = self._tensors(rows)
            p_loss, v_loss = self.losses(x, legal, target, share)
            first = self.actor(x).masked_fill(~legal, -1e9).argmax(dim=1)
            agreement = (first == target.argmax(dim=1)).float().mean()
        return {"policy_loss": float(p_loss), "value_loss": float(v_loss), "agreement": float(agreement)}

    def _tensors(self, rows: RowsLike) -> tuple[Any, Any, Any, Any]:
        """The buffer's ``input``, legal actions, ``policy`` and ``value`` as tensors on the device."""
        import torch

        dev = self.device
        return (torch.from_numpy(np.ascontiguousarray(rows["input"], dtype=np.float32)).to(dev),
                torch.from_numpy(np.ascontiguousarray(rows["action_mask"]) > 0).to(dev),
                torch.from_numpy(np.ascontiguousarray(rows["policy"], dtype=np.float32)).to(dev),
                torch.from_numpy(np.ascontiguousarray(rows["value"], dtype=np.float32)).to(dev))

    def losses(self, x: Any, legal: Any, target: Any, share: Any) -> tuple[Any, Any]:
        """The two losses on one batch (tensors): the actor's cross-entropy to ``target`` over the
        legal actions, the value head's to ``share`` (softmax over the seats, or sigmoid on the
        deciding seat's share for a one-output head)."""
        import torch

        logp = torch.log_softmax(self.actor(x).masked_fill(~legal, -1e9), dim=1)
        p_loss = -(target * logp.masked_fill(~legal, 0.0)).sum(dim=1).mean()
        out = self.value(x)
        if out.shape[1] == 1:
            v_loss = torch.nn.functional.binary_cross_entropy_with_logits(out[:, 0], share[:, 0])
        else:
            v_loss = -(share * torch.log_softmax(out, dim=1)).sum(dim=1).mean()
        return p_loss, v_loss

    def save(self, path: Path) -> None:
        """The weights, the optimiser and the metadata, to a temporary file moved into place."""
        import torch

        from bali_env.files import replace_when_done

        with replace_when_done(path) as tmp:
            torch.save({"actor": self.actor.state_dict(), "value": self.value.state_dict(),
                        "opt": self.opt.state_dict(), "meta": self.meta}, tmp)

    def load(self, path: Path) -> None:
        """Take the weights and optimiser ``save`` wrote (the same shapes)."""
        import torch

        saved = torch.load(path, weights_only=True, map_location=self.device)
        self.actor.load_state_dict(saved["actor"])
        self.value.load_state_dict(saved["value"])
        self.opt.load_state_dict(saved["opt"])
        self.meta = dict(saved["meta"])


__all__ = ["FEATURES", "HIDDEN", "Learner", "RowsLike", "VALUE_HIDDEN", "layer_pairs", "load_pairs"]
