"""The game's symmetry: the market's columns are exchangeable (docs/rules.md sections 2-3).

Nothing in the base rules tells one market column from another: each is dealt four cards, the
active player may take from any of them, and a column that empties is dealt again in its place.
So the game with its columns in another order is the same game (``move_columns`` moves a state's
columns), and what a player sees, the actions legal there and a search's policy target can be read
in any of the 24 orders. The Demon variant keeps only the four rotations: its demon moves one
column to the right, from column 3 back to 0 (``column_orders``).

``column_permutation(order)`` gives the index maps: for the game whose column ``order[c]`` holds
what column ``c`` holds, ``obs[obs_index]`` is its observation and ``mask[action_index]`` its
legal actions (the refill actions move with their columns, every other slot stays). Training can
read its rows in random orders, as AlphaGo Zero read Go's eight symmetries
(``bali_env.bots.features.input_permutation`` extends the maps to a policy's input;
``python -m benchmarks.az_fit --permute-columns`` measures what that does to a fit).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from bali_env.engine.ids import A_REFILL, COLUMN_SIZE, N_ACTIONS, N_CARD_TYPES, N_COLUMNS
from bali_env.engine.obs_spec import O_DEMON, O_LAST_COL, O_MARKET, OBS_DIM
from bali_env.engine.state import S_COL_LEN, S_COL_POS, S_DEMON, S_DEMON_COL, S_LAST_COL, S_MARKET, STATE_SIZE

COLUMN_ORDERS: tuple[tuple[int, ...], ...] = tuple(itertools.permutations(range(N_COLUMNS)))  #: all 24 orders
COLUMN_ROTATIONS: tuple[tuple[int, ...], ...] = tuple(tuple((c + r) % N_COLUMNS for c in range(N_COLUMNS))
                                                      for r in range(N_COLUMNS))  #: the Demon variant's 4


def column_orders(demon: bool) -> tuple[tuple[int, ...], ...]:
    """The orders of the columns that give the same game: all 24 in the base game, the four
    rotations with the Demon variant (its demon moves right)."""
    return COLUMN_ROTATIONS if demon else COLUMN_ORDERS
_COLUMN_WIDTH = COLUMN_SIZE * N_CARD_TYPES  # a market column's slots in the observation


def check_column_order(order: Sequence[int]) -> tuple[int, ...]:
    """``order`` as a tuple, or a ValueError naming it unless it is an order of the columns 0-3."""
    try:
        out = tuple(int(c) for c in order)
    except (TypeError, ValueError):
        raise TypeError(f"order must be a sequence of the columns 0-{N_COLUMNS - 1}, got {order!r}") from None
    if sorted(out) != list(range(N_COLUMNS)) or any(c != o for c, o in zip(out, order, strict=True)):
        raise ValueError(f"order must list the columns 0-{N_COLUMNS - 1} once each, got {order!r}")
    return out


def column_permutation(order: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """The index maps of the game with column ``order[c]`` holding what column ``c`` holds:
    ``(obs_index int64[OBS_DIM], action_index int64[N_ACTIONS])``, so that that game's
    observation is ``obs[..., obs_index]`` and its action mask (or policy) ``mask[..., action_index]``."""
    order = check_column_order(order)
    obs_index, action_index = np.arange(OBS_DIM), np.arange(N_ACTIONS)
    for old, new in enumerate(order):
        obs_index[O_MARKET + new * _COLUMN_WIDTH:O_MARKET + (new + 1) * _COLUMN_WIDTH] = \
            np.arange(O_MARKET + old * _COLUMN_WIDTH, O_MARKET + (old + 1) * _COLUMN_WIDTH)
        obs_index[O_DEMON + new] = O_DEMON + old
        obs_index[O_LAST_COL + new] = O_LAST_COL + old
        action_index[A_REFILL + new] = A_REFILL + old
    return obs_index, action_index


def move_columns(state: np.ndarray, order: Sequence[int]) -> np.ndarray:
    """A copy of a game's state (``STATE_SIZE`` ints) with column ``order[c]`` holding what
    column ``c`` holds (cards, takeable slot, length), the demon and this turn's last take moved
    with them; ValueError for an order the game's variant does not keep (``column_orders``)."""
    order = check_column_order(order)
    state = np.asarray(state)
    if state.shape != (STATE_SIZE,):
        raise ValueError(f"state must be one game's state of {STATE_SIZE} values, got shape {state.shape}")
    if order not in column_orders(bool(state[S_DEMON])):
        raise ValueError(f"order {order} is not a rotation of the columns: with the Demon variant only "
                         "those keep the game")
    out = state.copy()
    for old, new in enumerate(order):
        out[S_MARKET + COLUMN_SIZE * new:S_MARKET + COLUMN_SIZE * (new + 1)] = \
            state[S_MARKET + COLUMN_SIZE * old:S_MARKET + COLUMN_SIZE * (old + 1)]
        out[S_COL_POS + new] = state[S_COL_POS + old]
        out[S_COL_LEN + new] = state[S_COL_LEN + old]
    for slot in (S_DEMON_COL, S_LAST_COL):
        if state[slot] >= 0:
            out[slot] = order[state[slot]]
    return out
