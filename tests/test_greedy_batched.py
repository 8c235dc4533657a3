"""The batched greedy agent (agents/greedy_kernels.py, ``GreedyAgent.act_batch``): on thousands of
observations from real games of every configuration it plays an action of the Python heuristic's
tie set every time (and gives the same scores), decides deterministically from its ``rng_state``,
validates its inputs, and still beats the random agent."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scenario import drain_chilies_game

import bali_env
from agents.greedy import _SCORERS, GreedyAgent
from agents.greedy_kernels import (
    NO_ACTION,
    PARAM_NAMES,
    greedy_decide_batch,
    greedy_scores,
    new_workspace,
)
from agents.random_agent import RandomAgent
from agents.tournament import play_games
from bali_env.api_check import CONFIGURATIONS
from bali_env.engine import DECISION_NAMES, N_ACTIONS, OBS_DIM

DECISIONS = {"take_offering", "play", "offer_face_up", "offer_face_down", "offer_supply", "refill", "oracle",
             "shrine_reward", "farmer_choice"}
GAMES_PER_CONFIG = 2
#: non-default weights (every one different) to check that ``params`` follows ``PARAM_NAMES``
OTHER_WEIGHTS = {"rival_weight": 0.7, "stone_high": 1.3, "stone_low": 0.15, "stone_mid": 0.6, "shrine_bonus": 2.0,
                 "project": 0.5, "stone_complete": 2.5, "rival_stone": 0.3, "tempo": 0.4, "future_altar": 9.0,
                 "discount": 0.35}


def _collect() -> tuple[np.ndarray, np.ndarray]:
    """Every observation (with its mask) of the player to move in ``GAMES_PER_CONFIG`` games of each
    configuration, greedy (batched) on seat ``game % n`` against random players, plus the
    farmer choice of the drained-chilies scenario."""
    observations, masks = [], []
    for config_index, (n, oracle, demon) in enumerate(CONFIGURATIONS):
        for game in range(GAMES_PER_CONFIG):
            seed = 1000 + 10 * config_index + game
            env = bali_env.raw_env(num_players=n, oracle=oracle, demon=demon)
            env.reset(seed=seed)
            greedy, rand = GreedyAgent(seed=seed), RandomAgent(seed=seed)
            while not all(env.terminations.values()):
                agent = env.agent_selection
                o = env.observe(agent)
                observations.append(o["observation"])
                masks.append(o["action_mask"])
                if int(agent.split("_")[1]) == game % n:
                    action = int(greedy.act_batch(o["observation"][None], o["action_mask"][None])[0])
                else:
                    action = rand.act(o["observation"], o["action_mask"])
                env.step(action)
    g = drain_chilies_game()
    o = g.observe(g.to_move)
    observations.append(o["observation"])
    masks.append(o["action_mask"])
    return np.array(observations, dtype=np.float32), np.array(masks, dtype=np.int8)


@pytest.fixture(scope="module")
def positions() -> tuple[np.ndarray, np.ndarray]:
    """The observations and masks of ``_collect`` (collected once for the module)."""
    return _collect()


def _python_scores(agent: GreedyAgent, obs: np.ndarray, mask: np.ndarray) -> tuple[str, dict[int, float] | None]:
    """The decision and the Python scorer's scores (None without a scorer or with one legal action)."""
    legal = [int(a) for a in np.flatnonzero(mask)]
    view = bali_env.decode_observation(obs)
    scorer = _SCORERS.get(view.decision)
    if len(legal) <= 1 or scorer is None:
        return view.decision, None
    return view.decision, scorer(agent, agent._context(view), legal)


def _tie_set(scores: dict[int, float] | None, mask: np.ndarray) -> set[int]:
    """The legal actions ``GreedyAgent.act`` draws from (every legal one without scores)."""
    legal = [int(a) for a in np.flatnonzero(mask)]
    if scores is None:
        return set(legal)
    best = max(scores.get(a, -np.inf) for a in legal)
    return {a for a in legal if scores.get(a, -np.inf) >= best - 1e-9}


def _check_against_python(agent: GreedyAgent, obs: np.ndarray, masks: np.ndarray) -> Counter:
    """For every row: ``act_batch``'s action is in the Python tie set and the kernel's scores of the
    legal actions equal Python's. Returns the rows checked by decision type."""
    chosen = agent.act_batch(obs, masks)
    params = np.array([getattr(agent, name) for name in PARAM_NAMES], dtype=np.float64)
    v, x, scores, _ = new_workspace()
    by_decision: Counter = Counter()
    mismatches = []
    for i in range(len(obs)):
        decision, py_scores = _python_scores(agent, obs[i], masks[i])
        by_decision[decision] += 1
        if int(chosen[i]) not in _tie_set(py_scores, masks[i]):
            mismatches.append((i, decision, int(chosen[i]), py_scores))
            continue
        if py_scores is None:
            continue
        assert DECISION_NAMES[greedy_scores(obs[i], masks[i], params, v, x, scores)] == decision
        for a in np.flatnonzero(masks[i]):
            want = py_scores.get(int(a), -np.inf)
            assert scores[a] == want or abs(scores[a] - want) <= 1e-9, (i, decision, int(a), scores[a], want)
    assert not mismatches, f"{len(mismatches)} of {len(obs)} outside the tie set, first: {mismatches[:3]}"
    return by_decision


