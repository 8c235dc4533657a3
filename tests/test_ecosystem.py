"""The environment plays by its ecosystem's rules, checked with the ecosystem's own tools on
default arguments: Gymnasium's and SB3's ``check_env`` on ``gymnasium.make("bali_env/Bali-v0")``
(every render mode, 2-4 players, the variants), ``gymnasium.make_vec`` giving the batched vector
env with Gymnasium's autoreset semantics and its vector wrappers running on it, the SB3 VecEnv
adapter under ``VecMonitor``, PettingZoo classic's illegal-move convention under SuperSuit's
wrappers, and OpenSpiel's own game test on ``python_bali``."""

from __future__ import annotations

import json
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import bali_env
from bali_env import engine as C
from bali_env.versus.vector import BaliGymVectorEnv

CONFIGS = [(2, False, False), (3, True, False), (4, False, True), (4, True, True)]


@pytest.fixture
def quiet():
    """PettingZoo's illegal-move warning, once per illegal sample action of a wrapper: silenced
    for the test, then back on."""
    from pettingzoo.utils.env_logger import EnvLogger

    EnvLogger.suppress_output()
    yield
    EnvLogger.unsuppress_output()
    EnvLogger.flush()


# ============================================================================= Gymnasium: the id
def test_the_id_is_registered_by_importing_the_package():
    assert bali_env.GYMNASIUM_ID == "bali_env/Bali-v0" and bali_env.GYMNASIUM_ID in gymnasium.registry
    env = gymnasium.make("bali_env/Bali-v0")
    assert env.unwrapped.num_players == 2 and env.unwrapped.metadata["render_fps"] > 0
    assert type(gymnasium.make_vec("bali_env/Bali-v0", num_envs=3)) is BaliGymVectorEnv


