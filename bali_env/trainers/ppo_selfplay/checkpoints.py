"""Saving and loading what ``bali train`` trains: the model files (``save_model``), the
checkpoint ``--resume`` continues from (``resume.pt``: ``save_checkpoint``, ``load_checkpoint``,
``restore_model``), and the policies ``--init`` starts from (``init_problem`` checks one before
anything starts, ``load_actor`` loads it).

The checkpoint is one file, moved into place when complete: ``{"format":
"bali-env/train-checkpoint", "version": 1, "trainer", "model", "pool", "games", "torch_rng",
"progress"}``; ``progress`` is the run's counters (``bali_env.trainers.ppo_selfplay.loop.RunProgress`` as a dict).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from bali_env.files import replace_when_done

from bali_env.trainers.entry import TrainingError
from bali_env.trainers.ppo_selfplay.run_settings import TrainSettings

CHECKPOINT = "resume.pt"  #: the checkpoint ``--resume`` continues from (in the run's folder)
CHECKPOINT_FORMAT = "bali-env/train-checkpoint"  #: the ``format`` field of a checkpoint (version 1)


def save_model(model: Any, path: Path) -> None:
    """Save either trainer's model to ``path`` through a temporary file moved into place."""
    with replace_when_done(path) as tmp, open(tmp, "wb") as f:
        model.save(f)


def save_checkpoint(path: Path, model: Any, args: TrainSettings, pool: Any, venv: Any,
                    progress: dict[str, Any]) -> None:
    """Write everything ``--resume`` needs to ``path`` (one file, moved into place when complete):
    the model with its optimizer, the self-play pool, the games in flight, the random generators
    (torch's, the pool's, every opponent's, the deals') and ``progress`` (counters, evaluations)."""
    import io

    import torch

    if args.trainer == "lean":
        saved_model: Any = model.checkpoint()
    else:
        buffer = io.BytesIO()
        model.save(buffer)  # the zip holds the optimizer and the step count
        saved_model = buffer.getvalue()
    state = {"format": CHECKPOINT_FORMAT, "version": 1, "trainer": args.trainer, "model": saved_model,
             "pool": pool.checkpoint(), "games": venv.checkpoint(), "torch_rng": torch.get_rng_state(),
             "progress": progress}
    with replace_when_done(path) as tmp:
        torch.save(state, tmp)


def load_checkpoint(path: Path, args: TrainSettings) -> dict[str, Any]:
    """The checkpoint ``save_checkpoint`` wrote; TrainingError saying what is wrong."""
    import torch

    try:
        state = torch.load(path, weights_only=False)  # our own file, written by save_checkpoint
    except Exception as exc:  # noqa: BLE001 - any unreadable file gets the same one-line answer
        raise TrainingError(f"{path} is not a readable training checkpoint ({type(exc).__name__}: {exc})") from None
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT or state.get("version") != 1:
        raise TrainingError(f"{path} is not a bali-env training checkpoint (version 1)")
    if state["trainer"] != args.trainer:
        raise TrainingError(f"{path} was saved by --trainer {state['trainer']}, config.json says {args.trainer}")
    return state


def restore_model(model: Any, args: TrainSettings, venv: Any, saved: dict[str, Any]) -> Any:
    """The model of a resumed run over ``venv`` (whose games are put back first)."""
    import io

    import torch

    venv.restore(saved["games"])
    if args.trainer == "lean":
        model.restore(saved["model"])
    else:
        from sb3_contrib import MaskablePPO

        model = MaskablePPO.load(io.BytesIO(saved["model"]), env=venv, device="cpu")
        model._last_obs = venv.observations()  # go on with the games in flight (no reset)
        model._last_episode_starts = np.ones(venv.num_envs, dtype=bool)
    torch.set_rng_state(saved["torch_rng"])
    return model


def grows_into(have: list[tuple[int, ...]], wanted: list[tuple[int, ...]], inputs_from: int | None = None) -> bool:
    """Whether layers of weight shapes ``have`` (out, in) can start a network of shapes ``wanted``
    (``grow_state``): as many layers, none wider than the run's, the outputs of the last and the
    first's inputs equal (or, for the first, ``inputs_from``: the observation without features)."""
    if len(have) != len(wanted) or not have:
        return False
    for i, (a, b) in enumerate(zip(have, wanted, strict=True)):
        last = i == len(have) - 1
        if len(a) != 2 or a[0] > b[0] or (last and a[0] != b[0]):
            return False
        if i == 0 and a[1] != b[1] and a[1] != inputs_from:
            return False
    return True


def grow_state(target: dict[str, Any], saved: dict[str, Any]) -> dict[str, Any]:
    """``target`` (a fresh network's ``state_dict``) with ``saved``'s weights in place: each of its
    tensors fills the first rows and columns of the run's. A wider run keeps the fresh weights into
    its extra hidden units, whose weights out start at 0, so the network computes exactly what the
    saved one did (new input features also start at 0) and learns to use the new units from there."""
    grown = {}
    for key, fresh in target.items():
        old = saved[key]
        if tuple(old.shape) == tuple(fresh.shape):
            grown[key] = old.clone().to(fresh.dtype)
            continue
        new = fresh.clone()
        rows = old.shape[0]
        if old.dim() == 1:
            new[:rows] = old
        else:
            new[:rows] = 0
            new[:rows, : old.shape[1]] = old
        grown[key] = new
    return grown