def test_same_choice_as_the_python_heuristic_on_every_observation(positions):
    """Thousands of observations of all 12 configurations, every decision type: the batched action
    is in the Python agent's tie set for 100% of them, and every legal action's score is the same."""
    obs, masks = positions
    by_decision = _check_against_python(GreedyAgent(seed=0), obs, masks)
    print(f"\nbatched greedy == Python tie set on {sum(by_decision.values())} observations: {dict(by_decision)}")
    assert sum(by_decision.values()) == len(obs) > 3000
    assert set(by_decision) >= DECISIONS, DECISIONS - set(by_decision)


def test_the_weights_follow_param_names(positions):
    """With every weight changed (each to a different value) the choices still match Python's."""
    obs, masks = positions
    _check_against_python(GreedyAgent(seed=1, **OTHER_WEIGHTS), obs[::3], masks[::3])


def test_deterministic_for_a_fixed_rng_state(positions):
    """The same ``rng_state`` gives the same actions (and advances the same way); ``act_batch``
    replays after re-seeding the agent."""
    obs, masks = positions
    params = np.array([getattr(GreedyAgent(), name) for name in PARAM_NAMES], dtype=np.float64)
    runs = []
    for _ in range(2):
        state = np.array([12345], dtype=np.uint64)
        out = np.zeros(len(obs), dtype=np.int64)
        greedy_decide_batch(obs, masks, params, state, out)
        runs.append((out, int(state[0])))
    assert (runs[0][0] == runs[1][0]).all() and runs[0][1] == runs[1][1] != 12345
    agent = GreedyAgent(seed=4)
    first = agent.act_batch(obs, masks)
    agent.seed(4)
    assert (agent.act_batch(obs, masks) == first).all()
    agent.seed(4)
    assert (agent.act_batch(obs, masks.astype(bool)) == first).all()


def test_single_and_no_legal_action():
    """A single legal action is returned whatever it scores; a row without one gets ``NO_ACTION``."""
    env = bali_env.raw_env(num_players=3)
    env.reset(seed=0)
    o = env.observe(env.agent_selection)
    obs = np.repeat(o["observation"][None], 3, axis=0)
    masks = np.zeros((3, N_ACTIONS), dtype=np.int8)
    masks[0, 4] = 1  # pass only
    masks[1] = o["action_mask"]
    out = GreedyAgent(seed=0).act_batch(obs, masks)
    assert out[0] == 4 and masks[1, out[1]] == 1 and out[2] == NO_ACTION


@pytest.mark.parametrize("obs_shape, obs_dtype, mask_shape, mask_dtype, name", [
    ((2, OBS_DIM), np.float64, (2, N_ACTIONS), np.int8, "observations"),
    ((2, OBS_DIM - 1), np.float32, (2, N_ACTIONS), np.int8, "observations"),
    ((OBS_DIM,), np.float32, (2, N_ACTIONS), np.int8, "observations"),
    ((2, OBS_DIM), np.float32, (2, N_ACTIONS), np.int64, "action_masks"),
    ((2, OBS_DIM), np.float32, (2, N_ACTIONS + 1), np.int8, "action_masks"),
    ((2, OBS_DIM), np.float32, (3, N_ACTIONS), np.int8, "action_masks"),
])
def test_bad_inputs_raise_value_error(obs_shape, obs_dtype, mask_shape, mask_dtype, name):
    """Wrong shapes or dtypes raise ValueError naming the argument."""
    with pytest.raises(ValueError, match=name):
        GreedyAgent(seed=0).act_batch(np.zeros(obs_shape, obs_dtype), np.ones(mask_shape, mask_dtype))


def test_empty_batch():
    """No rows, no actions."""
    out = GreedyAgent(seed=0).act_batch(np.zeros((0, OBS_DIM), np.float32), np.zeros((0, N_ACTIONS), np.int8))
    assert out.shape == (0,) and out.dtype == np.int64


def test_batched_greedy_beats_random():
    """100 two-player games on the batched environment (seats rotate): greedy, deciding through
    ``act_batch``, wins at least 75 (fixed seeds: cannot flake)."""
    records = play_games(["greedy", "random"], range(100), num_players=2, seed=0)
    wins = sum(r["lineup"].index(0) in r["winners"] for r in records)
    assert len(records) == 100 and wins >= 75, wins
