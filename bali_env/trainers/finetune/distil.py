"""``bali distil POLICY``: one step of expert iteration: teach a policy what its own search plays.

``ppo+search`` (``bali_env.bots.puct``) beats the policy it searches with; ``bali distil`` moves some of
that strength back into the network, as in expert iteration and AlphaZero. It plays ``--games``
games of the policy against itself (``bali_env.trainers.finetune.fit_value.self_play``: sampled, so the positions vary),
keeps a ``--keep`` share of the decisions (those with a choice among them), runs ``ppo+search`` (``--sims``
descents) on each, and fits the actor, starting from its own weights, to the search's root visit
shares by cross-entropy, holding out a tenth of the games to report the fit (cross-entropy and how
often the network's first choice is the search's, before and after). It writes the new actor to
``--out`` with the input value head kept (it was fitted to the old actor's games: refit it with
``bali fit-value`` before searching with the new file), and the fit to ``--out`` with ``.json``.

Labelling is the long part (about 9 ms a position on 2 cores): the visits are saved to ``--out``
with ``.labels.npz`` as they come, and the same command run again goes on from there (the
positions are dealt again from ``--seed`` and must match). Needs torch (the train extra). Every
option is checked before anything runs (exit 2).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bali_env import flags
from bali_env.flags import UsageError

from bali_env.trainers.finetune.fit_value import SHARE, check_options

SAVE_SECONDS = 60.0  #: how often the labels found so far are written


def parents() -> list[argparse.ArgumentParser]:
    """The shared flags ``bali distil`` takes (``bali_env.flags``)."""
    return [flags.out("the distilled policy (.npz)", required=True),
            flags.games(20_000, "self-play games the positions come from"),
            flags.seed(0, "the deals, the sampling, the search and the fit"), flags.progress()]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``bali distil`` besides the shared ones."""
    p.description = ("Fit an exported policy (with a value head) to what ppo+search plays from its own positions; "
                     "writes the new policy.")
    p.add_argument("policy", type=Path, metavar="POLICY", help="an exported policy with a value head (.npz), "
                   "e.g. bali_env/bots/policies/bali_2p.npz")
    p.add_argument("--keep", type=SHARE, default=0.1, help="share of the decisions kept, in (0, 1]; those with a "
                   "choice are searched (default 0.1)")
    p.add_argument("--sims", type=int, default=800, help="ppo+search descents per position (default 800)")
    p.add_argument("--epochs", type=int, default=8, help="passes over the positions (default 8)")
    p.add_argument("--lr", type=float, default=3e-4, help="Adam learning rate (default 3e-4)")


def positions(policy: Any, num_players: int, games: int, seed: int, keep: float,
              progress: bool = False) -> dict[str, np.ndarray]:
    """The decisions with a choice among the ``keep`` share kept from ``games`` self-play games
    (``self_play`` with ``raw``, a bar over the games with ``progress``), with one search key per
    position (``key``, from ``seed``)."""
    from bali_env.trainers.finetune.fit_value import self_play

    kept = self_play(policy, num_players, games, seed, keep=keep, progress=progress, raw=True)
    rows = np.flatnonzero(kept["action_mask"].sum(axis=1) > 1)
    out = {name: array[rows] for name, array in kept.items()}
    rng = np.random.default_rng([seed, 1])
    out["key"] = rng.integers(0, 2**63 - 1, size=len(rows), dtype=np.int64).astype(np.uint64)
    return out


def fingerprint(kept: dict[str, np.ndarray], config: str) -> str:
    """A digest of the positions and the labelling settings (a resumed run must match it)."""
    h = hashlib.sha256(config.encode())
    for name in ("observation", "action_mask", "key"):
        h.update(np.ascontiguousarray(kept[name]).tobytes())
    return h.hexdigest()