@pytest.mark.slow
def test_the_id_works_in_a_script_that_does_not_import_the_package():
    """``gymnasium.make`` in a script that imports only gymnasium (before: "Namespace bali_env not
    found"). The package declares a ``gymnasium.envs`` entry point: a Gymnasium that loads such
    plugins (before 1.0) registers the plain id on ``import gymnasium``; Gymnasium 1.x loads none,
    and there ``bali_env:bali_env/Bali-v0`` (Gymnasium's ``module:id``) imports the package."""
    import subprocess
    import sys
    from importlib.metadata import entry_points

    from bali_env.versus.registration import GYMNASIUM_MAKE_ID, register_envs

    plugin = [ep for ep in entry_points(group="gymnasium.envs") if ep.name == "bali_env"]
    assert [ep.value for ep in plugin] == ["bali_env.versus.registration:register_envs"], "pip install -e . again"
    assert plugin[0].load() is register_envs
    plugins = hasattr(gymnasium.envs.registration, "load_plugin_envs")
    env_id = bali_env.GYMNASIUM_ID if plugins else GYMNASIUM_MAKE_ID
    code = (f"import gymnasium; env = gymnasium.make({env_id!r}); env.reset(seed=0); "
            "print(env.unwrapped.num_players)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "2", out.stderr


def test_registering_is_idempotent_and_needs_only_gymnasiums_registry():
    """``register_envs`` (the entry point) leaves a registered name as it is, without a warning,
    however often it runs, and reads the registry from ``gymnasium.envs.registration``: whole even
    while a Gymnasium before 1.0 is still importing itself and calls the plugin (``gymnasium.registry``
    is not there yet then)."""
    import subprocess
    import sys

    code = ("import warnings; warnings.simplefilter('error'); import gymnasium, bali_env\n"
            "from bali_env.versus.registration import GYMNASIUM_ID, register_envs\n"
            "spec = gymnasium.registry[GYMNASIUM_ID]; register_envs(); register_envs()\n"
            "assert gymnasium.registry[GYMNASIUM_ID] is spec\n"
            "del gymnasium.registry[GYMNASIUM_ID]\n"
            "saved = {k: getattr(gymnasium, k) for k in ('registry', 'register', 'make')}\n"
            "for k in saved: delattr(gymnasium, k)  # as during gymnasium's own import\n"
            "register_envs()\n"
            "for k, v in saved.items(): setattr(gymnasium, k, v)\n"
            "print(GYMNASIUM_ID in gymnasium.registry)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "True", out.stderr


@pytest.mark.parametrize("num_players, oracle, demon", CONFIGS)
@pytest.mark.parametrize("render_mode", [None, "ansi", "human", "rgb_array"])
def test_gymnasium_check_env_passes(num_players, oracle, demon, render_mode, capsys):
    """Gymnasium's checker steps unmasked sample actions: an illegal one ends the episode."""
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make("bali_env/Bali-v0", num_players=num_players, oracle=oracle, demon=demon,
                         render_mode=render_mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # a warning of the checker is a failure here
        check_env(env.unwrapped)
    if render_mode == "rgb_array":
        env.reset(seed=0)
        frame = env.render()
        assert frame.dtype == np.uint8 and frame.shape == (720, 1280, 3)
    capsys.readouterr()


@pytest.mark.parametrize("num_players, oracle, demon", CONFIGS)
def test_sb3_check_env_passes(num_players, oracle, demon):
    from stable_baselines3.common.env_checker import check_env

    check_env(gymnasium.make("bali_env/Bali-v0", num_players=num_players, oracle=oracle, demon=demon).unwrapped)


def test_an_illegal_action_ends_the_episode_with_minus_one(capsys, caplog):
    """The info says so; no PettingZoo warning is printed nor queued (Gymnasium's way)."""
    from pettingzoo.utils.env_logger import EnvLogger

    queued = len(EnvLogger.mqueue)
    env = gymnasium.make("bali_env/Bali-v0", opponents="greedy")
    obs, info = env.reset(seed=5)
    bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
    obs, reward, terminated, truncated, info = env.step(bad)
    assert (reward, terminated, truncated) == (-1.0, True, False) and info["illegal_action"] is True
    assert len(EnvLogger.mqueue) == queued and capsys.readouterr().out == "" and not caplog.records
    raising = gymnasium.make("bali_env/Bali-v0", illegal_action="raise")
    _, info = raising.reset(seed=5)
    with pytest.raises(ValueError, match="illegal action"):
        raising.step(bad)


def test_the_same_seed_gives_the_same_episode_and_opponents():
    """Opponents from a spec draw from the env's seeded generator: the same ``reset(seed)`` and
    the same actions give the same episode, opponents' moves included."""
    def episode(seed: int) -> list[tuple]:
        env = gymnasium.make("bali_env/Bali-v0", opponents="random:1,greedy:1", num_players=3)
        obs, info = env.reset(seed=seed)
        out, done = [(obs.tobytes(), info["learner_seat"])], False
        while not done:
            obs, r, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            out.append((obs.tobytes(), r))
        return out

    first = episode(11)
    assert episode(11) == first and episode(12) != first


# ============================================================================= Gymnasium: vector
def _first_legal(masks: np.ndarray) -> np.ndarray:
    return np.array([np.flatnonzero(m)[0] if m.any() else 0 for m in masks])


def test_make_vec_gives_the_batched_env_with_next_step_autoreset():
    """NEXT_STEP (Gymnasium's default): the step that ends a game returns its last observation
    (the game over), the learner's terminal reward and the result; the next step ignores that
    slot's action and returns its new game's first observation with reward 0."""
    v = gymnasium.make_vec("bali_env/Bali-v0", num_envs=6, opponents="greedy")
    assert v.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert v.single_observation_space.shape == (C.OBS_DIM,) and v.observation_space.shape == (6, C.OBS_DIM)
    assert v.single_action_space == gymnasium.spaces.Discrete(44)
    obs, info = v.reset(seed=2)
    ended = 0
    for _ in range(400):
        obs, r, term, trunc, info = v.step(_first_legal(info["action_mask"]))
        assert not trunc.any()
        for i in np.flatnonzero(term):
            ended += 1
            assert bali_env.decode_observation(obs[i]).decision == "game_over" and r[i] in (-1.0, 1.0)
            assert info["action_mask"][i].any() and info["_final_scores"][i]  # the next game's mask
            assert len(info["final_scores"][i]) == 2
        before, handed = term.copy(), info["action_mask"].copy()
        if before.any():
            obs, r, term, _, info = v.step(np.full(6, 43))  # an illegal id: ignored in the resetting slots
            for i in np.flatnonzero(before):
                assert r[i] == 0.0 and not term[i]
                assert bali_env.decode_observation(obs[i]).decision != "game_over" and info["action_mask"][i].any()
                np.testing.assert_array_equal(info["action_mask"][i], handed[i])  # what the end step handed
            break
    assert ended > 0


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_every_mask_handed_to_the_learner_has_a_legal_action(mode):
    """Game ends included (NEXT_STEP: the next game's mask with the last observation), every mask
    row of ``infos`` and of ``action_masks()`` holds a legal action."""
    v = BaliGymVectorEnv(8, opponents="random", autoreset_mode=mode)
    rng = np.random.default_rng(0)
    obs, info = v.reset(seed=5)
    ends = 0
    for _ in range(600):
        assert info["action_mask"].any(axis=1).all() and v.action_masks().any(axis=1).all()
        obs, r, term, _, info = v.step(np.argmax(rng.random((8, 44)) * info["action_mask"], axis=1))
        ends += int(term.sum())
    assert ends > 20


def test_the_masked_loop_of_the_docs_runs():
    """docs/environment.md's CleanRL-style loop (a ``-inf``-masked softmax over
    ``infos["action_mask"]``) runs as written, with NumPy raising on any NaN, through game ends."""
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "environment.md").read_text()
    code = re.search(r"<!-- masked-loop -->\n```python\n(.*?)```", page, re.S).group(1)
    scope: dict = {}
    with np.errstate(invalid="raise", divide="raise"):
        exec(code, scope)
    assert scope["ended"] > 0  # the loop went through game ends


def test_same_step_autoreset_gives_final_observations_in_infos():
    v = BaliGymVectorEnv(4, opponents="random", autoreset_mode=AutoresetMode.SAME_STEP)
    obs, info = v.reset(seed=1)
    for _ in range(400):
        obs, r, term, _, info = v.step(_first_legal(info["action_mask"]))
        if term.any():
            i = int(np.flatnonzero(term)[0])
            assert info["_final_obs"][i] and bali_env.decode_observation(info["final_obs"][i]).decision == "game_over"
            assert bali_env.decode_observation(obs[i]).decision != "game_over"
            assert info["final_info"]["learner_seat"][i] in (0, 1)
            return
    pytest.fail("no game ended")


def test_the_vector_env_is_seeded_as_sync_vector_env():
    def run(seed: int) -> bytes:
        v = BaliGymVectorEnv(3, opponents="greedy:1,random:1", num_players=4)
        obs, info = v.reset(seed=seed)
        for _ in range(60):
            obs, *_, info = v.step(_first_legal(info["action_mask"]))
        return obs.tobytes()

    assert run(7) == run(7) != run(8)


def test_gymnasium_vector_wrappers_run_on_it():
    from gymnasium.wrappers.vector import NormalizeObservation, RecordEpisodeStatistics

    v = RecordEpisodeStatistics(NormalizeObservation(gymnasium.make_vec("bali_env/Bali-v0", num_envs=8)))
    obs, info = v.reset(seed=0)
    returns = []
    for _ in range(500):
        obs, r, term, trunc, info = v.step(_first_legal(info["action_mask"]))
        if "episode" in info:
            returns += info["episode"]["r"][info["_episode"]].tolist()
    assert returns and set(returns) <= {-1.0, 1.0} and np.isfinite(obs).all()


def test_an_illegal_learner_action_ends_that_game_only():
    v = BaliGymVectorEnv(3, opponents="random")
    obs, info = v.reset(seed=4)
    acts = _first_legal(info["action_mask"])
    acts[1] = int(np.flatnonzero(~info["action_mask"][1])[0])
    obs, r, term, _, info = v.step(acts)
    assert term[1] and r[1] == -1.0 and info["illegal_action"][1] and not term[0] and not term[2]
    with pytest.raises(ValueError, match="illegal action"):
        raising = BaliGymVectorEnv(3, illegal_action="raise")
        _, info = raising.reset(seed=4)
        raising.step(np.full(3, int(np.flatnonzero(~info["action_mask"][0])[0])))


# ============================================================================= SB3
def test_the_sb3_vec_env_gives_terminal_observations_under_vec_monitor():
    from stable_baselines3.common.vec_env import VecMonitor

    from bali_env.versus.sb3_vecenv import BaliSB3VecEnv

    venv = VecMonitor(BaliSB3VecEnv(6, "random", seed=3))
    obs = venv.reset()
    seen = 0
    for _ in range(300):
        venv.step_async(_first_legal(np.array(venv.env_method("action_masks"))))
        obs, rewards, dones, infos = venv.step_wait()
        for i in np.flatnonzero(dones):
            seen += 1
            assert bali_env.decode_observation(infos[i]["terminal_observation"]).decision == "game_over"
            assert infos[i]["episode"]["r"] == rewards[i]
            assert bali_env.decode_observation(obs[i]).decision != "game_over"
    assert seen > 0


# ============================================================================= PettingZoo + SuperSuit
@pytest.mark.parametrize("wrapper", ["sticky_actions_v0", "frame_skip_v0", "delay_observations_v0"])
def test_supersuit_wrappers_run_on_env(wrapper, quiet):
    """SuperSuit's wrappers step sample actions (illegal ones too): env() ends the game with -1
    for the offender, as PettingZoo's classic environments do."""
    import supersuit

    kwargs = {"sticky_actions_v0": {"repeat_action_probability": 0.25}, "frame_skip_v0": {"num_frames": 2},
              "delay_observations_v0": {"delay": 2}}[wrapper]
    env = getattr(supersuit, wrapper)(bali_env.env(num_players=3), **kwargs)
    env.reset(seed=1)
    for agent in env.agent_iter(max_iter=2000):
        obs, reward, term, trunc, info = env.last()
        env.step(None if term or trunc else int(env.action_space(agent).sample()))
    assert not env.agents


#: SuperSuit's AEC wrappers: which run on env() (PettingZoo's api_test and a whole masked game)
#: with the dict observation and with observation="flat" (docs/environment.md says the same)
SUPERSUIT = {
    "sticky_actions_v0": ({"repeat_action_probability": 0.25}, True, True),
    "frame_skip_v0": ({"num_frames": 2}, True, False),  # flat: it drops the infos of reset, the masks
    "delay_observations_v0": ({"delay": 2}, True, True),
    "pad_action_space_v0": ({}, True, True),
    "clip_reward_v0": ({}, True, True),
    "pad_observations_v0": ({}, False, True),
    "dtype_v0": ({"dtype": np.float16}, False, True),
    "normalize_obs_v0": ({}, False, True),
    "frame_stack_v1": ({"stack_size": 3}, False, True),
    "flatten_v0": ({}, False, True),
    "black_death_v3": ({}, False, False),  # a parallel env's wrapper: a turn-based AEC env is not one
}


def _masked_game(env, flat: bool) -> int:
    """One whole game, the first legal action of each mask (the info's with the flat observation)."""
    env.reset(seed=3)
    steps = 0
    for _agent in env.agent_iter(max_iter=3000):
        obs, reward, term, trunc, info = env.last()
        mask = info["action_mask"] if flat else obs["action_mask"]
        env.step(None if term or trunc else int(np.flatnonzero(mask)[0]) if mask.any() else 0)
        steps += 1
    return steps


@pytest.mark.parametrize("observation", ["dict", "flat"])
@pytest.mark.parametrize("wrapper", sorted(SUPERSUIT))
def test_supersuit_wrappers_that_run_on_each_observation(wrapper, observation, quiet):
    """The documented table: a wrapper marked as working passes PettingZoo's api_test and plays a
    game; one marked as not raises."""
    import supersuit
    from pettingzoo.test import api_test

    kwargs, on_dict, on_flat = SUPERSUIT[wrapper]
    make = lambda: getattr(supersuit, wrapper)(bali_env.env(num_players=3, observation=observation), **kwargs)  # noqa: E731
    if (on_dict, on_flat)[observation == "flat"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            api_test(make(), num_cycles=20)
        assert _masked_game(make(), observation == "flat") > 0
    else:
        with pytest.raises((AssertionError, AttributeError, KeyError)):
            _masked_game(make(), observation == "flat")


def test_the_flat_observation_is_the_dict_one_with_the_mask_in_the_infos():
    """observation="flat": a Box(293) observation, every agent's mask in its infos; the same game
    as the dict observation, step for step."""
    flat, full = bali_env.env(num_players=3, oracle=True, observation="flat"), bali_env.env(num_players=3, oracle=True)
    assert flat.observation_space("player_0") == full.observation_space("player_0")["observation"]
    flat.reset(seed=8)
    full.reset(seed=8)
    for _agent in full.agent_iter():
        obs, _, term, trunc, _ = full.last()
        for other in full.agents:
            np.testing.assert_array_equal(flat.observe(other), full.observe(other)["observation"])
            np.testing.assert_array_equal(flat.infos[other]["action_mask"], full.observe(other)["action_mask"])
        action = None if term or trunc else int(np.flatnonzero(obs["action_mask"])[-1])
        full.step(action)
        flat.step(action)
    assert not flat.agents and flat.rewards == full.rewards
    with pytest.raises(ValueError, match="observation"):
        bali_env.env(observation="box")


def test_flat_observation_passes_pettingzoos_own_tests():
    from pettingzoo.test import api_test, seed_test

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(bali_env.env(observation="flat"))
        seed_test(lambda: bali_env.env(observation="flat"))


def test_pettingzoos_render_test_passes(capsys):
    """PettingZoo's own render_test, every render mode of the metadata (rgb_array: the render extra)."""
    from pettingzoo.test import render_test

    render_test(lambda render_mode=None: bali_env.env(num_players=2, render_mode=render_mode))
    assert "tableau" in capsys.readouterr().out  # "human" printed the table


def test_sticky_actions_replay_a_move_that_became_illegal_as_a_forfeit(quiet):
    """What docs/environment.md says of sticky_actions: a repeated move is checked like any other,
    so one that is no longer legal ends the game with -1 for the mover."""
    import supersuit

    env = supersuit.sticky_actions_v0(bali_env.env(num_players=2), repeat_action_probability=0.99)
    env.reset(seed=0)
    final, steps = {}, 0
    for agent in env.agent_iter(max_iter=500):
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            final[agent] = (reward, info.get("illegal_action", False))
        steps += 1
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
    assert steps < 60  # far short of a game: a replayed move ended it
    assert sorted(final.values()) == [(-1.0, True), (0.0, False)]


# ============================================================================= OpenSpiel
def _spiel(num_players: int = 2, oracle: bool = False, demon: bool = False):
    """``python_bali`` loaded with these parameters (importing the module registers it)."""
    import pyspiel

    import bali_env.envs.openspiel  # noqa: F401 - registers python_bali

    return pyspiel.load_game("python_bali", {"players": num_players, "oracle": oracle, "demon": demon})


def _sample_chance(state, rng: np.random.Generator) -> int:
    """A chance outcome drawn with its probability."""
    outcomes = state.chance_outcomes()
    return outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0]


def _play(state, rng: np.random.Generator, until=lambda state: False):
    """Random legal actions and chance outcomes drawn with their probabilities until the end or
    ``until(state)``; returns the state."""
    while not state.is_terminal() and not until(state):
        state.apply_action(_sample_chance(state, rng) if state.is_chance_node()
                           else int(rng.choice(state.legal_actions())))
    return state


def _deal_length(state) -> int:
    """Chance outcomes of the deal: the starter sets, 16 market cards, the altar with the Oracle."""
    return state.num_players() + C.MARKET_SIZE + (4 if state.get_game().oracle else 0)


@pytest.mark.parametrize("num_players, oracle, demon", CONFIGS)
def test_openspiels_own_game_test_passes(num_players, oracle, demon):
    """OpenSpiel's own game test, serialization included: explicit chance makes every state the
    replay of its history from the one initial chance node."""
    import pyspiel

    pyspiel.random_sim_test(_spiel(num_players, oracle, demon), num_sims=3, serialize=True, verbose=False)


def test_openspiel_game_has_explicit_chance_and_no_seed():
    import pyspiel

    game = _spiel(3, oracle=True)
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert game.max_chance_outcomes() == C.N_CARD_IDS
    assert str(game.new_initial_state()) == str(game.new_initial_state())
    with pytest.raises(pyspiel.SpielError, match="seed"):
        pyspiel.load_game("python_bali", {"players": 2, "seed": 3})


def test_openspiel_chance_outcomes_are_the_deal_and_the_deck_counts():
    """The deal: the starter sets uniform among those not given, the market cards by the base
    deck's copies left; a draw: the undrawn cards' copies (the AEC env's deck holds the same)."""
    import pyspiel

    from bali_env.envs.openspiel import SeededChance

    game = _spiel(2, oracle=True)
    state = game.new_initial_state()
    assert state.current_player() == pyspiel.PlayerId.CHANCE and state.is_chance_node()
    assert state.chance_outcomes() == [(k, 0.25) for k in range(4)]
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 2) == "seat 0 gets starter set 2"
    state.apply_action(2)
    assert state.chance_outcomes() == [(0, 1 / 3), (1, 1 / 3), (3, 1 / 3)]
    with pytest.raises(pyspiel.SpielError):
        state.apply_action(2)  # given already
    state.apply_action(0)
    assert state.chance_outcomes() == [(c, C.DECK_COUNTS[c] / 50) for c in range(C.ORACLE)]  # no oracle there
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, 1) == "market card 1 of 16: priest"
    state.apply_action(3)
    assert dict(state.chance_outcomes())[3] == (C.DECK_COUNTS[3] - 1) / 49
    for _ in range(15):
        state.apply_action(state.chance_outcomes()[0][0])
    assert state.chance_outcomes() == [(k, 0.25) for k in range(4)]  # the altar, top first
    for k in (1, 3, 0):
        state.apply_action(k)
    assert state.chance_outcomes() == [(2, 1.0)]
    state.apply_action(2)
    assert not state.is_chance_node() and state.current_player() == 0
    # a draw after a known history: the seeded deal of the AEC env's reset(seed=4)
    aec = bali_env.raw_env(num_players=2, oracle=True)
    aec.reset(seed=4)
    chance, state, rng = SeededChance(2, oracle=True, seed=4), game.new_initial_state(), np.random.default_rng(4)
    while not (state.is_chance_node() and len(state.history()) > _deal_length(state)):
        if state.is_chance_node():
            state.apply_action(chance(state))
        else:
            action, before = int(rng.choice(state.legal_actions())), aec.state_dict()["deck"]
            aec.step(action)
            state.apply_action(action)
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, C.ORACLE) == "deck card: oracle"
    left = np.bincount(before, minlength=C.N_CARD_IDS)  # the AEC env's deck before the move dealt
    assert state.chance_outcomes() == [(c, left[c] / left.sum()) for c in np.flatnonzero(left)]
    card = chance(state)
    state.apply_action(card)
    left[card] -= 1
    assert state.chance_outcomes() == [(c, left[c] / left.sum()) for c in np.flatnonzero(left)]


