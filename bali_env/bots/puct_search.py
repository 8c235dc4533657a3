"""The policy-guided search's Numba kernels: information-set PUCT over the engine's rules.

A batch of trees (one per position searched) grows in lockstep, ``leaves`` descents per tree per
round, so that the network evaluates every round's leaves of every tree in one NumPy batch:

- ``puct_reset``: empty the trees (the root, not yet evaluated, remains);
- ``puct_descend``: per tree, ``leaves`` times: sample a full state consistent with the root
  observation (the engine's ``determinize``: the search never sees more than the observation),
  walk down the tree choosing by PUCT (the child's mean value for the seat to move, plus ``c``
  times the policy's prior for that action, renormalised over the actions legal in this sample,
  times sqrt(parent visits) / (1 + child visits)), add at most one node, and stop at the first
  node that has not been evaluated (its seat-to-move observation and legal actions are written
  for the network) or at the end of the game (the true win shares are backed up at once). Visits
  are counted on the way down, so the descents of one round spread out (a virtual loss);
- ``puct_expand``: store the network's prior logits and value at each evaluated leaf and back the
  values up the path: each node on it gains the expected win share of the seat that moved into
  it (the value head's share for that seat; a one-output head gives the seat to move its value
  and each other seat an equal part of the rest, ``ExportedPolicy.seat_values``).
- Gumbel root selection (``root_score`` and ``halving`` given; Danihelka et al. 2022, as in
  mctx's ``gumbel_muzero_policy``): at the root a descent takes, among the actions whose visits
  equal the sequential-halving schedule's count for this descent (``halving``), the one with the
  highest Gumbel noise plus log prior (``root_score``) plus ``completed_sigma``; below the root
  it is PUCT as above. ``halving_schedule`` makes the schedule, ``root_sigma`` the sigma of
  finished roots (the improved policy and the final choice).

Every tree reads only its own random stream, so a tree's search does not depend on the batch or
the thread count. The kernels' arrays travel in three records (typed NamedTuples that Numba compiles
to structs): ``PuctTrees`` (the trees), ``Descents`` (a round's descents and their leaves) and
``GumbelRoot`` (Gumbel root selection's inputs).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from bali_env.engine import numba_cache

numba_cache.cover(__file__, str(Path(__file__).with_name("mcts_search.py")))  # they call the engine and win_shares

from bali_env.engine import (  # noqa: E402
    absolute_seat,
    MAX_PLAYERS,
    N_ACTIONS,
    OBS_DIM,
    PH_GAME_OVER,
    S_NUM_PLAYERS,
    S_PHASE,
    S_TO_MOVE,
    STATE_DTYPE,
    STATE_SIZE,
    apply_action,
    determinize,
    legal_mask,
    observe,
)

from bali_env.bots.mcts_search import win_shares  # noqa: E402

#: Gumbel MuZero's scale of the completed Q-values: sigma = (C_VISIT + max visits) * C_SCALE * q
C_VISIT, C_SCALE = 50.0, 0.1


class PuctTrees(NamedTuple):
    """A batch of search trees, a row per tree then per node: ``child`` (int32 [trees, nodes,
    N_ACTIONS], -1: none yet), ``visits`` (int64), ``value`` (float64: the win shares backed up),
    ``mover`` (int64: the seat whose move leads into the node), ``logits`` (float32 [trees, nodes,
    N_ACTIONS]: the network's softmax weights at an evaluated node), ``prior_v`` (float64: the
    node's own value), ``expanded`` (int8: evaluated) and ``n_nodes`` (int64 [trees]: the nodes in
    use). Inside the kernels one tree is the same record without the tree axis (``n_nodes`` of
    length 1)."""

    child: np.ndarray
    visits: np.ndarray
    value: np.ndarray
    mover: np.ndarray
    logits: np.ndarray
    prior_v: np.ndarray
    expanded: np.ndarray
    n_nodes: np.ndarray

    @classmethod
    def allocate(cls, trees: int, capacity: int) -> PuctTrees:
        """``trees`` trees of ``capacity`` nodes each (``puct_reset`` empties them)."""
        shape = (trees, capacity)
        return cls(np.empty((*shape, N_ACTIONS), dtype=np.int32), np.zeros(shape, dtype=np.int64),
                   np.zeros(shape, dtype=np.float64), np.zeros(shape, dtype=np.int64),
                   np.zeros((*shape, N_ACTIONS), dtype=np.float32), np.zeros(shape, dtype=np.float64),
                   np.zeros(shape, dtype=np.int8), np.zeros(trees, dtype=np.int64))


class Descents(NamedTuple):
    """A round's descents, a row each (rows ``t*L .. t*L+L-1`` belong to tree t): the sampled
    state played down the tree ``states`` ([rows, STATE_SIZE]), the nodes on its ``paths`` (int64
    [rows, depth limit + 1]), ``depths`` (int64 [rows]: the leaf's depth, or -1 - depth when the game
    ended on the way), and the leaf's observation and legal actions for the network ``leaf_obs``
    (float32 [rows, OBS_DIM]) and ``leaf_masks`` (int8 [rows, N_ACTIONS])."""

    states: np.ndarray
    paths: np.ndarray
    depths: np.ndarray
    leaf_obs: np.ndarray
    leaf_masks: np.ndarray

    @classmethod
    def allocate(cls, rows: int, max_depth: int) -> Descents:
        """Room for ``rows`` descents of paths up to ``max_depth`` entries."""
        return cls(np.zeros((rows, STATE_SIZE), dtype=STATE_DTYPE), np.zeros((rows, max_depth), dtype=np.int64),
                   np.zeros(rows, dtype=np.int64), np.zeros((rows, OBS_DIM), dtype=np.float32),
                   np.zeros((rows, N_ACTIONS), dtype=np.int8))

    def first(self, rows: int) -> Descents:
        """The first ``rows`` descents (views)."""
        return Descents(*(a[:rows] for a in self))


class GumbelRoot(NamedTuple):
    """Gumbel root selection's inputs, a row per tree: ``score`` (float64 [trees, N_ACTIONS]:
    Gumbel noise plus log prior, -inf off the considered actions) and ``halving`` (int64 [trees,
    descents]: ``halving_schedule``). With zero columns (``GumbelRoot.off``) the root is PUCT like
    every node."""

    score: np.ndarray
    halving: np.ndarray

    @classmethod
    def off(cls, trees: int) -> GumbelRoot:
        """No Gumbel root selection for ``trees`` trees."""
        return cls(np.zeros((trees, 0), dtype=np.float64), np.zeros((trees, 0), dtype=np.int64))


@njit(cache=True)
def puct_reset(trees):
    """Empty every tree of the ``PuctTrees``: only its root (node 0, not evaluated) remains."""
    for t in range(trees.child.shape[0]):
        trees.n_nodes[t] = 1
        trees.child[t, 0, :] = -1
        trees.visits[t, 0] = 0
        trees.value[t, 0] = 0.0
        trees.prior_v[t, 0] = 0.5
        trees.expanded[t, 0] = 0


@njit(cache=True)
def _select(tree, mask, node, c):
    """The PUCT choice at ``node`` of ``tree`` over the actions of ``mask`` (the lowest id among
    equals): the prior is the node's softmax weight of the action over the legal ones' total; an
    unvisited child counts the node's own evaluated value (first-play urgency)."""
    weights, child, visits, value, prior_v = tree.logits, tree.child, tree.visits, tree.value, tree.prior_v
    total = 0.0
    for a in range(N_ACTIONS):
        if mask[a]:
            total += weights[node, a]
    scale = c * np.sqrt(max(visits[node], 1)) / total
    best = -1
    best_u = -np.inf
    for a in range(N_ACTIONS):
        if mask[a]:
            ch = child[node, a]
            n = visits[ch] if ch >= 0 else 0
            q = value[ch] / n if n > 0 else prior_v[node]
            u = q + scale * weights[node, a] / (1.0 + n)
            if u > best_u:
                best_u = u
                best = a
    return best


