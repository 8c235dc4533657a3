"""The market's columns are exchangeable (bali_env.engine.symmetry): a game dealt with its columns
in another order plays out the same, and column_permutation's maps read one game's observations,
legal actions and policy inputs as the other's."""

from __future__ import annotations

import numpy as np
import pytest

import bali_env
from bali_env.bots.features import input_permutation, policy_input
from bali_env import engine as C
from bali_env.engine import A_REFILL, N_ACTIONS, OBS_DIM, check_column_order, column_permutation
from bali_env.engine.contract import final_result
from bali_env.envs.api_check import CONFIGURATIONS, config_id


def _twin_games(config, seed: int):
    """A game of ``config`` dealt from ``seed`` and its twin with the market's columns in another
    order the variant keeps (``move_columns``), played to the end with the same random moves (a
    refill from the twin's column). Per decision: the order, both states and what every seat sees
    (observation, mask) in each."""
    n, oracle, demon = config
    rng = np.random.default_rng(seed)
    none = np.zeros(0, dtype=np.int64)
    first = np.zeros(C.STATE_SIZE, dtype=C.STATE_DTYPE)
    C.init_game(first, n, oracle, demon, np.uint64(seed), none, none, none)
    orders = [o for o in C.column_orders(demon) if o != (0, 1, 2, 3)]
    order = orders[rng.integers(len(orders))]
    second = C.move_columns(first, order)
    obs, mask = np.zeros(C.OBS_DIM, np.float32), np.zeros(C.N_ACTIONS, np.int8)

    def views(s):
        out = []
        for p in range(n):
            C.observe(s, p, obs, mask)
            out.append((obs.copy(), mask.copy()))
        return out

    steps = []
    while True:
        steps.append((first.copy(), second.copy(), views(first), views(second)))
        if first[C.S_PHASE] == C.PH_GAME_OVER:
            return order, steps
        C.legal_mask(first, mask)
        action = int(rng.choice(np.flatnonzero(mask)))
        C.apply_action(first, action)
        refill = C.A_REFILL <= action < C.A_REFILL + C.N_COLUMNS
        assert C.step_checked(second, C.A_REFILL + order[action - C.A_REFILL] if refill else action) == 0


@pytest.mark.parametrize("config", CONFIGURATIONS, ids=config_id)
def test_a_game_with_its_columns_in_another_order_is_the_same_game(config):
    """At every decision the twin's state is the first game's with its columns moved (so the same
    hands, scores and winners, new columns dealt in the moved place), and what every seat sees in
    it is what it sees in the first game read through column_permutation's maps."""
    order, steps = _twin_games(config, seed=sum(config) * 7 + config[0])
    obs_index, action_index = column_permutation(order)
    assert len(steps) > 50 and final_result(steps[-1][0])["winners"]
    dealt = refills = 0
    for first, second, seen1, seen2 in steps:
        assert np.array_equal(second, C.move_columns(first, order))
        for (obs1, mask1), (obs2, mask2) in zip(seen1, seen2, strict=True):
            assert np.array_equal(obs2, obs1[obs_index]) and np.array_equal(mask2, mask1[action_index])
        refills += first[C.S_PHASE] == C.PH_REFILL
        dealt = max(dealt, int(first[C.S_DECK_POS]))
    assert refills > 10 and dealt > C.MARKET_SIZE  # takes, and columns dealt again, were played


def test_the_demon_keeps_the_rotations_only():
    none = np.zeros(0, dtype=np.int64)
    s = np.zeros(C.STATE_SIZE, dtype=C.STATE_DTYPE)
    C.init_game(s, 2, False, True, np.uint64(3), none, none, none)
    assert C.column_orders(True) == ((0, 1, 2, 3), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2))
    assert C.move_columns(s, (1, 2, 3, 0))[C.S_DEMON_COL] == 1
    with pytest.raises(ValueError, match="order .* rotation"):
        C.move_columns(s, (1, 0, 2, 3))
    with pytest.raises(ValueError, match="state"):
        C.move_columns(s[:-1], (0, 1, 2, 3))
    assert len(C.column_orders(False)) == 24 == len(set(C.column_orders(False)))


def test_the_maps_move_the_refill_actions_and_the_market_columns_only():
    obs_index, action_index = column_permutation((2, 0, 3, 1))
    assert list(action_index[A_REFILL:A_REFILL + 4]) == [A_REFILL + 1, A_REFILL + 3, A_REFILL, A_REFILL + 2]
    assert np.array_equal(np.delete(action_index, range(A_REFILL, A_REFILL + 4)),
                          np.delete(np.arange(N_ACTIONS), range(A_REFILL, A_REFILL + 4)))
    moved = np.flatnonzero(obs_index != np.arange(OBS_DIM))
    names = bali_env.observation_slot_names()
    assert {names[i].split(".")[0] for i in moved} == {"market", "demon", "last_take_column"}
    assert len(moved) == 4 * 28 + 4 + 4  # this order leaves no column in its place
    assert sorted(obs_index) == list(range(OBS_DIM))  # a permutation: nothing lost, nothing doubled
    identity = column_permutation((0, 1, 2, 3))
    assert np.array_equal(identity[0], np.arange(OBS_DIM)) and np.array_equal(identity[1], np.arange(N_ACTIONS))


def test_the_greedy_features_of_the_moved_game_are_the_features_moved():
    """The policy input of the twin's decisions (observation and the heuristic's features,
    computed from its own observation) is the first game's read through input_permutation."""
    order, steps = _twin_games((2, False, False), seed=21)
    views = [(seen1[p], seen2[p]) for first, _, seen1, seen2 in steps[:-1] for p in range(2) if seen1[p][1].any()]
    obs1, masks1, obs2, masks2 = (np.stack([v[i][k] for v in views]) for i in (0, 1) for k in (0, 1))
    input_index, action_index = input_permutation(order, "greedy-v1")
    x1 = policy_input(obs1, masks1, "greedy-v1")
    assert np.array_equal(policy_input(obs2, masks2, "greedy-v1"), x1[:, input_index])
    assert np.array_equal(masks2, masks1[:, action_index])
    refill = np.flatnonzero(obs1[:, 5] == 1)  # the refill decisions, where the features move
    assert len(refill) and not np.array_equal(x1[refill][:, input_index], x1[refill])
    assert np.array_equal(input_permutation(order, None)[0], column_permutation(order)[0])


@pytest.mark.parametrize(("order", "error"), [
    ((0, 1, 2), ValueError), ((0, 0, 1, 2), ValueError), ((0, 1, 2, 4), ValueError), ((0, 1, 2, 3.5), ValueError),
    ("abcd", TypeError), (None, TypeError), (3, TypeError),
])
def test_a_bad_order_is_refused_naming_it(order, error):
    with pytest.raises(error, match="order"):
        column_permutation(order)
    assert check_column_order([3, 2, 1, 0]) == (3, 2, 1, 0)