def label(searcher: Any, policy: Any, kept: dict[str, np.ndarray], labels_path: Path, digest: str,
          chunk: int = 128, progress: bool = False) -> np.ndarray:
    """The root visits ([M, N_ACTIONS], int32) of ``searcher.search`` on every kept position, in
    chunks; what is done is saved to ``labels_path`` (with ``digest``) every ``SAVE_SECONDS`` and at
    the end, and taken up again from there when its digest matches."""
    from tqdm import tqdm

    from bali_env.engine import N_ACTIONS
    from bali_env.files import replace_when_done

    total = len(kept["key"])
    visits = np.zeros((total, N_ACTIONS), dtype=np.int32)
    done = 0
    if labels_path.is_file():
        with np.load(labels_path, allow_pickle=False) as data:
            if str(data["digest"]) == digest:
                done = int(data["done"])
                visits[:done] = data["visits"][:done]

    def save() -> None:
        with replace_when_done(labels_path) as tmp, open(tmp, "wb") as f:
            np.savez(f, digest=np.array(digest), done=np.array(done), visits=visits[:done])

    bar = tqdm(total=total, initial=done, unit="position", desc="search", disable=not progress)
    saved = time.time()
    while done < total:
        part = slice(done, min(done + chunk, total))
        visits[part] = searcher.search(kept["observation"][part], kept["action_mask"][part], kept["key"][part],
                                       policy)
        bar.update(part.stop - done)
        done = part.stop
        if time.time() - saved > SAVE_SECONDS:
            save()
            saved = time.time()
    bar.close()
    save()
    return visits


@dataclass(frozen=True, eq=False)
class SearchedPositions:
    """The positions a fit learns from: the network ``input`` [M, D], the legal actions
    ``action_mask`` [M, A], the search's root ``visits`` there [M, A] and the ``game`` each came
    from [M] (the games with ``game % 10 == 0`` are held out)."""

    input: np.ndarray
    action_mask: np.ndarray
    visits: np.ndarray
    game: np.ndarray


@dataclass(frozen=True)
class FitSettings:
    """How the actor is fitted: ``epochs`` passes over the positions with Adam at ``lr`` (its rate
    cosine-annealed to 0), seeded by ``seed``; a bar over the epochs with ``progress``."""

    epochs: int
    lr: float
    seed: int
    progress: bool = False


