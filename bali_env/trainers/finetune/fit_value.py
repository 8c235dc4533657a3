"""``bali fit-value POLICY``: give an exported policy a value head, learned from its own games.

The policy-guided search (``bali_env.bots.puct``) needs, at every leaf, how good the position is for
the seat to move when this policy plays on. ``bali fit-value`` measures exactly that: it plays
``--games`` games of the policy against itself (sampling from its masked softmax, so the games
vary), keeps a ``--keep`` share of the decisions (the network input the policy reads, with the
seat that read it), labels each with that seat's final win share (1 a win, 1/k a k-way shared
win, 0 a loss) and fits a value MLP (``--net`` hidden units, the policy's activation) to it by
cross-entropy, holding out a tenth of the games to report the fit (log loss, Brier score, how
often the value picks the winner; all for the reading seat's share). In 3 and 4 players the head
has one output per seat and learns every seat's share (softmax cross-entropy; the reading seat
first, the others in turn order after it), so the search knows which opponent a position favours;
in 2 players one output says it all. It writes the policy with the value head to ``--out`` (the
actor unchanged; ``bali_env.bots.ppo.write_policy``) and ``--out`` with ``.json`` (the fit).

Needs torch (the train extra). Every option is checked before anything runs (exit 2).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bali_env import flags
from bali_env.flags import UsageError
from bali_env.engine.validate import arg_type, check_number

SHARE = arg_type(check_number, 0, 1, True)  #: ``--keep``: a share of the decisions, in (0, 1]


def parents() -> list[argparse.ArgumentParser]:
    """The shared flags ``bali fit-value`` takes (``bali_env.flags``)."""
    return [flags.out("the policy with its value head (.npz)", required=True),
            flags.games(20_000, "self-play games to learn from"), flags.seed(0, "the deals, the sampling and the fit"),
            flags.progress()]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``bali fit-value`` besides the shared ones."""
    p.description = "Fit a value head to an exported policy from its own self-play games; writes the policy with it."
    p.add_argument("policy", type=Path, metavar="POLICY", help="an exported policy (.npz), e.g. "
                   "bali_env/bots/policies/bali_2p.npz")
    p.add_argument("--keep", type=SHARE, default=0.25, help="share of the decisions kept, in (0, 1] (default 0.25)")
    p.add_argument("--net", default="128,128", help="hidden layer sizes of the value MLP (default 128,128)")
    p.add_argument("--epochs", type=int, default=8, help="passes over the positions (default 8)")


