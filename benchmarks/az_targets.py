"""How much ``bali az``'s policy target for one position changes from one search to the next.

``python -m benchmarks.az_targets RUN [--games 16] [--repeats 4] [--sims 128 512] [--out OUT.json]``
plays ``--games`` games of the run's self-play (its best network, its search settings: descents,
Gumbel's root, leaves, c) and searches every decision with a choice ``--repeats`` times with
independent keys (other determinizations of the hidden cards, other Gumbel noise), once per
``--sims`` value; the move played is the first search's at the run's own descents, as in self-play.
The same position, searched again, gives another target; how much it moves bounds what a network
can learn from one search per position (``az_fit`` measures what it does learn). Per descents:

| figure | what |
|---|---|
| ``target_entropy`` | a target's mean entropy: the loss of a network that predicted each exactly |
| ``searches_agree`` | how often two searches of a position have the same first choice |
| ``search_vs_rest`` | how often a search's first choice is that of the other searches' mean target |
| ``network_vs_search`` | how often the network's first choice (what ``ppo`` plays) is a search's |
| ``network_vs_rest`` | the same against the mean of all searches but one (``search_vs_rest``'s footing) |
| ``network_loss`` | a target's cross-entropy to the network (``az_fit``'s policy loss) |
| ``rest_loss`` | a target's cross-entropy to the other searches' mean target |

A first choice is a distribution's most likely legal action; ``rest_loss`` is the loss of a
network that knew the average search of each position (from R - 1 searches: an upper bound).
The same figures per kind of decision (``by_decision``, the observation's ``decision``: take an
offering, play, refill, ...) say where the network's first choice parts from the searches'
(``decisions_table``: each kind's share of the positions and of the network's misses).

Game k is dealt from ``deal_seed(seed, k)``; the first search of a decision is keyed as self-play
seeded ``seed`` keys it (``selfplay.play_chunk``: its targets are the rows that self-play keeps),
repeat r >= 1 on ``decision_keys`` of the seed ``deal_seed(seed ^ REPEAT_STREAM, r)``: the same
flags give the same figures on any machine. It prints a Markdown table (the docs quote it) and
writes the figures as JSON (``--out``, a temporary file moved into place). Needs no torch.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

#: repeat r >= 1's search keys come from deal_seed(seed ^ REPEAT_STREAM, r): a stream apart from the deals'
REPEAT_STREAM = 0x2545F4914F6CDD1D


def repeat_seeds(seed: int, repeats: int) -> list[int]:
    """The seed each repeat's ``decision_keys`` are drawn from: the first self-play's own, the
    others independent of it and of the deals."""
    from bali_env.engine.seeds import deal_seed

    return [seed] + [deal_seed(seed ^ REPEAT_STREAM, r) for r in range(1, repeats)]


def first_choice(p: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Each row's most likely legal action (the lowest id among equals)."""
    return np.argmax(np.where(legal, p, -np.inf), axis=1)