def fit_actor(weights: list[tuple[np.ndarray, np.ndarray]], activation: str, data: SearchedPositions,
              fit: FitSettings) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict[str, float]]:
    """Fit the actor MLP (``weights``: ``(weight [out, in], bias)`` pairs, its starting point) to the
    visit shares of ``data`` by cross-entropy over the legal actions, on the positions of the games
    with ``game % 10 != 0``; return the new pairs and the fit on the held-out games before and after
    (``cross_entropy_*``, ``agrees_*``: how often the network's most probable action is the most
    visited one)."""
    import torch
    from tqdm import tqdm

    x, masks, visits, game = data.input, data.action_mask, data.visits, data.game
    epochs, seed = fit.epochs, fit.seed
    torch.manual_seed(seed)
    act = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[activation]
    layers: list[torch.nn.Module] = []
    for i, (w, b) in enumerate(weights):
        linear = torch.nn.Linear(w.shape[1], w.shape[0])
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(np.asarray(w, np.float32)))
            linear.bias.copy_(torch.from_numpy(np.asarray(b, np.float32)))
        layers += [linear] if i == len(weights) - 1 else [linear, act()]
    net = torch.nn.Sequential(*layers)
    target = visits / visits.sum(axis=1, keepdims=True)
    held = game % 10 == 0
    xt, mt, tt = (torch.from_numpy(np.ascontiguousarray(a[~held])) for a in (x, masks > 0, target.astype(np.float32)))
    xv, mv, tv = (torch.from_numpy(np.ascontiguousarray(a[held])) for a in (x, masks > 0, target.astype(np.float32)))

    def log_probs(xb: Any, mb: Any) -> Any:
        return torch.log_softmax(net(xb).masked_fill(~mb, -1e9), dim=1)

    def held_out() -> tuple[float, float]:
        with torch.no_grad():
            lp = log_probs(xv, mv)
            ce = float(-(tv * lp.masked_fill(~mv, 0.0)).sum(dim=1).mean())
            agrees = float((lp.argmax(dim=1) == tv.argmax(dim=1)).float().mean())
        return ce, agrees

    ce0, agree0 = held_out()
    opt = torch.optim.Adam(net.parameters(), lr=fit.lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
    gen = torch.Generator().manual_seed(seed)
    for _ in tqdm(range(epochs), unit="epoch", desc="fit", disable=not fit.progress):
        for idx in torch.randperm(len(xt), generator=gen).split(512):
            opt.zero_grad()
            loss = -(tt[idx] * log_probs(xt[idx], mt[idx]).masked_fill(~mt[idx], 0.0)).sum(dim=1).mean()
            loss.backward()
            opt.step()
        sched.step()
    ce1, agree1 = held_out()
    entropy = -(target * np.log(np.where(target > 0, target, 1.0))).sum(axis=1)
    report = {"positions": int(len(x)), "held_out_positions": int(held.sum()), "cross_entropy_before": ce0,
              "cross_entropy_after": ce1, "target_entropy": float(entropy[held].mean()), "agrees_before": agree0,
              "agrees_after": agree1}
    linears = [m for m in net if isinstance(m, torch.nn.Linear)]
    return [(m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy()) for m in linears], report


def run(args: argparse.Namespace) -> int:
    """``bali distil`` with the options of ``bali``'s parser: check (``UsageError``), play, search,
    fit, write; returns the exit code."""
    from bali_env.bots.ppo import write_policy
    from bali_env.bots.puct import PolicySearchAgent

    if args.sims <= 0:
        raise UsageError(f"--sims must be > 0, got {args.sims}")
    if not 0 < args.lr < 1:
        raise UsageError(f"--lr must be in (0, 1), got {args.lr}")
    policy, players = check_options(args, "distil")
    try:
        searcher = PolicySearchAgent(seed=args.seed, sims=args.sims, path=args.policy)
    except ValueError as exc:
        raise UsageError(f"POLICY: {exc}") from None
    command = f"bali distil --games {args.games} --keep {args.keep:g} --sims {args.sims} --epochs {args.epochs} " \
              f"--lr {args.lr:g} --seed {args.seed}"
    t0 = time.time()
    kept = positions(policy, players, args.games, args.seed, args.keep, progress=args.progress)
    digest = fingerprint(kept, f"{command} {hashlib.sha256(args.policy.read_bytes()).hexdigest()}")
    t1 = time.time()
    visits = label(searcher, policy, kept, args.out.with_suffix(".labels.npz"), digest, progress=args.progress)
    t2 = time.time()
    start, meta = policy.arrays()
    data = SearchedPositions(kept["input"], kept["action_mask"], visits, kept["game"])
    weights, report = fit_actor(start, policy.meta["activation"], data,
                                FitSettings(args.epochs, args.lr, args.seed, args.progress))
    meta["distilled"] = command
    write_policy(weights, meta, args.out, value=policy.value_arrays())
    report |= {"policy": str(args.policy), "games": args.games, "players": players, "self_play_seconds": t1 - t0,
               "search_seconds": t2 - t1, "fit_seconds": time.time() - t2, "command": command}
    from bali_env.files import write_text

    write_text(args.out.with_suffix(".json"), json.dumps(report, indent=1) + "\n")
    print(f"distilled {report['positions']:,} searched positions of {args.games:,} games: held-out cross-entropy "
          f"{report['cross_entropy_before']:.3f} -> {report['cross_entropy_after']:.3f} (the visits' own entropy "
          f"{report['target_entropy']:.3f}), first choice agrees with the search {100 * report['agrees_before']:.1f}% "
          f"-> {100 * report['agrees_after']:.1f}%; wrote {args.out} (refit its value head: bali fit-value)",
          file=sys.stderr)
    return 0


__all__ = ["FitSettings", "SearchedPositions", "add_arguments", "fingerprint", "fit_actor", "label", "parents",
           "positions", "run"]