@njit(cache=True)
def completed_sigma(n, q, prior, v_root, legal, out):
    """Gumbel MuZero's sigma of the completed Q-values of one root (mctx's
    ``qtransform_completed_by_mix_value``): an unvisited legal action's q is the mixed value
    ``(v_root + total visits * sum(prior q) / sum(prior))`` (sums over the visited actions) ``/ (1
    + total visits)``; the completed values are rescaled to [0, 1] over the legal actions, and
    ``out = (C_VISIT + max visits) * C_SCALE * q`` (0 where illegal). ``n``: visits per action,
    ``q``: mean win share where visited, ``prior``: the network's probabilities."""
    total = 0.0
    top = 0.0
    seen = 0.0
    weighted = 0.0
    for a in range(n.shape[0]):
        if legal[a]:
            total += n[a]
            top = max(top, n[a])
            if n[a] > 0:
                seen += prior[a]
                weighted += prior[a] * q[a]
    mixed = (v_root + total * weighted / seen) / (1.0 + total) if seen > 0 else v_root
    lo = np.inf
    hi = -np.inf
    for a in range(n.shape[0]):
        out[a] = (q[a] if n[a] > 0 else mixed) if legal[a] else 0.0
        if legal[a]:
            lo = min(lo, out[a])
            hi = max(hi, out[a])
    scale = (C_VISIT + top) * C_SCALE / max(hi - lo, 1e-8)
    for a in range(n.shape[0]):
        out[a] = (out[a] - lo) * scale if legal[a] else 0.0