def _same_state(a, b) -> None:
    assert str(a) == str(b) and a.history() == b.history() and a.current_player() == b.current_player()
    assert a.legal_actions() == b.legal_actions() and a.is_chance_node() == b.is_chance_node()
    if a.is_chance_node():
        assert a.chance_outcomes() == b.chance_outcomes()
    for p in range(a.num_players()):
        np.testing.assert_array_equal(a.observation_tensor(p), b.observation_tensor(p))
        np.testing.assert_array_equal(a.information_state_tensor(p), b.information_state_tensor(p))
        assert a.observation_string(p) == b.observation_string(p)


def _drawn(state) -> int:
    """Cards the pending draw has fixed so far."""
    return state.fixed - int(state.s[C.S_DECK_POS]) if state.pending >= 0 else -1


def test_openspiel_serializes_mid_game_and_mid_draw():
    """``serialize_game_and_state`` round trips in the deal, mid-game and in the middle of a
    draw (an action waiting on its cards); so do ``clone`` and pickling."""
    import pickle

    import pyspiel

    game, rng = _spiel(3, oracle=True, demon=True), np.random.default_rng(1)
    state = game.new_initial_state()
    states = [_play(state, rng, until=lambda s: len(s.history()) == 5).clone()]  # the deal
    states.append(_play(state, rng, until=lambda s: len(s.history()) == 60).clone())  # mid-game
    mid_draw = _play(state, rng, until=lambda s: _drawn(s) == 2)  # two cards of a draw fixed
    assert mid_draw.is_chance_node() and mid_draw.pending >= 0
    states.append(mid_draw.clone())
    for s in states:
        again = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, s))[1]
        _same_state(again, s)
        _same_state(s.clone(), s)
        _same_state(pickle.loads(pickle.dumps(s)), s)
        _same_state(game.deserialize_state(s.serialize()), s)
    _play(mid_draw, rng)  # the draw completes and the game ends
    assert mid_draw.is_terminal()
    again = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, mid_draw))[1]
    assert str(again) == str(mid_draw) and again.returns() == mid_draw.returns()


