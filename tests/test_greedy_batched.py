"""The greedy heuristic's kernels (bali_env/bots/greedy/) against its regression goldens
(tests/golden/greedy/decisions.npz, recorded from the former Python scorers and their Numba port,
see tests/golden/greedy/generate.py): on thousands of observations of every configuration the
scores, best sets and keyed choices are the recorded ones, default and other weights; tournament
games replay the recorded actions; plus determinism, input checks and strength."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import bali_env
from bali_env.bots.greedy import GreedyAgent
from bali_env.bots.greedy.decide import greedy_decide_batch, greedy_scores
from bali_env.bots.greedy.slots import KERNEL_FILES, NO_ACTION, PARAM_NAMES, TIE_EPS, new_workspace
from bali_env.arena import play_games
from bali_env.engine import DECISION_NAMES, N_ACTIONS, O_DECISION, OBS_DIM

GOLDEN = Path(__file__).parent / "golden" / "greedy"
DECISIONS = {"take_offering", "play", "offer_face_up", "offer_face_down", "offer_supply", "refill", "oracle",
             "shrine_reward", "farmer_choice"}


def _load_generator():
    """tests/golden/greedy/generate.py as a module (its ``OTHER`` weights and ``TOURNAMENTS``)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bali_greedy_golden", GOLDEN / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _load_generator()


@pytest.fixture(scope="module")
def golden() -> dict[str, np.ndarray]:
    """The recorded observations, masks, keys, scores, best sets and choices."""
    with np.load(GOLDEN / "decisions.npz") as data:
        return {k: data[k] for k in data.files}


def _check_scores(agent: GreedyAgent, golden: dict[str, np.ndarray], scores_key: str, best_key: str) -> set[str]:
    """Row by row: the kernel's score of every legal action is the recorded one (within 1e-9) and
    its best set (within ``TIE_EPS``) is the recorded one. Returns the decisions met."""
    obs, masks = golden["obs"], golden["masks"]
    want_scores, want_best = golden[scores_key], golden[best_key]
    v, x, scores, _ = new_workspace()
    params = agent.params()
    met, bad = set(), []
    for i in range(len(obs)):
        legal = masks[i].astype(bool)
        if not legal.any():
            continue
        decision = DECISION_NAMES[greedy_scores(obs[i], masks[i], params, v, x, scores)]
        met.add(decision)
        if np.isfinite(want_scores[i]).any():
            if not np.allclose(scores[legal], want_scores[i][legal], rtol=0, atol=1e-9):
                bad.append((i, decision, "scores"))
            if legal.sum() > 1 and not np.array_equal(legal & (scores >= scores[legal].max() - TIE_EPS), want_best[i]):
                bad.append((i, decision, "best set"))
    assert not bad, f"{len(bad)} rows differ from the golden, first: {bad[:5]}"
    return met


def test_the_golden_covers_every_decision_and_configuration(golden):
    """Thousands of recorded decisions, every decision type, 2-4 players, finished games too."""
    obs, masks = golden["obs"], golden["masks"]
    names = {DECISION_NAMES[d] for d in obs[:, O_DECISION:O_DECISION + len(DECISION_NAMES)].argmax(axis=1)}
    assert len(obs) > 3000 and names >= DECISIONS | {"game_over"}
    assert (~masks.any(axis=1)).sum() >= 24 and (golden["best"].sum(axis=1) > 1).sum() > 20  # ends and real ties


def test_scores_and_best_sets_are_the_recorded_ones(golden):
    """Every legal action's score and every best set are those of the former Python scorer."""
    assert _check_scores(GreedyAgent(seed=0), golden, "scores", "best") >= DECISIONS


def test_the_weights_follow_param_names(golden):
    """With every weight changed (each to a different value) scores and best sets are still the
    recorded ones: ``params`` follows ``PARAM_NAMES``."""
    assert set(GEN.OTHER) == set(PARAM_NAMES)
    _check_scores(GreedyAgent(seed=1, **GEN.OTHER), golden, "other_scores", "other_best")