@njit(cache=True)
def root_sigma(visits, q, prior, v_root, legal, out):
    """``completed_sigma`` of every row (searched roots: visits, q with NaN where unvisited,
    priors, network values [N], legal masks) into ``out``."""
    for t in range(visits.shape[0]):
        completed_sigma(visits[t].astype(np.float64), q[t], prior[t], v_root[t], legal[t], out[t])


def halving_schedule(considered: int, descents: int) -> np.ndarray:
    """Sequential halving's visit count for each root descent (mctx's
    ``get_sequence_of_considered_visits``): ``considered`` actions share the budget in
    ceil(log2(considered)) phases, the better half going on after each."""
    if considered <= 1:
        return np.arange(descents, dtype=np.int64)
    phases = int(np.ceil(np.log2(considered)))
    out: list[int] = []
    counts = [0] * considered
    alive = considered
    while len(out) < descents:
        for _ in range(max(1, int(descents / (phases * alive)))):
            out.extend(counts[:alive])
            for i in range(alive):
                counts[i] += 1
        alive = max(2, alive // 2)
    return np.array(out[:descents], dtype=np.int64)


@njit(cache=True)
def _halving_choice(gumbel, mask, tree, scratch):
    """The Gumbel root choice at the root of ``tree`` (see the module docstring; ``gumbel`` the
    tree's row of the ``GumbelRoot``), or -1 when the schedule is spent or no action has its visit
    count (PUCT decides then)."""
    score, halving = gumbel.score, gumbel.halving
    child, visits, value, weights, v_root = tree.child, tree.visits, tree.value, tree.logits, tree.prior_v[0]
    i = visits[0] - 2  # this descent's number: visits[0] counts it and the root's own evaluation
    if i < 0 or i >= halving.shape[0]:
        return -1
    n, q, p, sig = scratch[0], scratch[1], scratch[2], scratch[3]
    total = 0.0
    for a in range(N_ACTIONS):
        if mask[a]:
            total += weights[0, a]
    for a in range(N_ACTIONS):
        ch = child[0, a]
        n[a] = visits[ch] if ch >= 0 else 0
        q[a] = value[ch] / n[a] if n[a] > 0 else 0.0
        p[a] = weights[0, a] / total if mask[a] else 0.0
    completed_sigma(n, q, p, v_root, mask, sig)
    best = -1
    best_u = -np.inf
    for a in range(N_ACTIONS):
        if mask[a] and score[a] > -np.inf and n[a] == halving[i]:
            u = score[a] + sig[a]
            if u > best_u:
                best_u = u
                best = a
    return best


@njit(cache=True)
def _tree_at(trees, t):
    """Tree ``t`` of the ``PuctTrees`` (views; ``n_nodes`` of length 1)."""
    return PuctTrees(trees.child[t], trees.visits[t], trees.value[t], trees.mover[t], trees.logits[t],
                     trees.prior_v[t], trees.expanded[t], trees.n_nodes[t : t + 1])


@njit(cache=True)
def _descend_one(root, rng, c, tree, leaf, gumbel, work):
    """One descent of one ``tree`` (see ``puct_descend``) into the row ``leaf`` of the ``Descents``
    (``gumbel``: the tree's row of the ``GumbelRoot``; ``work``: the thread's scratch arrays
    ``(mask, reward, scratch)``); returns the path depth, or -1 - depth when the sample's game
    ended on the way (its win shares already backed up)."""
    child, visits, value, mover = tree.child, tree.visits, tree.value, tree.mover
    prior_v, expanded, n_nodes = tree.prior_v, tree.expanded, tree.n_nodes
    s, path, leaf_obs, leaf_mask = leaf.states, leaf.paths, leaf.leaf_obs, leaf.leaf_masks
    mask, reward, scratch = work
    determinize(root, rng, s)
    node = 0
    depth = 0
    path[0] = 0
    visits[0] += 1
    limit = path.shape[0] - 1
    while True:
        if s[S_PHASE] == PH_GAME_OVER:
            win_shares(s, reward)
            for d in range(1, depth + 1):
                value[path[d]] += reward[mover[path[d]]]
            return -1 - depth
        if not expanded[node] or depth == limit:
            observe(s, s[S_TO_MOVE], leaf_obs, leaf_mask)
            return depth
        legal_mask(s, mask)
        seat = s[S_TO_MOVE]
        a = -1
        if node == 0 and gumbel.score.shape[0] > 0:
            a = _halving_choice(gumbel, mask, tree, scratch)
        if a < 0:
            a = _select(tree, mask, node, c)
        ch = child[node, a]
        if ch < 0:
            ch = n_nodes[0]
            n_nodes[0] = ch + 1
            child[ch, :] = -1
            visits[ch] = 0
            value[ch] = 0.0
            prior_v[ch] = 0.5
            expanded[ch] = 0
            mover[ch] = seat
            child[node, a] = ch
        apply_action(s, a)
        node = ch
        depth += 1
        path[depth] = node
        visits[node] += 1


@njit(cache=True, parallel=True)
def puct_descend(roots, streams, c, trees, descents, gumbel):
    """``L = len(descents.states) // len(roots)`` descents of every tree of the ``PuctTrees``
    (rows ``t*L .. t*L+L-1`` of the ``Descents`` belong to tree t), the trees in parallel.
    ``descents.depths[r]`` is the depth of the leaf to evaluate (its observation and mask in
    ``leaf_obs[r]``, ``leaf_masks[r]``), or -1 - depth when the descent reached the end of the game
    (nothing to evaluate). A ``GumbelRoot`` with columns turns on Gumbel root selection; with
    zero columns (``GumbelRoot.off``) the root is PUCT like every node."""
    count = roots.shape[0]
    per = descents.states.shape[0] // count
    depths = descents.depths  # a local: a prange loop's store into a record's field is lost (Numba issue 7135)
    for t in prange(count):
        work = (np.zeros(N_ACTIONS, dtype=np.int8), np.zeros(MAX_PLAYERS, dtype=np.float64),
                np.zeros((4, N_ACTIONS), dtype=np.float64))
        tree = _tree_at(trees, t)
        root_gumbel = GumbelRoot(gumbel.score[t], gumbel.halving[t])
        for k in range(per):
            r = t * per + k
            leaf = Descents(descents.states[r], descents.paths[r], descents.depths[r : r + 1], descents.leaf_obs[r],
                            descents.leaf_masks[r])
            depths[r] = _descend_one(roots[t], streams[t : t + 1], c, tree, leaf, root_gumbel, work)


@njit(cache=True)
def puct_expand(rows, net_weights, net_values, descents, trees):
    """Store the network's answer for the evaluated leaves ``rows`` of the ``Descents``
    (``net_weights[k]``, ``net_values[k]``: row ``rows[k]``; the logits' softmax weights,
    ``network.softmax_weights`` (computed outside: NumPy's and the C library's ``exp`` differ by
    CPU), in the ``PuctTrees``' ``logits``; the values as every seat's win share, the seat to move
    first, then the others in turn order) and back each seat's share up its path."""
    states, paths, depths = descents.states, descents.paths, descents.depths
    logits, prior_v, expanded, value, mover = trees.logits, trees.prior_v, trees.expanded, trees.value, trees.mover
    count = logits.shape[0]
    per = states.shape[0] // count
    reward = np.zeros(MAX_PLAYERS, dtype=np.float64)
    for k in range(rows.shape[0]):
        r = rows[k]
        t = r // per
        depth = depths[r]
        node = paths[r, depth]
        v = net_values[k, 0]
        for a in range(N_ACTIONS):  # softmax weights up to a factor; the legal ones are normalised on use
            logits[t, node, a] = max(net_weights[k, a], 1e-30)
        prior_v[t, node] = v
        expanded[t, node] = 1
        s = states[r]
        n = s[S_NUM_PLAYERS]
        seat = s[S_TO_MOVE]
        for j in range(n):
            reward[absolute_seat(seat, j, n)] = net_values[k, j]
        for d in range(1, depth + 1):
            value[t, paths[r, d]] += reward[mover[t, paths[r, d]]]


@njit(cache=True)
def root_visits(trees, masks, out):
    """The visits of each tree's root children (``PuctTrees``) over the legal actions ``masks`` (0 elsewhere)."""
    child, visits = trees.child, trees.visits
    for t in range(out.shape[0]):
        for a in range(N_ACTIONS):
            ch = child[t, 0, a]
            out[t, a] = visits[t, ch] if masks[t, a] and ch >= 0 else 0
