"""The environment plays by its ecosystem's rules, checked with the ecosystem's own tools on
default arguments: Gymnasium's and SB3's ``check_env`` on ``gymnasium.make("bali_env/Bali-v0")``
(every render mode, 2-4 players, the variants), ``gymnasium.make_vec`` giving the batched vector
env with Gymnasium's autoreset semantics and its vector wrappers running on it, the SB3 VecEnv
adapter under ``VecMonitor``, PettingZoo classic's illegal-move convention under SuperSuit's
wrappers, and OpenSpiel's own game test on ``python_bali``."""

from __future__ import annotations

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
            assert not info["action_mask"][i].any() and info["_final_scores"][i]
            assert len(info["final_scores"][i]) == 2
        before = term.copy()
        if before.any():
            obs, r, term, _, info = v.step(np.full(6, 43))  # an illegal id: ignored in the resetting slots
            for i in np.flatnonzero(before):
                assert r[i] == 0.0 and not term[i]
                assert bali_env.decode_observation(obs[i]).decision != "game_over" and info["action_mask"][i].any()
            break
    assert ended > 0


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


# ============================================================================= OpenSpiel
@pytest.mark.parametrize("num_players, oracle, demon", CONFIGS)
def test_openspiels_own_game_test_passes(num_players, oracle, demon):
    import pyspiel

    import bali_env.envs.openspiel  # noqa: F401 - registers python_bali

    game = pyspiel.load_game("python_bali", {"players": num_players, "oracle": oracle, "demon": demon, "seed": 3})
    # serialize=True needs the game's RNG state from C++, which a Python game cannot give
    pyspiel.random_sim_test(game, num_sims=3, serialize=False, verbose=False)


def test_openspiel_states_deal_the_aec_games_and_round_trip():
    import pyspiel

    import bali_env.envs.openspiel  # noqa: F401

    game = pyspiel.load_game("python_bali", {"players": 3, "oracle": True, "seed": 9})
    aec = bali_env.raw_env(num_players=3, oracle=True)
    aec.reset(seed=9)
    state = game.new_initial_state()  # the first deal of the stream: the AEC env's reset(seed=9)
    for p in range(3):
        np.testing.assert_array_equal(state.observation_tensor(p), aec.observe(f"player_{p}")["observation"])
    games = [pyspiel.load_game("python_bali", {"players": 3, "oracle": True, "seed": s}) for s in (5, 5, 6)]
    deals = [[str(g.new_initial_state()) for _ in range(3)] for g in games]
    assert deals[0] == deals[1] != deals[2] and len(set(deals[0])) == 3
    rng = np.random.default_rng(0)
    for _ in range(40):
        state.apply_action(int(rng.choice(state.legal_actions())))
    again = game.deserialize_state(state.serialize())
    assert str(again) == str(state) and again.history() == state.history()
    assert str(state.clone()) == str(state)
    p = state.current_player()
    sample = state.resample_from_infostate(p, pyspiel.UniformProbabilitySampler(0.0, 1.0))
    assert sample.current_player() == p and sample.information_state_string(p) == state.information_state_string(p)
    assert sample.legal_actions() == state.legal_actions()


def test_openspiels_ismcts_and_rl_environment_play_it():
    import pyspiel
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms import ismcts, mcts, random_agent

    import bali_env.envs.openspiel  # noqa: F401

    game = pyspiel.load_game("python_bali", {"players": 2, "seed": 1})
    bot = ismcts.ISMCTSBot(game=game, uct_c=1.5, max_simulations=4, random_state=np.random.RandomState(0),
                           evaluator=mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(0)))
    state = game.new_initial_state()
    for _ in range(6):
        state.apply_action(bot.step(state))
    env = rl_environment.Environment(game)
    agents = [random_agent.RandomAgent(player_id=p, num_actions=44) for p in range(2)]
    time_step = env.reset()
    while not time_step.last():
        p = time_step.observations["current_player"]
        time_step = env.step([agents[p].step(time_step).action])
    assert sorted(time_step.rewards) == [-1.0, 1.0]


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