def cross_entropy(target: np.ndarray, p: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Each row's ``-sum target log p`` over its legal actions (p floored at 1e-12)."""
    return -(np.where(legal, target * np.log(np.maximum(p, 1e-12)), 0.0)).sum(axis=1)


def figures(targets: np.ndarray, prior: np.ndarray, legal: np.ndarray) -> dict[str, float]:
    """The module docstring's figures from ``targets`` [R, M, A] (R searches of M positions),
    the network's ``prior`` [M, A] and the ``legal`` actions [M, A] (R >= 2)."""
    repeats = len(targets)
    if repeats < 2:
        raise ValueError(f"the figures compare searches: repeats must be 2 or more, got {repeats}")
    firsts = np.stack([first_choice(t, legal) for t in targets])
    net = first_choice(prior, legal)
    total = targets.sum(axis=0)
    pairs = [(a, b) for a in range(repeats) for b in range(a + 1, repeats)]
    rest = [(total - targets[r]) / (repeats - 1) for r in range(repeats)]
    p = np.where(targets > 0, targets, 1.0)
    return {
        "positions": int(legal.shape[0]),
        "target_entropy": float(-(targets * np.log(p)).sum(axis=2).mean()),
        "searches_agree": float(np.mean([firsts[a] == firsts[b] for a, b in pairs])),
        "search_vs_rest": float(np.mean([firsts[r] == first_choice(rest[r], legal) for r in range(repeats)])),
        "network_vs_search": float((firsts == net[None, :]).mean()),
        "network_vs_rest": float(np.mean([net == first_choice(rest[r], legal) for r in range(repeats)])),
        "network_loss": float(np.mean([cross_entropy(t, prior, legal) for t in targets])),
        "rest_loss": float(np.mean([cross_entropy(targets[r], rest[r], legal) for r in range(repeats)])),
    }


def play(policy: Any, config: dict[str, Any], games: int, repeats: int, sims: list[int],
         seed: int) -> dict[str, Any]:
    """Play ``games`` self-play games with the run's ``config`` and search every decision with a
    choice ``repeats`` times per ``sims`` value; every search's targets, the priors and the legal
    actions, the kind of each decision (``decision``: its index in ``DECISION_NAMES``) (``targets[s]``:
    [R, M, A] for the s-th descents)."""
    from threadpoolctl import threadpool_limits

    from bali_env.engine.seeds import decision_keys
    from bali_env.bots.puct import PolicySearchAgent
    from bali_env.engine.seeds import deal_seed
    from bali_env.engine import N_DECISIONS, O_DECISION
    from bali_env.envs.batched import BaliVectorEnv
    from bali_env.trainers.alphazero.generations import Config
    from bali_env.trainers.alphazero.jobs import settled_target
    from bali_env.trainers.alphazero.selfplay import policy_target

    players, gumbel = int(config["players"]), int(config["gumbel"])
    target = settled_target(gumbel, config.get("target", Config.target))  # as self-play settles it
    searchers = [PolicySearchAgent(seed=0, sims=s, c=float(config["c"]), leaves=int(config["leaves"]), gumbel=gumbel)
                 for s in sims]
    seeds = repeat_seeds(seed, repeats)
    numbers = np.arange(games, dtype=np.int64)
    env = BaliVectorEnv(games, num_players=players, seed=0, parallel=False)
    env.reset()
    for k in range(games):
        env.reset_game(k, deal_seed(seed, k))
    done = np.zeros(games, dtype=bool)
    decision = np.zeros(games, dtype=np.int64)
    kept: dict[str, list[Any]] = {"prior": [], "legal": [], "decision": [], "targets": [[] for _ in sims]}
    with threadpool_limits(1):
        while not done.all():
            obs, masks, seats = env.obs, env.action_masks, env.to_move
            actions = np.where(done, -1, np.argmax(masks, axis=1)).astype(np.int64)
            rows = np.flatnonzero(~done & (masks.sum(axis=1) > 1))
            if rows.size:
                keys = np.concatenate([decision_keys(s, numbers[rows], seats[rows], decision[rows]) for s in seeds])
                stacked_obs, stacked_masks = np.tile(obs[rows], (repeats, 1)), np.tile(masks[rows], (repeats, 1))
                legal = masks[rows] > 0
                for i, searcher in enumerate(searchers):
                    root = searcher.search_root(stacked_obs, stacked_masks, keys, policy)
                    goal = policy_target(root, stacked_masks > 0, target)
                    kept["targets"][i].append(goal.reshape(repeats, len(rows), -1).astype(np.float32))
                    if i == 0:  # the first search at the run's own descents plays, as in self-play
                        first = root["action"] if gumbel else np.argmax(root["visits"], axis=1)
                        actions[rows] = first[: len(rows)]
                        kept["prior"].append(root["prior"][: len(rows)].astype(np.float32))
                kept["legal"].append(legal)
                kept["decision"].append(np.argmax(obs[rows, O_DECISION : O_DECISION + N_DECISIONS], axis=1))
            decision[~done] += 1
            _, _, terminated, _, _ = env.step(actions)
            done |= terminated
    return {"prior": np.concatenate(kept["prior"]), "legal": np.concatenate(kept["legal"]),
            "decision": np.concatenate(kept["decision"]),
            "targets": [np.concatenate(t, axis=1) for t in kept["targets"]]}


def measure(run: Path, games: int, repeats: int, sims: list[int] | None, seed: int,
            policy_path: Path | None = None) -> dict[str, Any]:
    """The figures for ``run`` (its ``config.json``; its ``best.npz`` unless ``policy_path``):
    one entry per descents, the run's own first."""
    from bali_env.bots.ppo import ExportedPolicy

    config = json.loads((run / "config.json").read_text())
    path = policy_path or run / "best.npz"
    policy = ExportedPolicy(path)
    if policy.value_weights is None:
        raise ValueError(f"{path} has no value head, which the search needs (add one: bali fit-value)")
    own = int(config["sims"])
    sims = [own] + [s for s in dict.fromkeys(sims or []) if s != own]
    start = time.perf_counter()
    found = play(policy, config, games, repeats, sims, seed)
    seconds = time.perf_counter() - start
    out: dict[str, Any] = {"run": str(run), "policy": str(path), "players": int(config["players"]),
                           "gumbel": int(config["gumbel"]), "leaves": int(config["leaves"]), "c": float(config["c"]),
                           "games": games, "repeats": repeats, "seed": seed, "seconds": round(seconds, 1),
                           "by_sims": []}
    for s, targets in zip(sims, found["targets"], strict=True):
        out["by_sims"].append({"sims": s, **figures(targets, found["prior"], found["legal"]),
                               "by_decision": by_decision(targets, found["prior"], found["legal"], found["decision"])})
    return out


def by_decision(targets: np.ndarray, prior: np.ndarray, legal: np.ndarray, decision: np.ndarray) -> dict[str, Any]:
    """``figures`` per kind of decision (its name in ``DECISION_NAMES``; the kinds met only), with
    ``misses``: how many of its positions have a network first choice other than the mean
    search's (all R searches)."""
    from bali_env.engine import DECISION_NAMES

    net, mean = first_choice(prior, legal), first_choice(targets.mean(axis=0), legal)
    out = {}
    for d in np.unique(decision):
        rows = decision == d
        out[DECISION_NAMES[d]] = {**figures(targets[:, rows], prior[rows], legal[rows]),
                                  "misses": int((net[rows] != mean[rows]).sum())}
    return out


def table(result: dict[str, Any]) -> str:
    """The figures as a Markdown table (the docs quote it), one row per descents: the target's
    entropy, then the docstring's figures in its order (``rest``: the other searches' mean
    target; ``net``: the network)."""
    lines = ["| descents (positions) | entropy | two searches agree | search = rest | net = search | net = rest | "
             "loss: net / rest |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for f in result["by_sims"]:
        lines.append(f"| {f['sims']} ({f['positions']:,}) | {f['target_entropy']:.3f} | "
                     f"{100 * f['searches_agree']:.1f}% | {100 * f['search_vs_rest']:.1f}% | "
                     f"{100 * f['network_vs_search']:.1f}% | {100 * f['network_vs_rest']:.1f}% | "
                     f"{f['network_loss']:.3f} / {f['rest_loss']:.3f} |")
    return "\n".join(lines)


def decisions_table(result: dict[str, Any]) -> str:
    """Where the network parts from the search, at the run's own descents, as a Markdown table
    (the docs quote it): per kind of decision, its share of the positions and of the network's
    misses (a first choice other than the mean search's), and its first-choice figures."""
    own = result["by_sims"][0]
    kinds = own["by_decision"]
    positions, misses = sum(k["positions"] for k in kinds.values()), sum(k["misses"] for k in kinds.values())
    lines = [f"| decision ({own['sims']} descents) | positions | the network's misses | two searches agree | "
             "search = rest | net = rest |", "|---|---:|---:|---:|---:|---:|"]
    for name, k in sorted(kinds.items(), key=lambda item: -item[1]["misses"]):
        lines.append(f"| {name} | {100 * k['positions'] / positions:.1f}% | "
                     f"{100 * k['misses'] / max(misses, 1):.1f}% | "
                     f"{100 * k['searches_agree']:.1f}% | {100 * k['search_vs_rest']:.1f}% | "
                     f"{100 * k['network_vs_rest']:.1f}% |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Play, search, print the table, and write ``--out`` if given."""
    from bali_env import flags
    from bali_env.engine.validate import arg_type, check_int

    parser = flags.Parser(prog="python -m benchmarks.az_targets", description=__doc__.split("\n\n")[0],
                          parents=[flags.out("write the figures there as JSON"),
                                   flags.seed(0, "the deals and the searches' keys"),
                                   flags.games(16, "self-play games whose decisions are searched")])
    parser.add_argument("run", type=Path, help="a bali az run's folder (its config.json and best.npz)")
    parser.add_argument("--policy", type=Path, default=None,
                        help="search with this policy .npz (with a value head) instead of the run's best.npz")
    parser.add_argument("--repeats", type=arg_type(check_int, 2, 64), default=4,
                        help="searches of each decision per descents, with independent keys (default 4)")
    parser.add_argument("--sims", type=arg_type(check_int, 1, 100_000), nargs="*", default=[],
                        help="descents besides the run's own, each measured too (default: the run's only)")
    args = parser.parse_args(argv)
    if not 1 <= args.games <= 4096:
        parser.error(f"--games must lie in [1, 4096], got {args.games}")
    if not 0 <= args.seed < 2**63:
        parser.error(f"--seed must lie in [0, 2**63), got {args.seed}")
    if not (args.run / "config.json").is_file():
        parser.error(f"{args.run} is not a bali az run (no config.json)")
    policy = args.policy or args.run / "best.npz"
    if not policy.is_file():
        parser.error(f"no policy file at {policy}")
    try:
        result = measure(args.run, args.games, args.repeats, args.sims, args.seed, args.policy)
    except ValueError as err:
        parser.error(str(err))
    print(table(result))
    print(decisions_table(result))
    print(f"{result['games']} games, {result['repeats']} searches a decision, {result['seconds']:.0f} s")
    if args.out:
        from benchmarks import write_result

        print(f"wrote {write_result(result, args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
