"""Self-play with search: the games one generation plays, and the targets each decision leaves.

``play_chunk(job, games)`` plays the games ``games`` (their numbers in the generation) side by
side in one ``BaliVectorEnv``, every seat played by the same network through ``ppo+search``'s
policy-guided search (``PolicySearchAgent.search``: ``sims`` descents over determinized states,
the network's priors and value head at the leaves). The job (``job_for``) is a
``records.SelfPlayJob``: the network's arrays and the ``records.SelfPlaySettings`` named below.
At every decision with a choice it keeps a row (``records.Rows``):

| array | shape | what |
|---|---|---|
| ``input`` | [M, D] float32 | the network input the deciding seat reads (observation and features) |
| ``action_mask`` | [M, A] int8 | the legal actions |
| ``policy`` | [M, A] float32 | the policy target: the root's visit shares, or Gumbel MuZero's improved policy |
| ``value`` | [M, S] float32 | the value target: every seat's final win share, the deciding seat first |
| ``game`` | [M] int64 | the game's number in the generation |
| ``action`` | [M] int64 | the move played (drawn or the most visited) |

The policy target is the search's root visit shares (``target="visits"``) or the improved
policy of Gumbel MuZero (``"improved"``, ``improved_policy``); the value target is each seat's
final win share (1 a win, 1/k a k-way shared win, 0 a loss), the deciding seat first, then the
others in turn order. With a PUCT root (``gumbel=0``) the root's priors are mixed with Dirichlet
noise (``noise``: alpha and weight, AlphaZero's exploration), and the move played is drawn from
the visit shares for the first ``temp_moves`` decisions of a game, then the most visited. With
Gumbel root selection (``gumbel=m``: sequential halving over m actions, ``ppo+search``'s setting)
the Gumbel noise explores and the move played is the one the search chose (Gumbel MuZero's
self-play; ``noise`` and ``temp_moves`` do not apply). Game k is dealt from ``deal_seed(seed, k)`` and every
decision's search and draw come from keys of (seed, game, seat, decision number), so a game plays
out the same whichever chunk, worker or backend plays it, and a chunk's result depends on its
games only. Forced moves are played without searching and leave no target.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bali_env.trainers.alphazero.jobs import NetworkArrays, Rows, SelfPlayJob, SelfPlaySettings

#: the seed the move draws are keyed on is the search's seed XOR this (two independent streams)
DRAW_STREAM = 0x5DEECE66D


def job_for(policy: Any, settings: SelfPlaySettings) -> SelfPlayJob:
    """What a worker needs to play a generation's chunks: the network's arrays (an
    ``ExportedPolicy`` with a value head: actor and value pairs, metadata) and the settings."""
    return SelfPlayJob(NetworkArrays.of(policy), settings)


def improved_policy(root: dict[str, np.ndarray], legal: np.ndarray) -> np.ndarray:
    """Gumbel MuZero's improved policy (Danihelka et al. 2022, eq. 11-12) from a search's root:
    ``softmax(log prior + sigma(completed q))`` over the legal actions, with sigma the search's
    own (``puct_search.completed_sigma``: unvisited actions completed with the mixed value,
    rescaled to [0, 1], scaled by (50 + max visits) * 0.1; taken from ``root["sigma"]`` when the
    search left it there)."""
    from bali_env.bots import network
    from bali_env.bots.puct_search import root_sigma

    prior = np.where(legal, root["prior"], 0.0).astype(np.float64)
    sigma = root.get("sigma")  # a Gumbel root's search has it already
    if sigma is None:
        sigma = np.zeros(prior.shape, dtype=np.float64)
        root_sigma(np.ascontiguousarray(root["visits"], dtype=np.int64),
                   np.ascontiguousarray(root["q"], dtype=np.float64), prior,
                   np.ascontiguousarray(root["value"], dtype=np.float64), np.ascontiguousarray(legal), sigma)
    logits = np.where(legal, network.fixed_log(np.maximum(prior, 1e-30)) + sigma, -np.inf)
    out = network.softmax_weights(logits)
    return out / network.row_sums(out)[:, None]


def policy_target(root: dict[str, np.ndarray], legal: np.ndarray, target: str) -> np.ndarray:
    """The policy target a search's ``root`` leaves: its visit shares (``"visits"``) or Gumbel
    MuZero's improved policy over the ``legal`` actions (``"improved"``, ``improved_policy``)."""
    if target == "improved":
        return improved_policy(root, legal)
    visits = root["visits"].astype(np.float64)
    return visits / visits.sum(axis=1, keepdims=True)