def init_problem(args: TrainSettings | argparse.Namespace) -> str | None:
    """Why ``--init`` cannot start this run (None when it can): not a valid export or saved model of
    this run's trainer, or another depth, activation or input than ``--net``, ``--activation`` and
    ``--features``, or a hidden layer wider than the run's (narrower ones grow: ``grow_state``). An
    export that reads the observation alone may start a network that also reads features; a saved
    model sets the critic too (it does not record its activation, so that one is the caller's to
    match). ``args``: the run's settings, or the command line being checked (before they are made)."""
    from bali_env.bots.features import feature_count
    from bali_env.engine import N_ACTIONS, OBS_DIM

    sizes = [int(x) for x in args.net.split(",")]
    inputs = OBS_DIM + feature_count(None if args.features == "none" else args.features)
    wanted = list(zip([*sizes, N_ACTIONS], [inputs, *sizes], strict=True))
    if args.init.suffix != ".npz":
        return _saved_model_problem(args, wanted)
    return _export_problem(args, wanted)


def _saved_model_problem(args: TrainSettings | argparse.Namespace, wanted: list[tuple[int, int]]) -> str | None:
    """``init_problem`` for a saved model: it loads as ``--trainer``'s, and its actor and critic
    grow into the layers ``wanted`` (the actor's, (out, in) each)."""
    from bali_env.engine import N_ACTIONS

    try:
        state = saved_policy(args.init, args.trainer)
    except Exception as exc:  # noqa: BLE001 - whatever the loaders raise on a foreign file
        return f"not an exported policy (.npz) nor a model saved by --trainer {args.trainer} ({exc})"
    if args.privileged_critic:
        return "a saved model cannot start a run with --privileged-critic (give its exported .npz)"
    nets = (("mlp_extractor.policy_net.", "action_net.weight", N_ACTIONS),  # (hidden layers, head, outputs):
            ("mlp_extractor.value_net.", "value_net.weight", 1))  # the actor, then the critic
    for prefix, head, outputs in nets:
        have = [tuple(v.shape) for k, v in state.items() if k.startswith(prefix) and k.endswith(".weight")]
        have.append(tuple(getattr(state.get(head), "shape", ())))
        if not grows_into(have, [*wanted[:-1], (outputs, wanted[-1][1])]):
            return (f"its network (layers {have}) does not fit this run's ({wanted[:-1]}): give its --net "
                    "(or wider layers) and --features")
    return None


def _export_problem(args: TrainSettings | argparse.Namespace, wanted: list[tuple[int, int]]) -> str | None:
    """``init_problem`` for an exported policy: it loads, reads this run's input and its actor
    (and activation) grows into the layers ``wanted``."""
    from bali_env.bots.ppo import ExportedPolicy
    from bali_env.engine import OBS_DIM

    try:
        exported = ExportedPolicy(args.init)
    except ValueError as exc:
        return str(exc)
    shapes = [tuple(w.shape) for w, _ in exported.arrays()[0]]
    if exported.features is not None and shapes[0][1] != wanted[0][1]:
        return f"it reads the {exported.features} features; this run reads the observation alone (--features none)"
    fits = grows_into(shapes, wanted, inputs_from=OBS_DIM)
    if not fits or exported.meta["activation"] != args.activation:
        return (f"its actor ({exported.meta['activation']}, layers {shapes}) does not fit this run's "
                f"({args.activation}, layers {wanted}): give the --net (or wider layers) and --activation it was "
                "trained with")
    return None


def saved_policy(path: Path, trainer: str) -> dict[str, Any]:
    """The policy's ``state_dict`` (actor and critic) in a model ``bali train`` saved: an SB3 ``.zip``
    (``--trainer sb3``) or the lean trainer's ``.pt``."""
    import torch

    if trainer == "sb3":
        from stable_baselines3.common.save_util import load_from_zip_file

        _, params, _ = load_from_zip_file(path, device="cpu", print_system_info=False)
        if not params or "policy" not in params:
            raise ValueError("no policy in it")
        return params["policy"]
    state = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(state, dict):
        raise ValueError("no state dict in it")
    return state


def load_actor(policy: Any, path: Path, trainer: str = "sb3") -> None:
    """Start ``policy`` (either trainer's: ``mlp_extractor.policy_net`` and ``action_net``) from
    ``path`` (``--init``, checked by ``init_problem``). An exported policy (``.npz``) sets the actor
    only: input weights of features the file does not read start at 0, so the first policy plays
    exactly like the file, and the critic starts fresh. A saved model sets actor and critic. A run
    with wider hidden layers than the file's grows them (``grow_state``): it still plays like it."""
    import torch

    from bali_env.bots.ppo import ExportedPolicy

    target = policy.state_dict()
    if Path(path).suffix != ".npz":
        policy.load_state_dict(grow_state(target, saved_policy(path, trainer)))
        return
    actor = [k for k in target if k.startswith(("mlp_extractor.policy_net.", "action_net."))]
    arrays = [a for layer in ExportedPolicy(path).arrays()[0] for a in layer]
    saved = {k: torch.from_numpy(np.asarray(a)) for k, a in zip(actor, arrays, strict=True)}
    policy.load_state_dict({**target, **grow_state({k: target[k] for k in actor}, saved)})