def test_keyed_choices_are_the_recorded_ones(golden):
    """``act_batch_keyed`` (what tournaments call) gives exactly the recorded action for every row
    and key, default and other weights; a row's choice does not depend on the batch."""
    obs, masks, keys = golden["obs"], golden["masks"], golden["keys"]
    got = GreedyAgent(seed=0).act_batch_keyed(obs, masks, keys)
    assert np.array_equal(got, golden["keyed_choice"])
    other = GreedyAgent(seed=5, **GEN.OTHER).act_batch_keyed(obs, masks, keys)
    assert np.array_equal(other, golden["other_keyed_choice"])
    rows = np.random.default_rng(0).permutation(len(obs))[:300]
    assert np.array_equal(GreedyAgent(seed=9).act_batch_keyed(obs[rows], masks[rows], keys[rows]), got[rows])


def test_batch_choices_are_the_recorded_ones(golden):
    """``act_batch`` of a seeded agent (one stream for the whole batch) gives the recorded actions."""
    assert np.array_equal(GreedyAgent(seed=0).act_batch(golden["obs"], golden["masks"]), golden["batch_choice"])


def test_act_picks_from_the_recorded_best_set(golden):
    """``act`` (a batch of one) plays a recorded best action for every observation, and is exactly
    ``act_batch`` of one row given the same seed."""
    obs, masks, best = golden["obs"], golden["masks"], golden["best"]
    agent, twin = GreedyAgent(seed=3), GreedyAgent(seed=3)
    for i in np.flatnonzero(masks.any(axis=1)):
        action = agent.act(obs[i], masks[i])
        assert best[i, action], (i, action)
        assert action == twin.act_batch(obs[i:i + 1], masks[i:i + 1])[0]


def test_tournament_games_replay_the_recorded_actions(golden):
    """Tournament games (greedy against random) play exactly the recorded actions."""
    actions, lengths = [], []
    for n, oracle, demon, seed, games in GEN.TOURNAMENTS:
        for record in play_games(["greedy"] + ["random"] * (n - 1), range(games), num_players=n, seed=seed,
                                 oracle=oracle, demon=demon, keep_actions=True):
            actions += list(record["actions"])
            lengths.append(len(record["actions"]))
    assert lengths == golden["tournament_lengths"].tolist()
    assert actions == golden["tournament_actions"].tolist()


def test_deterministic_for_a_fixed_rng_state(golden):
    """The same ``rng_state`` gives the same actions (and advances the same way); ``act_batch``
    replays after re-seeding the agent, with int8 or bool masks."""
    obs, masks = golden["obs"], golden["masks"]
    params = GreedyAgent().params()
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


def test_every_kernel_file_keys_the_numba_cache():
    """Every file of bali_env/bots/greedy/ that defines kernels is in ``KERNEL_FILES``, and every kernel
    file (bali_env/bots/features.py too) is covered by them in Numba's cache key: a change recompiles."""
    import bali_env.bots.features
    from bali_env.engine import numba_cache

    package = Path(KERNEL_FILES[0]).parent
    with_kernels = {str(p) for p in package.glob("*.py") if re.search(r"^@njit", p.read_text(), re.M)}
    assert with_kernels == set(KERNEL_FILES)
    for path in [*KERNEL_FILES, bali_env.bots.features.__file__]:
        assert set(numba_cache._covered[Path(path).resolve()]) == {Path(p) for p in KERNEL_FILES}, path


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


def test_bad_keys_and_act_input_raise_value_error(golden):
    """Keys that do not match the rows, and ``act`` given a batch or no legal action, are refused."""
    obs, masks = golden["obs"][:3], golden["masks"][:3]
    with pytest.raises(ValueError, match="keys"):
        GreedyAgent(seed=0).act_batch_keyed(obs, masks, np.zeros(2, np.uint64))
    with pytest.raises(ValueError, match="one observation"):
        GreedyAgent(seed=0).act(obs[:2], masks[:2])
    with pytest.raises(ValueError, match="no legal action"):
        GreedyAgent(seed=0).act(obs[0], np.zeros(N_ACTIONS, np.int8))


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