def play_chunk(job: SelfPlayJob, games: list[int]) -> Rows:
    """Play the games ``games`` of the generation ``job`` (``job_for``) and return their targets
    (the module docstring's table), rows in the order the decisions were taken."""
    from threadpoolctl import threadpool_limits

    from bali_env.engine.seeds import decision_keys
    from bali_env.bots.puct import PolicySearchAgent
    from bali_env.engine.seeds import deal_seed
    from bali_env.envs.batched import BaliVectorEnv

    settings = job.settings
    policy = job.network.policy()
    searcher = PolicySearchAgent(seed=0, sims=settings.sims, c=settings.c, leaves=settings.leaves,
                                 gumbel=settings.gumbel)
    n, players, seed = len(games), settings.players, settings.seed
    numbers = np.asarray(games, dtype=np.int64)
    env = BaliVectorEnv(n, num_players=players, seed=0, parallel=False)
    env.reset()
    for i, k in enumerate(games):
        env.reset_game(i, deal_seed(seed, int(k)))
    done = np.zeros(n, dtype=bool)
    decision = np.zeros(n, dtype=np.int64)
    shares = np.zeros((n, players), dtype=np.float32)
    kept: dict[str, list[np.ndarray]] = {"input": [], "action_mask": [], "policy": [], "seat": [], "slot": [],
                                         "action": []}
    with threadpool_limits(1):  # NumPy's BLAS on one thread beside the search kernels (agents.threads)
        while not done.all():
            obs, masks, seats = env.obs, env.action_masks, env.to_move
            actions = np.where(done, -1, np.argmax(masks, axis=1)).astype(np.int64)  # forced moves as they are
            rows = np.flatnonzero(~done & (masks.sum(axis=1) > 1))
            if rows.size:
                keys = decision_keys(seed, numbers[rows], seats[rows], decision[rows])
                root = searcher.search_root(obs[rows], masks[rows], keys, policy, noise=settings.noise)
                visits = root["visits"].astype(np.float64)
                shares_of_visits = visits / visits.sum(axis=1, keepdims=True)
                goal = policy_target(root, masks[rows] > 0, settings.target)
                if searcher.gumbel:  # the search's choice
                    actions[rows] = root["action"]
                else:  # drawn from the visit shares for the first temp_moves decisions, then the most visited
                    draws = decision_keys(seed ^ DRAW_STREAM, numbers[rows], seats[rows], decision[rows])
                    u = (draws >> np.uint64(11)).astype(np.float64) / 2.0**53
                    drawn = np.minimum((np.cumsum(shares_of_visits, axis=1) <= u[:, None]).sum(axis=1),
                                       masks.shape[1] - 1)
                    drawn = np.where(masks[rows, drawn] > 0, drawn, np.argmax(visits, axis=1))  # u at the very top
                    actions[rows] = np.where(decision[rows] < settings.temp_moves, drawn, np.argmax(visits, axis=1))
                kept["input"].append(policy.input(obs[rows], masks[rows], checked=True))
                kept["action_mask"].append(masks[rows].copy())
                kept["policy"].append(goal.astype(np.float32))
                kept["seat"].append(seats[rows].copy())
                kept["slot"].append(rows)
                kept["action"].append(actions[rows].copy())
            decision[~done] += 1
            _, _, terminated, _, info = env.step(actions)
            for i in np.flatnonzero(terminated & ~done):
                won = info["winners"][i].astype(np.float32)
                shares[i] = won / won.sum()
                done[i] = True
    return targets(kept, shares, numbers, players, policy.info.obs_dim)


def targets(kept: dict[str, list[np.ndarray]], shares: np.ndarray, numbers: np.ndarray, players: int,
            width: int) -> Rows:
    """The rows of a chunk: the kept decisions (lists of arrays per name: ``input``,
    ``action_mask``, ``policy``, ``seat``, ``slot``, ``action``) with their value targets, each
    seat's final share rotated so the deciding seat comes first (``np.roll(shares, -seat)``);
    ``width``: the input size."""
    if not kept["slot"]:
        return Rows.empty(width, players)
    slot = np.concatenate(kept["slot"])
    seat = np.concatenate(kept["seat"]).astype(np.int64)
    cols = (np.arange(players)[None, :] + seat[:, None]) % players  # the deciding seat, then turn order
    return Rows(input=np.concatenate(kept["input"]).astype(np.float32),
                action_mask=np.concatenate(kept["action_mask"]).astype(np.int8),
                policy=np.concatenate(kept["policy"]),
                value=shares[slot[:, None], cols].astype(np.float32),
                game=numbers[slot], action=np.concatenate(kept["action"]).astype(np.int64))


def merge(parts: list[Rows]) -> Rows:
    """Chunks' rows together, in the order given (chunk order: the generation's game order)."""
    return Rows.concat(parts)


__all__ = ["DRAW_STREAM", "improved_policy", "job_for", "merge", "play_chunk", "policy_target", "targets"]