def collect_positions(policy: Any, num_players: int, games: int, seed: int, keep: float = 0.25,
                      envs: int = 256, progress: bool = False,
                      seats: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Self-play ``games`` games of ``policy`` (an ``ExportedPolicy``, sampled) and return the kept
    decisions: the network inputs ``[M, D]`` (float32), the deciding seat's final win share ``[M]``
    (with ``seats``: every seat's, ``[M, num_players]``, the deciding seat first, then in turn
    order) and the game each came from ``[M]`` (numbered in the order the games ended)."""
    kept = self_play(policy, num_players, games, seed, keep, envs, progress)
    return kept["input"], kept["shares"] if seats else kept["shares"][:, 0], kept["game"]


def self_play(policy: Any, num_players: int, games: int, seed: int, keep: float = 0.25, envs: int = 256,
              progress: bool = False, raw: bool = False) -> dict[str, np.ndarray]:
    """Self-play ``games`` games of ``policy`` (sampled from its masked softmax) and return the kept
    decisions of the finished games: ``input`` (the network input ``[M, D]``), ``shares`` (every
    seat's final win share, ``[M, num_players]``, the deciding seat first, then the others in turn
    order), ``game`` (numbered in the order the games ended), and with
    ``raw`` the ``observation`` and ``action_mask`` each decision was taken on."""
    from bali_env.envs.batched import BaliVectorEnv

    rng = np.random.default_rng(seed)
    env = BaliVectorEnv(envs, num_players=num_players, seed=seed, parallel=False)
    obs, info = env.reset()
    serial = np.arange(envs, dtype=np.int64)  # the game each slot plays (slot i's k-th game: i + k * envs)
    next_serial = envs
    inputs: list[np.ndarray] = []
    raws: list[tuple[np.ndarray, np.ndarray]] = []
    keys: list[np.ndarray] = []  # (game serial, seat) of every kept row
    shares: dict[int, np.ndarray] = {}
    bar = _bar(games, progress)
    while len(shares) < games:
        masks = info["action_mask"]
        x = policy.input(obs, masks, checked=True)
        logits = np.where(masks > 0, policy.forward(x), -np.inf)
        actions = np.argmax(logits + rng.gumbel(size=logits.shape), axis=1)
        kept = np.flatnonzero(rng.random(envs) < keep)
        inputs.append(x[kept].copy())
        if raw:
            raws.append((obs[kept].copy(), masks[kept].copy()))
        keys.append(np.stack([serial[kept], info["to_move"][kept]], axis=1))
        obs, _, terminated, _, info = env.step(actions)
        for i in np.flatnonzero(terminated):
            won = info["winners"][i].astype(np.float64)
            shares[int(serial[i])] = won / won.sum()
            serial[i] = next_serial
            next_serial += 1
            bar.update(1)
    bar.close()
    key = np.concatenate(keys)
    done = np.array([int(g) in shares for g in key[:, 0]])
    key = key[done]
    order = {g: k for k, g in enumerate(sorted(shares))}
    out = {"input": np.concatenate(inputs)[done],
           "shares": np.array([np.roll(shares[int(g)], -int(s)) for g, s in key],
                              dtype=np.float32).reshape(-1, num_players),
           "game": np.array([order[int(g)] for g in key[:, 0]], dtype=np.int64)}
    if raw:
        out["observation"] = np.concatenate([o for o, _ in raws])[done]
        out["action_mask"] = np.concatenate([m for _, m in raws])[done]
    return out


def _bar(total: int, progress: bool) -> Any:
    """A tqdm bar over games (a do-nothing one without ``progress``)."""
    from tqdm import tqdm

    return tqdm(total=total, unit="game", desc="self-play", disable=not progress)


def fit_value(x: np.ndarray, y: np.ndarray, game: np.ndarray, hidden: list[int], activation: str, epochs: int,
              seed: int, progress: bool = False) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict[str, float]]:
    """Fit a value MLP (``hidden`` units, ``activation``) on the games with ``game % 10 != 0``: to
    ``y [M]`` (the reading seat's share) with one logit by binary cross-entropy, or to ``y [M, S]``
    (every seat's share, the reading seat first) with S logits by softmax cross-entropy. Returns
    its ``(weight [out, in], bias)`` pairs and the fit on the held-out games, for the reading
    seat's share (``log_loss``, ``brier``, ``picks_winner``: how often that share is above 1/2
    exactly when the seat won, over the positions of decided games, ``constant_log_loss``: the log
    loss of always answering the mean) and with ``y [M, S]`` also ``seat_log_loss`` (the softmax
    cross-entropy) and ``constant_seat_log_loss``."""
    import torch

    torch.manual_seed(seed)
    held = game % 10 == 0
    xt, yt = torch.from_numpy(x[~held]), torch.from_numpy(y[~held])
    xv, yv = torch.from_numpy(x[held]), torch.from_numpy(y[held])
    seats = y.shape[1] if y.ndim == 2 else 0
    net = _value_net(x.shape[1], hidden, activation, max(seats, 1))
    _train_value(net, xt, yt, seats > 0, epochs, seed, progress)
    with torch.no_grad():
        out = net(xv)
        ps = torch.softmax(out, dim=1).numpy().astype(np.float64) if seats else None
        p = ps[:, 0] if seats else torch.sigmoid(out[:, 0]).numpy().astype(np.float64)
    report = {"positions": int(len(x)), "held_out_positions": int(held.sum()),
              **_held_out_report(p, ps, yv.numpy().astype(np.float64), yt.numpy().mean(axis=0))}
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    return [(m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy()) for m in linears], report


def _value_net(width: int, hidden: list[int], activation: str, outputs: int) -> Any:
    """A fresh value MLP: ``width`` inputs, the ``hidden`` layers with ``activation``, ``outputs`` logits."""
    import torch

    act = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[activation]
    layers: list[torch.nn.Module] = []
    for h in hidden:
        layers += [torch.nn.Linear(width, h), act()]
        width = h
    layers.append(torch.nn.Linear(width, outputs))
    return torch.nn.Sequential(*layers)


def _train_value(net: Any, xt: Any, yt: Any, seats: bool, epochs: int, seed: int, progress: bool) -> None:
    """``epochs`` passes of Adam (cosine-annealed) over minibatches of 1024 drawn by a generator
    seeded by ``seed``: softmax cross-entropy over the seats (``seats``), else binary cross-entropy."""
    import torch
    from tqdm import tqdm

    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    loss_fn = torch.nn.CrossEntropyLoss() if seats else torch.nn.BCEWithLogitsLoss()
    gen = torch.Generator().manual_seed(seed)
    for _ in tqdm(range(epochs), unit="epoch", desc="fit", disable=not progress):
        for idx in torch.randperm(len(xt), generator=gen).split(1024):
            opt.zero_grad()
            out = net(xt[idx])
            loss = loss_fn(out, yt[idx]) if seats else loss_fn(out[:, 0], yt[idx])
            loss.backward()
            opt.step()
        sched.step()


def _held_out_report(p: np.ndarray, ps: np.ndarray | None, yv_all: np.ndarray, mean: np.ndarray) -> dict[str, float]:
    """The fit's figures on the held-out positions: ``p`` the reading seat's predicted share, ``ps``
    every seat's (None with one output), ``yv_all`` the targets, ``mean`` the training targets' mean."""
    seats = ps is not None
    yv64 = yv_all[:, 0] if seats else yv_all
    eps = 1e-7

    def log_loss(q: np.ndarray) -> float:
        return float(-np.mean(yv64 * np.log(q + eps) + (1 - yv64) * np.log(1 - q + eps)))

    decided = (yv64 == 0) | (yv64 == 1)
    report = {"log_loss": log_loss(p), "constant_log_loss": log_loss(np.full_like(p, mean[0] if seats else mean)),
              "brier": float(np.mean((p - yv64) ** 2)),
              "picks_winner": float(np.mean((p[decided] > 0.5) == (yv64[decided] == 1)))}
    if seats:
        report["seat_log_loss"] = float(-np.mean(np.sum(yv_all * np.log(ps + eps), axis=1)))
        report["constant_seat_log_loss"] = float(-np.mean(np.sum(yv_all * np.log(mean + eps), axis=1)))
    return report


def check_options(args: argparse.Namespace, command: str) -> tuple[Any, int]:
    """The checks ``bali fit-value`` and ``bali distil`` share (``UsageError`` on the first
    failure, nothing created): POLICY loads and says its player count, ``--games``, ``--epochs``,
    ``--out`` and torch (``--keep``'s range is its argparse type). Returns the loaded policy and
    its player count."""
    from bali_env.bots.ppo import ExportedPolicy

    try:
        policy = ExportedPolicy(args.policy)
    except ValueError as exc:
        raise UsageError(f"POLICY: {exc}") from None
    for name in ("games", "epochs"):
        if getattr(args, name) <= 0:
            raise UsageError(f"--{name} must be > 0, got {getattr(args, name)}")
    if args.out.suffix != ".npz":
        raise UsageError(f"--out must name a .npz file, got {str(args.out)!r}")
    if not args.out.parent.is_dir():
        raise UsageError(f"--out: no folder {str(args.out.parent)!r}")
    players = policy.meta.get("num_players")
    if players not in (2, 3, 4):
        raise UsageError(f"POLICY: its metadata does not say its player count ({players!r})")
    try:
        import torch  # noqa: F401
    except ImportError:
        raise UsageError(f"{command} needs torch: pip install torch==2.13.0 && pip install -e '.[train]'") from None
    return policy, players


def run(args: argparse.Namespace) -> int:
    """``bali fit-value`` with the options of ``bali``'s parser: check (``UsageError``), play, fit,
    write; returns the exit code."""
    from bali_env.bots.ppo import write_policy

    policy, players = check_options(args, "fit-value")
    try:
        hidden = [int(h) for h in args.net.split(",")]
        if not hidden or min(hidden) <= 0:
            raise ValueError
    except ValueError:
        raise UsageError(f"--net must be positive layer sizes separated by commas, got {args.net!r}") from None
    t0 = time.time()
    x, y, game = collect_positions(policy, players, args.games, args.seed, args.keep, progress=args.progress,
                                   seats=players > 2)
    t1 = time.time()
    value, report = fit_value(x, y, game, hidden, policy.meta["activation"], args.epochs, args.seed, args.progress)
    weights, meta = policy.arrays()
    meta["value_fit"] = f"bali fit-value --games {args.games} --keep {args.keep:g} --net {args.net} " \
                        f"--epochs {args.epochs} --seed {args.seed}"
    write_policy(weights, meta, args.out, value=value)
    report |= {"policy": str(args.policy), "games": args.games, "players": players, "self_play_seconds": t1 - t0,
               "fit_seconds": time.time() - t1, "command": meta["value_fit"]}
    from bali_env.files import write_text

    write_text(args.out.with_suffix(".json"), json.dumps(report, indent=1) + "\n")
    print(f"value head fitted on {report['positions']:,} positions of {args.games:,} games: held-out log loss "
          f"{report['log_loss']:.3f} (constant {report['constant_log_loss']:.3f}), picks the winner "
          f"{100 * report['picks_winner']:.1f}%" + (f"; every seat's share: log loss {report['seat_log_loss']:.3f} "
          f"(constant {report['constant_seat_log_loss']:.3f})" if players > 2 else "") + f"; wrote {args.out}",
          file=sys.stderr)
    return 0


__all__ = ["SHARE", "add_arguments", "check_options", "collect_positions", "fit_value", "parents", "run", "self_play"]
