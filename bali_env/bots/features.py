"""Policy features: the greedy heuristic's estimates as extra inputs of a trained policy.

A plain MLP over the observation has to rediscover products such as "the card this column reveals
times my lead in that card type", which the greedy heuristic (``bali_env.bots.greedy``) already computes
from the same observation. The feature set ``greedy-v1`` appends to the observation, per row:

| index (after the observation) | meaning | scale |
|---|---|---|
| 0-43 | heuristic score of each action less the best legal one's (0: its choice; illegal: -3) | 5 points, clip -3 |
| 44-87 | 1 where the action is among the heuristic's best (ties included) | 1 |
| 88 | turns still to be played by everybody | 40 |
| 89 | of which mine | 20 |
| 90-96 | share of each card id among the cards still to come | 1 |
| 97-103 | value to me of one scoring reward of each card id | 1 point |
| 104-110 | the same for the others | 1 point |
| 111-114 | expected final value of each offering category | 1 |
| 115-118 | value of each offering category if the game ended now | 1 |
| 119-134 | offering cards now, relative seat x category (others: middle of their bounds) | 10 |
| 135-150 | offering cards expected at the end, relative seat x category | 10 |
| 151 | my lead over the best other if the game ended now | 10 points |

Every number comes from the heuristic's kernels (``bali_env.bots.greedy``: ``greedy_scores``, which fills
the context and scores the decision, and ``end_now_value``) with the default weights, so the rules
stay in the engine and the features see only the observation. A game that is over gives zeros. The trainer
(``bali_env.versus.sb3_vecenv``) feeds ``policy_input`` to the network and the exported policy
(``bali_env.bots.ppo``) records the feature set, so the NumPy forward pass computes the same input.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from bali_env.engine import (
    D_GAME_OVER,
    MAX_PLAYERS,
    N_ACTIONS,
    N_CARD_TYPES,
    N_CATEGORIES,
    OBS_DIM,
    column_permutation,
    numba_cache,
)

from bali_env.bots.base import check_observations
from bali_env.bots.greedy.agent import GreedyAgent
from bali_env.bots.greedy.decide import greedy_scores
from bali_env.bots.greedy.scorers import end_now_value
from bali_env.bots.greedy.slots import (
    C_HELD,
    C_MY_TURNS,
    C_NOW_VALUES,
    C_OFFERS,
    C_RIVAL_UNITS,
    C_SHARE,
    C_SIZE,
    C_TURNS_LEFT,
    C_UNITS,
    C_VALUES,
    KERNEL_FILES,
    PARAM_NAMES,
    TIE_EPS,
    V_SIZE,
)

numba_cache.cover(__file__, *KERNEL_FILES)  # the heuristic's kernels are compiled into write_greedy_features

FEATURE_SETS = ("greedy-v1",)  #: the known feature sets (the name an exported policy records)
F_SCORES = 0  #: [action] heuristic score minus the best legal one, / 5, clipped at -3
F_BEST = F_SCORES + N_ACTIONS  #: [action] 1 for the heuristic's best actions
F_TURNS = F_BEST + N_ACTIONS
F_MY_TURNS = F_TURNS + 1
F_SHARE = F_MY_TURNS + 1  #: [card id]
F_UNITS = F_SHARE + N_CARD_TYPES  #: [card id]
F_RIVAL_UNITS = F_UNITS + N_CARD_TYPES  #: [card id]
F_VALUES = F_RIVAL_UNITS + N_CARD_TYPES  #: [category]
F_NOW_VALUES = F_VALUES + N_CATEGORIES  #: [category]
F_HELD = F_NOW_VALUES + N_CATEGORIES  #: [relative seat, category]
F_OFFERS = F_HELD + MAX_PLAYERS * N_CATEGORIES  #: [relative seat, category]
F_LEAD = F_OFFERS + MAX_PLAYERS * N_CATEGORIES
N_FEATURES = F_LEAD + 1  #: 152
WORST = -3.0  #: the score feature of an illegal action (and the clip of a legal one)


def feature_count(features: str | None) -> int:
    """How many inputs ``features`` adds to the observation (0 for ``None``); ValueError for an
    unknown feature set."""
    if features is None:
        return 0
    if features not in FEATURE_SETS:
        raise ValueError(f"unknown policy feature set {features!r}; known: {', '.join(FEATURE_SETS)}")
    return N_FEATURES


def features_for_input(input_dim: int) -> str | None:
    """The feature set of a network that takes ``input_dim`` inputs (``None``: the observation
    alone); ValueError for a size that fits none."""
    if input_dim == OBS_DIM:
        return None
    for name in FEATURE_SETS:
        if input_dim == OBS_DIM + feature_count(name):
            return name
    known = ", ".join(f"{n}: {OBS_DIM + feature_count(n)}" for n in FEATURE_SETS)
    raise ValueError(f"a network input of {input_dim} is neither the observation ({OBS_DIM}) nor the observation "
                     f"with a known feature set ({known})")


def default_params() -> np.ndarray:
    """The heuristic's default weights in ``PARAM_NAMES`` order (``GreedyAgent()``'s)."""
    return GreedyAgent(seed=0).params()


@njit(cache=True)
def write_greedy_features(obs, masks, params, out):
    """The ``greedy-v1`` features of every row: ``obs`` float32[N, OBS_DIM], ``masks``
    int8[N, N_ACTIONS], ``params`` float64[N_PARAMS], ``out`` float32[N, N_FEATURES] (written)."""
    v = np.zeros(V_SIZE, np.int64)
    x = np.zeros(C_SIZE, np.float64)
    scores = np.zeros(N_ACTIONS, np.float64)
    for i in range(obs.shape[0]):
        out[i, :] = 0.0
        if greedy_scores(obs[i], masks[i], params, v, x, scores) == D_GAME_OVER:
            continue
        best = -np.inf
        for a in range(N_ACTIONS):
            if masks[i, a] and scores[a] > best:
                best = scores[a]
        for a in range(N_ACTIONS):
            if masks[i, a] and np.isfinite(scores[a]):
                out[i, F_SCORES + a] = max(WORST, (scores[a] - best) / 5.0)
                out[i, F_BEST + a] = 1.0 if scores[a] >= best - TIE_EPS else 0.0
            else:
                out[i, F_SCORES + a] = WORST
        out[i, F_TURNS] = x[C_TURNS_LEFT] / 40.0
        out[i, F_MY_TURNS] = x[C_MY_TURNS] / 20.0
        for k in range(N_CARD_TYPES):
            out[i, F_SHARE + k] = x[C_SHARE + k]
            out[i, F_UNITS + k] = x[C_UNITS + k]
            out[i, F_RIVAL_UNITS + k] = x[C_RIVAL_UNITS + k]
        for c in range(N_CATEGORIES):
            out[i, F_VALUES + c] = x[C_VALUES + c]
            out[i, F_NOW_VALUES + c] = x[C_NOW_VALUES + c]
        for j in range(MAX_PLAYERS * N_CATEGORIES):
            out[i, F_HELD + j] = x[C_HELD + j] / 10.0
            out[i, F_OFFERS + j] = x[C_OFFERS + j] / 10.0
        lead = end_now_value(v, x)
        out[i, F_LEAD] = (lead - 10.0 if lead > 0 else lead + 10.0) / 10.0


_PARAMS: np.ndarray | None = None


def policy_input(observations: np.ndarray, action_masks: np.ndarray, features: str | None,
                 checked: bool = False) -> np.ndarray:
    """The network input of a batch: the observations (float32 [N, OBS_DIM]), followed by the
    ``features`` of each row (``None``: the observations alone). ``action_masks``: [N, N_ACTIONS].
    With features, both are checked first (``bali_env.bots.base.check_observations``: ValueError or
    TypeError naming what is wrong) unless ``checked`` says the caller did (the env's own buffers,
    an agent that checked them already)."""
    global _PARAMS
    obs = np.ascontiguousarray(observations, dtype=np.float32)
    if feature_count(features) == 0:
        return obs
    if obs.ndim != 2 or obs.shape[1] != OBS_DIM:
        raise ValueError(f"observations must be [N, {OBS_DIM}], got {obs.shape}")
    if np.shape(action_masks) != (obs.shape[0], N_ACTIONS):
        raise ValueError(f"action_masks must be [{obs.shape[0]}, {N_ACTIONS}], got {np.shape(action_masks)}")
    if checked:
        masks = np.asarray(action_masks)
        masks = np.ascontiguousarray(masks.view(np.int8) if masks.dtype == np.bool_ else masks.astype(np.int8))
    else:  # nothing out of range reaches the kernel
        obs, masks = check_observations(obs, action_masks, need_legal=False)
        obs, masks = np.ascontiguousarray(obs), np.ascontiguousarray(masks)
    if _PARAMS is None:
        _PARAMS = default_params()
    out = np.empty((obs.shape[0], OBS_DIM + N_FEATURES), dtype=np.float32)
    out[:, :OBS_DIM] = obs
    write_greedy_features(obs, masks, _PARAMS, out[:, OBS_DIM:])  # written in place
    return out


def input_permutation(order: Sequence[int], features: str | None) -> tuple[np.ndarray, np.ndarray]:
    """The market's column symmetry (``bali_env.engine.symmetry``) on a policy's input: the index
    maps ``(input_index, action_index)`` of the game whose column ``order[c]`` holds what column
    ``c`` holds, so that its network input is ``x[..., input_index]`` and its legal actions or
    policy target ``p[..., action_index]``. The ``greedy-v1`` features are the heuristic's, which
    scores every column by the same rule: its per-action scores move with the refill actions and
    the rest stays (tested against the features of the permuted observation)."""
    obs_index, action_index = column_permutation(order)
    if feature_count(features) == 0:
        return obs_index, action_index
    rest = np.arange(OBS_DIM, OBS_DIM + N_FEATURES)
    for block in (F_SCORES, F_BEST):
        rest[block:block + N_ACTIONS] = OBS_DIM + block + action_index
    return np.concatenate([obs_index, rest]), action_index


def compile_feature_kernels() -> None:
    """Compile (or load from the cache) ``write_greedy_features`` for the types ``policy_input``
    passes, without computing anything."""
    from numba import typeof

    args = (np.zeros((1, OBS_DIM), np.float32), np.zeros((1, N_ACTIONS), np.int8),
            np.zeros(len(PARAM_NAMES)), np.zeros((1, OBS_DIM + N_FEATURES), np.float32)[:, OBS_DIM:])
    write_greedy_features.compile(tuple(typeof(a) for a in args))
