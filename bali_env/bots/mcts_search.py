"""The search agent's Numba kernels: information-set MCTS over the engine's rules.

- ``ismcts_reset`` / ``ismcts_iterate``: the tree search of ``bali_env.bots.mcts.MCTSAgent``; every
  iteration plays on a state sampled from the observation by the engine's ``determinize``
  (``bali_env.engine.determinization``), so the search never sees more than the observation;
- ``ismcts_choose_batch``: the same search for a batch of positions, in parallel over the cores.

A tree travels as one record, ``MctsTree`` (a typed NamedTuple Numba compiles to a struct).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from bali_env.engine import numba_cache

numba_cache.cover(__file__)  # these kernels call the engine: recompile when it changes

from bali_env.engine import (  # noqa: E402
    MAX_PLAYERS,
    N_ACTIONS,
    PH_GAME_OVER,
    S_NUM_PLAYERS,
    S_PHASE,
    S_TO_MOVE,
    S_WINNERS,
    STATE_SIZE,
    apply_action,
    determinize,
    legal_mask,
    play_out,
    rng_below,
)


class MctsTree(NamedTuple):
    """One search tree, a row per node: ``child`` (int32 [nodes, N_ACTIONS], -1: none yet),
    ``visits`` and ``avail`` (int64 [nodes]: UCB1's visits and availability counts), ``value``
    (float64 [nodes]: the win shares backed up), ``mover`` (int64 [nodes]: the seat whose move
    leads into the node) and ``n_nodes`` (int64 [1]: the nodes in use). ``ismcts_choose_batch``
    takes one per thread, every field with a leading tree axis (``trees``)."""

    child: np.ndarray
    visits: np.ndarray
    avail: np.ndarray
    value: np.ndarray
    mover: np.ndarray
    n_nodes: np.ndarray

    @classmethod
    def allocate(cls, capacity: int) -> MctsTree:
        """An empty tree of ``capacity`` nodes (``ismcts_reset`` makes its root)."""
        return cls(np.full((capacity, N_ACTIONS), -1, dtype=np.int32), np.zeros(capacity, dtype=np.int64),
                   np.zeros(capacity, dtype=np.int64), np.zeros(capacity, dtype=np.float64),
                   np.zeros(capacity, dtype=np.int64), np.zeros(1, dtype=np.int64))

    def stacked(self, count: int) -> MctsTree:
        """``count`` copies of this tree stacked along a leading axis (``ismcts_choose_batch``'s)."""
        return MctsTree(*(np.repeat(a[None], count, axis=0) for a in self))

    def first(self, count: int) -> MctsTree:
        """The first ``count`` trees of stacked ones (views)."""
        return MctsTree(*(a[:count] for a in self))


@njit(cache=True)
def _new_node(tree, seat):
    """Append a node (no children yet) to ``tree``, moved into by ``seat``; return its index."""
    node = tree.n_nodes[0]
    tree.n_nodes[0] = node + 1
    tree.child[node, :] = -1
    tree.visits[node] = 0
    tree.avail[node] = 1
    tree.value[node] = 0.0
    tree.mover[node] = seat
    return node


@njit(cache=True)
def ismcts_reset(tree):
    """Empty the ``MctsTree``: only the root (node 0) remains."""
    tree.n_nodes[0] = 0
    _new_node(tree, -1)


@njit(cache=True)
def win_shares(s, reward):
    """Write each seat's share of the win of the finished game ``s`` into ``reward`` (1/k for
    each of k winners, 0 for the others)."""
    n = s[S_NUM_PLAYERS]
    winners = 0
    for q in range(n):
        winners += (s[S_WINNERS] >> q) & 1
    for q in range(n):
        reward[q] = ((s[S_WINNERS] >> q) & 1) / winners


@njit(cache=True)
def _backup(s, path, depth, reward, tree):
    """Credit every node on the path with its mover's share of the win of the finished game ``s``."""
    win_shares(s, reward)
    for d in range(1, depth + 1):
        nd = path[d]
        tree.visits[nd] += 1
        tree.value[nd] += reward[tree.mover[nd]]


@njit(cache=True)
def _count_unexpanded(mask, child, node, avail):
    """The legal actions of ``node`` without a child yet; each child of a legal action is
    counted available once more (the availability of UCB1 over information sets)."""
    unexpanded = 0
    for act in range(N_ACTIONS):
        if mask[act]:
            ch = child[node, act]
            if ch < 0:
                unexpanded += 1
            else:
                avail[ch] += 1
    return unexpanded


@njit(cache=True)
def _nth_unexpanded(mask, child, node, k):
    """The ``k``-th legal action of ``node`` (by id) that has no child yet."""
    for act in range(N_ACTIONS):
        if mask[act] and child[node, act] < 0:
            if k == 0:
                return act
            k -= 1
    return -1


@njit(cache=True)
def _ucb_choice(mask, tree, node, c_uct):
    """The legal action of ``node`` whose child has the highest UCB1 (availability counts; the
    lowest id among equals)."""
    child, visits, avail, value = tree.child, tree.visits, tree.avail, tree.value
    best = -1
    best_u = -1.0
    for act in range(N_ACTIONS):
        if mask[act]:
            ch = child[node, act]
            u = value[ch] / visits[ch] + c_uct * np.sqrt(np.log(avail[ch]) / visits[ch])
            if u > best_u:
                best_u = u
                best = act
    return best


@njit(cache=True)
def ismcts_iterate(obs, iterations, rng, c_uct, tree):
    """Run ``iterations`` of single-observer information-set MCTS from ``obs`` on the ``MctsTree``.

    Each iteration samples a state consistent with the observation (``determinize``), descends
    the tree over the actions legal in that sample (UCB1 with availability counts, from the
    point of view of the seat to move), adds one node, finishes the game with uniform random
    moves and backs up each seat's share of the win. The observer is seat 0 of every sample."""
    s = np.zeros(STATE_SIZE, dtype=np.int16)
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    path = np.zeros(4096, dtype=np.int64)
    reward = np.zeros(MAX_PLAYERS, dtype=np.float64)
    child, avail, n_nodes = tree.child, tree.avail, tree.n_nodes
    capacity = child.shape[0]
    for _ in range(iterations):
        determinize(obs, rng, s)
        node = 0
        depth = 0
        while s[S_PHASE] != PH_GAME_OVER and depth < 4095:
            legal_mask(s, mask)
            unexpanded = _count_unexpanded(mask, child, node, avail)
            if unexpanded > 0:
                if n_nodes[0] >= capacity:
                    break
                act = _nth_unexpanded(mask, child, node, rng_below(rng, unexpanded))
                new = _new_node(tree, s[S_TO_MOVE])
                child[node, act] = new
                apply_action(s, act)
                depth += 1
                path[depth] = new
                break
            best = _ucb_choice(mask, tree, node, c_uct)
            node = child[node, best]
            apply_action(s, best)
            depth += 1
            path[depth] = node
        play_out(s, rng, mask)
        _backup(s, path, depth, reward, tree)


@njit(cache=True)
def _tree_at(trees, t):
    """Tree ``t`` of stacked ``MctsTree`` fields (views)."""
    return MctsTree(trees.child[t], trees.visits[t], trees.avail[t], trees.value[t], trees.mover[t], trees.n_nodes[t])


@njit(cache=True, parallel=True)
def ismcts_choose_batch(obs, masks, iterations, streams, c_uct, trees, out):
    """Search every row of ``obs`` (``iterations`` each, row i's randomness from ``streams[i:i+1]``
    only) and write its most visited legal action (``masks``; the lowest id among equals) to
    ``out[i]``: what ``ismcts_reset`` + ``ismcts_iterate`` give for that row alone. The rows are
    shared out over the ``trees`` (an ``MctsTree`` of stacked fields, one tree per thread), so a
    row's choice does not depend on the batch or the thread count."""
    count = trees.child.shape[0]
    rows = obs.shape[0]
    for t in prange(count):
        tree = _tree_at(trees, t)
        for i in range(t, rows, count):
            ismcts_reset(tree)
            ismcts_iterate(obs[i], iterations, streams[i : i + 1], c_uct, tree)
            best = -1
            most = -1
            for a in range(N_ACTIONS):
                if masks[i, a]:
                    ch = tree.child[0, a]
                    count_a = tree.visits[ch] if ch >= 0 else 0
                    if count_a > most:
                        most = count_a
                        best = a
            out[i] = best