def test_openspiel_resamples_from_an_infostate():
    """``resample_from_infostate``: the player's information state, its deck fixed (no chance
    nodes in its draws)."""
    import pyspiel

    game, rng = _spiel(3, oracle=True), np.random.default_rng(2)
    state = _play(game.new_initial_state(), rng, until=lambda s: len(s.history()) > 80 and not s.is_chance_node())
    p = state.current_player()
    sample = state.resample_from_infostate(p, pyspiel.UniformProbabilitySampler(0.0, 1.0))
    assert sample.current_player() == p and sample.information_state_string(p) == state.information_state_string(p)
    assert sample.legal_actions() == state.legal_actions()
    assert sample.fixed == sample.s[C.S_DECK_LEN]  # the whole deck's order drawn with the sample
    while not sample.is_terminal():
        assert not sample.is_chance_node()
        sample.apply_action(int(rng.choice(sample.legal_actions())))


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_openspiel_seeded_chance_plays_the_aec_games(num_players):
    """``SeededChance(n, oracle, demon, seed)`` gives the chance outcomes of the game
    ``bali_env.env(...).reset(seed=seed)`` deals: the same random moves in both end in the same
    state, every variant. (The deck cards nobody drew are in the AEC env's order there, sorted
    here: their order is no chance outcome yet.)"""
    from bali_env.envs.openspiel import SeededChance

    for oracle in (False, True):
        for demon in (False, True):
            seed = 10 * num_players + 2 * oracle + demon
            aec = bali_env.raw_env(num_players=num_players, oracle=oracle, demon=demon)
            aec.reset(seed=seed)
            chance, rng = SeededChance(num_players, oracle, demon, seed), np.random.default_rng(seed)
            state = _spiel(num_players, oracle, demon).new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(chance(state))
                    continue
                p = state.current_player()
                np.testing.assert_array_equal(state.observation_tensor(p), aec.observe(f"player_{p}")["observation"])
                action = int(rng.choice(state.legal_actions()))
                aec.step(action)
                state.apply_action(action)
            assert not aec.agents or all(aec.terminations.values())
            mine, theirs = state.s, aec.state()
            pos, end = C.S_DECK + int(mine[C.S_DECK_POS]), C.S_DECK + int(mine[C.S_DECK_LEN])
            np.testing.assert_array_equal(np.delete(mine, np.s_[pos:end]), np.delete(theirs, np.s_[pos:end]))
            np.testing.assert_array_equal(np.sort(mine[pos:end]), np.sort(theirs[pos:end]))
            got, want = json.loads(str(state)), aec.state_dict()
            assert sorted(got.pop("deck")) == sorted(want.pop("deck"))
            assert {k: got[k] for k in want} == want
            assert state.returns() == [aec.rewards[a] for a in aec.possible_agents]


def test_openspiel_evaluate_bots_plays_through_chance():
    """``pyspiel.evaluate_bots`` draws the chance outcomes itself (C++ uniform random bots),
    from its seed: the same seed plays the same game."""
    import pyspiel

    for num_players in (2, 4):
        game, games = _spiel(num_players, oracle=True, demon=True), []
        for _ in range(2):
            bots = [pyspiel.make_uniform_random_bot(p, 7 + p) for p in range(num_players)]
            state = game.new_initial_state()
            returns = pyspiel.evaluate_bots(state, bots, 7)
            assert len(returns) == num_players and set(returns) <= {-1.0, 1.0} and 1.0 in returns
            games.append((state.history(), returns))
        assert games[0] == games[1] and len(games[0][0]) > _deal_length(state)


def test_openspiels_outcome_sampling_mccfr_runs():
    """OpenSpiel's outcome-sampling MCCFR (a CFR needing explicit chance) runs on python_bali;
    its average policy at a visited information state is a distribution over the legal actions."""
    from open_spiel.python.algorithms import outcome_sampling_mccfr

    visited, chance_nodes = [], []

    class Recording(outcome_sampling_mccfr.OutcomeSamplingSolver):
        def _episode(self, state, update_player, my_reach, opp_reach, sample_reach):
            if state.is_chance_node():
                chance_nodes.append(len(state.chance_outcomes()))
            elif not state.is_terminal() and len(visited) < 50:
                visited.append(state.clone())
            return super()._episode(state, update_player, my_reach, opp_reach, sample_reach)

    np.random.seed(0)  # OpenSpiel's MCCFR samples with numpy's global generator
    solver = Recording(_spiel(2))
    for _ in range(2):
        solver.iteration()
    assert len(chance_nodes) > 2 * _deal_length(visited[0])  # the deal and the draws, every episode
    policy = solver.average_policy()
    for state in visited[::10]:
        probs = policy.action_probabilities(state)
        assert sorted(probs) == state.legal_actions() and min(probs.values()) >= 0
        assert sum(probs.values()) == pytest.approx(1.0)
        assert state.information_state_string(state.current_player()) in solver._infostates


def test_openspiels_ismcts_and_rl_environment_play_it():
    """OpenSpiel's Python ISMCTS plays a whole game in a loop that draws the chance outcomes
    (its bot has no ``restart_at``, so ``evaluate_bots`` cannot drive it); its RL environment
    draws them itself, from its seeded sampler."""
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms import ismcts, mcts, random_agent

    game, rng = _spiel(2), np.random.default_rng(1)
    bot = ismcts.ISMCTSBot(game=game, uct_c=1.5, max_simulations=2, random_state=np.random.RandomState(0),
                           evaluator=mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(0)))
    state, moves = game.new_initial_state(), 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(_sample_chance(state, rng))
        elif state.current_player() == 0:
            state.apply_action(bot.step(state))
            moves += 1
        else:
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert moves > 10 and sorted(state.returns()) in ([-1.0, 1.0], [1.0, 1.0])
    results = []
    for _ in range(2):
        env = rl_environment.Environment(game, chance_event_sampler=rl_environment.ChanceEventSampler(seed=3))
        agents = [random_agent.RandomAgent(player_id=p, num_actions=C.N_ACTIONS) for p in range(2)]
        np.random.seed(3)  # OpenSpiel's random agent draws from numpy's global generator
        time_step = env.reset()
        while not time_step.last():
            p = time_step.observations["current_player"]
            time_step = env.step([agents[p].step(time_step).action])
        results.append((env.get_state.history(), time_step.rewards))
    assert results[0] == results[1] and sorted(results[0][1]) in ([-1.0, 1.0], [1.0, 1.0])


@pytest.mark.parametrize("spec", ["random", "greedy", "ppo", "mcts:sims=20"])
def test_opponents_decide_the_same_unchecked(spec):
    """The vector env hands its opponents its own buffers unchecked (``act_batch_unchecked``):
    the same choices as the checked ``act_batch`` of an agent seeded the same way."""
    from bali_env.bots import make_agent
    from bali_env.envs.batched import BaliVectorEnv

    games = BaliVectorEnv(16, num_players=2, seed=3)
    games.reset()
    for _ in range(30):
        games.step(_first_legal(games.action_masks))
    a, b = make_agent(spec, seed=5), make_agent(spec, seed=5)
    np.testing.assert_array_equal(a.act_batch(games.obs, games.action_masks),
                                  b.act_batch_unchecked(games.obs, games.action_masks))
